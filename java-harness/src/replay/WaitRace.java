package replay;

/**
 * Replay's wait/notify test: the producer notifies the waiting consumer, then waits for
 * its acknowledgement; `after` is written by the producer and read by the consumer
 * outside the monitor (the race). Replaying it needs the woken consumer held before it
 * re-enters the monitor (JVMTI MonitorWaited), or the producer's second critical
 * section could never come first.
 */
public class WaitRace {
    static final Object m = new Object();
    static boolean ready;
    static int acks;
    static int after;

    static void producer() throws InterruptedException {
        synchronized (m) {
            ready = true;
            m.notifyAll();
        }
        synchronized (m) {
            while (acks == 0) {
                m.wait();
            }
        }
        after = 1;
    }

    static void consumer() throws InterruptedException {
        synchronized (m) {
            while (!ready) {
                m.wait();
            }
        }
        synchronized (m) {
            acks = 1;
            m.notify();
        }
        int seen = after;
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
        Thread c = thread(WaitRace::consumer, "consumer");
        Thread p = thread(WaitRace::producer, "producer");
        c.start();
        Thread.sleep(50); // the consumer usually waits before the producer starts
        p.start();
        c.join();
        p.join();
        System.out.println("done");
    }
}
