package families;

import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.CompletionHandler;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CountDownLatch;

// Family: threads of one JVM that talk over TCP (an in-process server and its client). The
// kernel orders them: what a thread did before sending is ordered before what the
// receiving thread does once the bytes arrived. Over java.net.Socket streams, over NIO
// socket channels, over asynchronous channels (a future, a completion handler), and
// through the JDK's HTTP server and HttpURLConnection.
//
// NORACE: families.Sockets.request
//   the client writes it, then sends; the server reads it once the line arrived
// NORACE: families.Sockets.answer
//   the server writes it, then replies; the client reads it once the reply arrived
// NORACE: families.Sockets.chanRequest
//   the same over socket channels
// NORACE: families.Sockets.chanAnswer
// NORACE: families.Sockets.asyncRequest
//   written before an asynchronous write, read after the server's read future completed
// NORACE: families.Sockets.asyncAnswer
//   written before the server's reply, read in the client's completion handler
// NORACE: families.Sockets.httpRequest
//   written before each HTTP request, read by the handler
// NORACE: families.Sockets.httpAnswer
//   written by the handler before its response, read after the response was read
// RACE: families.Sockets.late @lateW @lateR
//   the server writes it after its last reply; the client reads it after that reply
public class Sockets {
    static int request, answer, chanRequest, chanAnswer, asyncRequest, asyncAnswer;
    static int httpRequest, httpAnswer, late;

    public static void main(String[] args) throws Exception {
        InetAddress lo = InetAddress.getLoopbackAddress();
        System.out.println(
            streams(lo) + " " + channels(lo) + " " + asynchronous(lo) + " " + http(lo));
    }

    static int streams(InetAddress lo) throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 50, lo)) {
            Thread server = new Thread(() -> {
                try (Socket s = ss.accept()) {
                    BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream()));
                    PrintWriter out = new PrintWriter(s.getOutputStream(), true);
                    String line = in.readLine();
                    answer = request * 2;
                    out.println("ok " + line);
                    late = 1; // @lateW
                    in.readLine();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, "socket-server");
            server.start();
            int seen;
            try (Socket c = new Socket(lo, ss.getLocalPort())) {
                PrintWriter out = new PrintWriter(c.getOutputStream(), true);
                BufferedReader in = new BufferedReader(new InputStreamReader(c.getInputStream()));
                request = 21;
                out.println("hello");
                in.readLine();
                seen = answer;
                Thread.sleep(20);
                seen += late; // @lateR
                out.println("bye");
            }
            server.join();
            return seen - late;
        }
    }

    static int channels(InetAddress lo) throws Exception {
        try (ServerSocketChannel ss = ServerSocketChannel.open()) {
            ss.bind(new InetSocketAddress(lo, 0));
            Thread server = new Thread(() -> {
                try (SocketChannel s = ss.accept()) {
                    ByteBuffer b = ByteBuffer.allocate(4);
                    while (b.hasRemaining() && s.read(b) >= 0) { }
                    chanAnswer = chanRequest + 1;
                    s.write(ByteBuffer.wrap(new byte[] {1, 2, 3, 4}));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, "channel-server");
            server.start();
            try (SocketChannel c = SocketChannel.open(ss.getLocalAddress())) {
                chanRequest = 9;
                c.write(ByteBuffer.wrap(new byte[] {5, 6, 7, 8}));
                ByteBuffer b = ByteBuffer.allocate(4);
                while (b.hasRemaining() && c.read(b) >= 0) { }
                int seen = chanAnswer;
                server.join();
                return seen;
            }
        }
    }

    static int asynchronous(InetAddress lo) throws Exception {
        try (AsynchronousServerSocketChannel ss = AsynchronousServerSocketChannel.open()) {
            ss.bind(new InetSocketAddress(lo, 0));
            Thread server = new Thread(() -> {
                try (AsynchronousSocketChannel s = ss.accept().get()) {
                    ByteBuffer b = ByteBuffer.allocate(4);
                    while (b.hasRemaining() && s.read(b).get() >= 0) { }
                    asyncAnswer = asyncRequest + 1;
                    s.write(ByteBuffer.wrap(new byte[] {1, 2, 3, 4})).get();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, "async-server");
            server.start();
            int[] seen = new int[1];
            try (AsynchronousSocketChannel c = AsynchronousSocketChannel.open()) {
                c.connect(ss.getLocalAddress()).get();
                asyncRequest = 6;
                c.write(ByteBuffer.wrap(new byte[] {5, 6, 7, 8})).get();
                CountDownLatch done = new CountDownLatch(1);
                c.read(ByteBuffer.allocate(4), null, new CompletionHandler<Integer, Void>() {
                    public void completed(Integer n, Void a) {
                        seen[0] = asyncAnswer;
                        done.countDown();
                    }

                    public void failed(Throwable t, Void a) {
                        done.countDown();
                    }
                });
                done.await();
            }
            server.join();
            return seen[0];
        }
    }

    static int http(InetAddress lo) throws Exception {
        HttpServer srv = HttpServer.create(new InetSocketAddress(lo, 0), 0);
        srv.createContext("/", ex -> {
            int r = httpRequest;
            httpAnswer = r + 100;
            byte[] body = ("v" + r).getBytes();
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(body);
            }
        });
        srv.start();
        int sum = 0;
        try {
            int port = srv.getAddress().getPort();
            for (int i = 0; i < 3; i++) {
                httpRequest = i;
                URL url = new URL("http://127.0.0.1:" + port + "/q");
                HttpURLConnection c = (HttpURLConnection) url.openConnection();
                try (InputStream in = c.getInputStream()) {
                    in.readAllBytes();
                }
                sum += httpAnswer;
            }
        } finally {
            srv.stop(0);
        }
        return sum;
    }
}
