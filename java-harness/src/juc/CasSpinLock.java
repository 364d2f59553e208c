package juc;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Field;
import java.util.concurrent.atomic.AtomicInteger;

// Shape: spin locks built from a compare-and-set, released with an ordered (release)
// store: sun.misc.Unsafe's compareAndSwapInt and putOrderedInt, AtomicInteger's
// compareAndSet and lazySet, a VarHandle's compareAndSet and setRelease. A compare-and-set
// is one atomic operation (the trace has its read and its write): two threads cannot
// both read the lock free and both enter, so what each lock guards never races.
//
// NORACE: juc.CasSpinLock.viaUnsafe
//   incremented by both threads inside the Unsafe spin lock
// NORACE: juc.CasSpinLock.viaAtomic
//   incremented inside the AtomicInteger spin lock
// NORACE: juc.CasSpinLock.viaHandle
//   incremented inside the VarHandle spin lock
// RACE: juc.CasSpinLock.tally @tallyA @tallyB
//   each thread writes it before its first compare-and-set
@SuppressWarnings("removal")
public class CasSpinLock {
    static final sun.misc.Unsafe U;
    static final long LOCK;
    static final VarHandle HANDLE;

    static {
        try {
            Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            U = (sun.misc.Unsafe) f.get(null);
            LOCK = U.objectFieldOffset(CasSpinLock.class.getDeclaredField("lock"));
            HANDLE = MethodHandles.lookup().findVarHandle(CasSpinLock.class, "handle", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static final CasSpinLock box = new CasSpinLock();
    static final AtomicInteger atomic = new AtomicInteger();
    static int viaUnsafe;
    static int viaAtomic;
    static int viaHandle;
    static int tally;

    volatile int lock;
    volatile int handle;

    static void sections() {
        for (int i = 0; i < 5; i++) {
            while (!U.compareAndSwapInt(box, LOCK, 0, 1)) {
                Thread.onSpinWait();
            }
            viaUnsafe++;
            U.putOrderedInt(box, LOCK, 0);
            while (!atomic.compareAndSet(0, 1)) {
                Thread.onSpinWait();
            }
            viaAtomic++;
            atomic.lazySet(0);
            while (!HANDLE.compareAndSet(box, 0, 1)) {
                Thread.onSpinWait();
            }
            viaHandle++;
            HANDLE.setRelease(box, 0);
        }
    }

    static void first() {
        tally += 1; // @tallyA
        sections();
    }

    static void second() {
        tally += 2; // @tallyB
        sections();
    }

    public static void main(String[] args) throws InterruptedException {
        Thread a = new Thread(CasSpinLock::first, "first");
        Thread b = new Thread(CasSpinLock::second, "second");
        a.start();
        b.start();
        a.join();
        b.join();
        System.out.println("sections=" + (viaUnsafe + viaAtomic + viaHandle));
    }
}
