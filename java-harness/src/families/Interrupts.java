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
// NORACE: families.Interrupts.flagged
//   written by main before interrupting the spinner, read by it once the static
//   Thread.interrupted() returned true
// NORACE: families.Interrupts.cancelled
//   written by main before Future.cancel(true), whose interrupt (the JDK's) the task
//   finds out about in its InterruptedException handler
// NORACE: families.Interrupts.viaRef
//   written by main before it starts a thread through a method reference (the thread's
//   own start(), not a call site of the program), read by that thread
public class Interrupts {
    static int flagged;
    static int cancelled;
    static int viaRef;
    static int sink;
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
        Thread spinner = new Thread(() -> {
            while (!Thread.interrupted()) {
                Thread.onSpinWait();
            }
            sink += flagged;
        }, "spinner");
        spinner.start();
        flagged = 3;
        spinner.interrupt();
        spinner.join();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor();
        java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.Future<?> f = pool.submit(() -> {
            started.countDown();
            try {
                Thread.sleep(30_000);
            } catch (InterruptedException e) {
                sink += cancelled;
            }
        });
        started.await();
        cancelled = 4;
        f.cancel(true);
        pool.shutdown();
        pool.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS);
        Thread byRef = new Thread(() -> sink += viaRef, "by-ref");
        viaRef = 5;
        Runnable start = byRef::start;
        start.run();
        byRef.join();
        System.out.println("seenMsg=" + seenMsg + " seenOrder=" + seenOrder);
    }
}
