package juc;

import java.util.Collections;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

// Shape: subclasses and wrappers of concurrent classes. A class of the program that
// extends LinkedBlockingQueue hands messages over through the put/take it inherits; a
// Set made by Collections.newSetFromMap over a ConcurrentHashMap hands a flag over; a
// subclass of ReentrantLock guards a counter.
//
// RACE: juc.ConcurrentSubclasses$Msg.late @lateW @lateR
//   the producer writes the message's `late` after put(); the consumer reads it after
//   take()
// RACE: juc.ConcurrentSubclasses.tail @tailP @tailC
//   both threads write `tail` after their last synchronization
// NORACE: juc.ConcurrentSubclasses$Msg.body
//   written before put() on the Mailbox subclass, read after take()
// NORACE: juc.ConcurrentSubclasses.flagged
//   written before seen.add("ready"), read after seen.contains("ready") returned true
// NORACE: juc.ConcurrentSubclasses.count
//   incremented by both threads while holding the MyLock subclass of ReentrantLock
public class ConcurrentSubclasses {
    static final class Msg {
        int body;
        int late;
    }

    static final class Mailbox extends LinkedBlockingQueue<Msg> {
        Mailbox() {
            super(2);
        }
    }

    static final class MyLock extends ReentrantLock {}

    static final Mailbox box = new Mailbox();
    static final Set<String> seen = Collections.newSetFromMap(new ConcurrentHashMap<>());
    static final MyLock lock = new MyLock();
    static int flagged;
    static int count;
    static int tail;

    static void producer() throws InterruptedException {
        lock.lock();
        try {
            count++;
        } finally {
            lock.unlock();
        }
        Msg m = new Msg();
        m.body = 42;
        box.put(m);
        m.late = 1; // @lateW
        flagged = 7;
        seen.add("ready");
        tail = 1; // @tailP
    }

    static void consumer() throws InterruptedException {
        lock.lock();
        try {
            count++;
        } finally {
            lock.unlock();
        }
        Msg m = box.take();
        int b = m.body;
        int l = m.late; // @lateR
        while (!seen.contains("ready")) {
            LockSupport.parkNanos(50_000); // back off: keeps the trace short
        }
        int f = flagged;
        tail = 2; // @tailC
        if (b != 42 || f != 7 || (l != 0 && l != 1)) {
            throw new AssertionError(b + " " + f + " " + l);
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
        Thread c = thread(ConcurrentSubclasses::consumer, "consumer");
        Thread p = thread(ConcurrentSubclasses::producer, "producer");
        c.start();
        p.start();
        c.join();
        p.join();
        System.out.println("count=" + count);
    }
}
