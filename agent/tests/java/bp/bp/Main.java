package bp;

import bplib.Base;
import bplib.Lib;
import java.util.ArrayList;
import java.util.List;

/**
 * BarrierPair instrumentation scenarios (agent/tests/it/barrier_pairs.rs): each method is one
 * scenario whose hook sequence the test checks; the output must be the same instrumented
 * (with bplib.* excluded) and not.
 */
public class Main {
    static final Object LOCK = new Object();
    int field;

    static native void nat(Object o);

    /** Receiver and argument roots, 0..5 roots, statically empty calls. */
    static void roots(Lib l) {
        l.put("x");                      // bpenter2 Lib String
        Object o = l.get();              // bpenter1 Lib
        l.two(o, null);                  // bpenter3 Lib String null
        l.three(l, o, l);                // bpenterN (4 roots)
        long r = l.four(o, 3L, l, 2.5, null); // bpenterN (4 roots), wide args
        System.err.println("four " + r); // PrintStream.println(String): bpenter2
        int t = Lib.twice(21);           // static, primitives: no BarrierPair
        String u = Lib.upper("abc");     // static, leaf argument: none
        int s = Lib.size(l);             // static with a reference: bpenter1
        int h = l.hashCode();            // Object.hashCode: none
        int n = "abc".length();          // String receiver, no arguments: none
        System.err.println("roots " + t + " " + u + " " + s + " " + n + " " + (h == h));
    }

    /** Constructors: arguments only; primitive-only ones are statically empty. */
    static Lib constructors() {
        Lib a = new Lib();                // none
        Lib b = new Lib(a, 3);            // bpenter1 Lib (the argument)
        return b;
    }

    /** An exception out of excluded code, caught in the same method. */
    static void caughtHere(Lib l) {
        try {
            l.fail("here");              // bpenter2, then bpunwind closed=1
        } catch (IllegalStateException e) {
            System.err.println("caught " + e.getMessage());
        }
    }

    /** ... leaving the method (its catch-all handler closes it), caught by the caller. */
    static void throwsOut(Lib l) {
        double d = 1.5;
        long k = 7;
        for (int i = 0; i < 2; i++) {
            d += i;
            k += i;
        }
        l.fail("out " + d + " " + k);
    }

    static void caller(Lib l) {
        try {
            throwsOut(l);
        } catch (IllegalStateException e) {
            System.err.println("caught " + e.getMessage());
        }
    }

    /** A synchronized method whose excluded call throws: unwind before the release. */
    synchronized void syncThrows(Lib l) {
        field++;
        Lib.boom(l);
    }

    /** A native method of this class (no implementation: UnsatisfiedLinkError). */
    static void callsNative() {
        try {
            nat(LOCK);
        } catch (UnsatisfiedLinkError e) {
            System.err.println("no native");
        }
    }

    /** A callback from excluded code into instrumented code, inside the BarrierPair. */
    static void callback(Lib l, Main m) {
        l.callback(() -> m.field = 5);
    }

    /** Modelled calls keep their models and get no BarrierPair. */
    static void modelled() throws InterruptedException {
        List<Integer> list = new ArrayList<>();
        list.add(1);
        Thread t = new Thread(() -> {});
        t.start();
        t.join();
        synchronized (LOCK) {
            LOCK.notifyAll();
        }
        System.err.println("list " + list.size());
    }

    static final class Sub extends Base {
        final Lib lib;

        Sub(Lib l) {
            super(String.valueOf(l.get())); // BarrierPairs before super(): get, Base.<init>
            lib = l;
            lib.put(this);                  // after super()
            if (l.get() == null) {
                throw new IllegalStateException();
            }
        }

        Sub(Lib l, boolean fail) {
            this(l);
            if (fail) {
                l.fail("in constructor");   // closed by the constructor's catch-all
            }
        }
    }

    static void constructorsThrow(Lib l) {
        try {
            new Sub(l, true);
        } catch (IllegalStateException e) {
            System.err.println("caught " + e.getMessage());
        }
    }

    /** A loop with an excluded call in it, and branches around it (frames). */
    static int loop(Lib l, int n) {
        int s = 0;
        long w = 1;
        for (int i = 0; i < n; i++) {
            if (i % 2 == 0) {
                l.put(null);
            } else {
                try {
                    l.fail("odd");
                } catch (RuntimeException e) {
                    s++;
                }
            }
            w *= 2;
        }
        return s + (int) w;
    }

    public static void main(String[] args) throws Exception {
        Lib l = new Lib();
        roots(l);
        System.out.println("constructed " + (constructors().get() != null));
        caughtHere(l);
        caller(l);
        Main m = new Main();
        try {
            m.syncThrows(l);
        } catch (RuntimeException e) {
            System.out.println("sync " + e.getMessage() + " " + m.field);
        }
        callsNative();
        callback(l, m);
        System.out.println("callback " + m.field);
        modelled();
        new Sub(new Lib());
        constructorsThrow(l);
        System.out.println("loop " + loop(l, 5));
        System.out.println("done");
    }
}
