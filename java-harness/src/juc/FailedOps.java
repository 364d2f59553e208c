package juc;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

// Shape: operations that fail. A failed operation still read what the last operation on
// the object left, and the thread goes on knowing it: it orders the thread after that
// operation, but not after operations that came later. Here the second thread's
// ArrayBlockingQueue.remove(x) of an absent element, poll() of an empty queue and
// offer() to a full one run before the first thread's operations on those queues (it
// waits a moment): nothing orders the first thread's writes before them. Its tryLock()
// fails while the first thread holds the lock, and its compareAndSet(0, 2) fails on the
// 1 the first thread set: both can only fail after the first thread's writes before them.
// A successful remove(x) orders too (the trap).
//
// RACE: juc.FailedOps.removed @removedA @removedB
//   the second thread's remove(2) finds nothing (2 is never put), before the first puts
// RACE: juc.FailedOps.polled @polledA @polledB
//   both threads poll an always empty queue, the second first
// RACE: juc.FailedOps.offered @offeredA @offeredB
//   both threads offer to a queue that is full from the start, the second first
// NORACE: juc.FailedOps.tried
//   the second thread's tryLock() fails while the first holds the lock, which it took
//   after its write
// NORACE: juc.FailedOps.cased
//   the second thread's compareAndSet(0, 2) fails on the 1 the first set after its write
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
        Thread.sleep(200); // the second thread's failing operations first
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
        Thread.sleep(400); // the first thread has put(1) by now, usually
        while (!q2.remove(1)) {
            LockSupport.parkNanos(50_000); // back off: keeps the trace short
        }
        int h = handed;
        // The first thread holds `lock` and has set `flag` by now (it sleeps a second).
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
