package instr;

/**
 * Compiled with --release 7 and then downgraded by the test to class versions 45-49
 * (StackMapTable removed), so the instrumenter meets old class files. No lambdas and no
 * class literals (`ldc` of a class needs version 49). The test replaces the body of
 * jsrTest with a hand-written jsr/ret subroutine that increments `counter`.
 */
public class Old {
    static int counter;
    int field;
    long wide;
    static final Object LOCK = new Object();

    static int jsrTest(int x) {
        return x;
    }

    synchronized void inc(int k) {
        field += k;
        wide += (long) k << 32;
    }

    static synchronized void sinc() {
        counter += 100;
    }

    public static void main(String[] args) {
        Old o = new Old();
        for (int i = 0; i < 10; i++) {
            o.inc(i);
            synchronized (LOCK) {
                counter++;
            }
        }
        sinc();
        int[] a = new int[4];
        for (int i = 0; i < a.length; i++) a[i] = i * i;
        int s = 0;
        for (int i = 0; i < a.length; i++) s += a[i];
        String r;
        switch (s % 3) {
            case 0: r = "zero"; break;
            case 1: r = "one"; break;
            default: r = "two";
        }
        try {
            if (s > 5) throw new RuntimeException("x");
        } catch (RuntimeException e) {
            r = r + "!";
        } finally {
            r = r + "?";
        }
        int j = jsrTest(5);
        System.out.println(o.field + " " + o.wide + " " + counter + " " + s + " " + r + " " + j);
    }
}
