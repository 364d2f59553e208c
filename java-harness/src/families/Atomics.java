package families;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

// Family: java.util.concurrent.atomic (calls on atomics are volatile accesses).
//
// RACE: families.Atomics.plain @plainA @plainB
//   both workers increment a plain int next to the atomic counter
// RACE: families.Atomics.late @lateW @lateR
//   written after flag.set(1), read after the reader saw flag == 1
// NORACE: families.Atomics.payload
//   written before flag.set(1), read after flag.get() returned 1
// NORACE: families.Atomics.ticket
//   each worker writes `ticket` only when compareAndSet(0, 1) on `claim` succeeded for
//   it: exactly one of them does, and main reads it after join
public class Atomics {
    static final AtomicInteger flag = new AtomicInteger();
    static final AtomicInteger hits = new AtomicInteger();
    static final AtomicInteger claim = new AtomicInteger();
    static int payload;
    static int plain;
    static int late;
    static int ticket;

    static void writer() {
        hits.incrementAndGet();
        payload = 42;
        flag.set(1);
        if (claim.compareAndSet(0, 1)) {
            ticket = 1;
        }
        late = 5; // @lateW
        plain++; // @plainA
    }

    static void reader() {
        hits.incrementAndGet();
        while (flag.get() == 0) {
            LockSupport.parkNanos(50_000); // back off: keeps the trace short
        }
        int p = payload;
        if (claim.compareAndSet(0, 1)) {
            ticket = 2;
        }
        int l = late; // @lateR
        plain++; // @plainB
        if (p != 42 || (l != 0 && l != 5)) {
            throw new AssertionError(p + " " + l);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread r = new Thread(Atomics::reader, "reader");
        Thread w = new Thread(Atomics::writer, "writer");
        r.start();
        w.start();
        r.join();
        w.join();
        System.out.println("hits=" + hits.get() + " payload=" + payload + " claimed=" + (ticket != 0));
    }
}
