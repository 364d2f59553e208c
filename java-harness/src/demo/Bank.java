package demo;

/**
 * The demo's racy program: two tellers and an auditor share a bank.
 * Races (examples/bank.std is a recorded run, with line numbers of this file):
 *   transfers   incremented without a lock by both tellers
 *   balance     read by the auditor without the lock
 *   lastTeller  written outside any lock, read inside teller 2's audit section
 * Not races: balance under the bank lock; main's accesses before start() and after join().
 */
public class Bank {
    static final Object bank = new Object();
    static final Object audit = new Object();
    static int balance;
    static int transfers;
    static int lastTeller;
    static int log;
    static int seen;

    static void teller(int id, int amount) {
        synchronized (bank) {
            balance += amount;
        }
        transfers++;
        if (id == 1) {
            lastTeller = id;
        }
        audit(id);
    }

    static void audit(int id) {
        synchronized (audit) {
            if (id == 2) {
                seen = lastTeller;
            }
            log++;
        }
    }

    public static void main(String[] args) throws InterruptedException {
        balance = 100;
        transfers = 0;
        Thread t1 = new Thread(() -> teller(1, 50), "teller-1");
        Thread t2 = new Thread(() -> teller(2, -30), "teller-2");
        Thread auditor = new Thread(Bank::inspect, "auditor");
        t1.start();
        t2.start();
        auditor.start();
        t1.join();
        t2.join();
        auditor.join();
        System.out.println("balance=" + balance + " transfers=" + transfers + " log=" + log);
    }

    static void inspect() {
        if (balance < 0) {
            System.out.println("overdrawn");
        }
    }
}
