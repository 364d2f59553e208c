package rdit;

import rdit.lib.Handoff;

/**
 * rdit end to end (tests/it/record_rdit.rs), recorded with `--barrier-pairs --exclude
 * 'rdit.lib.*'`: the library rdit.lib.Handoff synchronizes inside excluded code.
 *
 * 1. Handoff: main writes Mail.body, then publishes a handoff; the consumer awaits the
 *    same handoff, then reads Mail.body. Ordered in every run, but only through the
 *    library's private monitor: a false race for hb and mcm, none for rdit (the two
 *    calls' reachable sets share the handoff).
 * 2. Disjoint: main writes Counter.hits and publishes handoff h1; thread "worker"
 *    publishes and awaits its own handoff h2 and reads Counter.hits. Nothing orders them:
 *    a real race, for hb and for rdit (the reachable sets are disjoint).
 *
 * Expected: hb reports both Mail.body and Counter.hits; rdit reports Counter.hits only.
 * Also: a call that ends by an exception (check) and one whose argument is a Thread
 * (finished: its reachable set names the thread by its name, "consumer"), and a reference
 * stored into an array after a call reached it (inspect: the next call reaches the target).
 */
public class Pipeline {
    static final class Mail {
        int body;
    }

    static final class Counter {
        int hits;
    }

    static int seen;

    public static void main(String[] args) throws Exception {
        // 1. A handoff through the library.
        Mail mail = new Mail();
        Handoff h = new Handoff();
        Thread consumer = new Thread(() -> {
            h.await();
            int b = mail.body;
            System.out.println("consumer got " + b);
        }, "consumer");
        consumer.start();
        mail.body = 42;
        h.publish();
        consumer.join();
        System.out.println("consumer finished " + Handoff.finished(consumer));

        // An exception out of excluded code still ends its BarrierPair.
        Handoff unpublished = new Handoff();
        try {
            unpublished.check();
        } catch (IllegalStateException e) {
            System.out.println("caught " + e.getMessage());
        }

        // A reference stored by traced code into an object an earlier call reached: the
        // next call's reachable set has the new target (a snapshot edge).
        Mail[] slot = new Mail[1];
        Handoff.inspect(slot);
        slot[0] = new Mail();
        System.out.println("inspected " + Handoff.inspect(slot));

        // 2. The same library on disjoint objects: no order between the two threads.
        Counter counter = new Counter();
        Handoff h1 = new Handoff();
        Handoff h2 = new Handoff();
        Thread worker = new Thread(() -> {
            h2.publish();
            h2.await();
            seen = counter.hits;
        }, "worker");
        worker.start();
        counter.hits = 7;
        h1.publish();
        h1.await();
        worker.join();
        System.out.println("done");
    }
}
