package classic;

import java.util.concurrent.locks.ReentrantLock;

// Classic critical sections: two threads update shared counters, each through a
// different kind of critical section. One of them is broken: each thread "locks" its
// own object.
//
// RACE: classic.CriticalSection.wrongLock @wrongInc @wrongInc
//   incremented inside synchronized (this) where `this` is each thread's own Worker: the
//   two sections do not exclude each other. Both threads do it before any synchronization
//   on a shared object: unordered in every schedule
// NORACE: classic.CriticalSection.monitorCount
//   incremented inside synchronized (shared)
// NORACE: classic.CriticalSection.methodCount
//   incremented inside a static synchronized method
// NORACE: classic.CriticalSection.lockCount
//   incremented between lock() and unlock() of one ReentrantLock, and inside tryLock()
// NORACE: classic.CriticalSection.nested
//   incremented with both the monitor and the ReentrantLock held, in the same order
public class CriticalSection {
    static final Object shared = new Object();
    static final ReentrantLock rlock = new ReentrantLock();
    static final int ROUNDS = 25;
    static int wrongLock;
    static int monitorCount;
    static int methodCount;
    static int lockCount;
    static int nested;

    static synchronized void bump() {
        methodCount++;
    }

    static final class Worker implements Runnable {
        public void run() {
            for (int i = 0; i < ROUNDS; i++) {
                synchronized (this) {
                    wrongLock++; // @wrongInc
                }
            }
            for (int i = 0; i < ROUNDS; i++) {
                synchronized (shared) {
                    monitorCount++;
                }
                bump();
                rlock.lock();
                try {
                    lockCount++;
                } finally {
                    rlock.unlock();
                }
                while (!rlock.tryLock()) {
                    Thread.onSpinWait();
                }
                try {
                    lockCount++;
                } finally {
                    rlock.unlock();
                }
                synchronized (shared) {
                    rlock.lock();
                    try {
                        nested++;
                    } finally {
                        rlock.unlock();
                    }
                }
            }
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread a = new Thread(new Worker(), "worker-a");
        Thread b = new Thread(new Worker(), "worker-b");
        a.start();
        b.start();
        a.join();
        b.join();
        System.out.println("monitor " + monitorCount + ", method " + methodCount + ", lock "
                + lockCount + ", nested " + nested);
    }
}
