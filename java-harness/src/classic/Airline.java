package classic;

// Classic "airline tickets": three agents sell the seats of one flight; there are more
// requests than seats, so some requests fail.
//
// RACE: classic.Airline.requests @request @request
//   every agent counts its requests with a plain `requests++` before it goes to the desk;
//   each agent's first increment precedes all of its synchronization, so two agents'
//   first increments are unordered in every schedule (a lost-update race)
// RACE: classic.Airline.sold @sold @sold
//   each agent adds its own sales to `sold` once it is done, after its last visit to the
//   desk: the agents' additions are unordered in every schedule
// NORACE: classic.Airline.seatsLeft
//   checked and decremented only inside synchronized (desk)
// NORACE: int[]
//   a seat's owner is written inside synchronized (desk) by the agent that sold it; main
//   reads the seat map after joining the agents
// NORACE: classic.Airline.lastSeller
//   written inside synchronized (desk) when the last seat goes, read by main after join
// NORACE: classic.Airline.flight
//   named by main before the agents start; they only read it
public class Airline {
    static final int SEATS = 12;
    static final int AGENTS = 3;
    static final int REQUESTS = 6;
    static final Object desk = new Object();
    static String flight;
    static int seatsLeft = SEATS;
    static final int[] owner = new int[SEATS];
    static int lastSeller;
    static int requests;
    static int sold;

    static void agent(int id) {
        int mine = 0;
        int len = flight.length();
        for (int r = 0; r < REQUESTS; r++) {
            requests++; // @request
            synchronized (desk) {
                if (seatsLeft > 0) {
                    owner[SEATS - seatsLeft] = id;
                    seatsLeft--;
                    mine += len & 1;
                    if (seatsLeft == 0) {
                        lastSeller = id;
                    }
                }
            }
        }
        sold += mine; // @sold
    }

    public static void main(String[] args) throws InterruptedException {
        flight = "JR123";
        Thread[] ts = new Thread[AGENTS];
        for (int i = 0; i < AGENTS; i++) {
            final int id = i + 1;
            ts[i] = new Thread(() -> agent(id), "agent-" + id);
        }
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        int assigned = 0;
        for (int o : owner) {
            if (o != 0) {
                assigned++;
            }
        }
        System.out.println(flight + ": seats left " + seatsLeft + ", assigned " + assigned
                + ", last seller known " + (lastSeller != 0));
    }
}
