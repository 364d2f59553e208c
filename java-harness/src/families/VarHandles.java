package families;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;

// Family: VarHandle release/acquire and CAS (issue 3: "VarHandle ... volatile operations
// as volatile accesses").
//
// RACE: families.VarHandles.late @lateW @lateR
//   written after the release store, read after the acquire load saw it
// NORACE: families.VarHandles.data
//   written before setRelease(flag, 1), read after getAcquire(flag) returned 1
// NORACE: families.VarHandles.won
//   written only by the thread whose compareAndSet(owner, 0, id) succeeded; read by main
//   after join
// NORACE: families.VarHandles.guarded
//   `gated` writes it only if its plain VarHandle get of `gate`, under a monitor, saw
//   `opener`'s write of `gate`, made under that monitor after opener's write of it
// NORACE: families.VarHandles.guarded2
//   the same with AtomicInteger.setPlain/getPlain
// NORACE: families.VarHandles.guarded3
//   the same with plain set/get of an array element through an array VarHandle
// NORACE: families.VarHandles.guarded4
//   the same with AtomicIntegerArray.setPlain/getPlain
public class VarHandles {
    static final VarHandle FLAG;
    static final VarHandle OWNER;
    static final VarHandle GATE;
    static final AtomicInteger GATE2 = new AtomicInteger();
    static final Object L = new Object();
    static final Object L2 = new Object();
    static final Object L3 = new Object();
    static final Object L4 = new Object();
    static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(int[].class);
    static final int[] GATE3 = new int[2];
    static final AtomicIntegerArray GATE4 = new AtomicIntegerArray(2);

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            FLAG = l.findStaticVarHandle(VarHandles.class, "flag", int.class);
            OWNER = l.findStaticVarHandle(VarHandles.class, "owner", int.class);
            GATE = l.findStaticVarHandle(VarHandles.class, "gate", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static int flag;
    static int owner;
    static int data;
    static int late;
    static int won;
    static int gate;
    static int guarded;
    static int guarded2;
    static int guarded3;
    static int guarded4;

    static void opener() {
        guarded = 1;
        synchronized (L) {
            gate = 1;
        }
        guarded2 = 1;
        synchronized (L2) {
            GATE2.setPlain(1);
        }
        guarded3 = 1;
        synchronized (L3) {
            SLOTS.set(GATE3, 1, 1);
        }
        guarded4 = 1;
        synchronized (L4) {
            GATE4.setPlain(1, 1);
        }
    }

    static void gated3() {
        LockSupport.parkNanos(30_000_000);
        int r;
        synchronized (L3) {
            r = (int) SLOTS.get(GATE3, 1);
        }
        if (r == 1) {
            guarded3 = 2;
        }
    }

    static void gated4() {
        LockSupport.parkNanos(30_000_000);
        int r;
        synchronized (L4) {
            r = GATE4.getPlain(1);
        }
        if (r == 1) {
            guarded4 = 2;
        }
    }

    static void gated() {
        LockSupport.parkNanos(30_000_000); // opener first, usually
        int r;
        synchronized (L) {
            r = (int) GATE.get();
        }
        if (r == 1) {
            guarded = 2;
        }
    }

    static void gated2() {
        LockSupport.parkNanos(30_000_000);
        int r;
        synchronized (L2) {
            r = GATE2.getPlain();
        }
        if (r == 1) {
            guarded2 = 2;
        }
    }

    static void writer() {
        data = 42;
        FLAG.setRelease(1);
        if (OWNER.compareAndSet(0, 1)) {
            won = 1;
        }
        late = 3; // @lateW
    }

    static void reader() {
        while ((int) FLAG.getAcquire() == 0) {
            LockSupport.parkNanos(50_000); // back off: keeps the trace short
        }
        int d = data;
        if (OWNER.compareAndSet(0, 2)) {
            won = 2;
        }
        int l = late; // @lateR
        if (d != 42 || (l != 0 && l != 3)) {
            throw new AssertionError(d + " " + l);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Thread r = new Thread(VarHandles::reader, "reader");
        Thread w = new Thread(VarHandles::writer, "writer");
        r.start();
        w.start();
        r.join();
        w.join();
        Thread[] g = {new Thread(VarHandles::opener, "opener"),
            new Thread(VarHandles::gated, "gated"), new Thread(VarHandles::gated2, "gated2"),
            new Thread(VarHandles::gated3, "gated3"), new Thread(VarHandles::gated4, "gated4")};
        for (Thread t : g) {
            t.start();
        }
        for (Thread t : g) {
            t.join();
        }
        System.out.println("data=" + data + " claimed=" + (won != 0));
    }
}
