package families;

// Family: array elements (xaload/xastore). An element's static name is the array type
// (`int[]`), so its races are told apart by their locations.
//
// RACE: int[] @slot0W @slot0R
//   worker A writes data[0], worker B reads data[0], unsynchronized
// RACE: int[] @sharedA @sharedB
//   both workers write data[3]
// RACE: short[] @copyW @copyR
//   worker A fills `buf` with System.arraycopy, worker B reads buf[1]: the copy writes the
//   elements at the arraycopy call (a JDK native: only a model of it can record them)
// RACE: boolean[] @flagW @flagR
//   worker A sets flags[1], worker B reads it: `bastore`/`baload` serve boolean[] and
//   byte[] alike, the array's class tells which
// RACE: byte[] @byteW @byteR
//   the same on a byte[]
// RACE: java.lang.String[] @strW @strR
//   `aastore`/`aaload` serve every array of references: the array's class names it
// RACE: int[][] @rowW @rowR
//   an array of arrays: its elements are int[] references
// RACE: java.lang.Object[] @objCopyW @objCopyR
//   System.arraycopy from a String[] into an Object[]: the copy's writes are named by
//   the destination's class, as worker B's read of the same element
// NORACE: long[]
//   each worker writes only its own element of `parts`; main reads them after join
// NORACE: int[] @ownA @ownB
//   data[1] and data[2]: same array and static name, different elements
// NORACE: double[]
//   `weights` is filled by main before start() and only read by the workers
public class Arrays {
    static int[] data = new int[4];
    static long[] parts = new long[2];
    static double[] weights = new double[8];
    static short[] buf = new short[2];
    static short[] src = {3, 4};
    static boolean[] flags = new boolean[2];
    static byte[] bytes = new byte[2];
    static String[] names = new String[2];
    static int[][] grid = new int[2][];
    static String[] words = {"w"};
    static Object[] objs = new Object[1];

    static void workerA() {
        data[0] = 5; // @slot0W
        data[3] = 1; // @sharedA
        System.arraycopy(src, 0, buf, 0, 2); // @copyW
        flags[1] = true; // @flagW
        bytes[0] = 7; // @byteW
        names[0] = "a"; // @strW
        grid[1] = new int[1]; // @rowW
        System.arraycopy(words, 0, objs, 0, 1); // @objCopyW
        for (int i = 0; i < 4; i++) {
            data[1] += i; // @ownA
            parts[0] += (long) weights[i];
        }
    }

    static void workerB() {
        int seen = data[0]; // @slot0R
        data[3] = 1; // @sharedB
        int b1 = buf[1]; // @copyR
        boolean f = flags[1]; // @flagR
        byte y = bytes[0]; // @byteR
        String n = names[0]; // @strR
        int[] row = grid[1]; // @rowR
        Object o = objs[0]; // @objCopyR
        int zero = (f ? 0 : 0) + (y & 0) + (n == null ? 0 : 0) + (row == null ? 0 : 0)
                + (o == null ? 0 : 0);
        for (int i = 4; i < 8; i++) {
            data[2] += i + (seen & 0) + (b1 & 0) + zero; // @ownB
            parts[1] += (long) weights[i];
        }
    }

    public static void main(String[] args) throws InterruptedException {
        for (int i = 0; i < weights.length; i++) {
            weights[i] = i * 1.5;
        }
        Thread a = new Thread(Arrays::workerA, "array-a");
        Thread b = new Thread(Arrays::workerB, "array-b");
        a.start();
        b.start();
        a.join();
        b.join();
        System.out.println("parts=" + parts[0] + "," + parts[1] + " own=" + data[1] + "," + data[2]);
    }
}
