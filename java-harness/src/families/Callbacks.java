package families;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;

// Family: java.util.concurrent calls made by the program's own code while another one
// runs: a mapping function of `computeIfAbsent` that hands work over through a queue, a
// pool whose thread factory delegates to `Executors.defaultThreadFactory()` (as Guava's
// and commons-lang's factories do). The inner call's events and the outer one's keep
// their order, and the recording goes on.
//
// NORACE: families.Callbacks.handed @fill @drain
//   the mapping function writes `handed` and then offers to the queue the drainer takes
//   from before it reads `handed`
// NORACE: families.Callbacks.pooled @pool @poolRead
//   a task of the pool writes it, main reads it after the task's future
// RACE: families.Callbacks.racy @racy @racy
//   two tasks of the pool, held on two of its threads by a latch, both increment it
public class Callbacks {
    static int handed;
    static int pooled;
    static int racy;

    public static void main(String[] args) throws Exception {
        ConcurrentHashMap<Integer, Integer> outer = new ConcurrentHashMap<>();
        LinkedBlockingQueue<Integer> queue = new LinkedBlockingQueue<>();
        Thread drainer = new Thread(() -> {
            try {
                int sum = 0;
                for (int i = 0; i < 2; i++) {
                    sum += queue.take();
                    sum += handed; // @drain
                }
                System.out.println("drained " + (sum > 0));
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "drainer");
        drainer.start();
        for (int i = 0; i < 4; i++) {
            outer.computeIfAbsent(i % 2, k -> {
                handed = k + 1; // @fill
                queue.offer(k);
                return k;
            });
        }
        drainer.join();
        ExecutorService pool =
                Executors.newFixedThreadPool(2, r -> Executors.defaultThreadFactory().newThread(r));
        Future<?> f = pool.submit(() -> {
            pooled = 7; // @pool
        });
        f.get();
        System.out.println("pooled " + pooled); // @poolRead
        CountDownLatch both = new CountDownLatch(2);
        Runnable inc = () -> {
            racy++; // @racy
            both.countDown();
            try {
                both.await();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        };
        Future<?> a = pool.submit(inc);
        Future<?> b = pool.submit(inc);
        a.get();
        b.get();
        pool.shutdown();
        System.out.println("map " + outer.size());
    }
}
