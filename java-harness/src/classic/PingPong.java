package classic;

// Classic ping-pong: two players hit a ball back and forth through a table monitor,
// waiting for their turn with wait/notifyAll, for a fixed number of rallies.
//
// RACE: classic.PingPong.lastHitter @lastHitter @lastHitter
//   after each hit a player notes itself as the last hitter outside the monitor; each
//   player's last note follows its last synchronization: unordered in every schedule
// NORACE: classic.PingPong.turn
//   read and written only inside the table's monitor
// NORACE: classic.PingPong.hits
//   only inside the monitor
// NORACE: classic.PingPong$Ball.spin
//   the hitter sets the ball's spin before handing the turn over inside the monitor; the
//   other player reads it after it saw its turn, and sets it only after that
// NORACE: int[]
//   the rally log is written inside the monitor, read by main after join
public class PingPong {
    static final class Ball {
        int spin;
    }

    static final int HITS = 20;
    static final Object table = new Object();
    static final Ball ball = new Ball();
    static final int[] log = new int[2 * HITS];
    static int turn = 1;
    static int hits;
    static int lastHitter;

    static void player(int me) throws InterruptedException {
        int other = 3 - me;
        long spins = 0;
        for (int i = 0; i < HITS; i++) {
            synchronized (table) {
                while (turn != me) {
                    table.wait();
                }
            }
            spins += ball.spin;
            ball.spin = me * 100 + i;
            synchronized (table) {
                log[hits++] = me;
                turn = other;
                table.notifyAll();
            }
            lastHitter = me; // @lastHitter
        }
        if (spins < 0) {
            throw new AssertionError();
        }
    }

    interface Body {
        void run() throws InterruptedException;
    }

    static Thread thread(Body b, String name) {
        return new Thread(() -> {
            try {
                b.run();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, name);
    }

    public static void main(String[] args) throws InterruptedException {
        Thread pong = thread(() -> player(2), "pong");
        Thread ping = thread(() -> player(1), "ping");
        pong.start();
        ping.start();
        ping.join();
        pong.join();
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            sb.append(log[i]);
        }
        System.out.println("hits " + hits + ", rally starts " + sb + ", last spin " + ball.spin);
    }
}
