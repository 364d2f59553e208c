package families;

import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

// Family: the shape of many race-test suites: a runner base class whose constructor
// starts one thread per numbered method of an anonymous subclass, then joins them.
// Fields of the base class are reached through the subclass, among them volatiles
// (static and instance) declared in the base class.
//
// RACE: families.Runners$Base.rwCount @readLocked @readLocked
//   two threads increment it holding only the read lock of a ReentrantReadWriteLock
// RACE: families.Runners$Base.mixed @lockInc @monitorInc
//   one thread holds a ReentrantLock, the other the same object's monitor
// NORACE: families.Runners$Base.payload
//   written before a static volatile declared in the base class is set, read after
//   another thread sees it set
// NORACE: families.Runners$Base.carried
//   the same through an instance volatile declared in the base class
// NORACE: families.Runners$Base.counted
//   incremented under the write lock, read by two threads under the read lock
// NORACE: families.Runners$Base.setUpValue
//   written by setUp() in the constructor before the threads start, read by them
// NORACE: families.Runners$Closing.bumps
//   a Thread subclass whose synchronized close() joins it: Thread.join waits on the thread
//   object, giving its monitor up, so run() enters a synchronized method meanwhile
public class Runners {
    static final class Closing extends Thread {
        int bumps;

        Closing() {
            super("closing");
        }

        synchronized void bump() {
            bumps++;
        }

        @Override
        public void run() {
            try {
                Thread.sleep(30);
            } catch (InterruptedException e) {
                return;
            }
            bump();
        }

        synchronized int close() throws InterruptedException {
            join();
            return bumps += 10;
        }
    }

    abstract static class Base {
        static volatile boolean ready;
        volatile int handed;
        int payload;
        int carried;
        int counted;
        int rwCount;
        int mixed;
        int setUpValue;

        Base(int n) {
            setUp();
            Thread[] ts = new Thread[n];
            for (int i = 0; i < n; i++) {
                final int k = i;
                ts[i] = new Thread(() -> body(k), "runner-" + k);
            }
            for (Thread t : ts) {
                t.start();
            }
            try {
                for (Thread t : ts) {
                    t.join();
                }
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }

        void body(int k) {
            switch (k) {
                case 0: t1(); break;
                case 1: t2(); break;
                default: t3(); break;
            }
        }

        void setUp() {}
        abstract void t1();
        abstract void t2();
        void t3() {}
    }

    public static void main(String[] args) throws InterruptedException {
        new Base(2) {
            void t1() {
                payload = 1;
                ready = true;
            }
            void t2() {
                while (!ready) {
                    Thread.onSpinWait();
                }
                payload++;
            }
        };
        new Base(2) {
            void t1() {
                carried = 7;
                handed = 1;
            }
            void t2() {
                while (handed == 0) {
                    Thread.onSpinWait();
                }
                carried++;
            }
        };
        final ReentrantReadWriteLock rw = new ReentrantReadWriteLock();
        Base r = new Base(2) {
            void setUp() {
                setUpValue = 3;
            }
            void t1() {
                rw.readLock().lock();
                rwCount += setUpValue; // @readLocked
                rw.readLock().unlock();
            }
            void t2() {
                t1();
            }
        };
        final ReentrantReadWriteLock rw2 = new ReentrantReadWriteLock();
        new Base(3) {
            void t1() {
                rw2.readLock().lock();
                int c = counted;
                rw2.readLock().unlock();
            }
            void t2() {
                t1();
            }
            void t3() {
                rw2.writeLock().lock();
                counted++;
                rw2.writeLock().unlock();
            }
        };
        final ReentrantLock lock = new ReentrantLock();
        Base m = new Base(2) {
            void t1() {
                lock.lock();
                mixed++; // @lockInc
                lock.unlock();
            }
            void t2() {
                synchronized (lock) {
                    mixed++; // @monitorInc
                }
            }
        };
        Closing c = new Closing();
        c.start();
        int closed = c.close();
        System.out.println("rw=" + (r.rwCount <= 6) + " mixed=" + (m.mixed <= 2) + " closed=" + closed);
    }
}
