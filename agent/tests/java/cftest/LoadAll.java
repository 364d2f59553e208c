package cftest;

import java.nio.file.*;
import java.util.*;

/**
 * Loads and links every class named in the file given as argument, printing one line per
 * class: its name and OK, or the error's class. getDeclaredMethods() links the class, and
 * linking verifies it (under -Xverify:all also the boot classes).
 */
public class LoadAll {
    public static void main(String[] args) throws Exception {
        List<String> names = Files.readAllLines(Paths.get(args[0]));
        ClassLoader l = LoadAll.class.getClassLoader();
        StringBuilder out = new StringBuilder();
        for (String n : names) {
            if (n.isEmpty()) continue;
            String r;
            try {
                Class<?> c = Class.forName(n, false, l);
                c.getDeclaredMethods();
                r = "OK";
            } catch (Throwable t) {
                r = t.getClass().getName();
                if (t instanceof VerifyError || t instanceof ClassFormatError) System.err.println(n + ": " + t);
            }
            out.append(n).append(' ').append(r).append('\n');
        }
        System.out.print(out);
    }
}
