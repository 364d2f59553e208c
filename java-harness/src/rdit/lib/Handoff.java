package rdit.lib;

/**
 * A library class that synchronizes internally: a one-shot handoff whose methods use a
 * private monitor (wait/notifyAll). Recorded with `--exclude 'rdit.lib.*'`, nothing of it
 * is traced: hb and mcm cannot see that publish() happens before await() returns, while a
 * BarrierPair around each call (reachable set: this handoff and its lock) lets rdit order
 * the calls on the same handoff.
 */
public final class Handoff {
    private final Object lock = new Object();
    private boolean ready;

    public void publish() {
        synchronized (lock) {
            ready = true;
            lock.notifyAll();
        }
    }

    public void await() {
        synchronized (lock) {
            while (!ready) {
                try {
                    lock.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** Whether a thread has ended (like the thesis's isAlive case). */
    public static boolean finished(Thread t) {
        return !t.isAlive();
    }

    /** Looks at an object (a call whose reachable set is all that matters). */
    public static int inspect(Object o) {
        return o == null ? 0 : 1;
    }

    /** Throws when the handoff was not published yet (the exceptional exit of a call). */
    public void check() {
        synchronized (lock) {
            if (!ready) {
                throw new IllegalStateException("not published");
            }
        }
    }
}
