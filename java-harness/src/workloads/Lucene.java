// CLASSPATH: /usr/share/java/lucene-core-*.jar
package workloads;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.PhraseQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.ByteBuffersDirectory;

/**
 * A Lucene 8 workload (issue 8; Debian's liblucene8-java): THREADS threads add DOCS
 * generated documents each to one in-memory index through one shared IndexWriter, which
 * is committed; then THREADS threads run the same fixed list of queries against one shared
 * IndexSearcher. Documents and queries are generated from fixed seeds, so the hit counts
 * printed do not depend on the schedule.
 *
 * <pre>java -cp java-harness:/usr/share/java/lucene-core-8.7.0.jar workloads.Lucene 4 500</pre>
 *
 * build.rs compiles this file only when the jars of its CLASSPATH line exist.
 */
public class Lucene {
    static final String[] WORDS = {
        "race", "lock", "thread", "memory", "model", "causal", "predict", "schedule", "trace",
        "event", "write", "read", "fork", "join", "monitor", "volatile", "barrier", "signal",
        "window", "solver", "vector", "clock", "happens", "before", "order", "branch",
    };

    static String text(long seed, int words) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < words; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            int w = (int) ((seed >>> 33) % WORDS.length);
            // Skewed: low word numbers are frequent.
            w = (int) ((long) w * w / WORDS.length);
            sb.append(WORDS[w]).append(' ');
        }
        return sb.toString();
    }

    interface Body {
        void run(int id) throws Exception;
    }

    static void inThreads(int threads, String name, Body body) throws InterruptedException {
        Thread[] ts = new Thread[threads];
        Throwable[] errors = new Throwable[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                try {
                    body.run(id);
                } catch (Throwable e) {
                    errors[id] = e;
                }
            }, name + "-" + t);
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        for (Throwable e : errors) {
            if (e != null) {
                throw new RuntimeException(e);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int docs = args.length > 1 ? Integer.parseInt(args[1]) : 500;
        ByteBuffersDirectory dir = new ByteBuffersDirectory();
        IndexWriterConfig cfg = new IndexWriterConfig(new StandardAnalyzer());
        cfg.setRAMBufferSizeMB(4);
        IndexWriter writer = new IndexWriter(dir, cfg);
        inThreads(threads, "indexer", id -> {
            for (int i = 0; i < docs; i++) {
                int n = id * docs + i;
                Document d = new Document();
                d.add(new StringField("id", "doc" + n, Field.Store.YES));
                d.add(new StringField("shard", "s" + (n % 7), Field.Store.NO));
                d.add(new TextField("body", text(n, 20 + n % 30), Field.Store.YES));
                writer.addDocument(d);
            }
        });
        writer.commit();
        writer.close();

        DirectoryReader reader = DirectoryReader.open(dir);
        IndexSearcher searcher = new IndexSearcher(reader);
        int queries = 40;
        long[] hits = new long[queries];
        AtomicLong next = new AtomicLong();
        inThreads(threads, "searcher", id -> {
            for (long q; (q = next.getAndIncrement()) < queries; ) {
                int k = (int) q;
                String a = WORDS[k % WORDS.length];
                String b = WORDS[(k * 7 + 3) % WORDS.length];
                Query query;
                switch (k % 3) {
                    case 0:
                        query = new TermQuery(new Term("body", a));
                        break;
                    case 1: {
                        BooleanQuery.Builder bq = new BooleanQuery.Builder();
                        bq.add(new TermQuery(new Term("body", a)), BooleanClause.Occur.MUST);
                        bq.add(new TermQuery(new Term("body", b)), BooleanClause.Occur.MUST);
                        bq.add(new TermQuery(new Term("shard", "s" + (k % 7))), BooleanClause.Occur.FILTER);
                        query = bq.build();
                        break;
                    }
                    default:
                        query = new PhraseQuery("body", a, b);
                }
                // count() is exact; search()'s totalHits is only a lower bound past 1,000.
                hits[k] = searcher.count(query);
                TopDocs top = searcher.search(query, 10);
                // Read the best hit's stored id, as a search front end would.
                if (top.scoreDocs.length > 0) {
                    searcher.doc(top.scoreDocs[0].doc).get("id");
                }
            }
        });
        long total = 0;
        StringBuilder first = new StringBuilder();
        for (int k = 0; k < queries; k++) {
            total += hits[k];
            if (k < 6) {
                first.append(hits[k]).append(' ');
            }
        }
        System.out.println("documents " + reader.numDocs() + ", queries " + queries + ", hits "
                + total + ", first " + first.toString().trim());
        reader.close();
    }
}
