package families;

import java.util.Optional;
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
// NORACE: long[]
//   a Holder's final array, filled by its constructor, read by a thread that found the
//   Holder through the volatile `holder` (the array is reached through a final field,
//   which is not recorded)
// NORACE: families.VolatilePub.dispatched
//   read only by Report.run, which runs only when the runner read the Report that the
//   publisher stored into the volatile `task` after writing it (the virtual call picks
//   the method by the object read: a branch no conditional jump shows)
// NORACE: families.VolatilePub$Box.v
//   written before the Box is published in an Optional through the volatile `boxed`, read
//   through Optional.orElse (the JDK's code picks the object)
public class VolatilePub {
    static int data;
    static int late;
    static int early;
    static volatile boolean ready;

    static final class Holder {
        final long[] slots;

        Holder(long v) {
            slots = new long[4];
            slots[1] = v;
        }

        long get() {
            return slots[1];
        }
    }

    static volatile Holder holder = new Holder(1);

    static int dispatched;
    static int report;

    static final class Report implements Runnable {
        @Override
        public void run() {
            report = dispatched;
        }
    }

    static volatile Runnable task = () -> { };

    static final class Box {
        int v;
    }

    static final Box EMPTY = new Box();
    static volatile Optional<Box> boxed = Optional.empty();

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
        Thread p = new Thread(() -> {
            holder = new Holder(2);
            dispatched = 9;
            task = new Report();
            Box b = new Box();
            b.v = 3;
            boxed = Optional.of(b);
        }, "publisher");
        long[] seen = new long[2];
        Thread f = new Thread(() -> {
            LockSupport.parkNanos(30_000_000); // the publisher first, usually
            seen[0] = holder.get();
        }, "finalReader");
        Thread d = new Thread(() -> {
            LockSupport.parkNanos(30_000_000);
            task.run();
        }, "dispatcher");
        Thread o = new Thread(() -> {
            LockSupport.parkNanos(30_000_000);
            Box b = boxed.orElse(EMPTY);
            seen[1] = b.v;
        }, "optionalReader");
        p.start();
        f.start();
        d.start();
        o.start();
        p.join();
        f.join();
        d.join();
        o.join();
        if (seen[0] != 1 && seen[0] != 2) {
            throw new AssertionError(seen[0]);
        }
        System.out.println("data=" + data + " late=" + late);
    }
}
