package juc;

import java.util.concurrent.*;

// Shape: a thread's end seen without join(): isAlive() returning false, getState()
// returning TERMINATED (JLS 17.4.4: any action that detects that a thread has terminated
// synchronizes with its last action); and a task an executor rejects to the caller
// (CallerRunsPolicy), which runs in the submitting thread.
//
// NORACE: juc.Termination.viaAlive
//   written by the thread, read after isAlive() returned false
// NORACE: juc.Termination.viaState
//   written by the thread, read after getState() returned TERMINATED
// NORACE: juc.Termination.callerRan
//   written by a rejected task, which ran in main, read by main
// RACE: juc.Termination.racy @racyW @racyR
//   the racer thread writes it; main reads it after a sleep, which orders nothing
public class Termination {
    static int racy;
    static int viaAlive, viaState, callerRan;

    public static void main(String[] args) throws Exception {
        Thread t = new Thread(() -> { viaAlive = 1; });
        t.start();
        while (t.isAlive()) Thread.onSpinWait();
        int s = viaAlive;
        Thread t2 = new Thread(() -> { viaState = 2; });
        t2.start();
        while (t2.getState() != Thread.State.TERMINATED) Thread.onSpinWait();
        s += viaState;
        ThreadPoolExecutor ex = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(1), new ThreadPoolExecutor.CallerRunsPolicy());
        CountDownLatch block = new CountDownLatch(1);
        ex.execute(() -> {
            try {
                block.await();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        });
        ex.execute(() -> { });
        ex.execute(() -> { callerRan = 3; }); // rejected: runs here, in main
        s += callerRan;
        block.countDown();
        ex.shutdown();
        if (!ex.awaitTermination(20, TimeUnit.SECONDS)) {
            throw new AssertionError("pool did not terminate");
        }
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
