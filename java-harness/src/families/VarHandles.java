package families;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
public class VarHandles {
    static final VarHandle FLAG;
    static final VarHandle OWNER;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            FLAG = l.findStaticVarHandle(VarHandles.class, "flag", int.class);
            OWNER = l.findStaticVarHandle(VarHandles.class, "owner", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static int flag;
    static int owner;
    static int data;
    static int late;
    static int won;

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
        System.out.println("data=" + data + " claimed=" + (won != 0));
    }
}
