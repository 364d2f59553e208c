package families;

import java.util.concurrent.locks.ReentrantLock;

// Family: re-entrant locking. Only the outermost acquire/release of a lock is a
// synchronization: an inner exit must not end the critical section.
//
// RACE: families.Reentrancy.outside @outsideA @outsideB
//   written by both workers after they left all their sections
// RACE: families.Reentrancy.split @splitA @splitB
//   written inside nested sections of two different monitors (A holds `mA` twice, B holds
//   `mB` twice)
// NORACE: families.Reentrancy.afterInner
//   written after the inner synchronized (m) block ended but still inside the outer one
// NORACE: families.Reentrancy.innerM
//   written in the inner synchronized (m) block
// NORACE: families.Reentrancy.innerRl
//   written while `rl` is held twice
// NORACE: families.Reentrancy.viaMethod
//   written in a synchronized method after it called another synchronized method of the
//   same object (re-entry by call)
// NORACE: families.Reentrancy.afterInnerUnlock
//   ReentrantLock held twice: written after the inner unlock(), before the outer one
public class Reentrancy {
    static final Object m = new Object();
    static final Object mA = new Object();
    static final Object mB = new Object();
    static final ReentrantLock rl = new ReentrantLock();
    static int outside;
    static int split;
    static int innerM;
    static int innerRl;
    static int afterInner;
    static int afterInnerUnlock;
    int viaMethod;
    int depth;

    synchronized void innerMethod() {
        depth++;
    }

    synchronized void outerMethod() {
        innerMethod();
        viaMethod++;
    }

    static void nested(Reentrancy r, Object mine, int id) {
        synchronized (mine) {
            synchronized (mine) {
                split = 1; // @splitA
            }
        }
        for (int i = 0; i < 2; i++) {
            synchronized (m) {
                synchronized (m) {
                    innerM += id;
                }
                afterInner += id;
            }
            r.outerMethod();
            rl.lock();
            try {
                rl.lock();
                try {
                    innerRl += id;
                } finally {
                    rl.unlock();
                }
                afterInnerUnlock += id;
            } finally {
                rl.unlock();
            }
        }
    }

    static void nestedB(Reentrancy r, Object mine, int id) {
        synchronized (mine) {
            synchronized (mine) {
                split = 1; // @splitB
            }
        }
        for (int i = 0; i < 2; i++) {
            synchronized (m) {
                synchronized (m) {
                    innerM += id;
                }
                afterInner += id;
            }
            r.outerMethod();
            rl.lock();
            try {
                rl.lock();
                try {
                    innerRl += id;
                } finally {
                    rl.unlock();
                }
                afterInnerUnlock += id;
            } finally {
                rl.unlock();
            }
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Reentrancy r = new Reentrancy();
        Thread a = new Thread(() -> {
            nested(r, mA, 1);
            outside = 1; // @outsideA
        }, "re-a");
        Thread b = new Thread(() -> {
            nestedB(r, mB, 2);
            outside = 1; // @outsideB
        }, "re-b");
        a.start();
        b.start();
        a.join();
        b.join();
        System.out.println("afterInner=" + afterInner + " unlock=" + afterInnerUnlock
                + " via=" + r.viaMethod + " depth=" + r.depth);
    }
}
