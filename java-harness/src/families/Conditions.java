package families;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

// Family: java.util.concurrent.locks.Condition await / signal / signalAll (await releases
// the lock and re-acquires it, like Object.wait).
//
// RACE: families.Conditions.after @afterW @afterR
//   written by the producer after its last section, read by the consumer after its own
// NORACE: families.Conditions.item
//   written by the producer before it signals under the lock, read by the consumer after
//   it saw `full` under the lock
// NORACE: families.Conditions.full
//   only accessed with the lock held (the consumer awaits `nonEmpty` while it is false)
// NORACE: families.Conditions.taken
//   the second round: written by the consumer under the lock before signalAll(), read by
//   the producer under the lock after await() on `nonFull`
public class Conditions {
    static final ReentrantLock lock = new ReentrantLock();
    static final Condition nonEmpty = lock.newCondition();
    static final Condition nonFull = lock.newCondition();
    static int item;
    static boolean full;
    static int taken;
    static int after;

    static void producer() throws InterruptedException {
        item = 42;
        lock.lock();
        try {
            full = true;
            nonEmpty.signal();
        } finally {
            lock.unlock();
        }
        lock.lock();
        try {
            while (taken == 0) {
                nonFull.await();
            }
        } finally {
            lock.unlock();
        }
        after = 1; // @afterW
    }

    static void consumer() throws InterruptedException {
        lock.lock();
        try {
            while (!full) {
                nonEmpty.await();
            }
            full = false;
        } finally {
            lock.unlock();
        }
        int v = item;
        lock.lock();
        try {
            taken = v;
            nonFull.signalAll();
        } finally {
            lock.unlock();
        }
        int a = after; // @afterR
        if (a != 0 && a != 1) {
            throw new AssertionError();
        }
    }

    interface Body {
        void run() throws InterruptedException;
    }

    static Thread thread(Body b, String name) {
        return new Thread(() -> {
            try {
                b.run();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, name);
    }

    public static void main(String[] args) throws InterruptedException {
        Thread c = thread(Conditions::consumer, "consumer");
        Thread p = thread(Conditions::producer, "producer");
        c.start();
        p.start();
        c.join();
        p.join();
        System.out.println("taken=" + taken + " after=" + after);
    }
}
