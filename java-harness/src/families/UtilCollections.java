package families;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

// Family: java.util collections (not thread-safe). Calls on them are recorded as reads and
// writes of the object's abstract state `$state`, whose static name is `CLASS.$state`
// (`java.util.ArrayList.$state`): their races are told apart by location.
//
// RACE: java.util.ArrayList.$state @addA @sizeB
//   worker A adds to `racy` while worker B asks for its size, no lock
// RACE: java.util.HashMap.$state @putA @putB
//   both workers put into `racyMap`
// NORACE: java.util.ArrayList.$state @guardedAdd @guardedGet
//   `guarded` is only used inside synchronized (lock)
// NORACE: java.util.HashMap.$state @sharedGetA @sharedGetB
//   `config` is filled by main before start() and only read (get) by the workers
// NORACE: java.util.ArrayList.$state @mainAfter
//   main reads the lists after join
// NORACE: java.util.HashMap.$state @mainAfter
//   and the map
// NORACE: java.util.ArrayList.$element @slotA @slotB
//   each worker sets its own element of `slots` (sized by main before start), as
//   parallel code fills a result list by index: different elements, like array elements
// NORACE: java.util.ArrayList.$state @slotA @slotB
//   setting an element reads the list's structure, it does not change it
// RACE: java.util.ArrayList.$element @shareSetA @shareGetB
//   worker A sets element 0 of `slots` while worker B reads it
// NORACE: java.util.ArrayList.$element @mainAfter
//   main reads the elements after join
// NORACE: java.util.LinkedList.$element @linkA @linkB
//   the same for a LinkedList's elements
// NORACE: java.util.LinkedList.$state @linkA @linkB
//   and its structure
// RACE: java.util.ArrayList.$element @walkSetA @walkB
//   worker A sets an element of `walk` while worker B iterates over it (for-each): each
//   step of an iterator reads the element it returns
// RACE: java.util.LinkedList.$element @linkWalkSetA @linkWalkB
//   the same with a LinkedList's list iterator
// NORACE: java.util.ArrayList.$element @itSetA @itSetB
//   each worker replaces its own element of `cells` through a list iterator (set(E)
//   after next()): different elements
// NORACE: java.util.ArrayList.$state @itSetA @itSetB
//   replacing an element through an iterator does not change the list's structure
// NORACE: java.util.ArrayList.$element @subA @subB
//   each worker fills its own half of `halves` through a sublist (set(int, E)): the
//   sublist's index counts from its offset in the list
// NORACE: java.util.ArrayList.$state @subA @subB
//   and the list's structure does not change
// NORACE: java.util.ArrayList.$element @subA @subSubB
//   nor through a sublist of a sublist (its offset counts from the list's start)
// RACE: java.util.ArrayList.$element @subShareA @subShareB
//   worker A sets element 1 of `halves` through a sublist, worker B reads it from the list
// NORACE: java.util.LinkedList.$element @linkSubA @linkSubB
//   the same halves of a LinkedList through its sublists
public class UtilCollections {
    static final Object lock = new Object();
    static final List<Integer> racy = new ArrayList<>();
    static final Map<String, Integer> racyMap = new HashMap<>();
    static final List<Integer> guarded = new ArrayList<>();
    static final Map<String, Integer> config = new HashMap<>();
    static int sizeSeen;
    static final List<Integer> slots = new ArrayList<>();
    static final List<String> links = new java.util.LinkedList<>(List.of("a", "b"));
    static final List<String> walk = new ArrayList<>(List.of("a", "b", "c"));
    static final List<String> linkWalk = new java.util.LinkedList<>(List.of("a", "b", "c"));
    static final List<String> cells = new ArrayList<>(List.of("a", "b", "c"));
    static final List<Integer> halves = new ArrayList<>(List.of(0, 0, 0, 0));
    static final List<Integer> linkHalves = new java.util.LinkedList<>(List.of(0, 0, 0, 0));

    static void workerA() {
        slots.set(0, 10); // @slotA
        links.set(0, "x"); // @linkA
        slots.set(2, 12); // @shareSetA
        walk.set(1, "x"); // @walkSetA
        linkWalk.set(1, "x"); // @linkWalkSetA
        java.util.ListIterator<String> ita = cells.listIterator();
        ita.next();
        ita.set("A"); // @itSetA
        List<Integer> mine = halves.subList(0, 2);
        mine.set(0, 1); // @subA
        mine.set(1, 1); // @subShareA
        linkHalves.subList(0, 2).set(1, 1); // @linkSubA
        racy.add(1); // @addA
        racyMap.put("a", 1); // @putA
        int k = config.get("k"); // @sharedGetA
        for (int i = 0; i < 3; i++) {
            synchronized (lock) {
                guarded.add(i + k); // @guardedAdd
            }
        }
    }

    static void workerB() {
        slots.set(1, 11); // @slotB
        links.set(1, "y"); // @linkB
        int shared = slots.get(2); // @shareGetB
        for (String w : walk) sizeSeen += w.length(); // @walkB
        for (java.util.Iterator<String> it = linkWalk.listIterator(); it.hasNext(); ) {
            sizeSeen += it.next().length(); // @linkWalkB
        }
        java.util.ListIterator<String> itb = cells.listIterator(2);
        itb.next();
        itb.set("B"); // @itSetB
        List<Integer> theirs = halves.subList(2, 4);
        theirs.set(0, 2); // @subB
        theirs.subList(1, 2).set(0, 2); // @subSubB
        sizeSeen += halves.get(1); // @subShareB
        linkHalves.subList(2, 4).set(0, 2); // @linkSubB
        int n = racy.size() + (shared & 0); // @sizeB
        racyMap.put("b", 2); // @putB
        int k = config.get("k"); // @sharedGetB
        for (int i = 0; i < 3; i++) {
            synchronized (lock) {
                if (!guarded.isEmpty()) { // @guardedGet
                    sizeSeen += k;
                }
            }
        }
        sizeSeen += n & 0;
    }

    public static void main(String[] args) throws InterruptedException {
        config.put("k", 7);
        for (int i = 0; i < 3; i++) {
            slots.add(0);
        }
        Thread a = new Thread(UtilCollections::workerA, "coll-a");
        Thread b = new Thread(UtilCollections::workerB, "coll-b");
        a.start();
        b.start();
        a.join();
        b.join();
        int total = racy.size() + guarded.size() + (racyMap.isEmpty() ? 0 : 100) + slots.get(0) + slots.get(1); // @mainAfter
        System.out.println("total=" + total);
    }
}
