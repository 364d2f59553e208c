//! Reachable sets recorded compactly (BarrierPairs, issue 6; the thesis's §4.4.3): the
//! agent logs only the *roots* of each `enter` (the receiver and reference arguments),
//! each object's reference slots once (a *snapshot*, when the object is first reached),
//! and every traced reference write into a snapshotted object (an *edge*). This module
//! replays those records in trace order and expands the roots into the reachable set at
//! each `enter`, so that readers of the trace only ever see expanded [`ObjSet`]s.
//!
//! # Replay
//! Snapshot and edge records carry the stamp of the thread that wrote them (taken no
//! later than the stamp of any event that depends on them). At an `enter` with stamp `s`,
//! every record with a stamp up to `s` is applied to the heap graph, then the set is the
//! objects reachable from the roots. Edges are only ever *added*: a reference overwritten
//! later keeps its old edge too. A larger graph gives a larger set, which is safe for
//! rdit (an over-approximated set only adds ordering); a stale one would not be.
//!
//! # When the set becomes "every object" (⊤)
//! * The walk reaches an object that was never snapshotted as of `s`: the agent stopped
//!   a snapshot at its budget (`bp_budget=`), so that object's slots are unknown.
//! * The set has more than [`MAX_EXPANDED`] objects.
//! * The trace's walks together have visited more than [`MAX_WALKED`] objects, or its
//!   distinct sets together hold more than [`MAX_STORED`]: every later set is ⊤. Traces
//!   whose calls reach large graphs (H2 with its store excluded: 105 k calls reaching up
//!   to 14 k objects each) would otherwise take minutes and gigabytes to read, and their
//!   sets chain every call with every other anyway.
//!
//! # What this gives up, compared with walking the heap at every call (`bp_walk=1`)
//! * Reference writes made *inside excluded code* are never seen: after an object is
//!   snapshotted, a reference the excluded code stores into it later is missing from the
//!   graph (a list growing its array, a queue linking a node). The thesis found this
//!   harmless on its benchmarks when the new target is already in the call's set or never
//!   used to synchronize; a handoff through a container stays ordered through the
//!   container itself (`put` and `take` both reach the queue).
//! * Reference writes by traced code into objects that are not snapshotted are not
//!   logged (the object's slots are read when it is first snapshotted instead), and writes
//!   of static reference fields never are (statics are named with `--bp-globals`).
//! * Snapshots are taken when an object is first reached and read the slots of that
//!   moment; the graph only grows, so sets may hold objects that were no longer (or not
//!   yet) reachable at a given call: larger sets, never smaller ones.
//!
//! # Names (the contract with the analyzer)
//! An object is named by its decimal id (the prefix of its variables `12.pkg.C.f`,
//! `12[3]`, the suffix of its lock names `Short@12`); a `Thread` object by its thread's
//! name in the thread table; the extra names of a roots record (`--bp-globals` classes)
//! are added as recorded.

use crate::model::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// Sets larger than this become ⊤ (so that expansion stays linear in the trace).
pub const MAX_EXPANDED: usize = 100_000;

/// Objects visited by all walks of a trace together, beyond which every set is ⊤.
pub const MAX_WALKED: u64 = 50_000_000;

/// Objects held by all distinct expanded sets of a trace together, beyond which every
/// new set is ⊤.
pub const MAX_STORED: usize = 20_000_000;

/// A graph update, applied in stamp order.
#[derive(Clone, Debug)]
enum Update {
    Snap(u64, Vec<u64>),
    Edge(u64, u64),
}

/// The compact BarrierPair records of a trace's metadata, as decoded.
#[derive(Default, Debug)]
pub struct HeapRecords {
    /// (stamp, update), in the order read (sorted by [`HeapReplay::new`]).
    updates: Vec<(u64, Update)>,
    /// (object id, trace thread) of `Thread` objects.
    pub threads: Vec<(u64, u32)>,
    /// (reachable-set id, root object ids, extra object-table names).
    pub roots: Vec<(u32, Vec<u64>, Vec<u32>)>,
}

impl HeapRecords {
    pub fn snap(&mut self, stamp: u64, obj: u64, targets: Vec<u64>) {
        self.updates.push((stamp, Update::Snap(obj, targets)));
    }
    pub fn edge(&mut self, stamp: u64, from: u64, to: u64) {
        self.updates.push((stamp, Update::Edge(from, to)));
    }
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }
}

/// Replays the heap graph and expands roots at each `enter`.
#[derive(Debug)]
pub struct HeapReplay {
    updates: Vec<(u64, Update)>,
    next: usize,
    edges: FxHashMap<u64, Vec<u64>>,
    snapped: FxHashSet<u64>,
    threads: FxHashMap<u64, u32>,
    /// Reachable-set id -> (roots, extra names), for sets recorded as roots.
    roots: FxHashMap<u32, (Vec<u64>, Vec<u32>)>,
    /// Bumped whenever an update changes the graph.
    version: u64,
    /// (roots set, version) -> the expanded set's id.
    memo: FxHashMap<(u32, u64), u32>,
    /// Expanded sets already added (sorted names) -> id, so equal sets share one id.
    sets: FxHashMap<Vec<u32>, u32>,
    all: Option<u32>,
    /// Object id -> object-table id.
    names: FxHashMap<u64, u32>,
    /// Largest expanded set, and how many enters became ⊤.
    pub max_d: usize,
    pub top: u64,
    /// Objects visited by walks so far, and the budget ([`MAX_WALKED`]).
    walked: u64,
    walk_budget: u64,
    /// Objects held by the distinct sets so far, and the budget ([`MAX_STORED`]).
    stored: usize,
    store_budget: usize,
}

impl HeapReplay {
    /// `None` when the trace has no roots records (sets were recorded expanded).
    pub fn new(r: HeapRecords) -> Option<HeapReplay> {
        if r.roots.is_empty() {
            return None;
        }
        let mut updates = r.updates;
        updates.sort_by_key(|u| u.0);
        Some(HeapReplay {
            updates,
            next: 0,
            edges: FxHashMap::default(),
            snapped: FxHashSet::default(),
            threads: r.threads.into_iter().collect(),
            roots: r.roots.into_iter().map(|(id, r, n)| (id, (r, n))).collect(),
            version: 0,
            memo: FxHashMap::default(),
            sets: FxHashMap::default(),
            all: None,
            names: FxHashMap::default(),
            max_d: 0,
            top: 0,
            walked: 0,
            walk_budget: MAX_WALKED,
            stored: 0,
            store_budget: MAX_STORED,
        })
    }

    /// Whether reachable set `id` is recorded as roots (and needs [`Self::expand`]).
    #[inline]
    pub fn is_roots(&self, id: i64) -> bool {
        u32::try_from(id).is_ok_and(|i| self.roots.contains_key(&i))
    }

    /// Applies every update with a stamp up to `stamp`.
    fn advance(&mut self, stamp: u64) {
        while let Some((s, u)) = self.updates.get(self.next) {
            if *s > stamp {
                break;
            }
            match u {
                Update::Snap(obj, targets) => {
                    let e = self.edges.entry(*obj).or_default();
                    for t in targets {
                        if !e.contains(t) {
                            e.push(*t);
                        }
                    }
                    self.snapped.insert(*obj);
                }
                Update::Edge(from, to) => {
                    let e = self.edges.entry(*from).or_default();
                    if !e.contains(to) {
                        e.push(*to);
                    }
                }
            }
            self.version += 1;
            self.next += 1;
        }
    }

    /// The expanded set of roots set `id` for an `enter` at `stamp`: a reachable-set id
    /// appended to `sym.objsets` (equal sets share one id).
    pub fn expand(&mut self, stamp: u64, id: u32, sym: &mut Symbols) -> u32 {
        self.advance(stamp);
        if let Some(&s) = self.memo.get(&(id, self.version)) {
            self.note(sym, s);
            return s;
        }
        let Some((roots, extra)) = self.roots.get(&id) else {
            return id;
        };
        let mut seen: FxHashSet<u64> = FxHashSet::default();
        let mut work: Vec<u64> = Vec::new();
        for &r in roots {
            if r != 0 && seen.insert(r) {
                work.push(r);
            }
        }
        let mut top = self.walked > self.walk_budget;
        if top {
            work.clear();
        }
        while let Some(o) = work.pop() {
            self.walked += 1;
            if !self.snapped.contains(&o) {
                top = true;
                break;
            }
            if let Some(ts) = self.edges.get(&o) {
                for &t in ts {
                    if t != 0 && seen.insert(t) {
                        work.push(t);
                    }
                }
            }
            if seen.len() > MAX_EXPANDED {
                top = true;
                break;
            }
        }
        let extra = extra.clone();
        let mut set = None;
        if !top {
            let mut d: Vec<u32> = seen.iter().map(|&o| self.name(o, sym)).collect();
            d.extend(extra);
            d.sort_unstable();
            d.dedup();
            set = match self.sets.get(&d) {
                Some(&s) => Some(s),
                None if self.stored + d.len() > self.store_budget => None,
                None => {
                    self.stored += d.len();
                    let s = sym.objset(ObjSet::Objects(d.clone()));
                    self.sets.insert(d, s);
                    Some(s)
                }
            };
        }
        let set = match set {
            Some(s) => s,
            None => match self.all {
                Some(s) => s,
                None => {
                    let s = sym.objset(ObjSet::All);
                    self.all = Some(s);
                    s
                }
            },
        };
        if self.memo.len() > 1 << 20 {
            self.memo.clear();
        }
        self.memo.insert((id, self.version), set);
        self.note(sym, set);
        set
    }

    fn note(&mut self, sym: &Symbols, set: u32) {
        match &sym.objsets[set as usize] {
            ObjSet::All => self.top += 1,
            ObjSet::Objects(v) => self.max_d = self.max_d.max(v.len()),
        }
    }

    /// The object-table id of object `o`: its decimal id, or its thread's name.
    fn name(&mut self, o: u64, sym: &mut Symbols) -> u32 {
        if let Some(&n) = self.names.get(&o) {
            return n;
        }
        let n = match self.threads.get(&o) {
            Some(&t) if (t as usize) < sym.threads.len() => {
                let name = sym.threads.name(t).to_string();
                sym.objects.intern(&name)
            }
            _ => sym.objects.intern(&o.to_string()),
        };
        self.names.insert(o, n);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(sym: &Symbols, id: u32) -> Option<Vec<String>> {
        match &sym.objsets[id as usize] {
            ObjSet::All => None,
            ObjSet::Objects(v) => {
                let mut n: Vec<String> =
                    v.iter().map(|&o| sym.objects.name(o).to_string()).collect();
                n.sort();
                Some(n)
            }
        }
    }

    /// Through the writer and the reader: roots records become expanded sets at each
    /// enter, the graph replayed by stamp.
    #[test]
    fn the_reader_expands_roots_records() {
        use crate::binlog::{Table, TraceReader, TraceWriter};
        use crate::source::EventSource;
        let dir = std::env::temp_dir().join(format!("jrace-heap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let w = TraceWriter::create(&dir).unwrap();
        w.name(Table::Thread, 0, "main").unwrap();
        w.name(Table::Thread, 1, "T1").unwrap();
        w.name(Table::Method, 0, "lib.Q.put").unwrap();
        w.name(Table::Object, 0, "lib.Q").unwrap();
        w.loc(0, "", None).unwrap();
        w.roots(0, &[10], &[0]).unwrap();
        w.snapshot(5, 10, &[11, 12]).unwrap();
        w.snapshot(5, 11, &[]).unwrap();
        w.snapshot(5, 12, &[]).unwrap();
        w.thread_object(12, 1).unwrap();
        w.edge(15, 11, 13).unwrap();
        w.snapshot(15, 13, &[]).unwrap();
        let mut log = w.thread_log(0).unwrap();
        let enter = Event::new(0, Kind::Enter, 0, 0).with_value(0);
        let exit = Event::new(0, Kind::Exit, 0, 0);
        for (stamp, e) in [(10, enter), (11, exit), (20, enter), (21, exit)] {
            log.append(stamp, &e).unwrap();
        }
        log.finish().unwrap();
        w.finish().unwrap();
        let mut r = TraceReader::open(&dir).unwrap();
        let mut sets = Vec::new();
        while let Some(e) = r.next_event().unwrap() {
            if e.kind == Kind::Enter {
                sets.push(set(r.symbols(), e.value as u32).unwrap());
            }
        }
        let names = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(sets[0], names(&["10", "11", "T1", "lib.Q"]));
        assert_eq!(sets[1], names(&["10", "11", "13", "T1", "lib.Q"]));
        assert_eq!(r.expanded(), Some((5, 0)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Past the trace-wide budgets, sets are ⊤; sets already stored keep their ids.
    #[test]
    fn trace_wide_budgets_make_sets_top() {
        let mut sym = Symbols::default();
        sym.thread("main");
        sym.objsets.push(ObjSet::Objects(vec![])); // 0: roots {1}
        sym.objsets.push(ObjSet::Objects(vec![])); // 1: roots {2}
        let mut r = HeapRecords::default();
        r.roots.push((0, vec![1], vec![]));
        r.roots.push((1, vec![2], vec![]));
        r.snap(10, 1, vec![3]);
        r.snap(10, 2, vec![3]);
        r.snap(10, 3, vec![]);
        let mut h = HeapReplay::new(r).unwrap();
        h.store_budget = 3; // room for {1, 3}, not for {2, 3} too
        let s0 = h.expand(15, 0, &mut sym);
        assert!(set(&sym, s0).is_some());
        let s1 = h.expand(16, 1, &mut sym);
        assert_eq!(set(&sym, s1), None);
        assert_eq!(h.expand(17, 0, &mut sym), s0);
        h.walk_budget = 0; // every walk so far is over it
        h.memo.clear();
        let s2 = h.expand(18, 0, &mut sym);
        assert_eq!(set(&sym, s2), None);
        assert_eq!(h.top, 2);
    }

    #[test]
    fn expands_in_trace_order_and_monotonically() {
        let mut sym = Symbols::default();
        sym.thread("main");
        sym.thread("worker");
        let g = sym.objects.intern("pkg.Lib");
        sym.objsets.push(ObjSet::Objects(vec![])); // 0: roots {1}
        sym.objsets.push(ObjSet::Objects(vec![])); // 1: roots {5}
        let mut r = HeapRecords::default();
        r.roots.push((0, vec![1], vec![g]));
        r.roots.push((1, vec![5], vec![]));
        r.snap(10, 1, vec![2, 3]);
        r.snap(10, 2, vec![]);
        r.snap(10, 3, vec![9]);
        r.snap(10, 9, vec![]); // 9 is worker's Thread object
        r.threads.push((9, 1));
        r.edge(20, 2, 4); // a traced write 2.f = 4 ...
        r.snap(20, 4, vec![]); // ... whose target is snapshotted with it
        r.edge(30, 3, 1); // a cycle
        r.edge(30, 3, 7); // to an object never snapshotted (a budget cut)
        let mut h = HeapReplay::new(r).unwrap();
        assert!(h.is_roots(0) && h.is_roots(1) && !h.is_roots(2));
        let s = h.expand(15, 0, &mut sym);
        assert_eq!(
            set(&sym, s),
            Some(
                ["1", "2", "3", "pkg.Lib", "worker"]
                    .iter()
                    .map(|x| x.to_string())
                    .collect()
            )
        );
        // Same roots, same graph: the same set id.
        assert_eq!(h.expand(16, 0, &mut sym), s);
        let s2 = h.expand(25, 0, &mut sym);
        assert_ne!(s2, s);
        assert!(set(&sym, s2).unwrap().contains(&"4".to_string()));
        // After the edge to an object without a snapshot: every object.
        let s3 = h.expand(30, 0, &mut sym);
        assert_eq!(set(&sym, s3), None);
        assert_eq!(h.top, 1);
        // Roots never snapshotted (object 5): every object, not an empty set.
        let s4 = h.expand(40, 1, &mut sym);
        assert_eq!(set(&sym, s4), None);
        assert_eq!(h.max_d, 6);
    }
}
