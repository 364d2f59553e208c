package families;

// Family: exceptions leaving synchronized code. The monitor is released when an exception
// propagates out of a synchronized block or method; the recorder must record that release.
//
// RACE: families.Exceptions.afterCatch @afterCatchA @afterCatchB
//   written by both workers after all their synchronized code, unsynchronized
// RACE: families.Exceptions.inHandler @handlerA @handlerB
//   written in the catch handlers, after each worker's first section (on a monitor of its
//   own) was left by a throw
// NORACE: families.Exceptions.blockCount
//   incremented in a synchronized block that is then left by a throw
// NORACE: families.Exceptions.methodCount
//   incremented in a synchronized method that throws
// NORACE: families.Exceptions.deepCount
//   incremented in a synchronized method before a callee throws through it
// NORACE: families.Exceptions.after
//   written under the same monitor after the exceptional exits (needs the monitor to
//   have been released, or the worker would deadlock)
public class Exceptions {
    static final Object m = new Object();
    static final Object privA = new Object();
    static final Object privB = new Object();
    static int blockCount;
    static int methodCount;
    static int deepCount;
    static int after;
    static int afterCatch;
    static int inHandler;
    static int handled;

    static void block(int i) {
        synchronized (m) {
            blockCount++;
            if (i >= 0) {
                throw new IllegalStateException("block " + i);
            }
        }
    }

    static synchronized void method(int i) {
        methodCount++;
        if (i >= 0) {
            throw new IllegalArgumentException("method " + i);
        }
    }

    static void fail(int i) {
        if (i >= 0) {
            throw new UnsupportedOperationException("deep " + i);
        }
    }

    static synchronized void deep(int i) {
        deepCount++;
        fail(i);
    }

    static int rounds(int id) {
        int caught = 0;
        for (int i = 0; i < 3; i++) {
            try {
                block(i);
            } catch (IllegalStateException e) {
                caught++;
            }
            try {
                method(i);
            } catch (IllegalArgumentException e) {
                caught++;
            }
            try {
                deep(i);
            } catch (UnsupportedOperationException e) {
                caught++;
            }
            synchronized (m) {
                after += id;
            }
        }
        return caught;
    }

    static void workerA() {
        try {
            synchronized (privA) {
                throw new RuntimeException("first");
            }
        } catch (RuntimeException e) {
            inHandler = 1; // @handlerA
        }
        int c = rounds(1);
        afterCatch = c; // @afterCatchA
    }

    static void workerB() {
        try {
            synchronized (privB) {
                throw new RuntimeException("first");
            }
        } catch (RuntimeException e) {
            inHandler = 1; // @handlerB
        }
        int c = rounds(2);
        afterCatch = c; // @afterCatchB
    }

    public static void main(String[] args) throws InterruptedException {
        Thread a = new Thread(Exceptions::workerA, "exc-a");
        Thread b = new Thread(Exceptions::workerB, "exc-b");
        a.start();
        b.start();
        a.join();
        b.join();
        synchronized (m) {
            System.out.println("block=" + blockCount + " method=" + methodCount + " deep=" + deepCount
                    + " after=" + after + " caught=" + afterCatch);
        }
    }
}
