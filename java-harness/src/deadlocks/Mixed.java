package deadlocks;

import java.util.concurrent.locks.ReentrantLock;

// A ReentrantLock and a monitor taken in opposite orders.
//
// DEADLOCK: @lockerMon @monitorLock
public class Mixed {
    static final ReentrantLock lock = new ReentrantLock();
    static final Object mon = new Object();
    static int n;

    public static void main(String[] args) throws Exception {
        Thread t1 = After.start("locker", 0, () -> {
            lock.lock();
            try {
                synchronized (mon) { // @lockerMon
                    n++;
                }
            } finally {
                lock.unlock();
            }
        });
        Thread t2 = After.start("monitor", 1, () -> {
            synchronized (mon) {
                lock.lock(); // @monitorLock
                try {
                    n++;
                } finally {
                    lock.unlock();
                }
            }
        });
        After.finish(t1, t2);
        System.out.println("n=" + n);
    }
}
