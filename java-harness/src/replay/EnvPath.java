package replay;

/**
 * Replay's divergence test: the writer's path depends on the environment variable
 * REPLAY_PATH, which the test sets to "alt" for the replay but not for the recording.
 * Race: x, written by the writer and read by main without synchronization.
 */
public class EnvPath {
    static int x;
    static int y;

    public static void main(String[] args) throws InterruptedException {
        boolean alt = "alt".equals(System.getenv("REPLAY_PATH"));
        Thread w = new Thread(() -> write(alt), "writer");
        w.start();
        int r = x;
        w.join();
        System.out.println("done");
    }

    static void write(boolean alt) {
        if (alt) {
            y = 2;
        }
        x = 1;
    }
}
