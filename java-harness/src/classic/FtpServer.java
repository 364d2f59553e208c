package classic;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

// Classic FTP-like server loop, in process: the client (main) queues commands; two
// worker threads take them, serve them from a read-only file table, and queue replies
// that the client reads. QUIT ends a worker.
//
// RACE: classic.FtpServer.greeting @greet @greet
//   each worker sets the server's greeting line when it starts, before any
//   synchronization: unordered in every schedule
// RACE: classic.FtpServer.bytesSent @bytesSent @bytesSent
//   each worker adds the bytes it sent to the server statistics after it took its QUIT,
//   its last synchronization: unordered in every schedule (lost update)
// NORACE: classic.FtpServer$Request.command
//   written by the client before it queues the request, read by the worker that took it
// NORACE: classic.FtpServer$Request.arg
//   idem
// NORACE: classic.FtpServer$Request.reply
//   written by the worker before it queues the reply, read by the client after taking it
// NORACE: classic.FtpServer.sessions
//   counted inside synchronized (statsLock)
// NORACE: classic.FtpServer.retrieved
//   counted inside synchronized (statsLock), read by main after join
// NORACE: java.util.HashMap.$state
//   the file table is filled before the workers start and only read afterwards
public class FtpServer {
    static final class Request {
        String command;
        String arg;
        String reply;
    }

    static final BlockingQueue<Request> requests = new LinkedBlockingQueue<>();
    static final BlockingQueue<Request> replies = new LinkedBlockingQueue<>();
    static final Map<String, String> files = new HashMap<>();
    static final Object statsLock = new Object();
    static String greeting;
    static long bytesSent;
    static int sessions;
    static int retrieved;

    static String serve(Request r) {
        switch (r.command) {
            case "RETR": {
                String body = files.get(r.arg);
                if (body == null) {
                    return "550 " + r.arg + ": no such file";
                }
                synchronized (statsLock) {
                    retrieved++;
                }
                return "226 " + body.length() + " " + body;
            }
            case "SIZE": {
                String body = files.get(r.arg);
                return body == null ? "550 no such file" : "213 " + body.length();
            }
            case "NOOP":
                return "200 ok";
            default:
                return "502 " + r.command + " not implemented";
        }
    }

    static void worker(String name) throws InterruptedException {
        greeting = "220 " + name + " ready"; // @greet
        synchronized (statsLock) {
            sessions++;
        }
        long sent = 0;
        while (true) {
            Request r = requests.take();
            if (r.command.equals("QUIT")) {
                break;
            }
            r.reply = serve(r);
            sent += r.reply.length();
            replies.put(r);
        }
        bytesSent += sent; // @bytesSent
    }

    static Request request(String command, String arg) {
        Request r = new Request();
        r.command = command;
        r.arg = arg;
        return r;
    }

    public static void main(String[] args) throws InterruptedException {
        for (int i = 0; i < 6; i++) {
            files.put("file" + i + ".txt", "contents of file " + i + "x".repeat(i));
        }
        Thread[] ts = new Thread[2];
        for (int i = 0; i < 2; i++) {
            String name = "ftp-" + i;
            ts[i] = new Thread(() -> {
                try {
                    worker(name);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, name);
            ts[i].start();
        }
        String[] cmds = {"RETR", "SIZE", "NOOP", "RETR", "MKD"};
        int n = 0;
        for (int i = 0; i < 12; i++) {
            requests.put(request(cmds[i % cmds.length], "file" + (i % 8) + ".txt"));
            n++;
        }
        int ok = 0;
        int failed = 0;
        long bytes = 0;
        for (int i = 0; i < n; i++) {
            Request r = replies.take();
            bytes += r.reply.length();
            if (r.reply.charAt(0) == '2') {
                ok++;
            } else {
                failed++;
            }
        }
        requests.put(request("QUIT", ""));
        requests.put(request("QUIT", ""));
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("replies " + n + ": " + ok + " ok, " + failed + " failed, " + bytes
                + " bytes, " + sessions + " sessions, " + retrieved + " retrieved");
    }
}
