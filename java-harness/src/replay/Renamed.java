package replay;

/**
 * Replay's timeout test: the worker thread is named by the system property replay.name
 * (default "worker"), so a replay run with another name never starts the thread the
 * schedule waits for.
 * Race: x, written by the worker and read by main without synchronization.
 */
public class Renamed {
    static int x;

    public static void main(String[] args) throws InterruptedException {
        String name = System.getProperty("replay.name", "worker");
        Thread t = new Thread(() -> x = 1, name);
        t.start();
        int r = x;
        t.join();
        System.out.println("done");
    }
}
