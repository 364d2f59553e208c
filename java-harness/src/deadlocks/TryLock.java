package deadlocks;

import java.util.concurrent.locks.ReentrantLock;

// The inversion's first thread only tries the second lock: tryLock fails instead of
// waiting, so no schedule deadlocks.
//
// NODEADLOCK
public class TryLock {
    static final ReentrantLock a = new ReentrantLock();
    static final ReentrantLock b = new ReentrantLock();
    static int n;

    public static void main(String[] args) throws Exception {
        Thread t1 = After.start("trier", 0, () -> {
            a.lock();
            try {
                if (b.tryLock()) {
                    try {
                        n++;
                    } finally {
                        b.unlock();
                    }
                }
            } finally {
                a.unlock();
            }
        });
        Thread t2 = After.start("locker", 1, () -> {
            b.lock();
            try {
                a.lock();
                try {
                    n++;
                } finally {
                    a.unlock();
                }
            } finally {
                b.unlock();
            }
        });
        After.finish(t1, t2);
        System.out.println("n=" + n);
    }
}
