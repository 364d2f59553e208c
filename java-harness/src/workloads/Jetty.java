// CLASSPATH: /usr/share/java/jetty9-server.jar:/usr/share/java/jetty9-http.jar:/usr/share/java/jetty9-io.jar:/usr/share/java/jetty9-util.jar:/usr/share/java/servlet-api.jar
package workloads;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.AbstractHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A Jetty 9.4 workload (issue 8; Debian's libjetty9-java): an embedded server on a local
 * ephemeral port with a small thread pool and one handler (a little "catalog" that counts
 * hits per item and answers with a computed body), under CLIENTS client threads that each
 * send REQUESTS HTTP/1.1 requests over one keep-alive socket. Bodies depend only on the
 * request, so the printed totals do not depend on the schedule. Jetty's logging is off.
 *
 * <pre>java -cp java-harness:/usr/share/java/jetty9-server.jar:...:/usr/share/java/servlet-api.jar workloads.Jetty 4 50</pre>
 *
 * build.rs compiles this file only when the jars of its CLASSPATH line exist.
 */
public class Jetty {
    static final class Catalog extends AbstractHandler {
        final AtomicLong served = new AtomicLong();

        @Override
        public void handle(String target, Request base, HttpServletRequest req, HttpServletResponse res)
                throws IOException {
            String item = req.getParameter("item");
            int n = item == null ? 0 : Integer.parseInt(item);
            StringBuilder body = new StringBuilder();
            body.append("item ").append(n).append(" at ").append(target).append('\n');
            for (int i = 0; i < 1 + n % 7; i++) {
                body.append("  part ").append(n * 31 + i).append(": ").append(Integer.toHexString(n * i + 17)).append('\n');
            }
            byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
            res.setStatus(n % 11 == 10 ? 404 : 200);
            res.setContentType("text/plain;charset=utf-8");
            res.setContentLength(bytes.length);
            res.getOutputStream().write(bytes);
            served.incrementAndGet();
            base.setHandled(true);
        }
    }

    /** One response: status and body length; reads exactly Content-Length bytes. */
    static int[] exchange(InputStream in, OutputStream out, String path) throws IOException {
        out.write(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        String status = readLine(in);
        int length = 0;
        for (String h; !(h = readLine(in)).isEmpty(); ) {
            if (h.toLowerCase().startsWith("content-length:")) {
                length = Integer.parseInt(h.substring(15).trim());
            }
        }
        int got = 0;
        byte[] buf = new byte[length];
        while (got < length) {
            int r = in.read(buf, got, length - got);
            if (r < 0) {
                throw new IOException("connection closed");
            }
            got += r;
        }
        return new int[] {Integer.parseInt(status.split(" ")[1]), length};
    }

    static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int c; (c = in.read()) != '\n'; ) {
            if (c < 0) {
                throw new IOException("connection closed");
            }
            if (c != '\r') {
                sb.append((char) c);
            }
        }
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        int clients = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int requests = args.length > 1 ? Integer.parseInt(args[1]) : 50;
        System.setProperty("org.eclipse.jetty.util.log.class", "org.eclipse.jetty.util.log.StdErrLog");
        System.setProperty("org.eclipse.jetty.LEVEL", "OFF");
        System.setProperty("org.eclipse.jetty.util.log.announce", "false");
        QueuedThreadPool pool = new QueuedThreadPool(8, 4);
        pool.setName("jetty");
        Server server = new Server(pool);
        ServerConnector connector = new ServerConnector(server, 1, 1);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        Catalog catalog = new Catalog();
        server.setHandler(catalog);
        server.start();
        int port = connector.getLocalPort();

        long[] bytes = new long[clients];
        int[] ok = new int[clients];
        int[] missing = new int[clients];
        Throwable[] errors = new Throwable[clients];
        Thread[] ts = new Thread[clients];
        for (int c = 0; c < clients; c++) {
            final int id = c;
            ts[c] = new Thread(() -> {
                try (Socket s = new Socket("127.0.0.1", port)) {
                    InputStream in = s.getInputStream();
                    OutputStream out = s.getOutputStream();
                    for (int i = 0; i < requests; i++) {
                        int item = id * requests + i;
                        int[] r = exchange(in, out, "/catalog/" + (item % 5) + "?item=" + item);
                        bytes[id] += r[1];
                        if (r[0] == 200) {
                            ok[id]++;
                        } else {
                            missing[id]++;
                        }
                    }
                } catch (Throwable e) {
                    errors[id] = e;
                }
            }, "client-" + c);
            ts[c].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        server.stop();
        server.join();
        long total = 0;
        int oks = 0;
        int misses = 0;
        for (int c = 0; c < clients; c++) {
            if (errors[c] != null) {
                throw new RuntimeException(errors[c]);
            }
            total += bytes[c];
            oks += ok[c];
            misses += missing[c];
        }
        System.out.println("requests " + clients * requests + ", 200: " + oks + ", 404: " + misses
                + ", body bytes " + total + ", served " + catalog.served.get());
    }
}
