package families;

import java.util.concurrent.locks.LockSupport;

// Family: volatile fields (vread/vwrite): publication through a volatile flag.
//
// RACE: families.VolatilePub.late @lateW @lateR
//   written by the writer *after* it set the flag, read by the reader after it saw the flag
// RACE: families.VolatilePub.early @earlyW @earlyR
//   the reader reads `early` before it looks at the flag
// NORACE: families.VolatilePub.data
//   written before `ready = true`, read after the reader saw ready == true
// NORACE: families.VolatilePub.ready
//   volatile: never a data race
public class VolatilePub {
    static int data;
    static int late;
    static int early;
    static volatile boolean ready;

    static void writer() {
        early = 1; // @earlyW
        data = 42;
        ready = true;
        late = 7; // @lateW
    }

    static void reader() {
        int e = early; // @earlyR
        while (!ready) {
            LockSupport.parkNanos(50_000); // back off: keeps the trace short
        }
        int d = data;
        int l = late; // @lateR
        if (d != 42 || (l != 0 && l != 7) || (e != 0 && e != 1)) {
            throw new AssertionError(d + " " + l + " " + e);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread r = new Thread(VolatilePub::reader, "reader");
        Thread w = new Thread(VolatilePub::writer, "writer");
        r.start();
        w.start();
        r.join();
        w.join();
        System.out.println("data=" + data + " late=" + late);
    }
}
