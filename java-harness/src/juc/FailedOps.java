package juc;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

// Shape: operations that fail order nothing. Each pair of threads meets in a concurrent
// object whose operations a lock or a CAS implements, but the second thread's operation
// fails (finds nothing, changes nothing), so nothing the first did before is ordered
// before what the second does after: ArrayBlockingQueue.remove(x) of an absent element,
// poll() of an empty queue, offer() to a full one, tryLock() of a held lock, a failed
// compareAndSet. A successful remove(x) does order (the trap).
//
// RACE: juc.FailedOps.removed @removedA @removedB
//   the first thread puts, the second's remove(2) finds nothing (2 is never put)
// RACE: juc.FailedOps.polled @polledA @polledB
//   both threads poll an always empty queue (each poll takes the queue's lock)
// RACE: juc.FailedOps.offered @offeredA @offeredB
//   both threads offer to a queue that is full from the start
// RACE: juc.FailedOps.tried @triedA @triedB
//   the first thread holds the lock for a second; the second's tryLock() fails meanwhile
// RACE: juc.FailedOps.cased @casedA @casedB
//   the first thread sets `flag`; the second's compareAndSet(0, 2) fails on it later
// NORACE: juc.FailedOps.handed
//   written before put(1), read after a remove(1) that found the element
public class FailedOps {
    static final ArrayBlockingQueue<Integer> q1 = new ArrayBlockingQueue<>(4);
    static final ArrayBlockingQueue<Integer> empty = new ArrayBlockingQueue<>(4);
    static final ArrayBlockingQueue<Integer> full = new ArrayBlockingQueue<>(1);
    static final ArrayBlockingQueue<Integer> q2 = new ArrayBlockingQueue<>(4);
    static final ReentrantLock lock = new ReentrantLock();
    static final AtomicInteger flag = new AtomicInteger();
    static int removed;
    static int polled;
    static int offered;
    static int tried;
    static int cased;
    static int handed;

    static void first() throws InterruptedException {
        removed = 1; // @removedA
        q1.put(1);
        polled = 1; // @polledA
        empty.poll();
        offered = 1; // @offeredA
        full.offer(7);
        handed = 5;
        q2.put(1);
        tried = 1; // @triedA
        cased = 1; // @casedA
        lock.lock();
        try {
            flag.set(1);
            Thread.sleep(1000);
        } finally {
            lock.unlock();
        }
    }

    static void second() throws InterruptedException {
        if (!q1.remove(2)) {
            removed = 2; // @removedB
        }
        if (empty.poll() == null) {
            polled = 2; // @polledB
        }
        if (!full.offer(8)) {
            offered = 2; // @offeredB
        }
        while (!q2.remove(1)) {
            LockSupport.parkNanos(50_000); // back off: keeps the trace short
        }
        int h = handed;
        // The first thread holds `lock` and has set `flag` by now (it sleeps a second).
        Thread.sleep(300);
        if (!lock.tryLock()) {
            tried = 2; // @triedB
        } else {
            lock.unlock();
        }
        if (!flag.compareAndSet(0, 2)) {
            cased = 2; // @casedB
        }
        if (h != 5) {
            throw new AssertionError(h);
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
        full.put(0);
        Thread a = thread(FailedOps::first, "first");
        Thread b = thread(FailedOps::second, "second");
        a.start();
        b.start();
        a.join();
        b.join();
        System.out.println("done " + lock.isLocked() + " " + flag.get());
    }
}
