package deadlocks;

// Runs the programs' threads one after another by timing only: each thread sleeps
// before it starts its work, long enough for the threads before it to be done. Sleeping
// orders nothing (the recorder records no synchronization for it), so another schedule
// of the same program can deadlock, and `jrace replay --deadlock` can drive it there.
// Should the recorded run itself deadlock (a machine so slow that 300 ms were not
// enough), `finish` ends the program after 30 s instead of hanging.
final class After {
    private After() {}

    static Thread start(String name, int slot, Runnable body) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(300L * slot);
            } catch (InterruptedException e) {
                return;
            }
            body.run();
        }, name);
        t.start();
        return t;
    }

    static void finish(Thread... threads) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        for (Thread t : threads) {
            while (t.isAlive() && System.nanoTime() < deadline) {
                t.join(100);
            }
            if (t.isAlive()) {
                System.out.println("the recorded run deadlocked");
                System.exit(3);
            }
        }
    }
}
