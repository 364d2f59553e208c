package families;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

// Family: executor hand-off. What main does before submit() happens before the task;
// what the task does happens before Future.get() returns.
//
// RACE: families.Executor.status @statusMain @statusTask
//   main writes `status` after submitting the task and before get(); the task writes it too
// NORACE: families.Executor.input
//   written by main before submit(), read by the task
// NORACE: families.Executor.result
//   written by the task, read by main after future.get()
// NORACE: families.Executor.chained
//   written by the first task; main waits for it with get() and only then submits the
//   second task, which reads it (possibly on another pool thread)
public class Executor {
    static int input;
    static int result;
    static int status;
    static int chained;

    public static void main(String[] args) throws InterruptedException, ExecutionException {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            input = 20;
            Future<Integer> f = pool.submit(() -> {
                status = 1; // @statusTask
                result = input + 1;
                chained = 5;
                return 0;
            });
            status = 2; // @statusMain
            f.get();
            int r = result;
            Future<?> g = pool.submit(() -> {
                result = chained + r;
            });
            g.get();
            System.out.println("result=" + result);
        } finally {
            pool.shutdown();
        }
    }
}
