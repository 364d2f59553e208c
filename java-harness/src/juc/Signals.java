package juc;

import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import java.util.concurrent.locks.*;

// Shape: one thread writes a plain field and signals; another waits for the signal and
// reads it. Signals: Phaser, Semaphore (as a signal and as a lock), CyclicBarrier with a
// barrier action, CountDownLatch.await with a timeout, a Condition's awaitNanos, a
// monitor's timed wait, tryLock with a timeout, lockInterruptibly, LockSupport.unpark,
// a FutureTask's get, Thread.join with a timeout.
//
// NORACE: juc.Signals.phased
// NORACE: juc.Signals.permitted
// NORACE: juc.Signals.counted
// NORACE: juc.Signals.barred
// NORACE: juc.Signals.latched
// NORACE: juc.Signals.conditioned
// NORACE: juc.Signals.waited
// NORACE: juc.Signals.tried
// NORACE: juc.Signals.interruptibly
// NORACE: juc.Signals.parked
// NORACE: juc.Signals.tasked
// NORACE: juc.Signals.joined
// RACE: juc.Signals.racy @racyW @racyR
//   the racer thread writes it; main reads it after a sleep, which orders nothing
public class Signals {
    static int racy;
    static int phased, permitted, counted, barred, latched, conditioned, waited, tried,
            interruptibly, parked, tasked, joined;
    static volatile boolean unparkedFlag;

    static Thread start(Runnable r) {
        Thread t = new Thread(r);
        t.start();
        return t;
    }

    interface Body { void run() throws Exception; }

    static Runnable wrap(Body b) {
        return () -> {
            try {
                b.run();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        };
    }

    public static void main(String[] args) throws Exception {
        Phaser ph = new Phaser(2);
        Thread a = start(wrap(() -> { phased = 1; ph.arriveAndAwaitAdvance(); }));
        ph.arriveAndAwaitAdvance();
        int s = phased;
        a.join();

        Semaphore sig = new Semaphore(0);
        a = start(wrap(() -> { permitted = 2; sig.release(); }));
        sig.acquire();
        s += permitted;
        a.join();

        Semaphore mutex = new Semaphore(1);
        Thread[] ts = new Thread[2];
        for (int i = 0; i < 2; i++) {
            ts[i] = start(wrap(() -> {
                for (int k = 0; k < 50; k++) {
                    mutex.acquire();
                    try { counted++; } finally { mutex.release(); }
                }
            }));
        }
        for (Thread t : ts) t.join();
        s += counted;

        int[] seen = new int[1];
        CyclicBarrier bar = new CyclicBarrier(2, () -> seen[0] = barred);
        a = start(wrap(() -> { barred = 3; bar.await(); }));
        bar.await();
        s += barred + seen[0];
        a.join();

        CountDownLatch l = new CountDownLatch(1);
        a = start(wrap(() -> { latched = 4; l.countDown(); }));
        if (!l.await(20, TimeUnit.SECONDS)) throw new AssertionError();
        s += latched;
        a.join();

        ReentrantLock lock = new ReentrantLock();
        Condition c = lock.newCondition();
        boolean[] done = new boolean[1];
        a = start(wrap(() -> {
            conditioned = 5;
            lock.lock();
            try { done[0] = true; c.signalAll(); } finally { lock.unlock(); }
        }));
        lock.lock();
        try {
            while (!done[0]) c.awaitNanos(1_000_000);
        } finally { lock.unlock(); }
        s += conditioned;
        a.join();

        Object mon = new Object();
        boolean[] ready = new boolean[1];
        a = start(wrap(() -> {
            waited = 6;
            synchronized (mon) { ready[0] = true; mon.notifyAll(); }
        }));
        synchronized (mon) {
            while (!ready[0]) mon.wait(5);
        }
        s += waited;
        a.join();

        ReentrantLock tl = new ReentrantLock();
        a = start(wrap(() -> {
            for (int k = 0; k < 50; k++) {
                if (tl.tryLock(5, TimeUnit.SECONDS)) {
                    try { tried++; } finally { tl.unlock(); }
                }
            }
        }));
        for (int k = 0; k < 50; k++) {
            tl.lockInterruptibly();
            try { tried++; interruptibly++; } finally { tl.unlock(); }
        }
        a.join();
        s += tried + interruptibly;

        Thread me = Thread.currentThread();
        a = start(wrap(() -> { parked = 7; unparkedFlag = true; LockSupport.unpark(me); }));
        while (!unparkedFlag) LockSupport.park();
        s += parked;
        a.join();

        FutureTask<Integer> ft = new FutureTask<>(() -> { tasked = 8; return 1; });
        start(ft);
        s += ft.get() + tasked;

        a = start(wrap(() -> { joined = 9; }));
        a.join(20_000);
        if (a.isAlive()) throw new AssertionError();
        s += joined;
        // A real race, for contrast: nothing orders the thread's write and main's read.
        Thread racer = new Thread(() -> {
            racy = 1; // @racyW
        });
        racer.start();
        Thread.sleep(50);
        int seenRacy = racy; // @racyR
        racer.join();
        System.out.println("s=" + (s + seenRacy - seenRacy));
    }
}
