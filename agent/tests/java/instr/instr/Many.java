package instr;

import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import java.util.concurrent.locks.*;
import java.util.function.*;
import java.util.stream.*;

/**
 * Many shapes of Java code for the instrumenter test: its output must be the same with and
 * without instrumentation, under -Xverify:all. Deterministic output only.
 */
public class Many {
    interface Shape {
        double area();
        default String describe() { return name() + String.format(":%.2f", area()); }
        String name();
        static Shape unit() { return new Sq(1); }
        private int hidden() { return 3; }
        default int twice() { return hidden() * 2; }
    }

    record Sq(double side) implements Shape {
        public double area() { return side * side; }
        public String name() { return "sq"; }
    }

    enum Op {
        ADD("+") { long apply(long a, long b) { return a + b; } },
        MUL("*") { long apply(long a, long b) { return a * b; } };
        final String sym;
        Op(String s) { sym = s; }
        abstract long apply(long a, long b);
    }

    static abstract class Animal {
        protected final String name;
        private static int created;
        Animal(String name) { this.name = name; created++; }
        abstract String sound();
        public String toString() { return name + " says " + sound(); }
    }

    static class Dog extends Animal {
        Dog(boolean loud) { super(loud ? "DOG" : "dog"); }
        String sound() { return name.equals("DOG") ? "WOOF" : "woof"; }
    }

    class Counter {
        private long count;
        private final double[] hist = new double[4];
        synchronized void inc(int k) {
            count += k;
            hist[k & 3] += 0.5 * k;
        }
        synchronized long get() { return count; }
        synchronized void failIfOdd(int k) {
            count++;
            if ((k & 1) == 1) throw new RuntimeException("odd " + k);
        }
    }

    static long[][] matrix(int n) {
        long[][] m = new long[n][n];
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                m[i][j] = (long) i * j + (i ^ j);
        return m;
    }

    static String sw(String s) {
        switch (s) {
            case "alpha": return "A";
            case "beta": return "B";
            case "gamma": case "delta": return "GD";
            default: return "?";
        }
    }

    static int tf(int x) {
        int r = 0;
        try {
            if (x < 0) throw new IllegalArgumentException();
            r = x * 2;
            return r;
        } catch (IllegalArgumentException e) {
            r = -1;
            return r;
        } finally {
            r += 100;
            STATIC_LOG.append("f").append(r).append(' ');
        }
    }

    static final StringBuilder STATIC_LOG = new StringBuilder();
    static volatile boolean flag;
    static final Object LOCK = new Object();
    static int shared;
    static char[] chars = "hello".toCharArray();
    static short[] shorts = {1, 2, 3};
    static byte[] bytes = {4, 5};
    static boolean[] bools = {true, false};
    static float[] floats = {1.5f};

    static int sum(int... xs) {
        int s = 0;
        for (int x : xs) s += x;
        return s;
    }

    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

    public static void main(String[] args) throws Exception {
        Many outer = new Many();
        // interfaces, records, enums, inheritance
        Shape s = new Sq(2);
        System.out.println(s.describe() + " " + Shape.unit().area() + " " + s.twice() + " " + s);
        for (Op op : Op.values()) System.out.println(op + op.sym + op.apply(6, 7));
        System.out.println(new Dog(true) + ", " + new Dog(false) + " " + Animal.created);
        // arrays of every kind
        long[][] m = matrix(5);
        long tot = 0;
        for (long[] row : m) for (long v : row) tot += v;
        chars[0] = 'j';
        shorts[1] += 40;
        bytes[0] ^= 1;
        bools[1] = !bools[0];
        floats[0] *= 3;
        System.out.println(tot + " " + new String(chars) + " " + Arrays.toString(shorts) + Arrays.toString(bytes) + Arrays.toString(bools) + Arrays.toString(floats));
        // switches, try/finally
        for (String w : new String[] {"alpha", "beta", "delta", "zeta"}) System.out.print(sw(w));
        System.out.println(" " + tf(3) + " " + tf(-1) + " " + STATIC_LOG);
        // labeled loops
        int found = -1;
        outerLoop:
        for (int i = 0; i < 10; i++) {
            for (int j = 0; j < 10; j++) {
                if (i * j == 42) { found = i * 10 + j; break outerLoop; }
                if (j > i) continue outerLoop;
            }
        }
        System.out.println("found " + found + " " + sum() + " " + sum(1, 2, 3) + " " + fib(15));
        // inner class, anonymous class, lambdas, method refs, streams
        Counter c = outer.new Counter();
        Runnable r = new Runnable() {
            int runs;
            public void run() { runs++; c.inc(runs); }
        };
        for (int i = 0; i < 5; i++) r.run();
        IntUnaryOperator sq = x -> x * x;
        Function<Integer, String> f = Integer::toHexString;
        Supplier<List<String>> sup = ArrayList::new;
        List<String> l = sup.get();
        l.add(f.apply(sq.applyAsInt(12)));
        System.out.println(c.get() + " " + l + " " + IntStream.range(0, 10).map(sq).filter(x -> x % 2 == 0).sum()
                + " " + Stream.of("b", "a", "c").sorted().collect(Collectors.joining(",")));
        // exceptions leaving synchronized methods and blocks
        int failures = 0;
        for (int k = 0; k < 4; k++) {
            try {
                c.failIfOdd(k);
            } catch (RuntimeException e) {
                failures++;
            }
            try {
                synchronized (LOCK) {
                    shared += k;
                    if (k == 2) throw new IllegalStateException();
                }
            } catch (IllegalStateException e) {
                failures += 10;
            }
        }
        System.out.println("failures " + failures + " count " + c.get() + " shared " + shared);
        // threads, join, wait/notify
        final int[] box = new int[1];
        Thread[] ts = new Thread[4];
        for (int i = 0; i < ts.length; i++) {
            final int id = i;
            ts[i] = new Thread(() -> {
                for (int k = 0; k < 1000; k++) c.inc(id);
                synchronized (box) { box[0] += id; }
            });
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        System.out.println("threads " + c.get() + " " + box[0]);
        ArrayDeque<Integer> q = new ArrayDeque<>();
        Thread producer = new Thread(() -> {
            for (int i = 0; i < 20; i++) {
                synchronized (q) {
                    q.addLast(i);
                    q.notifyAll();
                }
            }
            synchronized (q) { q.addLast(-1); q.notifyAll(); }
        });
        producer.start();
        long consumed = 0;
        while (true) {
            int v;
            synchronized (q) {
                while (q.isEmpty()) q.wait();
                v = q.removeFirst();
            }
            if (v < 0) break;
            consumed += v;
        }
        producer.join();
        System.out.println("consumed " + consumed);
        // java.util.concurrent
        ExecutorService ex = Executors.newFixedThreadPool(3);
        List<Future<Long>> fs = new ArrayList<>();
        for (int i = 1; i <= 6; i++) {
            final long n = i;
            fs.add(ex.submit(() -> n * n));
        }
        long fsum = 0;
        for (Future<Long> fu : fs) fsum += fu.get();
        ConcurrentHashMap<String, Long> chm = new ConcurrentHashMap<>();
        CountDownLatch latch = new CountDownLatch(3);
        ReentrantLock lock = new ReentrantLock();
        AtomicLong al = new AtomicLong();
        AtomicBoolean ab = new AtomicBoolean();
        for (int i = 0; i < 3; i++) {
            final int id = i;
            ex.execute(() -> {
                chm.merge("k", (long) id, Long::sum);
                lock.lock();
                try {
                    shared++;
                } finally {
                    lock.unlock();
                }
                al.addAndGet(1L << 35);
                ab.compareAndSet(false, true);
                latch.countDown();
            });
        }
        latch.await();
        boolean got = lock.tryLock(1, TimeUnit.SECONDS);
        if (got) lock.unlock();
        ex.shutdown();
        ex.awaitTermination(10, TimeUnit.SECONDS);
        Map<Long, Double> tm = new TreeMap<>();
        tm.put(1L << 40, 2.5);
        tm.put(3L, -0.5);
        double dsum = 0;
        for (Map.Entry<Long, Double> e : tm.entrySet()) dsum += e.getKey() * e.getValue();
        System.out.println("jucc " + fsum + " " + chm + " " + shared + " " + al.get() + " " + ab.get() + " " + got + " " + dsum);
        Object o = s;
        if (o instanceof Sq q2 && q2.side() > 1) System.out.println("pattern " + q2.side());
        flag = true;
        System.out.println("flag " + flag + " " + Big.run(50) + " " + Big.wide(3));
    }
}
