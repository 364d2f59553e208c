package families.signal;

// A hand-shake the recorder does not see: the stamp test excludes this package
// (`--exclude families.signal.*`), so calling it records nothing in either thread.
public class Go {
    private static volatile int turn;

    public static void set(int k) {
        turn = k;
    }

    public static int get() {
        return turn;
    }
}
