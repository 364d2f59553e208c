package classic;

// Classic parallel merge sort: each sorter thread splits its range in two, sorts the
// halves in two child threads (down to a fixed depth), joins them and merges.
//
// RACE: classic.MergeSort.calls @calls @calls
//   every sorter counts itself with a plain `calls++` first thing; two siblings (and
//   their descendants against the other sibling) have no synchronization between them:
//   unordered in every schedule
// RACE: classic.MergeSort.lastLeaf @leaf @leaf
//   each leaf sorter writes its range as "the last leaf finished" after sorting; two
//   sibling leaves are unordered in every schedule (their parent joins both afterwards)
// NORACE: int[]
//   a child sorts its own half of the range; the parent merges after joining both
//   children; main reads after joining the root
public class MergeSort {
    static final int N = 64;
    static final int DEPTH = 2;
    static final int[] data = new int[N];
    static int calls;
    static int lastLeaf;

    static Thread sorter(int lo, int hi, int depth) {
        return new Thread(() -> sort(lo, hi, depth), "sort-" + lo + "-" + hi);
    }

    static void sort(int lo, int hi, int depth) {
        calls++; // @calls
        if (depth == DEPTH) {
            insertionSort(lo, hi);
            lastLeaf = lo; // @leaf
            return;
        }
        int mid = (lo + hi) >>> 1;
        Thread left = sorter(lo, mid, depth + 1);
        Thread right = sorter(mid, hi, depth + 1);
        left.start();
        right.start();
        try {
            left.join();
            right.join();
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
        merge(lo, mid, hi);
    }

    static void insertionSort(int lo, int hi) {
        for (int i = lo + 1; i < hi; i++) {
            int x = data[i];
            int j = i - 1;
            while (j >= lo && data[j] > x) {
                data[j + 1] = data[j];
                j--;
            }
            data[j + 1] = x;
        }
    }

    static void merge(int lo, int mid, int hi) {
        int[] tmp = new int[hi - lo];
        int i = lo;
        int j = mid;
        int k = 0;
        while (i < mid && j < hi) {
            tmp[k++] = data[i] <= data[j] ? data[i++] : data[j++];
        }
        while (i < mid) {
            tmp[k++] = data[i++];
        }
        while (j < hi) {
            tmp[k++] = data[j++];
        }
        System.arraycopy(tmp, 0, data, lo, tmp.length);
    }

    public static void main(String[] args) throws InterruptedException {
        long seed = 12345;
        for (int i = 0; i < N; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            data[i] = (int) (seed >>> 40);
        }
        Thread root = sorter(0, N, 0);
        root.start();
        root.join();
        boolean sorted = true;
        long sum = 0;
        for (int i = 0; i < N; i++) {
            sorted &= i == 0 || data[i - 1] <= data[i];
            sum += data[i];
        }
        System.out.println("sorted " + sorted + ", " + N + " elements, sum " + sum + ", min "
                + data[0] + ", max " + data[N - 1]);
    }
}
