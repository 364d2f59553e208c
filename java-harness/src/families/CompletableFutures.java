package families;

import java.util.concurrent.CompletableFuture;

// Family: CompletableFuture on the common ForkJoinPool. What a thread does before
// supplyAsync() happens before the task; the task happens before join() returns its value.
//
// RACE: families.CompletableFutures.status @statusMain @statusTask
//   main writes `status` after supplyAsync() and before join(); the task writes it too
// NORACE: families.CompletableFutures.input
//   written by main before supplyAsync(), read by the task
// NORACE: families.CompletableFutures.output
//   written by the task, read by main after join()
public class CompletableFutures {
    static int input;
    static int output;
    static int status;

    public static void main(String[] args) {
        input = 20;
        CompletableFuture<Integer> f = CompletableFuture.supplyAsync(() -> {
            status = 1; // @statusTask
            output = input + 1;
            return 2;
        });
        status = 2; // @statusMain
        int v = f.join();
        System.out.println("output=" + output + " v=" + v);
    }
}
