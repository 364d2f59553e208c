package classic;

// Classic bounded buffer: one producer, two consumers, a circular buffer of four slots
// guarded by its monitor with wait/notifyAll; a poison item per consumer ends them.
//
// RACE: classic.BoundedBuffer.count @peek @takeCount
//   once it has put its last item, the producer peeks at `count` without the monitor
//   (a stale "items left" statistic); the consumer that takes that last item decrements
//   `count` inside the monitor afterwards, in every schedule, with no synchronization
//   between the peek and the decrement
// RACE: classic.BoundedBuffer.lastSum @lastSum @lastSum
//   each consumer, once it took its poison item, leaves its sum in a plain field meant for
//   "the consumer that finished last": both writes follow the writer's last
//   synchronization, unordered in every schedule
// NORACE: classic.BoundedBuffer.count @putCount @waitFull @waitEmpty
//   inside the monitor, the puts and takes never race with each other
// NORACE: classic.BoundedBuffer.head
//   only inside the monitor
// NORACE: classic.BoundedBuffer.tail
//   only inside the monitor
// NORACE: java.lang.Object[]
//   the slots are written and read inside the monitor
// NORACE: classic.BoundedBuffer$Item.payload
//   set by the producer before it puts the item, read by a consumer after it took it:
//   published through the monitor
// NORACE: long[]
//   each consumer writes its own sum slot; main reads them after join
public class BoundedBuffer {
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
    static final Object monitor = new Object();

    static void put(Item it) throws InterruptedException {
        synchronized (monitor) {
            while (count == slots.length) { // @waitFull
                monitor.wait();
            }
            slots[tail] = it;
            tail = (tail + 1) % slots.length;
            count++; // @putCount
            monitor.notifyAll();
        }
    }

    static Item take() throws InterruptedException {
        synchronized (monitor) {
            while (count == 0) { // @waitEmpty
                monitor.wait();
            }
            Item it = (Item) slots[head];
            slots[head] = null;
            head = (head + 1) % slots.length;
            count--; // @takeCount
            monitor.notifyAll();
            return it;
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
        peeked = count; // @peek
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
        lastSum = (int) sum; // @lastSum
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
        Thread p = thread(BoundedBuffer::producer, "producer");
        c1.start();
        c2.start();
        p.start();
        p.join();
        c1.join();
        c2.join();
        System.out.println("items " + ITEMS + ", sum " + (sums[0] + sums[1]) + ", left " + count);
    }
}
