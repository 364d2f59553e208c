package families;

// Not a family program: it never ends by itself. The crash-safety test records it and kills
// the JVM with SIGKILL. The first line of its output is the JVM's pid; two threads then
// race on `counter` forever (families.Spin.counter, Spin.java lines of @spinA and @spinB).
public class Spin {
    static int counter;
    static volatile boolean stop;

    static void pause() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        System.out.println(ProcessHandle.current().pid());
        System.out.flush();
        Thread a = new Thread(() -> {
            while (!stop) {
                counter++; // @spinA
                pause();
            }
        }, "spin-a");
        Thread b = new Thread(() -> {
            while (!stop) {
                counter--; // @spinB
                pause();
            }
        }, "spin-b");
        a.start();
        b.start();
        a.join();
        b.join();
    }
}
