package families;

// Family: class initialization. The JVM runs <clinit> once, under the class's init lock;
// every thread that uses the class afterwards is ordered after its end.
//
// RACE: families.ClassInit$Config.hits @hitsA @hitsB
//   a static of Config written by both workers after initialization, unsynchronized
// NORACE: families.ClassInit$Config.base
//   written only by Config's <clinit> (whichever worker triggered it), read by both workers
// NORACE: families.ClassInit$Config.table
//   a static array reference written by <clinit>
// NORACE: int[]
//   Config.table's elements, filled by <clinit>, only read afterwards
// NORACE: families.ClassInit$Holder.INSTANCE
//   the lazy-holder idiom: written by Holder's <clinit>
// NORACE: families.ClassInit$Resource.size
//   written by Resource's constructor, run inside Holder's <clinit>
// NORACE: families.ClassInit$Phase.number
//   an enum constant's field, set by its constructor inside Phase's <clinit>, read by a
//   thread that found the constant through the JDK (Enum.valueOf, whose cache of constants
//   the JDK keeps itself) without touching any static of Phase
// NORACE: families.ClassInit$Phase.label
//   the same for a field the other thread writes after reading it
// NORACE: families.ClassInit$Registry.byCall
//   written by Counter's <clinit> (another class's static), read after a static call of
//   Counter, which waits for the initialization (JLS 12.4.2) whichever thread ran it
// NORACE: families.ClassInit$Registry.byNew
//   the same, Plugin's <clinit>, read after `new Plugin()`
// NORACE: families.ClassInit$Registry.byName
//   the same, Driver's <clinit>, read after Class.forName
// NORACE: families.ClassInit$Registry.bySuper
//   the same, Base's <clinit>, run because a static method of its subclass was called
// RACE: families.ClassInit$Registry.unused @unusedW @unusedR
//   written by Lone's <clinit>, read by a thread that never uses Lone: nothing orders them
public class ClassInit {
    static final class Config {
        static int base = compute();
        static int[] table = fill();
        static int hits;

        static int compute() {
            return 40 + 2;
        }

        static int[] fill() {
            int[] t = new int[4];
            for (int i = 0; i < t.length; i++) {
                t[i] = i * i;
            }
            return t;
        }
    }

    static final class Resource {
        int size;

        Resource(int size) {
            this.size = size;
        }
    }

    static final class Holder {
        static Resource INSTANCE = new Resource(Config.base + 1);
    }

    enum Phase {
        A(1, "a"), B(2, "b");

        int number;
        String label;

        Phase(int number, String label) {
            this.number = number;
            this.label = label;
        }
    }

    /** Statics of one class written by the static initializers of others. */
    static final class Registry {
        static int byCall;
        static int byNew;
        static int byName;
        static int bySuper;
        static int unused;
    }

    static final class Counter {
        static {
            Registry.byCall = 5;
        }

        static int next(int x) {
            return x + 1;
        }
    }

    static final class Plugin {
        static {
            Registry.byNew = 6;
        }

        final int id = 1;
    }

    static final class Driver {
        static {
            Registry.byName = 7;
        }
    }

    static class Base {
        static {
            Registry.bySuper = 8;
        }
    }

    static final class Derived extends Base {
        static int twice(int x) {
            return 2 * x;
        }
    }

    static final class Lone {
        static {
            Registry.unused = 9; // @unusedW
        }

        static void touch() {}
    }

    /** Uses each class (the first caller initializes it) and reads what its init wrote. */
    static int useAll() throws ClassNotFoundException {
        int v = Counter.next(0);
        v += Registry.byCall;
        v += new Plugin().id;
        v += Registry.byNew;
        Class.forName("families.ClassInit$Driver");
        v += Registry.byName;
        v += Derived.twice(1);
        return v + Registry.bySuper;
    }

    /** A constant found by name: the first caller initializes Phase (through reflection). */
    static int phase(String name) {
        Phase p = Enum.valueOf(Phase.class, name);
        int n = p.number;
        if (p.label.isEmpty()) {
            p.label = name;
        }
        return n;
    }

    static int work() {
        int v = Config.base + Config.table[3];
        return v + Holder.INSTANCE.size;
    }

    static int resultA;
    static int resultB;

    public static void main(String[] args) throws InterruptedException {
        Thread a = new Thread(() -> {
            int v = work();
            Config.hits = 1; // @hitsA
            resultA = v;
        }, "init-a");
        Thread b = new Thread(() -> {
            int v = work();
            Config.hits = 1; // @hitsB
            resultB = v;
        }, "init-b");
        a.start();
        b.start();
        a.join();
        b.join();
        // One thread initializes Phase; the other comes later (not ordered by anything the
        // program does) and takes the constant from the JDK's cache.
        Thread c = new Thread(() -> resultA += phase("B"), "enum-first");
        Thread d = new Thread(() -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
            resultB += phase("B");
        }, "enum-later");
        c.start();
        d.start();
        c.join();
        d.join();
        // Either thread may initialize the classes; the other waits for it (or comes later).
        Runnable uses = () -> {
            try {
                int v = useAll();
                synchronized (ClassInit.class) {
                    resultA += v;
                }
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
        };
        Thread e = new Thread(uses, "uses-first");
        Thread f = new Thread(uses, "uses-second");
        Thread g = new Thread(Lone::touch, "lone-init");
        Thread h = new Thread(() -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException x) {
                return;
            }
            resultB += Registry.unused; // @unusedR
        }, "lone-reader");
        e.start();
        f.start();
        g.start();
        h.start();
        e.join();
        f.join();
        g.join();
        h.join();
        System.out.println("a=" + resultA + " b=" + resultB);
    }
}
