package families;

import java.io.IOException;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PipedReader;
import java.io.PipedWriter;

// Family: java.io pipes. The bytes (or chars) a thread writes reach the reading thread
// through a buffer under the pipe's monitor, with wait/notify: what the writer did before
// write() is ordered before what the reader does after read() returned them.
//
// NORACE: families.Pipes.before
//   written before out.write(), read after in.read() returned the byte
// NORACE: families.Pipes.beforeChars
//   the same through a PipedWriter/PipedReader
// RACE: families.Pipes.late @lateW @lateR
//   written after the last write, read after the last read
public class Pipes {
    static int before, beforeChars, late;
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
        sink = late; // @lateR
        writer.join();
        System.out.println(b + " " + (char) c + " " + s);
    }
}
