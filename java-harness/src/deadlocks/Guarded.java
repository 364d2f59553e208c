package deadlocks;

// The inversion happens inside a common guard lock: only one thread can be between
// its two acquisitions at a time.
//
// NODEADLOCK
public class Guarded {
    static final Object guard = new Object();
    static final Object a = new Object();
    static final Object b = new Object();
    static int n;

    public static void main(String[] args) throws Exception {
        Thread t1 = After.start("first", 0, () -> {
            synchronized (guard) {
                synchronized (a) {
                    synchronized (b) {
                        n++;
                    }
                }
            }
        });
        Thread t2 = After.start("second", 1, () -> {
            synchronized (guard) {
                synchronized (b) {
                    synchronized (a) {
                        n++;
                    }
                }
            }
        });
        After.finish(t1, t2);
        System.out.println("n=" + n);
    }
}
