package deadlocks;

// Three threads, three locks: a→b, b→c, c→a.
//
// DEADLOCK: @oneB @twoC @threeA
public class ThreeCycle {
    static final Object a = new Object();
    static final Object b = new Object();
    static final Object c = new Object();
    static int n;

    public static void main(String[] args) throws Exception {
        Thread t1 = After.start("one", 0, () -> {
            synchronized (a) {
                synchronized (b) { // @oneB
                    n++;
                }
            }
        });
        Thread t2 = After.start("two", 1, () -> {
            synchronized (b) {
                synchronized (c) { // @twoC
                    n++;
                }
            }
        });
        Thread t3 = After.start("three", 2, () -> {
            synchronized (c) {
                synchronized (a) { // @threeA
                    n++;
                }
            }
        });
        After.finish(t1, t2, t3);
        System.out.println("n=" + n);
    }
}
