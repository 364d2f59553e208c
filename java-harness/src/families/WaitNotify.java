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
public class WaitNotify {
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
        System.out.println("data=" + data + " acks=" + acks + " after=" + after);
    }
}
