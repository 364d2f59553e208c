package cftest;

import java.io.*;
import java.util.*;
import java.util.concurrent.*;
import java.util.function.*;

/**
 * Control flow of every shape for the class-file rewriter tests: switches, try/catch/finally,
 * loops, constructors with uninitialized objects on the stack across branches, lambdas,
 * monitors, wide locals, long methods (see the generated Big class). Its output must not
 * change when code is inserted before every instruction.
 */
public class Main {
    enum Color { RED, GREEN, BLUE }

    static final class Box {
        final int v;
        Box(int v) { this.v = v; }
        public String toString() { return "Box" + v; }
    }

    static final class Pair {
        final Object a, b;
        Pair(Object a, Object b) { this.a = a; this.b = b; }
        // uninitializedThis in frames: branches before this(...)
        Pair(int x) { this(x > 0 ? new Box(x) : new Box(-x), x % 2 == 0 ? "even" : "odd"); }
        public String toString() { return "(" + a + "," + b + ")"; }
    }

    static class Base {
        final String tag;
        Base(String t) { tag = t; }
    }

    static class Derived extends Base {
        final long big;
        Derived(long v, boolean f) {
            super(f ? "yes" + v : (v > 10 ? "big" : "small"));
            long acc = 0;
            for (long i = 0; i < v; i++) acc += i * (f ? 2 : 3);
            big = acc;
        }
    }

    static int dense(int k) {
        switch (k) {
            case 0: return 10;
            case 1: return 11;
            case 2: return 12;
            case 3: return 13;
            case 4: return 14;
            case 5: return 15;
            default: return -1;
        }
    }

    static int sparse(int k) {
        switch (k) {
            case -1000: return 1;
            case 7: return 2;
            case 100000: return 3;
            case Integer.MAX_VALUE: return 4;
            case Integer.MIN_VALUE: return 5;
            default: return 0;
        }
    }

    static String strings(String s) {
        switch (s) {
            case "alpha": return "A";
            case "beta": return "B";
            case "Aa": return "collide1";
            case "BB": return "collide2";
            default: return "?";
        }
    }

    static int colors(Color c) {
        return switch (c) {
            case RED -> 1;
            case GREEN -> { int x = 2; for (int i = 0; i < 3; i++) x *= 2; yield x; }
            case BLUE -> 3;
        };
    }

    static String tries(int k) {
        StringBuilder sb = new StringBuilder();
        try {
            sb.append("t");
            if (k == 1) throw new IllegalStateException("one");
            if (k == 2) return sb.append("r").toString();
            try {
                if (k == 3) throw new IOException("three");
                int[] a = new int[k];
                a[k - 4] = 5;
            } catch (IOException | ArrayIndexOutOfBoundsException e) {
                sb.append("inner:" + e.getClass().getSimpleName());
            } finally {
                sb.append("f1");
            }
        } catch (IllegalStateException e) {
            sb.append("c:" + e.getMessage());
        } finally {
            sb.append("F");
        }
        return sb.toString();
    }

    static String resources() throws Exception {
        StringWriter w = new StringWriter();
        try (PrintWriter p = new PrintWriter(w); BufferedReader r = new BufferedReader(new StringReader("l1\nl2"))) {
            String line;
            while ((line = r.readLine()) != null) p.print(line.toUpperCase());
        }
        return w.toString();
    }

    static long loops(int n) {
        long s = 0;
        outer:
        for (int i = 0; i < n; i++) {
            int j = 0;
            while (true) {
                if (j > i) continue outer;
                if (i * j > 50) break outer;
                s += (long) i * j;
                j++;
            }
        }
        int k = 0;
        do { s ^= k; k += 3; } while (k < 30);
        double d = 1.5;
        for (float f = 0; f < 4; f += 0.5f) d = d * 1.1 + f;
        return s + (long) d;
    }

    static Object uninit(int x) {
        // `new` results on the stack while branching: Uninitialized(offset) frames
        return new Pair(x > 3 ? new Box(x) : new Box(x * 2), new Pair(x < 0 ? "neg" : new Box(x > 5 ? 1 : 2), null));
    }

    private final Object lock = new Object();
    private int counter;

    int sync(int n) throws InterruptedException {
        Thread[] ts = new Thread[4];
        for (int t = 0; t < ts.length; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < n; i++) {
                    synchronized (lock) { counter++; }
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        return counter;
    }

    static synchronized String syncStatic(String s) {
        try {
            if (s == null) throw new NullPointerException("npe");
            return s.trim();
        } catch (NullPointerException e) {
            return "caught";
        }
    }

    static int arrays() {
        int[][][] m = new int[3][4][5];
        int s = 0;
        for (int i = 0; i < 3; i++) for (int j = 0; j < 4; j++) for (int k = 0; k < 5; k++) m[i][j][k] = i + j * k;
        for (int[][] a : m) for (int[] b : a) for (int c : b) s += c;
        Object o = m;
        if (o instanceof int[][][]) s += ((int[][][]) o).length;
        char[] cs = {'x', 'y'};
        byte[] bs = new byte[]{1, 2, 3};
        short[] ss = {4};
        boolean[] zs = {true};
        return s + cs[1] + bs[2] + ss[0] + (zs[0] ? 1 : 0);
    }

    static String lambdas() throws Exception {
        List<Integer> l = new ArrayList<>();
        for (int i = 0; i < 10; i++) l.add(i * 7 % 10);
        Collections.sort(l);
        Function<Integer, String> f = x -> x % 2 == 0 ? "e" + x : "o" + x;
        StringBuilder sb = new StringBuilder();
        l.stream().map(f).filter(s -> !s.equals("e0")).forEach(sb::append);
        ExecutorService ex = Executors.newFixedThreadPool(2);
        Future<Integer> fu = ex.submit(() -> l.stream().mapToInt(Integer::intValue).sum());
        sb.append(fu.get());
        ex.shutdown();
        Map<String, Integer> m = new TreeMap<>();
        for (String w : "a b c a b a".split(" ")) m.merge(w, 1, Integer::sum);
        sb.append(m);
        return sb.toString();
    }

    static double numbers(long a, double b, float c, int d) {
        long x = a << 3 | (a >>> 2) ^ ~a;
        double y = b / 3 - (b % 2);
        float z = -c * 2.5f;
        int w = d >> 1;
        w += 1000;
        short sh = (short) w;
        byte by = (byte) sh;
        char ch = (char) (by + 70);
        return x + y + z + w + sh + by + ch + (x > y ? 1 : 0) + (z < y ? 2 : 0) + (Double.isNaN(y) ? 3 : 0);
    }

    public static void main(String[] args) throws Exception {
        for (int k = -1; k < 8; k++) System.out.print(dense(k) + " ");
        System.out.println();
        for (int k : new int[]{-1000, 7, 100000, Integer.MAX_VALUE, Integer.MIN_VALUE, 3}) System.out.print(sparse(k) + " ");
        System.out.println();
        for (String s : new String[]{"alpha", "beta", "Aa", "BB", "gamma"}) System.out.print(strings(s) + " ");
        System.out.println();
        for (Color c : Color.values()) System.out.print(colors(c) + " ");
        System.out.println();
        for (int k = 0; k < 6; k++) System.out.println(tries(k));
        System.out.println(resources());
        System.out.println(loops(20));
        for (int x = -2; x < 8; x++) System.out.print(uninit(x) + " ");
        System.out.println();
        System.out.println(new Pair(4) + " " + new Pair(-3));
        Derived d = new Derived(12, false);
        System.out.println(d.tag + " " + d.big + " " + new Derived(3, true).tag);
        System.out.println(new Main().sync(1000));
        System.out.println(syncStatic(" s ") + syncStatic(null));
        System.out.println(arrays());
        System.out.println(lambdas());
        System.out.println(numbers(123456789012L, 2.75, 1.25f, -77));
        System.out.println(Big.run(7));
        System.out.println(Big.wideLocals(3));
    }
}
