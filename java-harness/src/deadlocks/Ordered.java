package deadlocks;

// Inversions the program's own synchronization rules out: the second thread is started
// after the first was joined; the third waits (wait/notify on a flag) until the second
// has left its nested section.
//
// NODEADLOCK
public class Ordered {
    static final Object a = new Object();
    static final Object b = new Object();
    static final Object signal = new Object();
    static boolean ready;
    static int n;

    public static void main(String[] args) throws Exception {
        Thread t1 = new Thread(() -> {
            synchronized (a) {
                synchronized (b) {
                    n++;
                }
            }
        }, "first");
        t1.start();
        t1.join();
        Thread t3 = new Thread(() -> {
            synchronized (signal) {
                while (!ready) {
                    try {
                        signal.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
            synchronized (a) {
                synchronized (b) {
                    n++;
                }
            }
        }, "third");
        t3.start();
        Thread t2 = new Thread(() -> {
            synchronized (b) {
                synchronized (a) {
                    n++;
                }
            }
            synchronized (signal) {
                ready = true;
                signal.notifyAll();
            }
        }, "second");
        t2.start();
        t2.join();
        t3.join();
        System.out.println("n=" + n);
    }
}
