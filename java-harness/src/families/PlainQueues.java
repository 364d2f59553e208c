package families;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedList;

// Family: java.util collections (not thread-safe) used as hand-off queues under a monitor,
// as task queues of event loops do: the producer adds under the lock, the consumer takes
// the element out under the same lock and uses it. The consumer reaches the element only
// through what poll()/remove() returned, so the producer's writes before the add come
// before the consumer's reads: taking an element out reads the collection's state.
//
// NORACE: families.PlainQueues$Task.input
//   written before the task is added (LinkedList.poll, ArrayDeque.pollFirst,
//   HashMap.remove, ArrayList.remove(0), LinkedList.removeFirst), read by the consumer
//   after it took the task out
// RACE: families.PlainQueues$Task.note @noteW @noteR
//   written by the producer after it added the task (outside the lock): the consumer
//   may read it before
// NORACE: java.util.LinkedList.$state
//   used under its monitor only
// NORACE: java.util.ArrayDeque.$state
// NORACE: java.util.HashMap.$state
// NORACE: java.util.ArrayList.$state
public class PlainQueues {
    static final class Task {
        int input;
        int note;
    }

    static final LinkedList<Task> list = new LinkedList<>();
    static final ArrayDeque<Task> deque = new ArrayDeque<>();
    static final HashMap<String, Task> map = new HashMap<>();
    static final ArrayList<Task> array = new ArrayList<>();
    static final LinkedList<Task> late = new LinkedList<>();

    static Task take(int k) {
        switch (k) {
            case 0:
                synchronized (list) {
                    return list.poll();
                }
            case 1:
                synchronized (deque) {
                    return deque.pollFirst();
                }
            case 2:
                synchronized (map) {
                    return map.remove("t");
                }
            case 3:
                synchronized (array) {
                    return array.isEmpty() ? null : array.remove(0);
                }
            default:
                synchronized (late) {
                    return late.isEmpty() ? null : late.removeFirst();
                }
        }
    }

    static void give(int k, Task t) {
        switch (k) {
            case 0:
                synchronized (list) {
                    list.add(t);
                }
                break;
            case 1:
                synchronized (deque) {
                    deque.addLast(t);
                }
                break;
            case 2:
                synchronized (map) {
                    map.put("t", t);
                }
                break;
            case 3:
                synchronized (array) {
                    array.add(t);
                }
                break;
            default:
                synchronized (late) {
                    late.add(t);
                }
        }
    }

    static int sum;

    public static void main(String[] args) throws InterruptedException {
        Thread consumer = new Thread(() -> {
            for (int k = 0; k < 5; k++) {
                Task t;
                while ((t = take(k)) == null) {
                    Thread.onSpinWait();
                }
                sum += t.input;
                if (k == 4) {
                    sum += t.note; // @noteR
                }
            }
        }, "consumer");
        consumer.start();
        for (int k = 0; k < 5; k++) {
            Task t = new Task();
            t.input = k + 1;
            give(k, t);
            if (k == 4) {
                t.note = 7; // @noteW
            }
        }
        consumer.join();
        System.out.println("sum " + (sum >= 15));
    }
}
