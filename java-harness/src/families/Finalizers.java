package families;

// Family: finalizers. Every write to an object's fields before the object is finalized is
// visible to its finalizer (JLS 12.6.2): the JVM's Finalizer thread reads and writes what
// the program wrote after construction without a race, fields of subclasses included. A
// static the finalizer reads is not the object's: main's write after dropping the object
// races with the finalizer's read.
//
// NORACE: families.Finalizers$Resource.handle
//   written by main after construction, read and written by finalize()
// NORACE: families.Finalizers$Pooled.slot
//   a subclass's field, written by main, read by the inherited finalize() through more()
// RACE: families.Finalizers.late @lateW @lateR
//   written by main after the objects were dropped, read by every finalize()
@SuppressWarnings({"deprecation", "removal"})
public class Finalizers {
    static int late;
    static volatile int finalized, sink;

    static class Resource {
        int handle;

        int more() {
            return 0;
        }

        @Override
        protected void finalize() {
            sink = late; // @lateR
            if (handle > 0) {
                handle = -handle - more();
            }
            finalized++;
        }
    }

    static final class Pooled extends Resource {
        int slot;

        @Override
        int more() {
            return slot;
        }
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 20; i++) {
            Resource r = (i % 2 == 0) ? new Resource() : new Pooled();
            r.handle = 7 + i;
            if (r instanceof Pooled) {
                ((Pooled) r).slot = i;
            }
        }
        late = 1; // @lateW
        for (int i = 0; i < 500 && finalized < 20; i++) {
            System.gc();
            Thread.sleep(10);
        }
        System.out.println("finalized " + (finalized >= 20));
    }
}
