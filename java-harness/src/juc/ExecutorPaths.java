package juc;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

// Shape: executors beyond the plain path. A single-thread executor (a delegating wrapper)
// runs a task; main shuts it down, waits for its termination and reads what the task
// wrote. A ScheduledThreadPoolExecutor runs a task with a fixed delay: each run reads
// what main wrote before scheduling it and what the task's earlier runs wrote.
//
// RACE: juc.ExecutorPaths.status @statusMain @statusTask
//   the task says it started, then writes `status`; main writes it once told (nothing
//   orders the two writes: the task does nothing main does after that)
// NORACE: juc.ExecutorPaths.input
//   written by main before execute(), read by the task
// NORACE: juc.ExecutorPaths.output
//   written by the task, read by main after awaitTermination() returned true
// NORACE: juc.ExecutorPaths.config
//   written by main before scheduleWithFixedDelay, read by every run of the task
// NORACE: juc.ExecutorPaths.runs
//   incremented by every run of the periodic task (runs may be on different pool
//   threads), read by main after the pool terminated
public class ExecutorPaths {
    static int input;
    static int output;
    static int status;
    static int config;
    static int runs;

    public static void main(String[] args) throws InterruptedException {
        ExecutorService single = Executors.newSingleThreadExecutor();
        CountDownLatch started = new CountDownLatch(1);
        input = 20;
        single.execute(() -> {
            started.countDown();
            status = 1; // @statusTask
            output = input + 1;
        });
        started.await();
        status = 2; // @statusMain
        single.shutdown();
        if (!single.awaitTermination(20, TimeUnit.SECONDS)) {
            throw new AssertionError("single did not terminate");
        }
        int out = output;

        ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(2);
        CountDownLatch three = new CountDownLatch(3);
        config = 5;
        ScheduledFuture<?> f = pool.scheduleWithFixedDelay(() -> {
            if (config != 5) {
                throw new AssertionError("config");
            }
            runs++;
            three.countDown();
        }, 0, 1, TimeUnit.MILLISECONDS);
        three.await();
        f.cancel(false);
        pool.shutdown();
        if (!pool.awaitTermination(20, TimeUnit.SECONDS)) {
            throw new AssertionError("pool did not terminate");
        }
        int r = runs;
        System.out.println("output=" + out + " ran=" + (r >= 3));
    }
}
