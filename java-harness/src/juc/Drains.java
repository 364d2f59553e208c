package juc;

import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;

// Shape: less common hand-offs: BlockingQueue.drainTo, Semaphore.tryAcquire with a
// timeout, a synchronizedMap iterated inside synchronized(map), elements of an
// AtomicReferenceArray published with set and read with get, and a ConcurrentHashMap
// value updated with replace/putIfAbsent in a loop.
//
// NORACE: juc.Drains$Msg.body
// NORACE: juc.Drains.permitted
// NORACE: juc.Drains$Msg.seen
// RACE: juc.Drains.racy @racyW @racyR
//   the racer thread writes it; main reads it after a sleep, which orders nothing
public class Drains {
    static int racy;
    static final class Msg { int body; int seen; }
    static int permitted;

    public static void main(String[] args) throws Exception {
        LinkedBlockingQueue<Msg> q = new LinkedBlockingQueue<>();
        Semaphore sem = new Semaphore(0);
        Map<Integer, Msg> sm = Collections.synchronizedMap(new HashMap<>());
        AtomicReferenceArray<Msg> arr = new AtomicReferenceArray<>(8);
        ConcurrentHashMap<String, Msg> chm = new ConcurrentHashMap<>();
        Thread w = new Thread(() -> {
            for (int i = 0; i < 10; i++) {
                Msg m = new Msg(); m.body = i; q.add(m);
            }
            permitted = 1;
            sem.release();
            for (int i = 0; i < 8; i++) {
                Msg m = new Msg(); m.body = i; sm.put(i, m);
                Msg a = new Msg(); a.body = i; arr.set(i, a);
            }
            for (int i = 0; i < 50; i++) {
                Msg nm = new Msg(); nm.body = i;
                Msg old = chm.putIfAbsent("k", nm);
                if (old != null) { Msg r = new Msg(); r.body = old.body + 1; chm.replace("k", old, r); }
            }
        });
        w.start();
        long s = 0;
        List<Msg> got = new ArrayList<>();
        while (got.size() < 10) {
            q.drainTo(got);
            Thread.onSpinWait();
        }
        for (Msg m : got) s += m.body;
        if (!sem.tryAcquire(20, TimeUnit.SECONDS)) throw new AssertionError();
        s += permitted;
        for (int i = 0; i < 8; i++) {
            Msg a;
            while ((a = arr.get(i)) == null) Thread.onSpinWait();
            s += a.body;
        }
        w.join();
        synchronized (sm) {
            for (Msg m : sm.values()) { m.seen++; s += m.body; }
        }
        for (int i = 0; i < 20; i++) {
            Msg nm = new Msg(); nm.body = 100;
            Msg old = chm.putIfAbsent("k", nm);
            if (old != null) { Msg r = new Msg(); r.body = old.body + 1; chm.replace("k", old, r); }
        }
        s += chm.get("k").body;
        // A real race, for contrast: nothing orders the thread's write and main's read.
        Thread racer = new Thread(() -> {
            racy = 1; // @racyW
        });
        racer.start();
        Thread.sleep(50);
        int seenRacy = racy; // @racyR
        racer.join();
        System.out.println("s=" + (s + seenRacy - seenRacy));
    }
}
