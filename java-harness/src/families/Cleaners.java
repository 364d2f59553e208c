package families;

import java.lang.ref.Cleaner;

// Family: java.lang.ref.Cleaner. register() hands the cleaning action to the cleaner's
// thread through a list under a monitor (the JDK's PhantomCleanable), so what the
// registering thread wrote before register() is ordered before the action runs; what it
// writes after is not.
//
// NORACE: families.Cleaners$Resource.handle
//   set before register(), read by the cleaning action in the cleaner's thread
// RACE: families.Cleaners.late @lateW @lateR
//   written by main after register(), read by the cleaning action
public class Cleaners {
    static int late;
    static volatile int cleaned, sink;

    static final class Resource implements Runnable {
        int handle;

        public void run() {
            sink = late; // @lateR
            cleaned = handle;
        }
    }

    public static void main(String[] args) throws Exception {
        Cleaner cleaner = Cleaner.create();
        Resource r = new Resource();
        r.handle = 7;
        cleaner.register(new Object(), r);
        late = 1; // @lateW
        for (int i = 0; i < 500 && cleaned == 0; i++) {
            System.gc();
            Thread.sleep(10);
        }
        System.out.println("cleaned " + cleaned);
    }
}
