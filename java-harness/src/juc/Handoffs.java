package juc;

import java.util.concurrent.*;

// Shape: an object handed from one thread to another through each kind of queue or
// exchange point of java.util.concurrent. The producer fills the object's plain field
// before the hand-off; the consumer reads it after. Every hand-off orders the two.
//
// NORACE: juc.Handoffs$Box.v
//   written before the hand-off, read after it
// RACE: juc.Handoffs.late @lateW @lateR
//   written by the producer after its last hand-off, read by the consumer after taking it
public class Handoffs {
    static final class Box implements Delayed {
        int v;
        public long getDelay(TimeUnit u) { return 0; }
        public int compareTo(Delayed o) { return 0; }
    }

    static int late;

    interface Take { Box take() throws Exception; }
    interface Give { void give(Box b) throws Exception; }

    static int check(Give give, Take take, int n) throws Exception {
        int[] sum = new int[1];
        Thread c = new Thread(() -> {
            try {
                for (int i = 0; i < n; i++) {
                    Box b = take.take();
                    sum[0] += b.v;
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        c.start();
        for (int i = 0; i < n; i++) {
            Box b = new Box();
            b.v = i + 1;
            give.give(b);
        }
        c.join();
        return sum[0];
    }

    public static void main(String[] args) throws Exception {
        int n = 20;
        long total = 0;
        SynchronousQueue<Box> sq = new SynchronousQueue<>();
        total += check(sq::put, sq::take, n);
        LinkedTransferQueue<Box> tq = new LinkedTransferQueue<>();
        total += check(tq::transfer, tq::take, n);
        ArrayBlockingQueue<Box> aq = new ArrayBlockingQueue<>(2);
        total += check(aq::put, aq::take, n);
        LinkedBlockingDeque<Box> dq = new LinkedBlockingDeque<>();
        total += check(dq::putFirst, dq::takeLast, n);
        PriorityBlockingQueue<Box> pq = new PriorityBlockingQueue<>();
        total += check(pq::put, pq::take, n);
        DelayQueue<Box> delay = new DelayQueue<>();
        total += check(delay::put, delay::take, n);
        ConcurrentLinkedQueue<Box> clq = new ConcurrentLinkedQueue<>();
        total += check(clq::offer, () -> { Box b; while ((b = clq.poll()) == null) Thread.onSpinWait(); return b; }, n);
        ConcurrentLinkedDeque<Box> cld = new ConcurrentLinkedDeque<>();
        total += check(cld::offerFirst, () -> { Box b; while ((b = cld.pollLast()) == null) Thread.onSpinWait(); return b; }, n);
        LinkedBlockingQueue<Box> lq = new LinkedBlockingQueue<>();
        total += check(b -> lq.offer(b, 1, TimeUnit.SECONDS), () -> lq.poll(10, TimeUnit.SECONDS), n);
        Exchanger<Box> ex = new Exchanger<>();
        total += check(b -> ex.exchange(b), () -> ex.exchange(null), n);

        // A real race: written after the last hand-off.
        SynchronousQueue<Box> q2 = new SynchronousQueue<>();
        Thread c = new Thread(() -> {
            try {
                q2.take();
                Thread.sleep(50);
                int x = late; // @lateR
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        });
        c.start();
        q2.put(new Box());
        late = 1; // @lateW
        c.join();
        System.out.println("total=" + total);
    }
}
