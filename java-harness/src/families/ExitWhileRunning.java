package families;

// Not a family program: main calls System.exit while two other threads (one daemon, one
// not) are still running and writing. Their logs must be sealed all the same.
public class ExitWhileRunning {
    static int shared;
    static volatile boolean startedA;
    static volatile boolean startedB;

    static void pause() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread a = new Thread(() -> {
            startedA = true;
            while (true) {
                shared++;
                pause();
            }
        }, "busy-user");
        Thread b = new Thread(() -> {
            startedB = true;
            while (true) {
                shared--;
                pause();
            }
        }, "busy-daemon");
        b.setDaemon(true);
        a.start();
        b.start();
        while (!startedA || !startedB) {
            Thread.onSpinWait();
        }
        Thread.sleep(100);
        System.out.println("exiting");
        System.exit(0);
    }
}
