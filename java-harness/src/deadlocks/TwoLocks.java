package deadlocks;

// Classic inversion: `first` takes a then b, `second` (later, by timing only) b then a.
//
// DEADLOCK: @firstB @secondA
public class TwoLocks {
    static final Object a = new Object();
    static final Object b = new Object();
    static int n;

    public static void main(String[] args) throws Exception {
        Thread t1 = After.start("first", 0, () -> {
            synchronized (a) {
                synchronized (b) { // @firstB
                    n++;
                }
            }
        });
        Thread t2 = After.start("second", 1, () -> {
            synchronized (b) {
                synchronized (a) { // @secondA
                    n++;
                }
            }
        });
        After.finish(t1, t2);
        System.out.println("n=" + n);
    }
}
