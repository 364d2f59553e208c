package families;

// Not a family program: exits with the status given as its first argument, while a
// worker thread is still running, so that `jrace record` must pass the status through.
public class ExitStatus {
    static int ticks;

    public static void main(String[] args) {
        int status = Integer.parseInt(args[0]);
        Thread t = new Thread(() -> {
            while (true) {
                ticks++;
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "ticker");
        t.setDaemon(true);
        t.start();
        System.out.println("exit " + status);
        System.exit(status);
    }
}
