package ex;
import org.junit.Test;
import static org.junit.Assert.*;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
// A second test class: surefire runs it in a JVM of its own (reuseForks=false), so a
// test run leaves two traces, which `jrace analyze DIR` merges into one report.
public class CounterPoolTest {
    @Test public void poolThreads() throws Exception {
        Counter c = new Counter();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        // Each task first waits a little (which orders nothing), so that the two hits
        // meet while both pool threads run, whatever the pool did before them.
        pool.submit(() -> { pause(); c.hit(); });
        pool.submit(() -> { pause(); c.hit(); });
        pool.shutdown();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        assertTrue(c.hits() >= 1);
    }

    private static void pause() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
