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
 */
public final class R {
    private R() {}

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
    // afterZ also passes a boolean result (tryLock, offer, compareAndSet, ...).
    public static native void before(Object recv, int site);
    public static native void after(Object recv, int site);
    public static native void afterZ(boolean result, Object recv, int site);

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

    // Conditional jumps and switches.
    public static native void br(int site);
    // Before each return of a <clinit>: the class's initialization is complete.
    public static native void clinit(int site);
}
