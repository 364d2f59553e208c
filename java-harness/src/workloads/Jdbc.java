package workloads;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

/**
 * An embedded JDBC workload for recording-overhead measurements (issue 8): THREADS
 * threads, each with its own connection, run STATEMENTS insert/update/select statements
 * against one shared table. The database comes from the classpath (Debian's libh2-java or
 * libderby-java); the URL says which.
 *
 * <pre>java -cp java-harness:/usr/share/java/h2.jar workloads.Jdbc h2 4 1000</pre>
 * <pre>java -cp java-harness:/usr/share/java/derby.jar workloads.Jdbc derby 4 1000</pre>
 */
public class Jdbc {
    public static void main(String[] args) throws Exception {
        String db = args.length > 0 ? args[0] : "h2";
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        int statements = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
        String url;
        if (db.equals("h2")) {
            url = "jdbc:h2:mem:jrace;DB_CLOSE_DELAY=-1";
        } else if (db.equals("derby")) {
            url = "jdbc:derby:memory:jrace;create=true";
        } else {
            throw new IllegalArgumentException("database: expected h2 or derby, found " + db);
        }
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE account (id INT PRIMARY KEY, owner VARCHAR(40), balance INT)");
        }
        long t0 = System.nanoTime();
        Thread[] ts = new Thread[threads];
        long[] sums = new long[threads];
        for (int t = 0; t < threads; t++) {
            final int me = t;
            ts[t] = new Thread(() -> {
                try (Connection c = DriverManager.getConnection(url)) {
                    PreparedStatement ins = c.prepareStatement("INSERT INTO account VALUES (?, ?, ?)");
                    PreparedStatement upd = c.prepareStatement("UPDATE account SET balance = balance + ? WHERE id = ?");
                    PreparedStatement sel = c.prepareStatement("SELECT balance FROM account WHERE id = ?");
                    long sum = 0;
                    for (int i = 0; i < statements; i++) {
                        int id = me * statements + i / 3;
                        switch (i % 3) {
                            case 0:
                                ins.setInt(1, id);
                                ins.setString(2, "owner-" + id);
                                ins.setInt(3, 100);
                                ins.executeUpdate();
                                break;
                            case 1:
                                upd.setInt(1, i);
                                upd.setInt(2, id);
                                upd.executeUpdate();
                                break;
                            default:
                                sel.setInt(1, id);
                                try (ResultSet rs = sel.executeQuery()) {
                                    if (rs.next()) sum += rs.getInt(1);
                                }
                        }
                    }
                    sums[me] = sum;
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, "jdbc-" + t);
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        long total = 0;
        for (long s : sums) total += s;
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*), SUM(balance) FROM account")) {
            rs.next();
            System.out.println(db + ": rows=" + rs.getInt(1) + " balance=" + rs.getLong(2) + " selected=" + total);
        }
        System.err.println("work ms=" + (System.nanoTime() - t0) / 1_000_000);
    }
}
