package classic;

// Classic ray tracer: worker threads render the rows of a small image of three spheres
// lit by one light (rows dealt out round-robin), then main checks the picture.
//
// RACE: classic.RayTracer.checksum @checksum @checksum
//   each worker adds its rows' checksum to a shared plain field when it is done, after its
//   last synchronization: unordered in every schedule (the lost update of the classic
//   benchmark; main recomputes the checksum from the pixels instead)
// NORACE: classic.RayTracer.rowsRendered
//   counted inside synchronized (progress)
// NORACE: int[]
//   every worker writes only the pixels of its own rows; main reads after join
// NORACE: double[]
//   the light vector: filled by main before the workers start, only read by them
// NORACE: classic.RayTracer$Sphere.cx
//   the scene is built by main before the workers start; they only read it
// NORACE: classic.RayTracer$Sphere.r
//   idem
// NORACE: classic.RayTracer$Vec.x
//   each worker's scratch vectors are its own objects
public class RayTracer {
    static final class Vec {
        double x;
        double y;
        double z;

        Vec set(double a, double b, double c) {
            x = a;
            y = b;
            z = c;
            return this;
        }
    }

    static final class Sphere {
        double cx;
        double cy;
        double cz;
        double r;
        int shade;

        Sphere(double cx, double cy, double cz, double r, int shade) {
            this.cx = cx;
            this.cy = cy;
            this.cz = cz;
            this.r = r;
            this.shade = shade;
        }
    }

    static final int W = 16;
    static final int H = 9;
    static final int WORKERS = 3;
    static final int[] pixels = new int[W * H];
    static final double[] light = new double[3];
    static Sphere[] scene;
    static final Object progress = new Object();
    static int rowsRendered;
    static long checksum;

    /** Colour of the ray from the origin through (dx, dy, 1). */
    static int trace(double dx, double dy, Vec hit) {
        double len = Math.sqrt(dx * dx + dy * dy + 1);
        double ux = dx / len;
        double uy = dy / len;
        double uz = 1 / len;
        double best = Double.MAX_VALUE;
        Sphere nearest = null;
        for (Sphere s : scene) {
            double b = ux * s.cx + uy * s.cy + uz * s.cz;
            double c = s.cx * s.cx + s.cy * s.cy + s.cz * s.cz - s.r * s.r;
            double disc = b * b - c;
            if (disc >= 0) {
                double t = b - Math.sqrt(disc);
                if (t > 0 && t < best) {
                    best = t;
                    nearest = s;
                }
            }
        }
        if (nearest == null) {
            return 0;
        }
        hit.set(ux * best - nearest.cx, uy * best - nearest.cy, uz * best - nearest.cz);
        double n = Math.sqrt(hit.x * hit.x + hit.y * hit.y + hit.z * hit.z);
        double lambert = (hit.x * light[0] + hit.y * light[1] + hit.z * light[2]) / n;
        return nearest.shade * (1 + (int) (Math.max(0, lambert) * 15));
    }

    static void worker(int id) {
        Vec scratch = new Vec();
        long sum = 0;
        for (int row = id; row < H; row += WORKERS) {
            for (int col = 0; col < W; col++) {
                double dx = (col - W / 2.0) / W;
                double dy = (row - H / 2.0) / H;
                int c = trace(dx, dy, scratch);
                pixels[row * W + col] = c;
                sum += c;
            }
            synchronized (progress) {
                rowsRendered++;
            }
        }
        checksum += sum; // @checksum
    }

    public static void main(String[] args) throws InterruptedException {
        scene = new Sphere[] {
            new Sphere(0, 0, 5, 1.5, 1),
            new Sphere(-1.5, 0.5, 6, 1, 2),
            new Sphere(1.2, -0.8, 4, 0.6, 3),
        };
        double l = Math.sqrt(3);
        light[0] = -1 / l;
        light[1] = -1 / l;
        light[2] = -1 / l;
        Thread[] ts = new Thread[WORKERS];
        for (int i = 0; i < WORKERS; i++) {
            final int id = i;
            ts[i] = new Thread(() -> worker(id), "render-" + i);
        }
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        long sum = 0;
        int lit = 0;
        for (int p : pixels) {
            sum += p;
            lit += p != 0 ? 1 : 0;
        }
        System.out.println(W + "x" + H + ", rows " + rowsRendered + ", lit pixels " + lit
                + ", checksum " + sum);
    }
}
