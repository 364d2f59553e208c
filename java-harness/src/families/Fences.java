package families;

import java.lang.invoke.VarHandle;
import java.lang.reflect.Field;

// Family: classes of the program that order plain accesses with fences, as the LMAX
// Disruptor's Sequence does (a release fence before a plain write publishes, a plain read
// followed by an acquire fence receives). Every field and array access of such a class is
// synchronization.
//
// NORACE: families.Fences$Sequence.value
//   written after a release fence, read before an acquire fence (VarHandle fences)
// NORACE: families.Fences$UnsafeSequence.value
//   the same with sun.misc.Unsafe's storeFence and loadFence
// NORACE: families.Fences$Slot.payload
//   an event's field, written by the producer before it publishes the sequence, read by
//   the consumer after it saw the sequence
// NORACE: families.Fences$Slot.label
//   another field of the event, the same way through the Unsafe sequence
// RACE: families.Fences.unordered @unorderedA @unorderedB
//   a plain static both threads write, with no fence or lock
public class Fences {
    static final class Sequence {
        long value;

        long get() {
            long v = value;
            VarHandle.acquireFence();
            return v;
        }

        void set(long v) {
            VarHandle.releaseFence();
            value = v;
        }
    }

    static final class UnsafeSequence {
        static final sun.misc.Unsafe U = unsafe();
        long value;

        static sun.misc.Unsafe unsafe() {
            try {
                Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
                f.setAccessible(true);
                return (sun.misc.Unsafe) f.get(null);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }

        long get() {
            long v = value;
            U.loadFence();
            return v;
        }

        void set(long v) {
            U.storeFence();
            value = v;
        }
    }

    static final class Slot {
        long payload;
        String label;
    }

    static final Sequence published = new Sequence();
    static final UnsafeSequence labelled = new UnsafeSequence();
    static final Slot slot = new Slot();
    static int unordered;

    public static void main(String[] args) throws InterruptedException {
        Thread producer = new Thread(() -> {
            slot.payload = 42;
            published.set(1);
            slot.label = "ready";
            labelled.set(1);
            unordered = 1; // @unorderedA
        }, "producer");
        Thread consumer = new Thread(() -> {
            while (published.get() == 0) {
                Thread.onSpinWait();
            }
            long p = slot.payload;
            while (labelled.get() == 0) {
                Thread.onSpinWait();
            }
            String l = slot.label;
            unordered = (int) p + l.length(); // @unorderedB
        }, "consumer");
        producer.start();
        consumer.start();
        producer.join();
        consumer.join();
        System.out.println("unordered=" + (unordered > 0));
    }
}
