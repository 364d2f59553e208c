package juc;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;

// Shape: the JVM exits while a thread holds a ReentrantLock (and still runs): the trace
// ends with the lock held and the thread without its end.
//
// RACE: juc.LockHeldAtExit.note @noteW @noteR
//   the holder writes `note` after it signalled; main reads it after await()
// NORACE: juc.LockHeldAtExit.ready
//   written by the holder under the lock before countDown(), read by main after await()
// NORACE: juc.LockHeldAtExit.config
//   written by main before start(), read by the holder
public class LockHeldAtExit {
    static final ReentrantLock lock = new ReentrantLock();
    static final CountDownLatch held = new CountDownLatch(1);
    static int ready;
    static int note;
    static int config;

    public static void main(String[] args) throws InterruptedException {
        config = 3;
        Thread holder = new Thread(() -> {
            lock.lock();
            ready = config;
            held.countDown();
            note = 1; // @noteW
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "holder");
        holder.setDaemon(true);
        holder.start();
        held.await();
        int n = note; // @noteR
        System.out.println("ready=" + ready + " note=" + (n == 0 || n == 1));
        System.exit(0);
    }
}
