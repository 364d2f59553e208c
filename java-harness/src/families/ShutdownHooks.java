package families;

// Family: shutdown hooks. When the last non-daemon thread has ended, the JVM's
// DestroyJavaVM thread runs the shutdown sequence and starts the hooks (a hook started by
// System.exit starts in the exiting thread instead): whatever the non-daemon threads did
// is ordered before a hook, daemon threads still running are not.
//
// NORACE: families.ShutdownHooks.total
//   written by main and by a worker main joined; read by the hook after main ended
// NORACE: families.ShutdownHooks.unjoined
//   written by a non-daemon worker nobody joined: the JVM waited for its end
// RACE: families.ShutdownHooks.ticks @tick @hookTicks
//   a daemon thread keeps writing it while the hook reads it
public class ShutdownHooks {
    static int total, unjoined, ticks;
    static volatile int sink;

    static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            sink = ticks; // @hookTicks
            System.out.println("total " + total + " unjoined " + unjoined);
        }));
        Thread worker = new Thread(() -> { total += 5; });
        worker.start();
        worker.join();
        total += 1;
        Thread loose = new Thread(() -> {
            pause(5);
            unjoined = 3;
        });
        loose.start();
        Thread ticker = new Thread(() -> {
            while (true) {
                ticks++; // @tick
                pause(1);
            }
        });
        ticker.setDaemon(true);
        ticker.start();
        pause(10);
    }
}
