package classic;

// Classic buffered writer: two writer threads append records to one buffer (a char array
// behind synchronized methods); when the buffer is full, the writing thread flushes it
// into the sink (a StringBuilder) inside the same monitor.
//
// RACE: classic.BufferedWriter.lastWriter @claim @claim
//   each writer names itself the buffer's "current writer" with a plain write when it
//   starts, before any synchronization: unordered in every schedule
// RACE: classic.BufferedWriter.records @records @records
//   each writer adds its record count when it is done, after its last synchronized call:
//   unordered in every schedule (a lost update)
// NORACE: char[]
//   the buffer's characters are written and read only inside the monitor
// NORACE: classic.BufferedWriter.pos
//   only inside the monitor
// NORACE: classic.BufferedWriter.flushes
//   only inside the monitor
public class BufferedWriter {
    static final char[] buf = new char[16];
    static int pos;
    static int flushes;
    static final StringBuilder sink = new StringBuilder();
    static final Object lock = new Object();
    static String lastWriter;
    static int records;

    static void write(String s) {
        synchronized (lock) {
            if (pos + s.length() > buf.length) {
                flushLocked();
            }
            for (int i = 0; i < s.length(); i++) {
                buf[pos + i] = s.charAt(i);
            }
            pos += s.length();
        }
    }

    static void flushLocked() {
        sink.append(buf, 0, pos);
        pos = 0;
        flushes++;
    }

    static void flush() {
        synchronized (lock) {
            flushLocked();
        }
    }

    static void writer(String name, int n) {
        lastWriter = name; // @claim
        for (int i = 0; i < n; i++) {
            write(name + i + ";");
        }
        flush();
        records += n; // @records
    }

    public static void main(String[] args) throws InterruptedException {
        Thread a = new Thread(() -> writer("a", 8), "writer-a");
        Thread b = new Thread(() -> writer("b", 6), "writer-b");
        a.start();
        b.start();
        a.join();
        b.join();
        String out = sink.toString();
        int as = 0;
        int bs = 0;
        long sum = 0;
        for (int i = 0; i < out.length(); i++) {
            char c = out.charAt(i);
            as += c == 'a' ? 1 : 0;
            bs += c == 'b' ? 1 : 0;
            sum += c;
        }
        System.out.println("written " + out.length() + " chars, " + as + " from a, " + bs
                + " from b, checksum " + sum + ", flushes " + (flushes > 0));
    }
}
