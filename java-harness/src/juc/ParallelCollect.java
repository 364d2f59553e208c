package juc;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

// Shape: parallel streams. collect(supplier, accumulator, combiner) with a mutable
// container: each worker fills its own list, and the combiner, which runs on whichever
// thread finishes last (CountedCompleter.onCompletion), merges another worker's list.
//
// RACE: juc.ParallelCollect.hits @hitsS @hitsT by=hb,shb,wcp,cp,m2
//   the stream's action for element 0 writes `hits` while a thread started before the
//   stream writes it too. Not required of mcm: it sees pairs within one window (10,000
//   events), and the fork/join traffic between the two writes varies from run to run
//   (over 11,000 events in 1 of 20 recordings even with a 64-element stream).
// NORACE: java.util.ArrayList.$state @accumulate @combine
//   a list is filled by one worker, then merged into by the combiner after that worker's
//   part completed (on whichever thread completes last)
public class ParallelCollect {
    static int hits;

    static List<Integer> supply() {
        return new ArrayList<>();
    }

    static void accumulate(List<Integer> l, Integer x) {
        l.add(x); // @accumulate
    }

    static void combine(List<Integer> a, List<Integer> b) {
        a.addAll(b); // @combine
    }

    public static void main(String[] args) throws InterruptedException {
        List<Integer> nums = IntStream.range(0, 4000).boxed().collect(Collectors.toList());
        List<Integer> out = nums.parallelStream()
                .collect(ParallelCollect::supply, ParallelCollect::accumulate, ParallelCollect::combine);
        long sum = 0;
        for (int x : out) {
            sum += x;
        }
        Thread other = new Thread(() -> {
            hits = 1; // @hitsT
        }, "other");
        other.start();
        // A short stream keeps its write of `hits` near the other thread's (a
        // 4000-element one ran it 36,000 events later in 1 of 20 runs).
        nums.subList(0, 64).parallelStream().forEach(x -> {
            if (x == 0) {
                hits = 2; // @hitsS
            }
        });
        other.join();
        System.out.println("size=" + out.size() + " sum=" + sum);
    }
}
