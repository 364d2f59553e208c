package classic;

import java.util.ArrayList;
import java.util.List;

// Classic Monte Carlo pricing (after the Java Grande MonteCarlo kernel, much smaller): two
// workers simulate random price paths, each with its own generator and seed, and hand
// every path's result to a shared list under a lock; main averages them after join.
//
// RACE: classic.MonteCarlo.pathsDone @peek @pathsInc
//   main glances at the progress counter between starting and joining the workers,
//   without the lock the workers increment it under: unordered in every schedule (the
//   workers' own increments exclude each other)
// NORACE: java.util.ArrayList.$state
//   the result list is appended to inside synchronized (results) and read by main after
//   join
// NORACE: classic.MonteCarlo.volatility
//   set by main before the workers start; they only read it
// NORACE: long[]
//   each worker keeps its own path in its own array
public class MonteCarlo {
    static final int WORKERS = 2;
    static final int PATHS = 12;
    static final int STEPS = 20;
    static final List<Long> results = new ArrayList<>();
    static int pathsDone;
    static long volatility;
    static int glimpse;

    static void worker(int id) {
        long seed = 1000 + id;
        long[] path = new long[STEPS];
        for (int p = 0; p < PATHS; p++) {
            long price = 1_000_000;
            for (int s = 0; s < STEPS; s++) {
                seed = seed * 6364136223846793005L + 1442695040888963407L;
                long shock = ((seed >>> 33) % (2 * volatility + 1)) - volatility;
                price += price * shock / 1_000_000;
                path[s] = price;
            }
            long max = 0;
            for (long q : path) {
                max = Math.max(max, q);
            }
            synchronized (results) {
                results.add(max);
                pathsDone++; // @pathsInc
            }
        }
    }

    public static void main(String[] args) throws InterruptedException {
        volatility = 20_000;
        Thread[] ts = new Thread[WORKERS];
        for (int i = 0; i < WORKERS; i++) {
            final int id = i;
            ts[i] = new Thread(() -> worker(id), "mc-" + i);
        }
        for (Thread t : ts) {
            t.start();
        }
        glimpse = pathsDone; // @peek
        for (Thread t : ts) {
            t.join();
        }
        long sum = 0;
        synchronized (results) {
            for (long r : results) {
                sum += r;
            }
        }
        System.out.println("paths " + results.size() + ", mean max price " + sum / results.size());
    }
}
