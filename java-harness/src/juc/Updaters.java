package juc;

import java.util.concurrent.atomic.*;

// Shape: atomics beyond AtomicInteger as the publishing edge: field updaters (reference,
// int, long), stamped and markable references, atomic arrays of longs and references,
// LongAdder and LongAccumulator. The writer fills a plain field, then publishes with the
// atomic; the reader sees the published value and reads the field.
//
// NORACE: juc.Updaters$Node.payload
// NORACE: juc.Updaters.viaInt
// NORACE: juc.Updaters.viaLong
// NORACE: juc.Updaters.viaStamped
// NORACE: juc.Updaters.viaMarked
// NORACE: juc.Updaters.viaLongArray
// NORACE: juc.Updaters.added
// RACE: juc.Updaters.unpublished @unpubW @unpubR
//   written after the flag was set, read after it was seen
public class Updaters {
    static final class Node {
        int payload;
    }

    volatile Node head;
    volatile int flag;
    volatile long lflag;
    static final AtomicReferenceFieldUpdater<Updaters, Node> HEAD =
            AtomicReferenceFieldUpdater.newUpdater(Updaters.class, Node.class, "head");
    static final AtomicIntegerFieldUpdater<Updaters> FLAG =
            AtomicIntegerFieldUpdater.newUpdater(Updaters.class, "flag");
    static final AtomicLongFieldUpdater<Updaters> LFLAG =
            AtomicLongFieldUpdater.newUpdater(Updaters.class, "lflag");

    static int viaInt, viaLong, viaStamped, viaMarked, viaLongArray, added, unpublished;

    public static void main(String[] args) throws Exception {
        Updaters u = new Updaters();
        AtomicStampedReference<String> st = new AtomicStampedReference<>("a", 0);
        AtomicMarkableReference<String> mk = new AtomicMarkableReference<>("a", false);
        AtomicLongArray la = new AtomicLongArray(4);
        LongAdder adder = new LongAdder();
        LongAccumulator max = new LongAccumulator(Long::max, 0);

        Thread w = new Thread(() -> {
            Node n = new Node();
            n.payload = 42;
            HEAD.compareAndSet(u, null, n);
            viaInt = 1;
            FLAG.set(u, 1);
            viaLong = 2;
            LFLAG.getAndIncrement(u);
            viaStamped = 3;
            st.compareAndSet("a", "b", 0, 1);
            viaMarked = 4;
            mk.compareAndSet("a", "b", false, true);
            viaLongArray = 5;
            la.lazySet(2, 7);
            for (int i = 0; i < 100; i++) {
                adder.increment();
                max.accumulate(i);
            }
            unpublished = 6; // @unpubW
        });
        w.start();
        Node n;
        while ((n = HEAD.get(u)) == null) Thread.onSpinWait();
        int s = n.payload;
        while (FLAG.get(u) == 0) Thread.onSpinWait();
        s += viaInt;
        while (LFLAG.get(u) == 0) Thread.onSpinWait();
        s += viaLong;
        while (st.getStamp() == 0) Thread.onSpinWait();
        s += viaStamped;
        while (!mk.isMarked()) Thread.onSpinWait();
        s += viaMarked;
        while (la.get(2) == 0) Thread.onSpinWait();
        s += viaLongArray;
        Thread.sleep(30);
        s += unpublished; // @unpubR
        Thread w2 = new Thread(() -> {
            for (int i = 0; i < 100; i++) adder.add(2);
            added = 1;
        });
        w2.start();
        w2.join();
        w.join();
        s += added;
        System.out.println("s=" + s + " sum=" + adder.sum() + " max=" + max.get());
    }
}
