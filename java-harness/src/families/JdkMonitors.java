package families;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.util.logging.Formatter;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.StreamHandler;

// Family: the program's code running under a monitor the JDK takes: a shared PrintStream
// over the program's OutputStream (println holds the stream while it writes), a
// PrintWriter over the program's Writer (it holds the writer), a java.util.logging
// handler calling the program's Formatter (publish is synchronized). A println that
// calls no code of the program orders nothing.
//
// NORACE: families.JdkMonitors$Counting.bytes @countByte
//   two threads println to one PrintStream over it: every write() runs inside println
// NORACE: families.JdkMonitors$CountingWriter.chars @countChars
//   two threads print to one PrintWriter over it
// NORACE: families.JdkMonitors$Lines.lines @format
//   two threads log through one StreamHandler with this Formatter
// NORACE: families.JdkMonitors.observed @observedW @observedR
//   thread `marker` writes it and then marks a java.util.Observable changed; the
//   observer reads it in the thread whose notifyObservers() found the mark (the flag is
//   set and cleared under the Observable's monitor; the observer runs after it)
// RACE: families.JdkMonitors.seen @seenW @seenR
//   thread `before` writes it and then prints, thread `after` prints and then reads it:
//   the two printlns' sections could run in either order
public class JdkMonitors {
    static int seen;
    static int sink;
    static int observed;

    @SuppressWarnings("deprecation")
    static class Marked extends java.util.Observable {
        void mark() {
            setChanged();
        }
    }

    static class Counting extends OutputStream {
        long bytes;

        @Override
        public void write(int b) {
            bytes++; // @countByte
        }
    }

    static class CountingWriter extends Writer {
        long chars;

        @Override
        public void write(char[] buf, int off, int len) {
            chars += len; // @countChars
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    }

    static class Lines extends Formatter {
        int lines;

        @Override
        public String format(LogRecord r) {
            lines++; // @format
            return r.getMessage() + "\n";
        }
    }

    static void both(Runnable r) throws InterruptedException {
        Thread a = new Thread(r, "one");
        Thread b = new Thread(r, "two");
        a.start();
        b.start();
        a.join();
        b.join();
    }

    public static void main(String[] args) throws Exception {
        Counting counting = new Counting();
        PrintStream ps = new PrintStream(counting, true);
        both(() -> {
            for (int i = 0; i < 3; i++) {
                ps.println("line " + i);
            }
        });
        CountingWriter cw = new CountingWriter();
        PrintWriter pw = new PrintWriter(cw, true);
        both(() -> {
            for (int i = 0; i < 3; i++) {
                pw.println("line " + i);
            }
        });
        Logger log = Logger.getLogger("families.JdkMonitors");
        log.setUseParentHandlers(false);
        Lines lines = new Lines();
        StreamHandler handler = new StreamHandler(new ByteArrayOutputStream(), lines);
        log.addHandler(handler);
        both(() -> {
            for (int i = 0; i < 3; i++) {
                log.info("record " + i);
            }
        });
        Marked marked = new Marked();
        int[] got = {-1};
        marked.addObserver((o, arg) -> got[0] = observed); // @observedR
        Thread notifier = new Thread(() -> {
            long end = System.nanoTime() + 10_000_000_000L;
            while (got[0] < 0 && System.nanoTime() < end) {
                marked.notifyObservers();
                Thread.onSpinWait();
            }
        }, "notifier");
        notifier.start();
        Thread marker = new Thread(() -> {
            observed = 42; // @observedW
            marked.mark();
        }, "marker");
        marker.start();
        marker.join();
        notifier.join();
        Thread before = new Thread(() -> {
            seen = 1; // @seenW
            System.out.println("before");
        }, "before");
        Thread after = new Thread(() -> {
            System.out.println("after");
            sink = seen; // @seenR
        }, "after");
        before.start();
        Thread.sleep(50);
        after.start();
        before.join();
        after.join();
        System.out.println(counting.bytes + " " + cw.chars + " " + lines.lines + " " + got[0]);
    }
}
