package deadlocks;

import java.io.File;
import java.io.IOException;

// Runs the programs' threads one after another by a channel the recorder does not see:
// a thread leaves a file behind when it is done, and the next one polls for it. (join,
// isAlive, volatile flags or anything of java.util.concurrent would order the threads
// in the trace, and then no other schedule could deadlock.) The recorded run therefore
// never deadlocks, and nothing in the trace orders the threads.
final class After {
    private static final File DIR = makeDir();

    private After() {}

    private static File makeDir() {
        try {
            File d = File.createTempFile("jrace-deadlocks", "");
            d.delete();
            d.mkdir();
            d.deleteOnExit();
            return d;
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    static Thread start(String name, Thread before, Runnable body) {
        File mine = new File(DIR, name);
        File theirs = before == null ? null : new File(DIR, before.getName());
        Thread t = new Thread(() -> {
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (theirs != null && !theirs.exists() && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
            body.run();
            try {
                mine.createNewFile();
                mine.deleteOnExit();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, name);
        t.start();
        return t;
    }
}
