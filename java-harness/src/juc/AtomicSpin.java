package juc;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.locks.LockSupport;

// Shape: the order of atomic operations. A thread spins on a get() until another
// thread's getAndAdd lands, then writes what that thread wrote before its getAndAdd: an
// AtomicInteger, an AtomicIntegerArray element, and a volatile field through an
// AtomicIntegerFieldUpdater (spun on with a plain read of the field itself).
//
// RACE: juc.AtomicSpin.after @afterW @afterR
//   the adder writes `after` past its last getAndAdd; the spinner reads it past its last
//   spin
// RACE: juc.AtomicSpin.lost @lostA @lostB
//   both threads add to `lost` before their first atomic operation
// NORACE: juc.AtomicSpin.viaAtomic
//   written by the adder before counter.getAndAdd, by the spinner after it saw the sum
// NORACE: juc.AtomicSpin.viaArray
//   the same through slots.getAndAdd(2, 5) and slots.get(2)
// NORACE: juc.AtomicSpin.viaUpdater
//   the same through TICKS.getAndAdd and a read of the volatile field `ticks`
public class AtomicSpin {
    static final AtomicInteger counter = new AtomicInteger();
    static final AtomicIntegerArray slots = new AtomicIntegerArray(4);
    static final AtomicInteger gate = new AtomicInteger(7);
    static final AtomicIntegerFieldUpdater<AtomicSpin> TICKS =
            AtomicIntegerFieldUpdater.newUpdater(AtomicSpin.class, "ticks");
    static final AtomicSpin box = new AtomicSpin();
    static int viaAtomic;
    static int viaArray;
    static int viaUpdater;
    static int after;
    static int lost;

    volatile int ticks;

    static void adder() {
        lost += 1; // @lostA
        viaAtomic = 1;
        counter.getAndAdd(5);
        viaArray = 1;
        slots.getAndAdd(2, 5);
        viaUpdater = 1;
        TICKS.getAndAdd(box, 5);
        after = 1; // @afterW
    }

    static void spinner() {
        // Fails: gate holds 7, never 0. Whatever the adder did, nothing is ordered by it.
        if (!gate.compareAndSet(0, 1)) {
            lost += 2; // @lostB
        }
        while (counter.get() != 5) {
            LockSupport.parkNanos(50_000); // back off: keeps the trace short
        }
        viaAtomic = 2;
        while (slots.get(2) != 5) {
            LockSupport.parkNanos(50_000); // back off: keeps the trace short
        }
        viaArray = 2;
        while (box.ticks != 5) {
            LockSupport.parkNanos(50_000); // back off: keeps the trace short
        }
        viaUpdater = 2;
        int a = after; // @afterR
        if (a != 0 && a != 1) {
            throw new AssertionError(a);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread s = new Thread(AtomicSpin::spinner, "spinner");
        Thread a = new Thread(AtomicSpin::adder, "adder");
        s.start();
        a.start();
        s.join();
        a.join();
        System.out.println("sum=" + (viaAtomic + viaArray + viaUpdater));
    }
}
