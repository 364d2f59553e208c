package families;

import java.lang.reflect.Field;
import java.util.concurrent.locks.LockSupport;

// Family: ordered Unsafe accesses to off-heap memory (a null base and an address, as
// Agrona's and Aeron's buffers over direct memory do): a release store and an acquire load
// of one address hand over what was written before the store.
//
// RACE: families.OffHeap.late @lateW @lateR
//   written after the volatile store, read after the volatile load saw it
// NORACE: families.OffHeap.data
//   written before putLongVolatile(null, address, 1), read after getLongVolatile(null,
//   address) returned 1
// NORACE: families.OffHeap.ordered
//   the same with putOrderedLong and a compareAndSwapLong that moves the word on
public class OffHeap {
    static final sun.misc.Unsafe U = unsafe();
    static int data;
    static int late;
    static int ordered;

    static sun.misc.Unsafe unsafe() {
        try {
            Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            return (sun.misc.Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        long flag = U.allocateMemory(16);
        U.putLongVolatile(null, flag, 0L);
        U.putLongVolatile(null, flag + 8, 0L);
        Thread w = new Thread(() -> {
            data = 42;
            U.putLongVolatile(null, flag, 1L);
            late = 7; // @lateW
            ordered = 5;
            U.putOrderedLong(null, flag + 8, 1L);
        }, "writer");
        Thread r = new Thread(() -> {
            while (U.getLongVolatile(null, flag) != 1L) {
                LockSupport.parkNanos(50_000); // back off: keeps the trace short
            }
            int d = data;
            int l = late; // @lateR
            while (!U.compareAndSwapLong(null, flag + 8, 1L, 2L)) {
                LockSupport.parkNanos(50_000);
            }
            int o = ordered;
            if (d != 42 || o != 5 || (l != 0 && l != 7)) {
                throw new AssertionError(d + " " + o + " " + l);
            }
        }, "reader");
        r.start();
        w.start();
        r.join();
        w.join();
        U.freeMemory(flag);
        System.out.println("data=" + data + " ordered=" + ordered);
    }
}
