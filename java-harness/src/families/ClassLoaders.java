package families;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;

// Family: one class defined by two class loaders (an application server's two web
// applications, two plugins each with its own copy of a library): two classes, each with
// its own static fields. A static is named by its class, and the second definition's by
// `CLASS#2` (`families.ClassLoaders$Twin#2.count`).
//
// NORACE: families.ClassLoaders$Twin.count @bump @bump
//   thread `one` bumps the count of the first definition, thread `two` that of the second
//   (and thread `late`, after joining `one`, the first's again)
// NORACE: families.ClassLoaders$Twin#2.count @bump @bump
//   only thread `two` touches the second definition's count
// RACE: families.ClassLoaders$Twin.hits @hit @hit
//   threads `again` and `other` both hit the first definition, no lock
public class ClassLoaders {
    public static class Twin {
        static int count;
        static int hits;

        public static int bump() {
            return ++count; // @bump
        }

        public static int hit() {
            return ++hits; // @hit
        }
    }

    static Method method(ClassLoader loader, String name) throws Exception {
        return Class.forName("families.ClassLoaders$Twin", true, loader).getMethod(name);
    }

    static Thread bumping(String name, Method m, int times) {
        return new Thread(() -> {
            try {
                for (int i = 0; i < times; i++) {
                    m.invoke(null);
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, name);
    }

    public static void main(String[] args) throws Exception {
        URL here = ClassLoaders.class.getProtectionDomain().getCodeSource().getLocation();
        ClassLoader parent = ClassLoader.getPlatformClassLoader();
        URLClassLoader first = new URLClassLoader(new URL[] {here}, parent);
        URLClassLoader second = new URLClassLoader(new URL[] {here}, parent);
        Method m1 = method(first, "bump");
        Method m2 = method(second, "bump");
        Method h1 = method(first, "hit");
        Thread one = bumping("one", m1, 3);
        Thread two = bumping("two", m2, 3);
        one.start();
        two.start();
        one.join();
        Thread late = bumping("late", m1, 1);
        late.start();
        late.join();
        two.join();
        Thread again = bumping("again", h1, 1);
        Thread other = bumping("other", h1, 1);
        again.start();
        other.start();
        again.join();
        other.join();
        System.out.println("first=" + m1.invoke(null) + " second=" + m2.invoke(null));
    }
}
