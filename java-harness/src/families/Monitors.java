package families;

// Family: synchronized blocks (monitorenter/monitorexit).
//
// RACE: families.Monitors.mixed @mixedA @mixedB
//   written under two different locks: the sections do not exclude each other
// RACE: families.Monitors.note @noteW @noteR by=wcp,cp,m2,mcm
//   worker A writes `note` before its section on `lock`, worker B reads it after its own
//   section on `lock`. The sections touch nothing in common, so they can be swapped:
//   a predictable race even when A's section came first (then hb/shb order the pair)
// NORACE: families.Monitors.guarded
//   every access inside synchronized (lock)
// NORACE: families.Monitors.handoff
//   written by A and read by B, both inside synchronized (lock)
public class Monitors {
    static final Object lock = new Object();
    static final Object lockA = new Object();
    static final Object lockB = new Object();
    static int mixed;
    static int note;
    static int guarded;
    static int handoff;
    static int partA;
    static int partB;

    static void workerA() {
        synchronized (lockA) {
            mixed = 1; // @mixedA
        }
        note = 4; // @noteW
        synchronized (lock) {
            partA = 1;
        }
        for (int i = 0; i < 3; i++) {
            synchronized (lock) {
                guarded++;
                handoff = 10;
            }
        }
    }

    static void workerB() {
        synchronized (lockB) {
            mixed = 1; // @mixedB
        }
        synchronized (lock) {
            partB = 1;
        }
        int n = note; // @noteR
        for (int i = 0; i < 3; i++) {
            synchronized (lock) {
                guarded++;
                n += handoff & 0;
            }
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread a = new Thread(Monitors::workerA, "mon-a");
        Thread b = new Thread(Monitors::workerB, "mon-b");
        a.start();
        b.start();
        a.join();
        b.join();
        System.out.println("guarded=" + guarded + " mixed=" + mixed + " parts=" + partA + partB);
    }
}
