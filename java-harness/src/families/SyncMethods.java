package families;

// Family: synchronized methods (ACC_SYNCHRONIZED, instance and static), no monitorenter
// in the bytecode: the agent must record the acquire/release itself.
//
// RACE: families.SyncMethods$Gauge.level @setLevel @peekLevel
//   written by a synchronized method, read by a plain one: only one side holds the lock
// RACE: families.SyncMethods.loose @looseA @looseB
//   a plain method called by both workers
// NORACE: families.SyncMethods.count
//   only touched by the synchronized instance methods inc() and get()
// NORACE: families.SyncMethods.total
//   worker A updates it in the static synchronized method bump(), worker B in a
//   synchronized (SyncMethods.class) block: the same lock
public class SyncMethods {
    static final class Gauge {
        int level;

        synchronized void set(int l) {
            level = l; // @setLevel
        }

        int peek() {
            return level; // @peekLevel
        }
    }

    int count;
    int loose;
    static int total;

    synchronized void inc() {
        count++;
    }

    synchronized int get() {
        return count;
    }

    void looseA() {
        loose = 2; // @looseA
    }

    void looseB() {
        loose = 2; // @looseB
    }

    static synchronized void bump(int by) {
        total += by;
    }

    public static void main(String[] args) throws InterruptedException {
        SyncMethods s = new SyncMethods();
        Gauge g = new Gauge();
        Thread a = new Thread(() -> {
            s.looseA();
            g.set(3);
            for (int i = 0; i < 4; i++) {
                s.inc();
                bump(1);
            }
        }, "sm-a");
        Thread b = new Thread(() -> {
            s.looseB();
            int l = g.peek();
            for (int i = 0; i < 4; i++) {
                s.inc();
                synchronized (SyncMethods.class) {
                    total += 2 + (l & 0);
                }
            }
        }, "sm-b");
        a.start();
        b.start();
        a.join();
        b.join();
        System.out.println("count=" + s.get() + " total=" + total);
    }
}
