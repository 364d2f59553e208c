package juc;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

// Shape: a thread that ends holding a ReentrantLock. Derby's cache locks a fresh entry,
// loses a putIfAbsent race and drops the entry still locked: legal Java (only monitors are
// released by structure), and the lock simply stays held.
//
// RACE: juc.LockHeldAtEnd.free @free @free
//   written by both workers, each before its own locking
// NORACE: juc.LockHeldAtEnd$Entry.value
//   written by each worker in its own entry while holding the entry's lock; main reads
//   both entries after joining the workers
// NORACE: juc.LockHeldAtEnd.shared
//   written under the lock `common`, which both workers release
public class LockHeldAtEnd {
    static final class Entry {
        final ReentrantLock lock = new ReentrantLock();
        int value;
    }

    static final ConcurrentHashMap<String, Entry> cache = new ConcurrentHashMap<>();
    static final ReentrantLock common = new ReentrantLock();
    static int free;
    static int shared;

    static void worker(int id) {
        free = id; // @free
        Entry fresh = new Entry();
        fresh.lock.lock();
        fresh.value = id;
        // Whoever loses a race for its key would drop its entry still locked; here each
        // worker has its own key and keeps its entry, locked.
        Entry winner = cache.putIfAbsent("key" + id, fresh);
        if (winner != null) {
            return;
        }
        common.lock();
        try {
            shared += id;
        } finally {
            common.unlock();
        }
        // The winner keeps its entry locked too, and ends holding it.
    }

    public static void main(String[] args) throws InterruptedException {
        Thread a = new Thread(() -> worker(1), "worker-1");
        Thread b = new Thread(() -> worker(2), "worker-2");
        a.start();
        b.start();
        a.join();
        b.join();
        int sum = 0;
        for (Entry e : cache.values()) {
            sum += e.value;
        }
        System.out.println("shared=" + shared + " values=" + sum + " entries=" + cache.size());
    }
}
