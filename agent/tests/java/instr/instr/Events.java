package instr;

import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;

/**
 * Small targeted scenarios, one method each: the instrumenter test runs this with the
 * logging stub R and checks the hook sequence of each method (selected by the site's
 * location). Comments of the form `@name` mark lines the test looks up.
 */
public class Events {
    static class Box {
        int i; long j; float f; double d; Object o; boolean z; byte b; char c; short s;
        volatile int v;
    }

    static int si;
    static long sj;
    static double sd;
    static Object so;
    static final Object LOCK = new Object();
    static int counter;

    static void fields() {
        Box b = new Box();
        System.err.println("box " + System.identityHashCode(b)); // stderr: not compared
        b.i = 42; // @wrI
        int x = b.i; // @rdI
        b.j = 1L << 40;
        long y = b.j;
        b.f = 1.5f;
        float f = b.f;
        b.d = 2.25;
        double d = b.d;
        b.o = b;
        Object o = b.o;
        b.z = true;
        boolean z = b.z;
        b.b = (byte) -7;
        byte bb = b.b;
        b.c = 'x';
        char c = b.c;
        b.s = (short) 300;
        short s = b.s;
        b.v = 5;
        int v = b.v;
        System.out.println("fields " + x + " " + y + " " + f + " " + d + " " + (o == b) + " " + z + " " + bb + " " + c + " " + s + " " + v);
    }

    static void statics() {
        si = 5;
        int a = si;
        sj = -3;
        long b = sj;
        sd = 0.5;
        double c = sd;
        so = null;
        Object d = so;
        System.out.println("statics " + a + " " + b + " " + c + " " + d);
    }

    static void arrays() {
        int[] ia = new int[3];
        ia[1] = 9;
        int a = ia[1];
        long[] la = new long[2];
        la[0] = 1L << 33;
        long b = la[0];
        float[] fa = new float[1];
        fa[0] = 0.25f;
        float c = fa[0];
        double[] da = new double[1];
        da[0] = -1.5;
        double d = da[0];
        byte[] ba = new byte[1];
        ba[0] = 3;
        byte e = ba[0];
        boolean[] za = new boolean[1];
        za[0] = true;
        boolean f = za[0];
        char[] ca = new char[1];
        ca[0] = 'q';
        char g = ca[0];
        short[] sa = new short[1];
        sa[0] = -2;
        short h = sa[0];
        Object[] oa = new Object[2];
        oa[1] = oa;
        Object i = oa[1];
        System.out.println("arrays " + a + " " + b + " " + c + " " + d + " " + e + " " + f + " " + g + " " + h + " " + (i == oa));
    }

    static void monitors() {
        synchronized (LOCK) {
            counter++;
        }
    }

    synchronized void syncInst() {
        counter += 2;
    }

    static synchronized void syncStatic() {
        counter += 3;
    }

    synchronized void syncThrow(int k) {
        if (k > 0) throw new IllegalStateException("boom");
        counter++;
    }

    static void blockThrow() {
        synchronized (LOCK) {
            if (counter > 0) throw new IllegalArgumentException("block");
        }
    }

    static void exceptions() {
        Events e = new Events();
        try {
            e.syncThrow(1);
        } catch (IllegalStateException x) {
            System.out.println("caught " + x.getMessage());
        }
        try {
            blockThrow();
        } catch (IllegalArgumentException x) {
            System.out.println("caught " + x.getMessage());
        }
    }

    static void calls() {
        ArrayList<String> list = new ArrayList<>();
        boolean added = list.add("a");
        list.add(0, "b");
        String g = list.get(1);
        String old = list.set(0, "c");
        Map<String, Integer> m = new HashMap<>();
        m.put("k", 1);
        AtomicLong al = new AtomicLong(10);
        boolean cas = al.compareAndSet(10L, 1L << 40);
        boolean casFail = al.compareAndSet(10L, 3L);
        DoubleSummaryStatistics st = new DoubleSummaryStatistics();
        st.accept(2.5);
        System.out.println("calls " + added + " " + g + " " + old + " " + m + " " + cas + " " + casFail + " " + al.get() + " " + st.getSum());
    }

    static void threads() throws InterruptedException {
        Thread t = new Thread(() -> { si = 77; });
        t.start();
        t.join();
        System.out.println("threads " + si);
    }

    static void waitNotify() throws InterruptedException {
        synchronized (LOCK) {
            LOCK.notifyAll();
            LOCK.wait(1);
        }
    }

    static int branches(int x) {
        int r = 0;
        if (x > 0) r++;
        switch (x) {
            case 1: r += 10; break;
            case 2: r += 20; break;
            case 3: r += 30; break;
            default: r += 40;
        }
        switch (x * 1000) {
            case 1000: r += 100; break;
            case 50000: r += 200; break;
            default: r += 300;
        }
        return r;
    }

    static class Task implements Runnable, Callable<Object> {
        int n;
        public void run() {
            n++;
        }
        public Object call() {
            n++;
            return null;
        }
    }

    static class Init {
        static int X = 5;
    }

    class Inner {
        int val = 3;
        Inner() {
            super();
            val += 1;
        }
    }

    static class Base {
        final int k;
        Base(int k) { this.k = k; }
    }

    static class Derived extends Base {
        int extra;
        Derived(int k) {
            super(k > 0 ? new Base(k).k : -k);
            extra = k * 2;
        }
    }

    static void ctors() {
        Events e = new Events();
        Inner in = e.new Inner();
        Derived d = new Derived(4);
        System.out.println("ctors " + in.val + " " + d.k + " " + d.extra);
    }

    public static void main(String[] args) throws Exception {
        fields();
        statics();
        arrays();
        monitors();
        Events e = new Events();
        e.syncInst();
        syncStatic();
        exceptions();
        calls();
        threads();
        waitNotify();
        System.out.println("branches " + branches(2));
        Task t = new Task();
        t.run();
        t.call();
        System.out.println("task " + t.n);
        System.out.println("init " + Init.X);
        ctors();
        System.out.println("counter " + counter);
    }
}
