package replay;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Replay's test of Condition.await: classic.BoundedBuffer with a ReentrantLock and one
 * Condition instead of the buffer's monitor. A consumer or the producer woken by
 * signalAll holds the lock again when await returns, so a replay that held it there
 * until its wake's turn kept the lock from the threads whose steps come first (every
 * replay timed out). Races: count (the producer's peek after its last put against a
 * consumer's take) and lastSum (the two consumers' last writes).
 */
public class CondBuffer {
    static final class Item {
        int payload;
    }

    static final int ITEMS = 40;
    static final Item POISON = new Item();
    static final Object[] slots = new Object[4];
    static int head;
    static int tail;
    static int count;
    static int lastSum;
    static int peeked;
    static final long[] sums = new long[2];
    static final ReentrantLock lock = new ReentrantLock();
    static final Condition changed = lock.newCondition();

    static void put(Item it) throws InterruptedException {
        lock.lock();
        try {
            while (count == slots.length) {
                changed.await();
            }
            slots[tail] = it;
            tail = (tail + 1) % slots.length;
            count++;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    static Item take() throws InterruptedException {
        lock.lock();
        try {
            while (count == 0) {
                changed.await();
            }
            Item it = (Item) slots[head];
            slots[head] = null;
            head = (head + 1) % slots.length;
            count--;
            changed.signalAll();
            return it;
        } finally {
            lock.unlock();
        }
    }

    static void producer() throws InterruptedException {
        for (int i = 1; i <= ITEMS; i++) {
            Item it = new Item();
            it.payload = i;
            put(it);
        }
        put(POISON);
        put(POISON);
        peeked = count;
    }

    static void consumer(int id) throws InterruptedException {
        long sum = 0;
        while (true) {
            Item it = take();
            if (it == POISON) {
                break;
            }
            sum += it.payload;
        }
        sums[id] = sum;
        lastSum = (int) sum;
    }

    interface Body {
        void run() throws InterruptedException;
    }

    static Thread thread(Body b, String name) {
        return new Thread(() -> {
            try {
                b.run();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, name);
    }

    public static void main(String[] args) throws InterruptedException {
        Thread c1 = thread(() -> consumer(0), "consumer-1");
        Thread c2 = thread(() -> consumer(1), "consumer-2");
        Thread p = thread(CondBuffer::producer, "producer");
        c1.start();
        c2.start();
        p.start();
        p.join();
        c1.join();
        c2.join();
        System.out.println("items " + ITEMS + ", sum " + (sums[0] + sums[1]) + ", left " + count);
    }
}
