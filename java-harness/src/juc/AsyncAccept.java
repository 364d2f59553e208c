package juc;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.CompletionHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

// Shape: asynchronous I/O. The CompletionHandler of AsynchronousServerSocketChannel.accept
// runs on a thread of the channel group and reads a list main filled before accept().
//
// RACE: juc.AsyncAccept.late @lateH @lateM
//   the handler writes `late` after counting down; main reads it right after await() (the
//   client is a plain blocking Socket, which shares nothing with the channel group)
// NORACE: java.util.ArrayList.$state @fill @size
//   main adds to `names` before accept(); the handler reads its size
// NORACE: juc.AsyncAccept.seen
//   written by the handler before countDown(), read by main after await()
public class AsyncAccept {
    static final List<String> names = new ArrayList<>();
    static int seen;
    static int late;

    public static void main(String[] args) throws IOException, InterruptedException {
        AsynchronousServerSocketChannel server = AsynchronousServerSocketChannel.open()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        CountDownLatch done = new CountDownLatch(1);
        for (String n : new String[] {"a", "b", "c"}) {
            names.add(n); // @fill
        }
        server.accept(null, new CompletionHandler<AsynchronousSocketChannel, Void>() {
            @Override
            public void completed(AsynchronousSocketChannel ch, Void att) {
                seen = names.size(); // @size
                done.countDown();
                late = 1; // @lateH
                try {
                    ch.close();
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            }

            @Override
            public void failed(Throwable exc, Void att) {
                done.countDown();
            }
        });
        Socket client = new Socket();
        client.connect(server.getLocalAddress());
        done.await();
        int s = seen;
        int l = late; // @lateM
        client.close();
        server.close();
        System.out.println("seen=" + s + " late=" + (l == 0 || l == 1));
    }
}
