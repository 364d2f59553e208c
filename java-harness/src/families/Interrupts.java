package families;

import java.util.concurrent.locks.LockSupport;

// Family: Thread.interrupt. An interrupt synchronizes with the point where the interrupted
// thread finds out (InterruptedException thrown, isInterrupted() or interrupted() true):
// JLS 17.4.4.
//
// RACE: families.Interrupts.late @lateW @lateR
//   main writes `late` after interrupting the sleeper, which reads it after it was woken
// NORACE: families.Interrupts.msg
//   written by main before sleeper.interrupt(), read by the sleeper in its
//   InterruptedException handler
// NORACE: families.Interrupts.order
//   written by main before poller.interrupt(), read by the poller once
//   Thread.currentThread().isInterrupted() returned true
public class Interrupts {
    static int msg;
    static int order;
    static int late;
    static int seenMsg;
    static int seenOrder;

    static void sleeper() {
        try {
            Thread.sleep(30_000);
        } catch (InterruptedException e) {
            seenMsg = msg;
            int l = late; // @lateR
            if (l != 0 && l != 1) {
                throw new AssertionError();
            }
        }
    }

    static void poller() {
        while (!Thread.currentThread().isInterrupted()) {
            LockSupport.parkNanos(50_000); // back off: keeps the trace short
        }
        seenOrder = order;
    }

    public static void main(String[] args) throws InterruptedException {
        Thread s = new Thread(Interrupts::sleeper, "sleeper");
        Thread p = new Thread(Interrupts::poller, "poller");
        s.start();
        p.start();
        msg = 5;
        s.interrupt();
        late = 1; // @lateW
        order = 7;
        p.interrupt();
        s.join();
        p.join();
        System.out.println("seenMsg=" + seenMsg + " seenOrder=" + seenOrder);
    }
}
