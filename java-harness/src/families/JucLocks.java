package families;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

// Family: java.util.concurrent.locks — ReentrantLock lock/tryLock/unlock and
// ReentrantReadWriteLock read and write locks.
//
// RACE: families.JucLocks.sloppy @sloppyA @sloppyB
//   written by both workers while holding only the *read* lock of `shared`, which does
//   not exclude another reader
// RACE: families.JucLocks.split @splitA @splitB
//   worker A writes under `lockA`, worker B under `lockB`: two different ReentrantLocks
// NORACE: families.JucLocks.guarded
//   every access between lock.lock() and lock.unlock()
// NORACE: families.JucLocks.tried
//   updated only after a successful lock.tryLock(timeout)
// NORACE: families.JucLocks.table
//   written under the write lock of `rw`, read under its read lock
// NORACE: families.JucLocks.version
//   read by both workers under the read lock of `rw` (reads never race), written by main
//   under the write lock before start()
// NORACE: families.JucLocks.probed
//   written by a holder of `probe` (a ReentrantLock, then `probeRw`'s write lock); the
//   reader waits until isLocked()/isWriteLocked() (called directly and through a method
//   reference) saw the lock taken and then free again: the unlock came before
public class JucLocks {
    static final ReentrantLock probe = new ReentrantLock();
    static final ReentrantReadWriteLock probeRw = new ReentrantReadWriteLock();
    static int probed;

    /** A holder writes `probed` under the lock; the caller waits for it through `held`. */
    static void probeRound(java.util.concurrent.locks.Lock l, java.util.function.BooleanSupplier held,
            boolean direct, boolean rwLock) throws InterruptedException {
        Thread holder = new Thread(() -> {
            l.lock();
            try {
                Thread.sleep(20);
                probed++;
            } catch (InterruptedException e) {
                return;
            } finally {
                l.unlock();
            }
        }, "probe-holder");
        holder.start();
        if (direct && !rwLock) {
            while (!probe.isLocked()) Thread.onSpinWait();
            while (probe.isLocked()) Thread.onSpinWait();
        } else if (direct) {
            while (!probeRw.isWriteLocked()) Thread.onSpinWait();
            while (probeRw.isWriteLocked()) Thread.onSpinWait();
        } else {
            while (!held.getAsBoolean()) Thread.onSpinWait();
            while (held.getAsBoolean()) Thread.onSpinWait();
        }
        int seen = probed;
        holder.join();
        if (seen == 0) System.out.println("probe not seen");
    }

    static final ReentrantLock lock = new ReentrantLock();
    static final ReentrantLock lockA = new ReentrantLock();
    static final ReentrantLock lockB = new ReentrantLock();
    static final ReentrantReadWriteLock rw = new ReentrantReadWriteLock();
    static final ReentrantReadWriteLock shared = new ReentrantReadWriteLock();
    static int sloppy;
    static int split;
    static int guarded;
    static int tried;
    static int table;
    static int version;

    static void workerA() {
        lockA.lock();
        try {
            split = 1; // @splitA
        } finally {
            lockA.unlock();
        }
        shared.readLock().lock();
        try {
            sloppy = 1; // @sloppyA
        } finally {
            shared.readLock().unlock();
        }
        rw.writeLock().lock();
        try {
            table = 42;
        } finally {
            rw.writeLock().unlock();
        }
        rw.readLock().lock();
        try {
            check(version);
        } finally {
            rw.readLock().unlock();
        }
        common(1);
    }

    static void workerB() {
        lockB.lock();
        try {
            split = 1; // @splitB
        } finally {
            lockB.unlock();
        }
        shared.readLock().lock();
        try {
            sloppy = 1; // @sloppyB
        } finally {
            shared.readLock().unlock();
        }
        rw.readLock().lock();
        try {
            check(table - 42 + version);
            check(version);
        } finally {
            rw.readLock().unlock();
        }
        common(2);
    }

    static void check(int t) {
        if (t != 1 && t != 1 - 42) {
            throw new AssertionError("unexpected " + t);
        }
    }

    static void common(int by) {
        for (int i = 0; i < 3; i++) {
            lock.lock();
            try {
                guarded += by;
            } finally {
                lock.unlock();
            }
        }
        try {
            if (lock.tryLock(5, TimeUnit.SECONDS)) {
                try {
                    tried += by;
                } finally {
                    lock.unlock();
                }
            }
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        rw.writeLock().lock();
        try {
            version = 1;
        } finally {
            rw.writeLock().unlock();
        }
        Thread a = new Thread(JucLocks::workerA, "juc-a");
        Thread b = new Thread(JucLocks::workerB, "juc-b");
        a.start();
        b.start();
        a.join();
        b.join();
        probeRound(probe, null, true, false);
        probeRound(probeRw.writeLock(), null, true, true);
        probeRound(probe, probe::isLocked, false, false);
        probeRound(probeRw.writeLock(), probeRw::isWriteLocked, false, true);
        lock.lock();
        try {
            System.out.println("guarded=" + guarded + " tried=" + tried + " table=" + table);
        } finally {
            lock.unlock();
        }
    }
}
