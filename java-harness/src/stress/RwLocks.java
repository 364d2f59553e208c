package stress;

import java.util.concurrent.locks.*;

// Shape: read-write locks. Writers update under the write lock, readers read under the
// read lock (ReentrantReadWriteLock, its fair version, StampedLock's read and write
// locks and a read lock converted to a write lock, a lock downgraded from write to read).
// Three threads contend: the solver detectors must refute hundreds of pairs ordered only
// through the locks' state (reads of a value only one write has). mcm and rdit refute
// them all without a query (analyzer/tests/it/mcm.rs has the shape); said still takes
// minutes and gigabytes on some recordings (a whole-window query per pair): kept here to
// measure that, not in a test suite. No race on the counters; `racy` races.
public class RwLocks {
    static int racy;
    static int rw, fair, stamped, converted, downgraded;
    static final ReentrantReadWriteLock RW = new ReentrantReadWriteLock();
    static final ReentrantReadWriteLock FAIR = new ReentrantReadWriteLock(true);
    static final StampedLock SL = new StampedLock();

    static void work(int k) {
        for (int i = 0; i < 100; i++) {
            if (i % 3 == k % 3) {
                RW.writeLock().lock();
                try { rw++; } finally { RW.writeLock().unlock(); }
                FAIR.writeLock().lock();
                try { fair++; } finally { FAIR.writeLock().unlock(); }
                long s = SL.writeLock();
                try { stamped++; } finally { SL.unlockWrite(s); }
            } else {
                RW.readLock().lock();
                try { if (rw < 0) throw new AssertionError(); } finally { RW.readLock().unlock(); }
                FAIR.readLock().lock();
                try { if (fair < 0) throw new AssertionError(); } finally { FAIR.readLock().unlock(); }
                long s = SL.readLock();
                try { if (stamped < 0) throw new AssertionError(); } finally { SL.unlockRead(s); }
            }
            long s = SL.readLock();
            try {
                while (true) {
                    long w = SL.tryConvertToWriteLock(s);
                    if (w != 0L) { s = w; converted++; break; }
                    SL.unlockRead(s);
                    s = SL.writeLock();
                }
            } finally { SL.unlock(s); }
            RW.writeLock().lock();
            downgraded++;
            RW.readLock().lock();
            RW.writeLock().unlock();
            try { if (downgraded < 0) throw new AssertionError(); } finally { RW.readLock().unlock(); }
        }
    }

    public static void main(String[] args) throws Exception {
        Thread[] ts = new Thread[3];
        for (int k = 0; k < ts.length; k++) {
            final int kk = k;
            ts[k] = new Thread(() -> work(kk));
            ts[k].start();
        }
        for (Thread t : ts) t.join();
        // A real race, for contrast: nothing orders the thread's write and main's read.
        Thread racer = new Thread(() -> {
            racy = 1; // @racyW
        });
        racer.start();
        Thread.sleep(50);
        int seenRacy = racy; // @racyR
        racer.join();
        System.out.println((rw + seenRacy - seenRacy) + " " + fair + " " + stamped + " " + converted + " " + downgraded);
    }
}
