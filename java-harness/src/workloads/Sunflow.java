// CLASSPATH: /usr/share/java/sunflow.jar
package workloads;

import org.sunflow.SunflowAPI;
import org.sunflow.core.Display;
import org.sunflow.image.Color;
import org.sunflow.math.Matrix4;
import org.sunflow.math.Point3;
import org.sunflow.math.Vector3;
import org.sunflow.system.UI;
import org.sunflow.system.ui.SilentInterface;

/**
 * A Sunflow 0.07 workload (issue 8; Debian's libsunflow-java, the renderer of DaCapo's
 * sunflow): a small scene (spheres on a plane, two point lights, a pinhole camera) is built
 * through the API and rendered by Sunflow's bucket renderer with THREADS worker threads at
 * SIZE x SIZE*3/4 pixels. The display sums the pixels' RGB values as integers, so the
 * printed checksum does not depend on the order the buckets finish in.
 *
 * <pre>java -cp java-harness:/usr/share/java/sunflow.jar workloads.Sunflow 4 64</pre>
 *
 * build.rs compiles this file only when the jars of its CLASSPATH line exist.
 */
public class Sunflow {
    /** Collects the image; Sunflow's worker threads call imageUpdate concurrently. */
    static final class Checksum implements Display {
        long sum;
        long pixels;
        int buckets;

        public void imageBegin(int w, int h, int bucketSize) {
        }

        public void imagePrepare(int x, int y, int w, int h, int id) {
        }

        public synchronized void imageUpdate(int x, int y, int w, int h, Color[] data, float[] alpha) {
            for (Color c : data) {
                int rgb = c.toRGB();
                sum += (rgb >> 16 & 0xff) * 65599L + (rgb >> 8 & 0xff) * 257L + (rgb & 0xff);
            }
            pixels += (long) w * h;
            buckets++;
        }

        public synchronized void imageFill(int x, int y, int w, int h, Color c, float alpha) {
            pixels += (long) w * h;
        }

        public void imageEnd() {
        }
    }

    public static void main(String[] args) {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int size = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        UI.set(new SilentInterface());
        SunflowAPI api = new SunflowAPI();

        api.parameter("diffuse", null, 0.8f, 0.3f, 0.2f);
        api.shader("red", "diffuse");
        api.parameter("diffuse", null, 0.3f, 0.5f, 0.8f);
        api.shader("blue", "diffuse");
        api.parameter("diffuse", null, 0.7f, 0.7f, 0.7f);
        api.shader("grey", "diffuse");

        api.geometry("ball", "sphere");
        for (int i = 0; i < 5; i++) {
            api.parameter("geometry", "ball");
            api.parameter("shaders", i % 2 == 0 ? "red" : "blue");
            api.parameter("transform", Matrix4.translation(-4 + 2 * i, 1, i % 3).multiply(Matrix4.scale(0.9f)));
            api.instance("ball-" + i, null);
        }
        api.parameter("center", new Point3(0, 0, 0));
        api.parameter("normal", new Vector3(0, 1, 0));
        api.geometry("floor", "plane");
        api.parameter("shaders", "grey");
        api.instance("floor.instance", "floor");

        api.parameter("center", new Point3(3, 8, -6));
        api.parameter("power", null, 600f, 600f, 600f);
        api.light("key", "point");
        api.parameter("center", new Point3(-6, 5, 4));
        api.parameter("power", null, 200f, 220f, 260f);
        api.light("fill", "point");

        api.parameter("transform", Matrix4.lookAt(new Point3(0, 4, -12), new Point3(0, 1, 0), new Vector3(0, 1, 0)));
        api.parameter("fov", 50f);
        api.parameter("aspect", 4f / 3f);
        api.camera("cam", "pinhole");

        api.parameter("camera", "cam");
        api.parameter("resolutionX", size);
        api.parameter("resolutionY", size * 3 / 4);
        api.parameter("threads", threads);
        api.parameter("aa.min", 0);
        api.parameter("aa.max", 1);
        api.parameter("bucket.size", 16);
        api.options(SunflowAPI.DEFAULT_OPTIONS);

        Checksum display = new Checksum();
        api.render(SunflowAPI.DEFAULT_OPTIONS, display);
        System.out.println("image " + size + "x" + size * 3 / 4 + ", pixels " + display.pixels
                + ", buckets " + display.buckets + ", checksum " + display.sum);
    }
}
