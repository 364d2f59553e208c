package juc;

import java.util.*;
import java.util.concurrent.*;

// Shape: results and inputs passed through executors' other paths: invokeAll, invokeAny,
// an ExecutorCompletionService, a cached thread pool, a scheduled callable's get, a
// work-stealing pool, the common ForkJoinPool running RecursiveTasks that fill an array
// read by the parent after join, CompletableFuture chains on the common pool, and
// java.util.Timer.
//
// NORACE: juc.Pools.input
// NORACE: juc.Pools.cells
// NORACE: juc.Pools.fromAll
// NORACE: juc.Pools.fromService
// NORACE: juc.Pools.fromCached
// NORACE: juc.Pools.fromScheduled
// NORACE: juc.Pools.fromStealing
// NORACE: juc.Pools.fromTimer
// NORACE: juc.Pools.chained
// RACE: juc.Pools.racy @racyW @racyR
//   the racer thread writes it; main reads it after a sleep, which orders nothing
public class Pools {
    static int racy;
    static int input, fromAll, fromService, fromCached, fromScheduled, fromStealing, fromTimer,
            chained;
    static int[] cells = new int[64];

    static final class Fill extends RecursiveTask<Integer> {
        final int lo, hi;
        Fill(int lo, int hi) { this.lo = lo; this.hi = hi; }
        protected Integer compute() {
            if (hi - lo <= 8) {
                int s = 0;
                for (int i = lo; i < hi; i++) { cells[i] = i + input; s += i; }
                return s;
            }
            int mid = (lo + hi) / 2;
            Fill left = new Fill(lo, mid);
            left.fork();
            int r = new Fill(mid, hi).compute();
            return r + left.join();
        }
    }

    public static void main(String[] args) throws Exception {
        input = 1;
        ExecutorService fixed = Executors.newFixedThreadPool(2);
        List<Callable<Integer>> calls = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            final int k = i;
            calls.add(() -> { if (k == 0) fromAll = input + 1; return k; });
        }
        int s = 0;
        for (Future<Integer> f : fixed.invokeAll(calls)) s += f.get();
        s += fromAll;
        s += fixed.invokeAny(List.<Callable<Integer>>of(() -> input));

        ExecutorCompletionService<Integer> ecs = new ExecutorCompletionService<>(fixed);
        ecs.submit(() -> { fromService = input + 2; return 0; });
        s += ecs.take().get() + fromService;
        fixed.shutdown();

        ExecutorService cached = Executors.newCachedThreadPool();
        Future<?> f = cached.submit(() -> { fromCached = input + 3; });
        f.get();
        s += fromCached;
        cached.shutdown();

        ScheduledExecutorService sched = Executors.newScheduledThreadPool(1);
        s += sched.schedule(() -> { fromScheduled = input + 4; return 1; }, 5, TimeUnit.MILLISECONDS).get();
        s += fromScheduled;
        sched.shutdown();

        ExecutorService steal = Executors.newWorkStealingPool(2);
        steal.submit(() -> { fromStealing = input + 5; }).get();
        s += fromStealing;
        steal.shutdown();

        s += ForkJoinPool.commonPool().invoke(new Fill(0, cells.length));
        for (int c : cells) s += c;

        int r = CompletableFuture.supplyAsync(() -> input + 6)
                .thenApplyAsync(x -> { chained = x; return x + 1; })
                .thenCombine(CompletableFuture.supplyAsync(() -> 1), Integer::sum)
                .get();
        s += r + chained;

        Timer timer = new Timer(true);
        CountDownLatch fired = new CountDownLatch(1);
        timer.schedule(new TimerTask() {
            public void run() { fromTimer = input + 7; fired.countDown(); }
        }, 5);
        fired.await();
        s += fromTimer;
        timer.cancel();
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
