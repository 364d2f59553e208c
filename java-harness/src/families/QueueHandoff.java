package families;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

// Family: hand-off through BlockingQueues (put happens before the take that gets the
// element), with a reply on a second queue.
//
// RACE: families.QueueHandoff$Job.note @noteW @noteR
//   the producer writes the job's `note` after put(); the consumer reads it after take()
// RACE: families.QueueHandoff.log @logP @logC
//   both threads write `log` after their last queue operation
// NORACE: families.QueueHandoff$Job.input
//   written before put(), read after take()
// NORACE: families.QueueHandoff$Job.output
//   written by the consumer before it puts the job on the reply queue, read by the
//   producer after it took the reply
public class QueueHandoff {
    static final class Job {
        int input;
        int output;
        int note;
    }

    static final BlockingQueue<Job> jobs = new ArrayBlockingQueue<>(4);
    static final BlockingQueue<Job> replies = new LinkedBlockingQueue<>();
    static int log;
    static int result;

    static void producer() throws InterruptedException {
        Job j = new Job();
        j.input = 20;
        jobs.put(j);
        j.note = 1; // @noteW
        Job r = replies.take();
        result = r.output;
        log = 1; // @logP
    }

    static void consumer() throws InterruptedException {
        Job j = jobs.take();
        j.output = j.input + 1;
        int n = j.note; // @noteR
        replies.put(j);
        log = 2 + (n & 0); // @logC
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
        Thread c = thread(QueueHandoff::consumer, "consumer");
        Thread p = thread(QueueHandoff::producer, "producer");
        c.start();
        p.start();
        c.join();
        p.join();
        System.out.println("result=" + result);
    }
}
