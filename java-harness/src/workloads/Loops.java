package workloads;

/**
 * A field-, array- and lock-heavy loop for recording-overhead measurements: THREADS
 * threads each run ITERATIONS iterations over their own object and array, taking a shared
 * lock every 1024 iterations. Prints the lock-protected total, which does not depend on
 * the schedule.
 *
 * <pre>java -cp java-harness workloads.Loops 4 2000000</pre>
 */
public class Loops {
    static final class Cell {
        int v;
        long w;
    }

    static final Object lock = new Object();
    static long shared;

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 2_000_000;
        Thread[] ts = new Thread[threads];
        long t0 = System.nanoTime();
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> {
                Cell c = new Cell();
                int[] arr = new int[64];
                for (int k = 0; k < n; k++) {
                    c.v += k & 7;
                    arr[k & 63] += c.v & 15;
                    if ((k & 1023) == 0) {
                        synchronized (lock) {
                            shared += 1;
                        }
                    }
                }
                c.w = arr[3];
            });
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        System.out.println("shared=" + shared);
        System.err.println("work ms=" + (System.nanoTime() - t0) / 1_000_000);
    }
}
