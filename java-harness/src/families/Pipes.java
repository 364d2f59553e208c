package families;

import java.io.IOException;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PipedReader;
import java.io.PipedWriter;

// Family: JDK objects that hand data over under their own monitor. java.io pipes: the
// bytes (or chars) a thread writes reach the reading thread through a buffer under the
// pipe's monitor, with wait/notify: what the writer did before write() is ordered before
// what the reader does after read() returned them. A StringBuffer's methods are
// synchronized: a thread that sees another's append() comes after it.
//
// NORACE: families.Pipes.before
//   written before out.write(), read after in.read() returned the byte
// NORACE: families.Pipes.beforeChars
//   the same through a PipedWriter/PipedReader
// NORACE: families.Pipes.beforeAppend
//   written before sb.append(), read once sb.length() showed the append
// RACE: families.Pipes.late @lateW @lateR
//   written after the last write, read after the last read
public class Pipes {
    static int before, beforeChars, beforeAppend, late;
    static final StringBuffer sb = new StringBuffer();
    static volatile int sink;

    public static void main(String[] args) throws Exception {
        PipedOutputStream out = new PipedOutputStream();
        PipedInputStream in = new PipedInputStream(out);
        PipedWriter wout = new PipedWriter();
        PipedReader win = new PipedReader(wout);
        Thread writer = new Thread(() -> {
            try {
                before = 1;
                out.write(7);
                out.flush();
                beforeChars = 2;
                wout.write('c');
                wout.flush();
                beforeAppend = 4;
                sb.append('x');
                late = 3; // @lateW
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        writer.start();
        int b = in.read();
        int s = before;
        int c = win.read();
        s += beforeChars;
        while (sb.length() == 0) {
            Thread.onSpinWait();
        }
        s += beforeAppend;
        sink = late; // @lateR
        writer.join();
        System.out.println(b + " " + (char) c + " " + s);
    }
}
