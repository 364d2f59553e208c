package classic;

import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;

// Classic parallel bubble sort (odd-even transposition): two threads each own half of
// the pairs, and a CyclicBarrier separates the phases. The array starts in reverse order,
// so both threads swap in the first phase.
//
// RACE: classic.BubbleSort.swaps @swap @swap
//   both threads count their swaps with a plain `swaps++`; in the first phase both swap,
//   between the same two barrier crossings: unordered in every schedule
// NORACE: int[]
//   an element is compared and swapped by one thread per phase; the boundary elements
//   change hands between phases, through the barrier; main reads after join
// NORACE: long[]
//   each thread writes its own comparison count; main reads after join
public class BubbleSort {
    static final int N = 16;
    static final int[] a = new int[N];
    static final long[] compares = new long[2];
    static int swaps;
    static final CyclicBarrier barrier = new CyclicBarrier(2);

    static void sorter(int t) throws InterruptedException, BrokenBarrierException {
        int lo = t * (N / 2);
        int hi = Math.min(lo + N / 2, N - 1);
        long cmp = 0;
        for (int phase = 0; phase < N; phase++) {
            for (int i = lo + ((lo + phase) & 1); i < hi; i += 2) {
                cmp++;
                if (a[i] > a[i + 1]) {
                    int x = a[i];
                    a[i] = a[i + 1];
                    a[i + 1] = x;
                    swaps++; // @swap
                }
            }
            barrier.await();
        }
        compares[t] = cmp;
    }

    public static void main(String[] args) throws InterruptedException {
        for (int i = 0; i < N; i++) {
            a[i] = N - i;
        }
        Thread[] ts = new Thread[2];
        for (int t = 0; t < 2; t++) {
            final int me = t;
            ts[t] = new Thread(() -> {
                try {
                    sorter(me);
                } catch (InterruptedException | BrokenBarrierException e) {
                    throw new RuntimeException(e);
                }
            }, "sorter-" + t);
        }
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        boolean sorted = true;
        for (int i = 1; i < N; i++) {
            sorted &= a[i - 1] <= a[i];
        }
        System.out.println("sorted " + sorted + ": " + a[0] + ".." + a[N - 1] + ", compares "
                + (compares[0] + compares[1]));
    }
}
