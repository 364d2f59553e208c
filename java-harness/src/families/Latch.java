package families;

import java.util.concurrent.CountDownLatch;

// Family: CountDownLatch: countDown() happens before await() returns.
//
// RACE: families.Latch.late @lateW @lateR
//   a worker writes `late` after its countDown(); main reads it after await(), before join
// NORACE: families.Latch.partA
//   written by worker A before countDown(), read by main after await()
// NORACE: families.Latch.partB
//   same for worker B
public class Latch {
    static int partA;
    static int partB;
    static int late;

    public static void main(String[] args) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(2);
        Thread a = new Thread(() -> {
            partA = 10;
            done.countDown();
            late = 1; // @lateW
        }, "latch-a");
        Thread b = new Thread(() -> {
            partB = 20;
            done.countDown();
        }, "latch-b");
        a.start();
        b.start();
        done.await();
        int sum = partA + partB;
        int l = late; // @lateR
        a.join();
        b.join();
        if (l != 0 && l != 1) {
            throw new AssertionError();
        }
        System.out.println("sum=" + sum + " late=" + late);
    }
}
