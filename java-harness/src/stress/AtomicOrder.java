package stress;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.IntBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The recorder's ordering stress test (tests/it/ordering.rs): THREADS threads hammer one
 * AtomicInteger, one element of an AtomicIntegerArray and one volatile field (through a
 * VarHandle and directly) with a random mix of get, set, compare-and-set and getAndAdd,
 * and keep what every operation returned. The log goes to the file named by the first
 * argument (the second is the operations per thread): per thread, its name, the number of
 * operations, then five ints per operation: target (0 the AtomicInteger, 1 the array
 * element, 2 the field through the VarHandle, 3 the field directly), kind (0 get, 1 set,
 * 2 compare-and-set, 3 getAndAdd), two arguments and the result (1/0 for a CAS). The test
 * then checks that the trace's order of these operations explains every value they
 * returned. The log is kept in IntBuffers, which the recorder does not see, so that only
 * the operations themselves are recorded.
 */
public class AtomicOrder {
    static final int THREADS = 4;
    static final AtomicInteger atomic = new AtomicInteger();
    static final AtomicIntegerArray array = new AtomicIntegerArray(8);
    static final int SLOT = 3;
    static final VarHandle FIELD;
    static final AtomicOrder holder = new AtomicOrder();

    volatile int field;

    static {
        try {
            FIELD = MethodHandles.lookup().findVarHandle(AtomicOrder.class, "field", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static void run(int seed, int n, IntBuffer log) {
        int x = seed * 0x9E3779B1 | 1;
        int[] last = new int[4];
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            int target = (x >>> 8) & 3;
            int kind = (x >>> 12) & 3;
            int a = (x >>> 16) & 7;
            int b = 0;
            int result;
            switch (kind) {
                case 0:
                    result = get(target);
                    last[target] = result;
                    break;
                case 1:
                    set(target, a);
                    result = 0;
                    break;
                case 2:
                    // Expect what this thread saw last: succeeds often, fails often.
                    b = a;
                    a = last[target];
                    result = cas(target, a, b) ? 1 : 0;
                    break;
                default:
                    a = a - 3;
                    result = getAndAdd(target, a);
                    last[target] = result + a;
                    break;
            }
            log.put(target).put(kind).put(a).put(b).put(result);
        }
    }

    static int get(int target) {
        switch (target) {
            case 0: return atomic.get();
            case 1: return array.get(SLOT);
            case 2: return (int) FIELD.getVolatile(holder);
            default: return holder.field;
        }
    }

    static void set(int target, int v) {
        switch (target) {
            case 0: atomic.set(v); break;
            case 1: array.set(SLOT, v); break;
            case 2: FIELD.setVolatile(holder, v); break;
            default: holder.field = v; break;
        }
    }

    static boolean cas(int target, int e, int v) {
        switch (target) {
            case 0: return atomic.compareAndSet(e, v);
            case 1: return array.compareAndSet(SLOT, e, v);
            // The direct field has no CAS: its CAS goes through the VarHandle.
            default: return FIELD.compareAndSet(holder, e, v);
        }
    }

    static int getAndAdd(int target, int d) {
        switch (target) {
            case 0: return atomic.getAndAdd(d);
            case 1: return array.getAndAdd(SLOT, d);
            default: return (int) FIELD.getAndAdd(holder, d);
        }
    }

    public static void main(String[] args) throws Exception {
        String out = args[0];
        int n = Integer.parseInt(args[1]);
        Thread[] ts = new Thread[THREADS];
        IntBuffer[] logs = new IntBuffer[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int seed = t + 1;
            final IntBuffer log = IntBuffer.allocate(n * 5);
            logs[t] = log;
            ts[t] = new Thread(() -> run(seed, n, log), "stress-" + t);
        }
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        try (DataOutputStream d = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(out)))) {
            for (int t = 0; t < THREADS; t++) {
                d.writeUTF(ts[t].getName());
                IntBuffer log = logs[t];
                log.flip();
                d.writeInt(log.remaining() / 5);
                while (log.hasRemaining()) {
                    d.writeInt(log.get());
                }
            }
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
        System.out.println("done");
    }
}
