package vthreads;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.*;
import java.util.concurrent.locks.ReentrantLock;

// Shape: virtual threads (JDK 21 and later; the program is compiled for 17, so it reaches
// them through reflection). A virtual thread runs on carrier threads, moves to another
// carrier whenever it parks (a sleep, a queue, a lock), and on JDK 24+ even while it holds
// a monitor: each must be a thread of its own in the trace, with its program order kept
// across carriers and its start, join and locks where they were.
//
// NORACE: vthreads.Virtual.started
//   written by a virtual thread, read after join()
// NORACE: vthreads.Virtual$Own.v
//   each virtual thread's own object, written before and after a sleep (a carrier change)
// NORACE: vthreads.Virtual.locked
//   incremented under a monitor held across a sleep
// NORACE: vthreads.Virtual.juLocked
//   incremented under a ReentrantLock held across a sleep
// NORACE: vthreads.Virtual$Cell.n
//   handed from one virtual thread to another through a SynchronousQueue
// NORACE: vthreads.Virtual.pooled
//   written by tasks of a thread-per-task executor, read after their futures
// NORACE: vthreads.Virtual.waited
//   set before notifyAll, read after wait() saw the flag, both virtual threads
// NORACE: vthreads.Virtual.viaBuilder
//   written by main, read by a platform thread started by Thread.ofPlatform().start(r)
// NORACE: vthreads.Virtual.joinedByDuration
//   written by a virtual thread and by a platform thread that has ended, read after
//   join(Duration) returned true (JDK 19+, called through reflection)
// NORACE: vthreads.Virtual.seenDead
//   written by a platform thread, read once main saw it dead through a method reference,
//   `anyMatch(Thread::isAlive)` (JDK 21+: isAlive is Java code the recorder hooks)
// RACE: vthreads.Virtual.unguarded @unguarded @unguarded
//   incremented by several virtual threads with no synchronization
public class Virtual {
    static final class Own { int v; }
    static final class Cell { int n; }

    static int started, locked, juLocked, pooled, waited, unguarded, viaBuilder;
    static int joinedByDuration;
    static int seenDead;
    static boolean ready;

    static Thread startVirtual(Runnable r) throws Exception {
        Method m = Thread.class.getMethod("startVirtualThread", Runnable.class);
        return (Thread) m.invoke(null, r);
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        try {
            Thread.class.getMethod("startVirtualThread", Runnable.class);
        } catch (NoSuchMethodException e) {
            System.out.println("no virtual threads on this JDK");
            return;
        }
        viaBuilder = 5;
        Object builder = Thread.class.getMethod("ofPlatform").invoke(null);
        Thread platform = (Thread) Class.forName("java.lang.Thread$Builder")
                .getMethod("start", Runnable.class)
                .invoke(builder, (Runnable) () -> sum(viaBuilder));
        platform.join();
        Thread first = startVirtual(() -> { started = 1; });
        first.join();
        int sum = started;

        List<Thread> dying = List.of(new Thread(() -> { seenDead = 3; }));
        dying.forEach(Thread::start);
        while (dying.stream().anyMatch(Thread::isAlive)) {
            Thread.onSpinWait();
        }
        sum += seenDead;

        // join(Duration): of a virtual thread, and of a platform thread already ended.
        Method joinFor = Thread.class.getMethod("join", java.time.Duration.class);
        Thread byDuration = startVirtual(() -> { joinedByDuration = 1; });
        if ((Boolean) joinFor.invoke(byDuration, java.time.Duration.ofSeconds(30))) {
            sum += joinedByDuration;
        }
        Thread ended = new Thread(() -> { joinedByDuration = 2; });
        ended.start();
        sleep(50); // ended by now, most likely: join(Duration) returns at once
        if ((Boolean) joinFor.invoke(ended, java.time.Duration.ofSeconds(30))) {
            sum += joinedByDuration;
        }

        Object mon = new Object();
        ReentrantLock lock = new ReentrantLock();
        List<Thread> ts = new ArrayList<>();
        List<Own> owns = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            Own own = new Own();
            owns.add(own);
            ts.add(startVirtual(() -> {
                own.v = 1;
                sleep(3);
                own.v++;
                synchronized (mon) {
                    locked++;
                    sleep(1);
                    locked++;
                }
                lock.lock();
                try {
                    juLocked++;
                    sleep(1);
                } finally {
                    lock.unlock();
                }
                unguarded++; // @unguarded
            }));
        }
        for (Thread t : ts) t.join();
        for (Own o : owns) sum += o.v;
        sum += locked + juLocked;

        SynchronousQueue<Cell> q = new SynchronousQueue<>();
        Thread producer = startVirtual(() -> {
            for (int i = 0; i < 20; i++) {
                Cell c = new Cell();
                c.n = i;
                try {
                    q.put(c);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }
        });
        long[] got = new long[1];
        Thread consumer = startVirtual(() -> {
            for (int i = 0; i < 20; i++) {
                try {
                    got[0] += q.take().n;
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }
        });
        producer.join();
        consumer.join();

        ExecutorService ex = (ExecutorService) Executors.class
                .getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            fs.add(ex.submit(() -> {
                synchronized (Virtual.class) {
                    pooled++;
                }
            }));
        }
        for (Future<?> f : fs) f.get();
        ex.shutdown();
        ex.awaitTermination(10, TimeUnit.SECONDS);
        sum += pooled;

        Thread waiter = startVirtual(() -> {
            synchronized (mon) {
                while (!ready) {
                    try {
                        mon.wait();
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                }
                sum(waited);
            }
        });
        Thread notifier = startVirtual(() -> {
            waited = 7;
            synchronized (mon) {
                ready = true;
                mon.notifyAll();
            }
        });
        waiter.join();
        notifier.join();
        sink = unguarded; // (after the joins; lost updates must not change the output)
        System.out.println("sum " + sum + " got " + got[0]);
    }

    static volatile int sink;

    static void sum(int v) {
        sink = v;
    }
}
