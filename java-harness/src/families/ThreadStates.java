package families;

// Family: a thread that learns another thread ended by polling isAlive() or getState()
// (JLS 17.4.5: the end of a thread happens-before any action of a thread that detects it
// has terminated), polling from before that thread is started. isAlive() is false, and
// getState() NEW, before start() and for a moment after it: that is no end.
//
// NORACE: families.ThreadStates.x @workerX @observerX
//   the observer waits for the worker to be alive and then not alive, then uses `x`
// NORACE: families.ThreadStates.y @workerY @stateY
//   the second observer waits for getState() to be TERMINATED
// NORACE: families.ThreadStates.before @beforeW @thirdR
//   main writes it and then starts `silent`, a thread that records nothing; `third`
//   joins `silent` once it was started, then reads it
// NORACE: families.ThreadStates.viaRef
//   written by `byRef`, which main joins through a method reference (`t::join`, called
//   in the method-reference class the JVM spins, which records nothing), then read
// RACE: families.ThreadStates.early @workerEarly @observerEarly
//   the observer reads `early` before it polls at all
public class ThreadStates {
    static int x;
    static int y;
    static int early;
    static int sink;
    static int before;
    static int sink2;
    static int viaRef;

    interface Joiner {
        void join() throws InterruptedException;
    }

    public static void main(String[] args) throws InterruptedException {
        Thread worker = new Thread(() -> {
            early = 1; // @workerEarly
            x = 1; // @workerX
            y = 1; // @workerY
        }, "worker");
        Thread observer = new Thread(() -> {
            sink = early; // @observerEarly
            while (!worker.isAlive() && worker.getState() == Thread.State.NEW) {
                Thread.onSpinWait();
            }
            while (worker.isAlive()) {
                Thread.onSpinWait();
            }
            x++; // @observerX
        }, "observer");
        Thread byState = new Thread(() -> {
            while (worker.getState() != Thread.State.TERMINATED) {
                Thread.onSpinWait();
            }
            y++; // @stateY
        }, "by-state");
        observer.start();
        byState.start();
        worker.start();
        observer.join();
        byState.join();
        Thread silent = new Thread(() -> { }, "silent");
        Thread third = new Thread(() -> {
            while (silent.getState() == Thread.State.NEW) {
                Thread.onSpinWait();
            }
            try {
                silent.join();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
            sink2 = before; // @thirdR
        }, "third");
        third.start();
        before = 5; // @beforeW
        silent.start();
        third.join();
        Thread byRef = new Thread(() -> viaRef = 3, "byRef");
        byRef.start();
        Joiner j = byRef::join;
        j.join();
        viaRef++;
        System.out.println("x=" + x + " y=" + y + " viaRef=" + viaRef);
    }
}
