package families;

// Family: static fields (getstatic/putstatic).
//
// RACE: families.Statics.counter @incA @incB
//   both workers increment `counter` with no lock (read and write at the same line)
// RACE: families.Statics.last @lastA @lastB
//   both workers write `last`, unsynchronized
// NORACE: families.Statics.limit
//   written by main before start(), read by the workers
// NORACE: families.Statics.sum
//   updated under synchronized (Statics.class) by both workers, read by main after join
public class Statics {
    static int counter;
    static int last;
    static int limit;
    static int sum;

    static void work(int id) {
        counter++; // @incA
        last = 7; // @lastA
        for (int i = 0; i < limit; i++) {
            synchronized (Statics.class) {
                sum += id;
            }
        }
    }

    static void other(int id) {
        counter++; // @incB
        last = 7; // @lastB
        for (int i = 0; i < limit; i++) {
            synchronized (Statics.class) {
                sum += id;
            }
        }
    }

    public static void main(String[] args) throws InterruptedException {
        limit = 5;
        Thread a = new Thread(() -> work(1), "static-a");
        Thread b = new Thread(() -> other(2), "static-b");
        a.start();
        b.start();
        a.join();
        b.join();
        System.out.println("sum=" + sum + " last=" + last);
    }
}
