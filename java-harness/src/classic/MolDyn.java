package classic;

import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;

// Classic molecular dynamics (after the Java Grande moldyn kernel, much smaller): particles
// on a line interact through a short-range force; two threads each own half of the
// particles. Every time step has two phases separated by a CyclicBarrier: compute the
// forces on one's own particles (reading every position), then move one's own particles.
//
// RACE: classic.MolDyn.interactions @interactions @interactions
//   both threads add their interaction count of the step to a plain field in the force
//   phase, between the same two barrier crossings (and before the energy section):
//   unordered in every schedule
// NORACE: double[]
//   positions are written by their owner in the move phase and read by everyone in the
//   next force phase, across the barrier; forces and velocities are per-owner
// NORACE: classic.MolDyn.energy
//   the potential energy (fixed point, so the sum does not depend on the order) is
//   accumulated inside synchronized (energyLock)
public class MolDyn {
    static final int N = 24;
    static final int STEPS = 3;
    static final double DT = 0.01;
    static final double[] x = new double[N];
    static final double[] v = new double[N];
    static final double[] f = new double[N];
    static final Object energyLock = new Object();
    static long energy;
    static long interactions;
    static final CyclicBarrier barrier = new CyclicBarrier(2);

    static void simulate(int t) throws InterruptedException, BrokenBarrierException {
        int lo = t * (N / 2);
        int hi = lo + N / 2;
        for (int step = 0; step < STEPS; step++) {
            long pairs = 0;
            double epot = 0;
            for (int i = lo; i < hi; i++) {
                double fi = 0;
                for (int j = 0; j < N; j++) {
                    double d = x[i] - x[j];
                    if (j != i && Math.abs(d) < 2.5) {
                        double inv = 1 / (d * d + 0.1);
                        fi += d * inv * inv;
                        epot += inv;
                        pairs++;
                    }
                }
                f[i] = fi;
            }
            interactions += pairs; // @interactions
            synchronized (energyLock) {
                energy += Math.round(epot * 1000);
            }
            barrier.await();
            for (int i = lo; i < hi; i++) {
                v[i] += f[i] * DT;
                x[i] += v[i] * DT;
            }
            barrier.await();
        }
    }

    public static void main(String[] args) throws InterruptedException {
        for (int i = 0; i < N; i++) {
            x[i] = i * 1.1 + (i % 3) * 0.05;
        }
        Thread[] ts = new Thread[2];
        for (int t = 0; t < 2; t++) {
            final int me = t;
            ts[t] = new Thread(() -> {
                try {
                    simulate(me);
                } catch (InterruptedException | BrokenBarrierException e) {
                    throw new RuntimeException(e);
                }
            }, "md-" + t);
        }
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        double spread = x[N - 1] - x[0];
        System.out.printf("particles %d, steps %d, energy %d, spread %.6f%n", N, STEPS, energy,
                spread);
    }
}
