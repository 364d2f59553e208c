package ex;
import org.junit.Test;
import static org.junit.Assert.*;
public class CounterTest {
    @Test public void twoThreads() throws Exception {
        Counter c = new Counter();
        Thread t = new Thread(c::hit);
        t.start();
        c.hit();
        t.join();
        assertTrue(c.hits() >= 1);
    }
}
