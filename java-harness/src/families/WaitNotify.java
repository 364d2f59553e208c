package families;

// Family: Object.wait / notify / notifyAll (wait releases the monitor, wake re-acquires it).
//
// RACE: families.WaitNotify.after @afterW @afterR
//   the producer writes `after` once it has notified, outside the monitor; the consumer
//   reads it once it woke up, outside the monitor
// NORACE: families.WaitNotify.data
//   written by the producer before it sets `ready` under the monitor; read by the
//   consumer after it saw `ready` under the monitor (possibly after waiting)
// NORACE: families.WaitNotify.ready
//   only accessed with the monitor held
// NORACE: families.WaitNotify.acks
//   the second round: the consumer acknowledges under the monitor with notify(), the
//   producer waits for it
// RACE: families.WaitNotify.late @lateW @lateR
//   main waits on a monitor nobody notifies (wait(timeout) runs out) and then reads what a
//   worker wrote without synchronization: a timed wait orders nothing
// RACE: families.WaitNotify.lateCond @lateCondW @lateCondR
//   the same with Condition.await(timeout, unit) returning false
public class WaitNotify {
    static final Object idle = new Object();
    static int late;
    static int lateCond;

    /** A worker writes; main waits until a timeout nobody cuts short, then reads. */
    static void timedWaits() throws InterruptedException {
        Thread w = new Thread(() -> {
            late = 1; // @lateW
            lateCond = 1; // @lateCondW
        }, "late-writer");
        w.start();
        synchronized (idle) {
            idle.wait(200);
        }
        int seen = late; // @lateR
        java.util.concurrent.locks.ReentrantLock l = new java.util.concurrent.locks.ReentrantLock();
        java.util.concurrent.locks.Condition never = l.newCondition();
        l.lock();
        try {
            if (never.await(100, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                seen++;
            }
        } finally {
            l.unlock();
        }
        seen += lateCond; // @lateCondR
        w.join();
        if (seen != 2) {
            System.out.println("late writer not seen");
        }
    }

    static final Object m = new Object();
    static int data;
    static boolean ready;
    static int acks;
    static int after;

    static void producer() throws InterruptedException {
        data = 42;
        synchronized (m) {
            ready = true;
            m.notifyAll();
        }
        synchronized (m) {
            while (acks == 0) {
                m.wait();
            }
        }
        after = 1; // @afterW
    }

    static void consumer() throws InterruptedException {
        synchronized (m) {
            while (!ready) {
                m.wait();
            }
        }
        int d = data;
        synchronized (m) {
            acks = d;
            m.notify();
        }
        int seen = after; // @afterR
        if (seen != 0 && seen != 1) {
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
        // The consumer starts first so that it usually waits.
        Thread c = thread(WaitNotify::consumer, "consumer");
        Thread p = thread(WaitNotify::producer, "producer");
        c.start();
        p.start();
        c.join();
        p.join();
        timedWaits();
        System.out.println("data=" + data + " acks=" + acks + " after=" + after);
    }
}
