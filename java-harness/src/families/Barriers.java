package families;

import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Semaphore;

// Family: CyclicBarrier and Semaphore. What a thread does before await() on a barrier
// happens before what every party does after it; release() happens before the acquire()
// it lets through.
//
// RACE: families.Barriers.lastWord @lastA @lastB
//   both parties write `lastWord` after their last synchronization
// NORACE: families.Barriers.phase1A
//   written by A before the barrier, read by B after it
// NORACE: families.Barriers.phase1B
//   written by B before the barrier, read by A after it
// NORACE: families.Barriers.permitData
//   written by A before sem.release(), read by B after sem.acquire()
public class Barriers {
    static final CyclicBarrier barrier = new CyclicBarrier(2);
    static final Semaphore sem = new Semaphore(0);
    static int phase1A;
    static int phase1B;
    static int permitData;
    static int lastWord;
    static int sumA;
    static int sumB;

    static void partyA() throws InterruptedException, BrokenBarrierException {
        phase1A = 10;
        barrier.await();
        sumA = phase1B + 1;
        permitData = 5;
        sem.release();
        lastWord = 1; // @lastA
    }

    static void partyB() throws InterruptedException, BrokenBarrierException {
        phase1B = 20;
        barrier.await();
        sumB = phase1A + 2;
        sem.acquire();
        sumB += permitData;
        lastWord = 1; // @lastB
    }

    interface Body {
        void run() throws Exception;
    }

    static Thread thread(Body b, String name) {
        return new Thread(() -> {
            try {
                b.run();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, name);
    }

    public static void main(String[] args) throws InterruptedException {
        Thread a = thread(Barriers::partyA, "party-a");
        Thread b = thread(Barriers::partyB, "party-b");
        a.start();
        b.start();
        a.join();
        b.join();
        System.out.println("sumA=" + sumA + " sumB=" + sumB + " last=" + lastWord);
    }
}
