package juc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

// Shape: collections shared without their lock. A synchronizedMap's view iterated
// without holding the wrapper's monitor while another thread puts into the map; two
// synchronizedList wrappers over one backing list (two monitors, one list); an
// Iterator.remove() on a plain ArrayList that another thread reads. These are races on
// the collections' state, which the JDK code itself never shows (it is not traced).
//
// RACE: java.util.HashMap.$state @putW @iterR
//   the writer puts into the synchronized map (inside its monitor); the reader iterates
//   its key set (taken before the threads start) without holding it
// RACE: java.util.ArrayList.$state @add1 @add2
//   two threads add to one ArrayList through two different synchronizedList wrappers
// RACE: java.util.ArrayList.$state @itRemove @sizeR
//   one thread removes through an iterator of a plain ArrayList, another reads its size
// NORACE: java.util.HashMap.$state @guardedIter @guardedPut
//   the same map iterated and written while holding its monitor (the wrapper itself)
public class SyncViews {
    static final Map<Integer, Integer> map = Collections.synchronizedMap(new HashMap<>());
    static final java.util.Set<Integer> keys = map.keySet();
    static final Map<Integer, Integer> safe = Collections.synchronizedMap(new HashMap<>());
    static final List<Integer> backing = new ArrayList<>();
    static final List<Integer> one = Collections.synchronizedList(backing);
    static final List<Integer> two = Collections.synchronizedList(backing);
    static final List<Integer> plain = new ArrayList<>(List.of(1, 2, 3, 4));
    static int sink;

    static void writer() {
        map.put(1, 1); // @putW
        one.add(1); // @add1
        for (Iterator<Integer> it = plain.iterator(); it.hasNext(); ) {
            if (it.next() % 2 == 0) {
                it.remove(); // @itRemove
            }
        }
        synchronized (safe) {
            safe.put(2, 2); // @guardedPut
        }
    }

    static void reader() {
        int n = 0;
        try {
            for (Integer k : keys) { // @iterR
                n += k;
            }
        } catch (java.util.ConcurrentModificationException e) {
            // The race above, when it happens for real: the output stays the same.
            n = -1;
        }
        two.add(2); // @add2
        n += plain.size(); // @sizeR
        synchronized (safe) {
            for (Integer k : safe.keySet()) { // @guardedIter
                n += k;
            }
        }
        sink = n;
    }

    public static void main(String[] args) throws InterruptedException {
        Thread r = new Thread(SyncViews::reader, "reader");
        Thread w = new Thread(SyncViews::writer, "writer");
        r.start();
        w.start();
        r.join();
        w.join();
        // (backing.size() is racy: two threads add to it through two monitors.)
        System.out.println("sizes " + map.size() + " " + plain.size());
    }
}
