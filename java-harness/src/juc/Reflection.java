package juc;

import java.lang.reflect.Field;

// Shape: a volatile field written through core reflection (Field.setInt, setBoolean) and
// read plainly by the program: the write publishes what was written before it, as a plain
// volatile write would. (JDK 17 reflects through Unsafe field accessors, later JDKs
// through method handles: both paths are covered.)
//
// NORACE: juc.Reflection.data
//   written before Field.setInt of the static volatile `flag`; read after main saw it
// NORACE: juc.Reflection.idata
//   written before Field.setBoolean of the volatile field `iflag`; read after main saw it
// RACE: juc.Reflection.racy @racyW @racyR
//   the racer thread writes it; main reads it after a sleep, which orders nothing
public class Reflection {
    static int racy;
    static int data;
    static volatile int flag;
    int idata;
    volatile boolean iflag;

    public static void main(String[] args) throws Exception {
        Field f = Reflection.class.getDeclaredField("flag");
        Field fi = Reflection.class.getDeclaredField("iflag");
        Reflection r = new Reflection();
        Thread t = new Thread(() -> {
            try {
                data = 1;
                f.setInt(null, 1);
                r.idata = 2;
                fi.setBoolean(r, true);
            } catch (IllegalAccessException e) {
                throw new RuntimeException(e);
            }
        });
        t.start();
        while (flag == 0) Thread.onSpinWait();
        int s = data;
        while (!r.iflag) Thread.onSpinWait();
        s += r.idata;
        t.join();
        // A real race, for contrast: nothing orders the thread's write and main's read.
        Thread racer = new Thread(() -> {
            racy = 1; // @racyW
        });
        racer.start();
        Thread.sleep(50);
        int seenRacy = racy; // @racyR
        racer.join();
        System.out.println("s=" + (s + seenRacy - seenRacy));
    }
}
