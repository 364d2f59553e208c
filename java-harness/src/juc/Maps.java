package juc;

import java.util.*;
import java.util.concurrent.*;

// Shape: objects published through concurrent collections other than ConcurrentHashMap's
// put/get: a ConcurrentSkipListMap and Set, a CopyOnWriteArrayList and Set, a
// ConcurrentHashMap key set view, computeIfAbsent/compute/merge building the value inside
// the lambda, and ThreadLocals (never shared: no race at all).
//
// NORACE: juc.Maps$Item.v
// NORACE: juc.Maps.local
// RACE: juc.Maps.racy @racyW @racyR
//   the racer thread writes it; main reads it after a sleep, which orders nothing
public class Maps {
    static int racy;
    static final class Item implements Comparable<Item> {
        int v;
        Item(int v) { this.v = v; }
        public int compareTo(Item o) { return Integer.compare(System.identityHashCode(this), System.identityHashCode(o)); }
    }

    static final ThreadLocal<int[]> TL = ThreadLocal.withInitial(() -> new int[1]);
    static int local;

    public static void main(String[] args) throws Exception {
        ConcurrentSkipListMap<Integer, Item> skip = new ConcurrentSkipListMap<>();
        ConcurrentSkipListSet<Item> skipSet = new ConcurrentSkipListSet<>();
        CopyOnWriteArrayList<Item> cow = new CopyOnWriteArrayList<>();
        CopyOnWriteArraySet<Item> cowSet = new CopyOnWriteArraySet<>();
        Set<Item> keys = ConcurrentHashMap.newKeySet();
        ConcurrentHashMap<Integer, Item> chm = new ConcurrentHashMap<>();
        int n = 10;
        Thread w = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                Item a = new Item(0); a.v = i; skip.put(i, a);
                Item b = new Item(0); b.v = i; skipSet.add(b);
                Item c = new Item(0); c.v = i; cow.add(c);
                Item d = new Item(0); d.v = i; cowSet.add(d);
                Item e = new Item(0); e.v = i; keys.add(e);
                chm.computeIfAbsent(i, k -> { Item x = new Item(0); x.v = k; return x; });
                chm.compute(100 + i, (k, old) -> { Item x = new Item(0); x.v = k; return x; });
                Item m = new Item(0); m.v = i;
                chm.merge(200 + i, m, (o, nw) -> nw);
                TL.get()[0]++;
            }
        });
        w.start();
        long s = 0;
        for (int i = 0; i < n; i++) {
            Item a;
            while ((a = skip.get(i)) == null) Thread.onSpinWait();
            s += a.v;
            while (cow.size() <= i) Thread.onSpinWait();
            s += cow.get(i).v;
            Item c;
            while ((c = chm.get(i)) == null) Thread.onSpinWait();
            s += c.v;
            while ((c = chm.get(100 + i)) == null) Thread.onSpinWait();
            s += c.v;
            while ((c = chm.get(200 + i)) == null) Thread.onSpinWait();
            s += c.v;
            TL.get()[0]++;
        }
        while (skipSet.size() < n || cowSet.size() < n || keys.size() < n) Thread.onSpinWait();
        for (Item b : skipSet) s += b.v;
        for (Item d : cowSet) s += d.v;
        for (Item e : keys) s += e.v;
        w.join();
        local = TL.get()[0];
        // Many more skip-list hand-offs: the reader spins in get() while the writer links
        // each node in (its plain read of a node's link must follow the link's CAS).
        ConcurrentSkipListMap<Integer, Item> more = new ConcurrentSkipListMap<>();
        int many = 200;
        Thread w2 = new Thread(() -> {
            for (int i = 0; i < many; i++) {
                Item a = new Item(0); a.v = i; more.put(i, a);
            }
        });
        w2.start();
        for (int i = 0; i < many; i++) {
            Item a;
            while ((a = more.get(i)) == null) Thread.onSpinWait();
            s += a.v;
        }
        w2.join();
        // A real race, for contrast: nothing orders the thread's write and main's read.
        Thread racer = new Thread(() -> {
            racy = 1; // @racyW
        });
        racer.start();
        Thread.sleep(50);
        int seenRacy = racy; // @racyR
        racer.join();
        System.out.println("s=" + (s + seenRacy - seenRacy) + " local=" + local);
    }
}
