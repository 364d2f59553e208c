// CLASSPATH: /usr/share/java/xalan2.jar:/usr/share/java/serializer.jar
package workloads;

import java.io.StringReader;
import java.io.StringWriter;
import javax.xml.transform.Templates;
import javax.xml.transform.Transformer;
import javax.xml.transform.stream.StreamResult;
import javax.xml.transform.stream.StreamSource;
import org.apache.xalan.processor.TransformerFactoryImpl;

/**
 * A Xalan-J 2.7 workload (issue 8; Debian's libxalan2-java), after DaCapo's xalan: one
 * stylesheet is compiled once into shared Templates by Xalan's own TransformerFactory (not
 * the JDK's built-in XSLTC); THREADS threads each transform DOCS generated XML documents
 * (an order list: grouping, sorting, sums, number formatting) with their own Transformer.
 * Documents are generated from fixed seeds, so the printed totals do not depend on the
 * schedule.
 *
 * <pre>java -cp java-harness:/usr/share/java/xalan2.jar:/usr/share/java/serializer.jar workloads.Xalan 4 40</pre>
 *
 * build.rs compiles this file only when the jars of its CLASSPATH line exist.
 */
public class Xalan {
    static final String XSL = String.join("\n",
        "<xsl:stylesheet version='1.0' xmlns:xsl='http://www.w3.org/1999/XSL/Transform'>",
        "  <xsl:output method='xml' indent='yes'/>",
        "  <xsl:key name='by-customer' match='order' use='@customer'/>",
        "  <xsl:template match='/orders'>",
        "    <report count='{count(order)}' total='{format-number(sum(order/item/@price), \"#,##0.00\")}'>",
        "      <xsl:for-each select='order[generate-id() = generate-id(key(\"by-customer\", @customer)[1])]'>",
        "        <xsl:sort select='@customer'/>",
        "        <customer name='{@customer}'>",
        "          <xsl:variable name='mine' select='key(\"by-customer\", @customer)'/>",
        "          <xsl:attribute name='orders'><xsl:value-of select='count($mine)'/></xsl:attribute>",
        "          <xsl:attribute name='spent'><xsl:value-of select='format-number(sum($mine/item/@price), \"0.00\")'/></xsl:attribute>",
        "          <xsl:for-each select='$mine/item'>",
        "            <xsl:sort select='@price' data-type='number' order='descending'/>",
        "            <xsl:if test='position() &lt;= 3'>",
        "              <top sku='{@sku}' price='{@price}'><xsl:value-of select='translate(., \"abc\", \"ABC\")'/></top>",
        "            </xsl:if>",
        "          </xsl:for-each>",
        "        </customer>",
        "      </xsl:for-each>",
        "    </report>",
        "  </xsl:template>",
        "</xsl:stylesheet>");

    static String document(long seed, int orders) {
        StringBuilder sb = new StringBuilder("<?xml version='1.0'?>\n<orders>\n");
        for (int o = 0; o < orders; o++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            int customer = (int) ((seed >>> 40) % 9);
            sb.append("  <order id='").append(o).append("' customer='c").append(customer).append("'>\n");
            int items = 1 + (int) ((seed >>> 20) % 4);
            for (int i = 0; i < items; i++) {
                seed = seed * 6364136223846793005L + 1442695040888963407L;
                long cents = 100 + (seed >>> 44) % 10000;
                sb.append("    <item sku='s").append((seed >>> 30) % 50).append("' price='")
                    .append(cents / 100).append('.').append(String.format("%02d", cents % 100))
                    .append("'>item abc ").append(i).append("</item>\n");
            }
            sb.append("  </order>\n");
        }
        return sb.append("</orders>\n").toString();
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int docs = args.length > 1 ? Integer.parseInt(args[1]) : 40;
        Templates templates = new TransformerFactoryImpl().newTemplates(new StreamSource(new StringReader(XSL)));
        long[] chars = new long[threads];
        long[] hashes = new long[threads];
        Throwable[] errors = new Throwable[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                try {
                    Transformer tr = templates.newTransformer();
                    for (int d = 0; d < docs; d++) {
                        String in = document(1000L * id + d, 20 + d % 15);
                        StringWriter out = new StringWriter();
                        tr.transform(new StreamSource(new StringReader(in)), new StreamResult(out));
                        String s = out.toString();
                        chars[id] += s.length();
                        hashes[id] = hashes[id] * 31 + s.hashCode();
                    }
                } catch (Throwable e) {
                    errors[id] = e;
                }
            }, "xalan-" + t);
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        long total = 0;
        long hash = 0;
        for (int t = 0; t < threads; t++) {
            if (errors[t] != null) {
                throw new RuntimeException(errors[t]);
            }
            total += chars[t];
            hash = hash * 31 + hashes[t];
        }
        System.out.println("transforms " + threads * docs + ", output chars " + total + ", hash "
                + Long.toHexString(hash) + ", processor " + templates.getClass().getName());
    }
}
