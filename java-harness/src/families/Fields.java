package families;

// Family: instance fields (getfield/putfield), recorded as plain reads and writes with values.
//
// RACE: families.Fields.hits @hitsA @hitsB
//   both workers write `hits` first thing, unsynchronized (same value: the output stays fixed)
// RACE: families.Fields.flag @flagW @flagR
//   worker A writes, worker B reads, neither synchronized
// NORACE: families.Fields.total
//   incremented by both workers inside synchronized (lock), read by main after join
// NORACE: families.Fields.seed
//   written by main before start(), only read by the workers
// NORACE: families.Fields$Cell.v
//   every worker writes the field of its own Cell: same static name, different objects
public class Fields {
    static final class Cell {
        int v;
    }

    final Object lock = new Object();
    int hits;
    int flag;
    int total;
    int seed;
    Cell cellA;
    Cell cellB;

    void workerA() {
        hits = 1; // @hitsA
        flag = 1; // @flagW
        Cell c = new Cell();
        cellA = c;
        for (int i = 0; i < 10; i++) {
            c.v += seed;
        }
        synchronized (lock) {
            total += 1;
        }
    }

    void workerB() {
        hits = 1; // @hitsB
        int seen = flag; // @flagR
        Cell c = new Cell();
        cellB = c;
        for (int i = 0; i < 10; i++) {
            c.v += seed + (seen & 0);
        }
        synchronized (lock) {
            total += 2;
        }
    }

    public static void main(String[] args) throws InterruptedException {
        Fields f = new Fields();
        f.seed = 3;
        Thread a = new Thread(f::workerA, "worker-a");
        Thread b = new Thread(f::workerB, "worker-b");
        a.start();
        b.start();
        a.join();
        b.join();
        System.out.println("total=" + f.total + " a=" + f.cellA.v + " b=" + f.cellB.v);
    }
}
