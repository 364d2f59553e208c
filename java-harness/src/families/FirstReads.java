package families;

import families.signal.Go;

// Not a family program: the recorder's stamp test (tests/it/record_families.rs) records it
// with families.signal excluded. Round after round, a writer thread waits for a new
// reader's signal, then writes a fresh array element; the reader signals and reads that
// element as its very first recorded event, so its hook also sets up the thread's log.
// The reader mostly loads 0 before the write lands: the trace must then order that read
// before the write. Prints how many reads saw 0 (schedule-dependent, for the test only).
public class FirstReads {
    public static void main(String[] args) throws InterruptedException {
        int rounds = Integer.parseInt(args[0]);
        int[] xs = new int[rounds + 1];
        int[] seen = new int[rounds + 1];
        int[] started = new int[rounds + 1];
        for (int k = 1; k <= rounds; k++) {
            final int r = k;
            Thread w = new Thread(() -> {
                started[r] = 1; // the writer's log exists before the round
                Go.set(-r);
                while (Go.get() != r) {
                    Thread.onSpinWait();
                }
                xs[r] = 1;
            });
            w.start();
            while (Go.get() != -r) {
                Thread.onSpinWait();
            }
            Thread reader = new Thread(() -> {
                Go.set(r);
                seen[r] = xs[r];
            });
            reader.start();
            reader.join();
            w.join();
        }
        int zeros = 0;
        for (int k = 1; k <= rounds; k++) {
            zeros += seen[k] == 0 ? 1 : 0;
        }
        System.out.println("zeros=" + zeros);
    }
}
