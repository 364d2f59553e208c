package jrace.rt;

/**
 * The runtime class that instrumented code calls. The agent embeds its compiled form,
 * defines it in the bootstrap loader at VM start and binds every method to Rust
 * (agent/src/runtime.rs). Nothing here may run Java code of its own: instrumented JDK
 * classes would call back into it.
 *
 * Every hook takes a site: an int the instrumenter allocated for the instruction it
 * instruments; the site names the location (class, method, file:line, bci) and, for
 * accesses and calls, the member (see agent/src/sites.rs). Value-carrying hooks come in
 * five shapes: I (int, and boolean/byte/char/short widened), J, F, D, A (references).
 *
 * The only Java code here orders the synchronizing accesses (volatile fields and the
 * wrapped Unsafe operations of U): each runs under a stripe lock of its object, taken
 * before the access and released after it was recorded, so that the trace orders the
 * accesses to one variable exactly as they happened. It uses nothing but Unsafe and
 * intrinsics, which no instrumented code runs.
 */
public final class R {
    private R() {}

    /** Set on first use: R's initialization may not run code of classes it could be
     *  called from (a test instruments java.base itself, Unsafe included). */
    private static jdk.internal.misc.Unsafe UN;
    private static final int STRIPE_BITS = 12;
    /** One lock word per 64-byte line: 0 = free, else the holder's token. */
    private static final int[] LOCKS = new int[(1 << STRIPE_BITS) * 16];

    private static jdk.internal.misc.Unsafe un() {
        jdk.internal.misc.Unsafe u = UN;
        if (u == null) {
            u = jdk.internal.misc.Unsafe.getUnsafe();
            UN = u;
        }
        return u;
    }

    /**
     * Offset of LOCKS[0], set by the agent when it defines R (Unsafe.arrayBaseOffset
     * returns an int in some JDKs, a long in others: the agent asks whichever it is).
     * Negative: no stripe locks (the order of synchronizing accesses is then as stamped).
     */
    static long LBASE = -1;

    private static long slot(int s) {
        return LBASE + ((long) s << 6);
    }
    /**
     * Per site: 0 not resolved yet, 1 nothing to order (a plain or final field), 2 a
     * volatile field. The agent replaces the array as sites are added (see resolve).
     */
    static byte[] FLAGS = new byte[0];
    /** False while replaying (the schedule orders threads; no locks). */
    static boolean EXACT = true;
    /** Lock acquisitions given up because the holder kept the lock too long. */
    static int gaveUp;

    /** Resolves a field site: 1 or 2 as in FLAGS (0 when its class is not known yet). */
    static native int resolve(int site);

    /**
     * Before a field access that may be volatile (site resolved at first use): the
     * stripe taken, or -1 when the field is not volatile (or nothing can be locked).
     */
    public static int lk(Object o, int site) {
        byte[] f = FLAGS;
        int k = site < f.length ? f[site] : 0;
        if (k == 0) {
            k = resolve(site);
        }
        return k == 2 ? lock(o) : -1;
    }

    /** lk for a static field: all statics share stripe 0. */
    public static int lks(int site) {
        byte[] f = FLAGS;
        int k = site < f.length ? f[site] : 0;
        if (k == 0) {
            k = resolve(site);
        }
        return k == 2 && EXACT ? take(0) : -1;
    }

    /** The stripe lock of object o (class objects: the statics' stripe), or -1. */
    public static int lock(Object o) {
        if (o == null || !EXACT || LBASE < 0) {
            return -1;
        }
        int s = (o instanceof Class) ? 0 : (System.identityHashCode(o) * 0x9E3779B1) >>> (32 - STRIPE_BITS);
        return take(s);
    }

    /**
     * The stripe lock of off-heap address a (an ordered Unsafe access with a null base),
     * or -1.
     */
    public static int lockAt(long a) {
        if (!EXACT || LBASE < 0) {
            return -1;
        }
        return take((int) ((a * 0x9E3779B97F4A7C15L) >>> (64 - STRIPE_BITS)));
    }

    private static int take(int s) {
        if (LBASE < 0) {
            return -1;
        }
        try {
            jdk.internal.misc.Unsafe un = un();
            long a = slot(s);
            int me = System.identityHashCode(Thread.currentThread()) | 1;
            for (int i = 0; ; i++) {
                int v = un.getIntVolatile(LOCKS, a);
                if (v == 0) {
                    if (un.compareAndSetInt(LOCKS, a, 0, me)) {
                        return s;
                    }
                } else if (v == me) {
                    return -1; // held by this thread, further out: the outer access orders
                }
                if (i < 200) {
                    Thread.onSpinWait();
                } else if (i < 200_000) {
                    Thread.yield();
                } else {
                    gaveUp++;
                    return -1;
                }
            }
        } catch (Throwable t) {
            // Nothing of the recorder may reach the program: no lock then.
            return -1;
        }
    }

    /** Releases a stripe taken by lk/lks/lock (nothing for -1). */
    public static void ul(int s) {
        if (s >= 0) {
            try {
                un().putIntRelease(LOCKS, slot(s), 0);
            } catch (Throwable t) {
                // cannot happen once take succeeded
            }
        }
    }

    // Reads of fields that may be volatile: record, then release the stripe lk took.
    public static void rdIL(int v, Object o, int k, int site) { try { rdI(v, o, site); } finally { ul(k); } }
    public static void rdJL(long v, Object o, int k, int site) { try { rdJ(v, o, site); } finally { ul(k); } }
    public static void rdFL(float v, Object o, int k, int site) { try { rdF(v, o, site); } finally { ul(k); } }
    public static void rdDL(double v, Object o, int k, int site) { try { rdD(v, o, site); } finally { ul(k); } }
    public static void rdAL(Object v, Object o, int k, int site) { try { rdA(v, o, site); } finally { ul(k); } }
    public static void srIL(int v, int k, int site) { try { srI(v, site); } finally { ul(k); } }
    public static void srJL(long v, int k, int site) { try { srJ(v, site); } finally { ul(k); } }
    public static void srFL(float v, int k, int site) { try { srF(v, site); } finally { ul(k); } }
    public static void srDL(double v, int k, int site) { try { srD(v, site); } finally { ul(k); } }
    public static void srAL(Object v, int k, int site) { try { srA(v, site); } finally { ul(k); } }

    // The wrapped Unsafe operations of U: what they read (r) and wrote (w) at (o, off),
    // values as longs (see agent/src/unsafe_ops.rs), references as objects.
    static native void uR(Object o, long off, long v, int site);
    static native void uW(Object o, long off, long v, int site);
    static native void uRW(Object o, long off, long r, long w, int site);
    static native void uRA(Object o, long off, Object v, int site);
    static native void uWA(Object o, long off, Object v, int site);
    static native void uRWA(Object o, long off, Object r, Object w, int site);

    // For the agent, to map an Unsafe offset to its field (called through JNI).
    static long fieldOffset(java.lang.reflect.Field f, boolean isStatic) {
        return isStatic ? un().staticFieldOffset(f) : un().objectFieldOffset(f);
    }

    // Instance fields: rd* after getfield (value, receiver), wr* before putfield.
    public static native void rdI(int v, Object o, int site);
    public static native void rdJ(long v, Object o, int site);
    public static native void rdF(float v, Object o, int site);
    public static native void rdD(double v, Object o, int site);
    public static native void rdA(Object v, Object o, int site);
    public static native void wrI(Object o, int v, int site);
    public static native void wrJ(Object o, long v, int site);
    public static native void wrF(Object o, float v, int site);
    public static native void wrD(Object o, double v, int site);
    public static native void wrA(Object o, Object v, int site);

    // Static fields: sr* after getstatic, sw* before putstatic.
    public static native void srI(int v, int site);
    public static native void srJ(long v, int site);
    public static native void srF(float v, int site);
    public static native void srD(double v, int site);
    public static native void srA(Object v, int site);
    public static native void swI(int v, int site);
    public static native void swJ(long v, int site);
    public static native void swF(float v, int site);
    public static native void swD(double v, int site);
    public static native void swA(Object v, int site);

    // Array elements: ar* after xaload (value, array, index), aw* before xastore.
    public static native void arI(int v, Object a, int i, int site);
    public static native void arJ(long v, Object a, int i, int site);
    public static native void arF(float v, Object a, int i, int site);
    public static native void arD(double v, Object a, int i, int site);
    public static native void arA(Object v, Object a, int i, int site);
    public static native void awI(Object a, int i, int v, int site);
    public static native void awJ(Object a, int i, long v, int site);
    public static native void awF(Object a, int i, float v, int site);
    public static native void awD(Object a, int i, double v, int site);
    public static native void awA(Object a, int i, Object v, int site);

    // Monitors: menter after monitorenter, mexit before monitorexit.
    public static native void menter(Object o, int site);
    public static native void mexit(Object o, int site);
    // Synchronized methods: senter at entry (this, or the class), sexit before each return,
    // sthrow in the method's catch-all handler (before its athrow).
    public static native void senter(Object o, int site);
    public static native void sexit(Object o, int site);
    public static native void sthrow(int site);

    // Calls the recorder models (site = the call site, naming owner/name/descriptor).
    // before(receiver) runs before the call, after(receiver) when it returns normally;
    // afterZ also passes a boolean result (tryLock, offer, contains, ...), afterA a
    // reference result (poll, get, iterator, ...). A site whose call cannot reach a
    // modelled class (a method of the program named like one, flag 1) costs a test.
    public static void before(Object recv, int site) {
        if (flag(site) != 1) {
            before0(recv, site);
        }
    }
    public static void after(Object recv, int site) {
        if (flag(site) != 1) {
            after0(recv, site);
        }
    }
    public static void afterZ(boolean result, Object recv, int site) {
        if (flag(site) != 1) {
            afterZ0(result, recv, site);
        }
    }
    public static void afterA(Object result, Object recv, int site) {
        if (flag(site) != 1) {
            afterA0(result, recv, site);
        }
    }
    // Object.wait(timeout) and wait(timeout, nanos): the timeout too, so that a wait that
    // returns after it ran out is known to have needed no notify.
    public static void beforeWait(Object recv, long timeout, int site) {
        if (flag(site) != 1) {
            beforeWait0(recv, timeout, site);
        }
    }
    // get(int)/set(int, E) of a list: the index too (beforeI for set, afterAI for get).
    public static void beforeI(Object recv, int index, int site) {
        if (flag(site) != 1) {
            beforeI0(recv, index, site);
        }
    }
    public static void afterAI(Object result, Object recv, int index, int site) {
        if (flag(site) != 1) {
            afterAI0(result, recv, index, site);
        }
    }
    private static int flag(int site) {
        byte[] f = FLAGS;
        int k = site < f.length ? f[site] : 0;
        return k != 0 ? k : resolve(site);
    }
    static native void before0(Object recv, int site);
    static native void beforeWait0(Object recv, long timeout, int site);
    static native void after0(Object recv, int site);
    static native void afterZ0(boolean result, Object recv, int site);
    static native void beforeI0(Object recv, int index, int site);
    static native void afterAI0(Object result, Object recv, int index, int site);
    static native void afterA0(Object result, Object recv, int site);

    // Method boundaries of run()/call() of instrumented classes (executor tasks):
    // tenter(this) at entry, texit(this) before each return.
    public static native void tenter(Object self, int site);
    public static native void texit(Object self, int site);

    // Before System.arraycopy(src, srcPos, dst, dstPos, length): the copy's element reads
    // and writes (a JDK native no other hook sees).
    public static native void arraycopy(Object src, int sp, Object dst, int dp, int n, int site);

    // BarrierPairs around calls into excluded code (barrier=1). bpenter* runs before the
    // call with the frame's token (-1 until its first BarrierPair) and the roots (the
    // receiver, the reference arguments), and returns the token to keep: the thread's
    // BarrierPair depth before this frame's first one. bpexit runs after a normal return;
    // bpunwind(token) in exception handlers closes what the frame left open.
    public static native int bpenter0(int tok, int site);
    public static native int bpenter1(int tok, Object a, int site);
    public static native int bpenter2(int tok, Object a, Object b, int site);
    public static native int bpenter3(int tok, Object a, Object b, Object c, int site);
    public static native int bpenterN(int tok, Object[] roots, int site);
    public static native void bpexit(int site);
    public static native void bpunwind(int tok, int site);

    // Entry and exits of a JDK method whose synchronization is the JVM's business
    // (class loading, invokedynamic linkage): the JDK's events inside are not recorded.
    public static native void qenter(int site);
    public static native void qexit(int site);

    // Conditional jumps and switches.
    public static native void br(int site);
    // Before each return of a <clinit>: the class's initialization is complete.
    public static native void clinit(int site);
    // After `new C` or a static call of a method of C: C is initialized (a site whose
    // class has no instrumented <clinit> costs a flag test from then on).
    public static void cu(int site) {
        if (flag(site) != 1) {
            cu0(site);
        }
    }
    static native void cu0(int site);
    // After Class.forName returned c.
    public static native void cuc(Object c, int site);
}
