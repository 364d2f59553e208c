package families;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

// Family: publication through a ConcurrentHashMap (put happens before a get that sees it).
//
// RACE: families.ConcurrentMapPub$Item.extra @extraW @extraR
//   the publisher writes `extra` *after* put(); the consumer reads it after get()
// RACE: families.ConcurrentMapPub.before @beforeW @beforeR
//   the consumer reads `before` before its first call on the map
// NORACE: families.ConcurrentMapPub$Item.value
//   written by the publisher before put(), read by the consumer after get() returned it
// NORACE: families.ConcurrentMapPub.map
//   the map reference is written by main before start()
public class ConcurrentMapPub {
    static final class Item {
        int value;
        int extra;
    }

    static ConcurrentHashMap<String, Item> map;
    static int before;

    static void publisher() {
        before = 1; // @beforeW
        Item it = new Item();
        it.value = 42;
        map.put("k", it);
        it.extra = 9; // @extraW
    }

    static void consumer() {
        int b = before; // @beforeR
        Item it;
        while ((it = map.get("k")) == null) {
            LockSupport.parkNanos(50_000); // back off: keeps the trace short
        }
        int v = it.value;
        int e = it.extra; // @extraR
        if (v != 42 || (e != 0 && e != 9) || (b != 0 && b != 1)) {
            throw new AssertionError(v + " " + e + " " + b);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        map = new ConcurrentHashMap<>();
        Thread c = new Thread(ConcurrentMapPub::consumer, "consumer");
        Thread p = new Thread(ConcurrentMapPub::publisher, "publisher");
        c.start();
        p.start();
        c.join();
        p.join();
        System.out.println("value=" + map.get("k").value + " extra=" + map.get("k").extra);
    }
}
