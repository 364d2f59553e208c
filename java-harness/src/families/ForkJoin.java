package families;

import java.util.concurrent.locks.LockSupport;

// Family: Thread.start (fork) and Thread.join.
//
// RACE: families.ForkJoin.progress @progressMain @progressChild
//   main writes `progress` after starting the child and before joining it; so does the child
// NORACE: families.ForkJoin.input
//   written by main before start(), read by the children
// NORACE: families.ForkJoin.output
//   written by the first child, read by main after join()
// NORACE: families.ForkJoin.stage
//   written by the first child; main joins it and only then starts the second child,
//   which reads `stage` (fork/join order through a third thread)
// NORACE: families.ForkJoin.nested
//   written by a grandchild, read by the second child after it joined the grandchild
// NORACE: families.ForkJoin.polled
//   written by a third child; main waits with `while (t.isAlive())` instead of join():
//   detecting termination through isAlive() synchronizes like join() (JLS 17.4.4)
// NORACE: families.ForkJoin$Worker.in
//   a Thread subclass's field, set by its constructor in main, read by its run()
//   (started and joined through calls on the subclass: `invokevirtual Worker.start`)
// NORACE: families.ForkJoin$Worker.out
//   written by the subclass's run(), read by main after join()
// NORACE: families.ForkJoin$1Local.out
//   the same with a local class extending Thread, polled with getState()
// NORACE: families.ForkJoin$Job.out
//   a Thread subclass started and joined through an interface of the program
public class ForkJoin {
    interface Startable {
        void start();

        void join() throws InterruptedException;
    }

    static final class Job extends Thread implements Startable {
        int out;

        @Override
        public void run() {
            out = 9;
        }
    }

    static final class Worker extends Thread {
        int in;
        int out;

        Worker(int in) {
            super("worker");
            this.in = in;
        }

        @Override
        public void run() {
            out = in + 1;
        }
    }

    static int input;
    static int output;
    static int stage;
    static int progress;
    static int nested;
    static int polled;

    static void first() {
        progress = 1; // @progressChild
        output = input * 2;
        stage = 3;
    }

    static void second() {
        int s = stage;
        Thread g = new Thread(() -> nested = s + input, "grandchild");
        g.start();
        try {
            g.join();
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
        output += nested;
    }

    public static void main(String[] args) throws InterruptedException {
        input = 21;
        Thread a = new Thread(ForkJoin::first, "child-1");
        a.start();
        progress = 2; // @progressMain
        a.join();
        int o = output;
        Thread b = new Thread(ForkJoin::second, "child-2");
        b.start();
        b.join();
        Thread c = new Thread(() -> polled = 7, "child-3");
        c.start();
        while (c.isAlive()) {
            LockSupport.parkNanos(50_000); // back off: keeps the trace short
        }
        Worker w = new Worker(41);
        w.start();
        w.join();
        class Local extends Thread {
            int out;

            @Override
            public void run() {
                out = 5;
            }
        }
        Startable job = new Job();
        job.start();
        job.join();
        Local l = new Local();
        l.start();
        while (l.getState() != Thread.State.TERMINATED) {
            LockSupport.parkNanos(50_000);
        }
        System.out.println("output=" + o + "," + output + " nested=" + nested + " polled=" + polled
                + " worker=" + w.out + " local=" + l.out + " job=" + ((Job) job).out);
    }
}
