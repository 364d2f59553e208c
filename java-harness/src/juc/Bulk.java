package juc;

import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import java.util.stream.*;

// Shape: bulk operations that run on the common ForkJoinPool and hand their results back:
// Arrays.parallelSetAll / parallelSort / parallelPrefix, ConcurrentHashMap's parallel
// forEach and reduce, a parallel IntStream writing disjoint array elements, and
// CompletableFuture's allOf, whenComplete and thenAccept.
//
// NORACE: juc.Bulk$Cell.v
// NORACE: juc.Bulk.seed
// NORACE: juc.Bulk.done
// NORACE: juc.Bulk.completed
// NORACE: juc.Bulk.accepted
// RACE: juc.Bulk.racy @racyW @racyR
//   the racer thread writes it; main reads it after a sleep, which orders nothing
public class Bulk {
    static int racy;
    static final class Cell { int v; }
    static int seed, done, completed, accepted;

    public static void main(String[] args) throws Exception {
        seed = 3;
        int n = 4096;
        Cell[] cells = new Cell[n];
        Arrays.parallelSetAll(cells, i -> { Cell c = new Cell(); c.v = (i * 7919 + seed) % 1000; return c; });
        long s = 0;
        for (Cell c : cells) s += c.v;
        int[] xs = new int[n];
        IntStream.range(0, n).parallel().forEach(i -> xs[i] = cells[i].v);
        Arrays.parallelSort(xs);
        Arrays.parallelPrefix(xs, Integer::sum);
        s += xs[n - 1];
        Cell[] sorted = cells.clone();
        Arrays.parallelSort(sorted, Comparator.comparingInt(c -> c.v));
        s += sorted[0].v;

        ConcurrentHashMap<Integer, Cell> m = new ConcurrentHashMap<>();
        for (int i = 0; i < n; i++) m.put(i, cells[i]);
        AtomicLong sum = new AtomicLong();
        m.forEach(1, (k, c) -> sum.addAndGet(c.v));
        Long r = m.reduceValues(1, c -> (long) c.v, Long::sum);
        s += sum.get() + r;

        CompletableFuture<?>[] fs = new CompletableFuture<?>[4];
        for (int i = 0; i < fs.length; i++) {
            final int k = i;
            fs[i] = CompletableFuture.runAsync(() -> cells[k].v += seed);
        }
        CompletableFuture.allOf(fs).join();
        s += cells[0].v + cells[3].v;
        CountDownLatch l = new CountDownLatch(2);
        CompletableFuture.supplyAsync(() -> { done = 1; return 5; })
                .whenComplete((v, e) -> { completed = v + done; l.countDown(); })
                .thenAccept(v -> { accepted = v + completed; l.countDown(); });
        l.await();
        s += done + completed + accepted;
        // A real race, for contrast: nothing orders the thread's write and main's read.
        Thread racer = new Thread(() -> {
            racy = 1; // @racyW
        });
        racer.start();
        Thread.sleep(50);
        int seenRacy = racy; // @racyR
        racer.join();
        System.out.println("s=" + (s + seenRacy - seenRacy));
    }
}
