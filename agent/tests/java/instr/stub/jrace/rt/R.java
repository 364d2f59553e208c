package jrace.rt;

import java.io.*;
import java.util.*;

/**
 * A pure-Java stand-in for the agent's runtime class, for the instrumenter tests only: same
 * package, names and descriptors as agent/runtime/jrace/rt/R.java (the test compares them),
 * but the hooks log each event as a line `hook site operands...` to the file named by the
 * system property jrace.log, and/or count them per hook into the file named by
 * jrace.counts (written at exit). It never prints to stdout, so an instrumented program's
 * output can be compared with the original's. References are logged as
 * `ClassName@identityHash` (never calling their methods: they may be instrumented too).
 */
public final class R {
    private R() {}

    private static final PrintWriter LOG;
    private static final String COUNTS = System.getProperty("jrace.counts");
    private static final TreeMap<String, long[]> COUNT = new TreeMap<>();

    static {
        PrintWriter w = null;
        String f = System.getProperty("jrace.log");
        if (f != null) {
            try {
                w = new PrintWriter(new BufferedWriter(new FileWriter(f)));
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }
        LOG = w;
        if (LOG != null || COUNTS != null) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                synchronized (R.class) {
                    if (LOG != null) LOG.flush();
                    if (COUNTS != null) {
                        try (PrintWriter c = new PrintWriter(new FileWriter(COUNTS))) {
                            for (Map.Entry<String, long[]> e : COUNT.entrySet())
                                c.println(e.getKey() + " " + e.getValue()[0]);
                        } catch (IOException e) {
                            throw new RuntimeException(e);
                        }
                    }
                }
            }));
        }
    }

    private static String ref(Object o) {
        return o == null ? "null" : o.getClass().getName() + "@" + System.identityHashCode(o);
    }

    private static synchronized void ev(String hook, int site, String rest) {
        if (COUNTS != null) COUNT.computeIfAbsent(hook, k -> new long[1])[0]++;
        if (LOG != null) {
            LOG.print(hook);
            LOG.print(' ');
            LOG.print(site);
            if (!rest.isEmpty()) {
                LOG.print(' ');
                LOG.print(rest);
            }
            LOG.print(" T=");
            LOG.println(Thread.currentThread().getName());
        }
    }

    public static void rdI(int v, Object o, int site) { ev("rdI", site, v + " " + ref(o)); }
    public static void rdJ(long v, Object o, int site) { ev("rdJ", site, v + " " + ref(o)); }
    public static void rdF(float v, Object o, int site) { ev("rdF", site, v + " " + ref(o)); }
    public static void rdD(double v, Object o, int site) { ev("rdD", site, v + " " + ref(o)); }
    public static void rdA(Object v, Object o, int site) { ev("rdA", site, ref(v) + " " + ref(o)); }
    public static void wrI(Object o, int v, int site) { ev("wrI", site, ref(o) + " " + v); }
    public static void wrJ(Object o, long v, int site) { ev("wrJ", site, ref(o) + " " + v); }
    public static void wrF(Object o, float v, int site) { ev("wrF", site, ref(o) + " " + v); }
    public static void wrD(Object o, double v, int site) { ev("wrD", site, ref(o) + " " + v); }
    public static void wrA(Object o, Object v, int site) { ev("wrA", site, ref(o) + " " + ref(v)); }

    // The stripe locks of possibly volatile fields: nothing to lock here; the reads log as
    // their plain hooks do.
    public static int lk(Object o, int site) { return -1; }
    public static int lks(int site) { return -1; }
    public static int lock(Object o) { return -1; }
    public static int lockAt(long a) { return -1; }
    public static void ul(int s) {}
    public static void rdIL(int v, Object o, int k, int site) { rdI(v, o, site); }
    public static void rdJL(long v, Object o, int k, int site) { rdJ(v, o, site); }
    public static void rdFL(float v, Object o, int k, int site) { rdF(v, o, site); }
    public static void rdDL(double v, Object o, int k, int site) { rdD(v, o, site); }
    public static void rdAL(Object v, Object o, int k, int site) { rdA(v, o, site); }
    public static void srIL(int v, int k, int site) { srI(v, site); }
    public static void srJL(long v, int k, int site) { srJ(v, site); }
    public static void srFL(float v, int k, int site) { srF(v, site); }
    public static void srDL(double v, int k, int site) { srD(v, site); }
    public static void srAL(Object v, int k, int site) { srA(v, site); }

    public static void srI(int v, int site) { ev("srI", site, "" + v); }
    public static void srJ(long v, int site) { ev("srJ", site, "" + v); }
    public static void srF(float v, int site) { ev("srF", site, "" + v); }
    public static void srD(double v, int site) { ev("srD", site, "" + v); }
    public static void srA(Object v, int site) { ev("srA", site, ref(v)); }
    public static void swI(int v, int site) { ev("swI", site, "" + v); }
    public static void swJ(long v, int site) { ev("swJ", site, "" + v); }
    public static void swF(float v, int site) { ev("swF", site, "" + v); }
    public static void swD(double v, int site) { ev("swD", site, "" + v); }
    public static void swA(Object v, int site) { ev("swA", site, ref(v)); }

    public static void arI(int v, Object a, int i, int site) { ev("arI", site, v + " " + ref(a) + " " + i); }
    public static void arJ(long v, Object a, int i, int site) { ev("arJ", site, v + " " + ref(a) + " " + i); }
    public static void arF(float v, Object a, int i, int site) { ev("arF", site, v + " " + ref(a) + " " + i); }
    public static void arD(double v, Object a, int i, int site) { ev("arD", site, v + " " + ref(a) + " " + i); }
    public static void arA(Object v, Object a, int i, int site) { ev("arA", site, ref(v) + " " + ref(a) + " " + i); }
    public static void awI(Object a, int i, int v, int site) { ev("awI", site, ref(a) + " " + i + " " + v); }
    public static void awJ(Object a, int i, long v, int site) { ev("awJ", site, ref(a) + " " + i + " " + v); }
    public static void awF(Object a, int i, float v, int site) { ev("awF", site, ref(a) + " " + i + " " + v); }
    public static void awD(Object a, int i, double v, int site) { ev("awD", site, ref(a) + " " + i + " " + v); }
    public static void awA(Object a, int i, Object v, int site) { ev("awA", site, ref(a) + " " + i + " " + ref(v)); }

    public static void menter(Object o, int site) { ev("menter", site, ref(o)); }
    public static void mexit(Object o, int site) { ev("mexit", site, ref(o)); }
    public static void senter(Object o, int site) { ev("senter", site, ref(o)); }
    public static void sexit(Object o, int site) { ev("sexit", site, ref(o)); }
    public static void sthrow(int site) { ev("sthrow", site, ""); }

    public static void before(Object recv, int site) { ev("before", site, ref(recv)); }
    public static void after(Object recv, int site) { ev("after", site, ref(recv)); }
    public static void afterZ(boolean result, Object recv, int site) { ev("afterZ", site, result + " " + ref(recv)); }
    public static void afterA(Object result, Object recv, int site) { ev("afterA", site, ref(result) + " " + ref(recv)); }
    public static void beforeI(Object recv, int index, int site) { ev("beforeI", site, ref(recv) + " " + index); }
    public static void afterAI(Object result, Object recv, int index, int site) { ev("afterAI", site, ref(result) + " " + ref(recv) + " " + index); }

    public static void tenter(Object self, int site) { ev("tenter", site, ref(self)); }
    public static void texit(Object self, int site) { ev("texit", site, ref(self)); }

    public static void arraycopy(Object src, int sp, Object dst, int dp, int n, int site) { ev("arraycopy", site, ref(src) + " " + sp + " " + ref(dst) + " " + dp + " " + n); }
    // BarrierPairs: the thread's depth, as the runtime keeps it.
    private static final ThreadLocal<int[]> BP_DEPTH = ThreadLocal.withInitial(() -> new int[1]);
    private static int bp(String hook, int tok, String roots, int site) {
        int[] d = BP_DEPTH.get();
        int r = tok >= 0 ? tok : d[0];
        d[0]++;
        ev(hook, site, tok + (roots.isEmpty() ? "" : " " + roots));
        return r;
    }
    public static int bpenter0(int tok, int site) { return bp("bpenter0", tok, "", site); }
    public static int bpenter1(int tok, Object a, int site) { return bp("bpenter1", tok, ref(a), site); }
    public static int bpenter2(int tok, Object a, Object b, int site) { return bp("bpenter2", tok, ref(a) + " " + ref(b), site); }
    public static int bpenter3(int tok, Object a, Object b, Object c, int site) { return bp("bpenter3", tok, ref(a) + " " + ref(b) + " " + ref(c), site); }
    public static int bpenterN(int tok, Object[] roots, int site) {
        StringBuilder sb = new StringBuilder();
        for (Object o : roots) sb.append(sb.length() == 0 ? "" : " ").append(ref(o));
        return bp("bpenterN", tok, sb.toString(), site);
    }
    public static void bpexit(int site) { BP_DEPTH.get()[0]--; ev("bpexit", site, ""); }
    // Logs how many BarrierPairs the unwind closes.
    public static void bpunwind(int tok, int site) {
        int[] d = BP_DEPTH.get();
        int closed = tok >= 0 && d[0] > tok ? d[0] - tok : 0;
        d[0] -= closed;
        ev("bpunwind", site, "closed=" + closed);
    }

    public static void qenter(int site) { ev("qenter", site, ""); }
    public static void qexit(int site) { ev("qexit", site, ""); }
    public static void br(int site) { ev("br", site, ""); }
    public static void clinit(int site) { ev("clinit", site, ""); }
    public static void cu(int site) { ev("cu", site, ""); }
    public static void beforeWait(Object recv, long timeout, int site) { ev("beforeWait", site, ref(recv) + " " + timeout); }
    public static void cuc(Object c, int site) { ev("cuc", site, c == null ? "null" : ((Class<?>) c).getName()); }
}
