package bplib;

/** The "excluded" library of the BarrierPair instrumentation tests (never instrumented). */
public class Lib {
    public Object held;

    public Lib() {}

    public Lib(Object a, int n) {
        held = a;
    }

    public void put(Object v) {
        held = v;
    }

    public Object get() {
        return held;
    }

    public void two(Object a, Object b) {}

    public void three(Object a, Object b, Object c) {}

    public long four(Object a, long x, Object b, double y, Object c) {
        return x + (long) y;
    }

    public void fail(String why) {
        throw new IllegalStateException(why);
    }

    public void callback(Runnable r) {
        r.run();
    }

    public static int twice(int x) {
        return 2 * x;
    }

    public static String upper(String s) {
        return s.toUpperCase();
    }

    public static int size(Object o) {
        return o == null ? 0 : 1;
    }

    public static void boom(Object o) {
        throw new RuntimeException("boom");
    }
}
