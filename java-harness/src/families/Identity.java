package families;

// Family: object identity. Every object has its own variables, however many objects are
// allocated and collected: two threads allocate many short-lived objects of one class
// (across garbage collections that move them) and write their fields. Ids must never make
// two different objects look like one.
//
// RACE: families.Identity$Box.v @sharedA @sharedB by=hb,shb,wcp,cp,m2
//   the one Box both threads write (not required of mcm: when one thread churns before the
//   other starts, the two writes are further apart than mcm's window)
// NORACE: families.Identity$Box.v @ownA @ownB
//   each thread's own boxes, thousands of them, allocated and dropped
// NORACE: families.Identity$Box.next
//   links of each thread's own short list
public class Identity {
    static final class Box {
        int v;
        Box next;
    }

    static Box shared;
    static long sumA;
    static long sumB;

    static long churn(int seed, boolean a) {
        long sum = 0;
        Box keep = null;
        for (int i = 0; i < 4000; i++) {
            Box b = new Box();
            if (a) {
                b.v = seed + i; // @ownA
            } else {
                b.v = seed - i; // @ownB
            }
            if (i % 100 == 0) {
                b.next = keep;
                keep = b;
            }
            if (i % 1000 == 0) {
                System.gc();
            }
            sum += b.v;
        }
        for (Box b = keep; b != null; b = b.next) {
            sum += b.v;
        }
        return sum;
    }

    public static void main(String[] args) throws InterruptedException {
        shared = new Box();
        Thread a = new Thread(() -> {
            shared.v = 1; // @sharedA
            sumA = churn(7, true);
        }, "id-a");
        Thread b = new Thread(() -> {
            shared.v = 1; // @sharedB
            sumB = churn(9, false);
        }, "id-b");
        a.start();
        b.start();
        a.join();
        b.join();
        System.out.println("sumA=" + sumA + " sumB=" + sumB);
    }
}
