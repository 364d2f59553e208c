package deadlocks;

// Reachable only by moving work: each thread first updates a shared counter under
// `stats` and reads a configuration value written before both started; the inversion
// comes after. The recorded run ran the threads one after the other.
//
// DEADLOCK: @workerTo @auditorFrom
public class Reordered {
    static final Object stats = new Object();
    static final Object from = new Object();
    static final Object to = new Object();
    static int config;
    static int count;
    static int moved;

    public static void main(String[] args) throws Exception {
        config = 3;
        Thread t1 = After.start("worker", 0, () -> {
            synchronized (stats) {
                count++;
            }
            int k = config;
            synchronized (from) {
                synchronized (to) { // @workerTo
                    moved += k;
                }
            }
        });
        Thread t2 = After.start("auditor", 1, () -> {
            synchronized (stats) {
                count++;
            }
            synchronized (to) {
                synchronized (from) { // @auditorFrom
                    moved -= config;
                }
            }
        });
        After.finish(t1, t2);
        System.out.println("count=" + count + " moved=" + moved);
    }
}
