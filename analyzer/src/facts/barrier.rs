//! BarrierPair ordering for `rdit` (docs/DETECTORS.md#rdit; Huang and Rajagopalan, OOPSLA 2016): the must-happen-before
//! edges that a call into missing code adds, computed once per trace.
//!
//! **Model.** An `enter(M;D)`…`exit(M)` span (a BarrierPair, BP) stands for code that
//! may do anything to the objects in D and nothing else. Two BPs whose D sets meet, and
//! a BP and an observed event on an object of its D, therefore keep their recorded
//! order. Every such constraint is a plain edge between two events in trace order (no
//! disjunction), so the edges join program order and fork/join in the ≺ relation the
//! encodings already use: an `rdit` query is an `mcm` query over a larger ≺.
//!
//! **Which events are on an object E**: an access to a variable `E`, `E.*` or
//! `E[*]` (so a class name covers its statics); a monitor operation on a lock named `E`
//! or `Class@E` (the agent names locks by class and object id); when E names a thread,
//! that thread's first and last events (its `begin`/`end` when recorded) and every
//! `fork`/`join` naming it. `enter`/`exit` are on no object: BP–BP overlap orders them.
//! A `*` set (⊤, the recorder gave up bounding it) covers every object.
//!
//! **Indexing instead of BP pairs**. For each object o, let C_o be the events
//! of all BPs on o (enter, the thread's events in between, exit), in trace order. C_o is
//! chained (an edge wherever two consecutive elements belong to different threads), and
//! each other event on o gets an edge from the nearest element of C_o before it and to
//! the nearest one after it. This is Alg 5's pairwise linearization up to transitivity,
//! at `O(Σ runs + events on D objects)` instead of `O(|BP|²)`: each BP is an interval of
//! its thread, so C_o is walked run by run (a run is a stretch of one thread), never
//! event by event.
//!
//! **Budget.** When the spans per object would hold more than [`MAX_OBJECT_SPANS`]
//! entries (many calls reaching large graphs, where the sets chain everything anyway),
//! every BarrierPair is taken as ⊤: more order, never less, in linear time and memory.
//!
//! **Pairing** is LIFO per thread (nested calls of one method, R10); the well-formedness
//! check rejects an `exit` that does not match its thread's innermost open `enter`. A BP
//! still open at the end of the trace extends to its thread's last event. The edges are
//! computed over the whole trace, so a BP that crosses a window border keeps its D and
//! its extent in every window (R12), and restricting them to a contiguous window loses
//! no path between its events (every edge points forward in trace order).

use super::NONE;
use jrace_trace::{Event, Kind, ObjSet, Symbols};
use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Object–span entries [`barrier_edges`] materializes at most (a ⊤ span counts once per
/// object that has spans); beyond, every BarrierPair is taken as ⊤.
pub const MAX_OBJECT_SPANS: usize = 30_000_000;

/// What `rdit` needs to know about the names of a trace: which objects the reachable
/// sets mention, and which variables, locks and threads are on each of them.
#[derive(Clone, Debug, Default)]
pub struct ObjectIndex {
    /// Per `enter` reachable-set id: dense object ids, or `None` for ⊤.
    sets: Vec<Option<Vec<u32>>>,
    /// Dense object ids a variable / lock / thread is on.
    var_objs: Vec<SmallVec<[u32; 1]>>,
    lock_objs: Vec<SmallVec<[u32; 1]>>,
    thread_objs: Vec<SmallVec<[u32; 1]>>,
    /// Number of dense objects.
    nobj: usize,
}

impl ObjectIndex {
    pub fn new(sym: &Symbols) -> ObjectIndex {
        // Only objects that some reachable set names matter.
        let mut dense: HashMap<&str, u32> = HashMap::default();
        let mut sets = Vec::with_capacity(sym.objsets.len());
        for set in &sym.objsets {
            sets.push(match set {
                ObjSet::All => None,
                ObjSet::Objects(objs) => {
                    let mut v: Vec<u32> = objs
                        .iter()
                        .map(|&o| {
                            let n = dense.len() as u32;
                            *dense.entry(sym.objects.name(o)).or_insert(n)
                        })
                        .collect();
                    v.sort_unstable();
                    v.dedup();
                    Some(v)
                }
            });
        }
        let var_objs = sym
            .vars
            .names()
            .iter()
            .map(|v| {
                let mut out: SmallVec<[u32; 1]> = SmallVec::new();
                if dense.is_empty() {
                    return out;
                }
                // `E` covers `E`, `E.*` and `E[*]`: try every prefix ending before a
                // `.` or `[`, and the whole name.
                for (i, c) in v.char_indices() {
                    if c == '.' || c == '[' {
                        if let Some(&o) = dense.get(&v[..i]) {
                            out.push(o);
                        }
                    }
                }
                if let Some(&o) = dense.get(v) {
                    out.push(o);
                }
                out.sort_unstable();
                out.dedup();
                out
            })
            .collect();
        let lock_objs = sym
            .locks
            .names()
            .iter()
            .map(|l| {
                let mut out: SmallVec<[u32; 1]> = SmallVec::new();
                if let Some(&o) = dense.get(l) {
                    out.push(o);
                }
                if let Some(p) = l.rfind('@') {
                    if let Some(&o) = dense.get(&l[p + 1..]) {
                        if !out.contains(&o) {
                            out.push(o);
                        }
                    }
                }
                out
            })
            .collect();
        let thread_objs = sym
            .threads
            .names()
            .iter()
            .map(|t| dense.get(t).copied().into_iter().collect())
            .collect();
        ObjectIndex {
            sets,
            var_objs,
            lock_objs,
            thread_objs,
            nobj: dense.len(),
        }
    }

    fn objs(list: &[SmallVec<[u32; 1]>], id: u32) -> &[u32] {
        list.get(id as usize).map_or(&[], |v| v.as_slice())
    }
}

/// A BarrierPair: its thread (dense), and the positions of its `enter` and `exit` (or
/// the thread's last event) in that thread's event list.
#[derive(Clone, Copy, Debug)]
struct Span {
    thread: u32,
    lo: u32,
    hi: u32,
}

/// The BarrierPair edges of a trace, `(from, to)` in global indices with `from < to`,
/// sorted by `(to, from)` and deduplicated. Events only have to be well formed
/// (`enter`/`exit` pairing is LIFO; a mismatched `exit` is skipped here, the parser
/// rejects it).
pub fn barrier_edges(events: &[Event], index: &ObjectIndex) -> Vec<(u32, u32)> {
    barrier_edges_within(events, index, MAX_OBJECT_SPANS)
}

/// [`barrier_edges`] with `budget` in place of [`MAX_OBJECT_SPANS`].
fn barrier_edges_within(events: &[Event], index: &ObjectIndex, budget: usize) -> Vec<(u32, u32)> {
    // Dense threads and per-thread event lists.
    let mut dense: HashMap<u32, u32> = HashMap::default();
    let mut threads: Vec<Vec<u32>> = Vec::new();
    let mut tix = Vec::with_capacity(events.len());
    let mut pos = Vec::with_capacity(events.len());
    for (i, e) in events.iter().enumerate() {
        let d = *dense.entry(e.thread).or_insert_with(|| {
            threads.push(Vec::new());
            (threads.len() - 1) as u32
        });
        tix.push(d);
        pos.push(threads[d as usize].len() as u32);
        threads[d as usize].push(i as u32);
    }
    // Spans, and the objects each is on (⊤ spans apart).
    const ALL: u32 = u32::MAX;
    let all = index.nobj as u32; // dense id of the "every object" pseudo-object
    let mut collected: Vec<(u32, Span)> = Vec::new();
    let mut stack: Vec<Vec<(u32, u32)>> = vec![Vec::new(); threads.len()];
    for (i, e) in events.iter().enumerate() {
        let t = tix[i] as usize;
        match e.kind {
            Kind::Enter => {
                // An unknown set (no names given) is taken as ⊤: conservative.
                let set = match index.sets.get(e.value as usize) {
                    Some(Some(_)) => e.value as u32,
                    _ => ALL,
                };
                stack[t].push((pos[i], set));
            }
            Kind::Exit => {
                if let Some((lo, set)) = stack[t].pop() {
                    let sp = Span {
                        thread: t as u32,
                        lo,
                        hi: pos[i],
                    };
                    collected.push((set, sp));
                }
            }
            _ => {}
        }
    }
    for (t, st) in stack.iter().enumerate() {
        for &(lo, set) in st {
            let sp = Span {
                thread: t as u32,
                lo,
                hi: threads[t].len() as u32 - 1,
            };
            collected.push((set, sp));
        }
    }
    // Spans per object, unless that would hold more than MAX_OBJECT_SPANS entries (a ⊤
    // span counts once per object with spans): then every span is taken as ⊤, which
    // orders more, never less, and costs time linear in the trace.
    let objs_of = |set: u32| match index.sets.get(set as usize) {
        Some(Some(objs)) if set != ALL => Some(objs.as_slice()),
        _ => None,
    };
    let ntop = collected
        .iter()
        .filter(|(set, _)| objs_of(*set).is_none())
        .count();
    let mut with_spans = vec![false; index.nobj];
    let mut entries = 0usize;
    for objs in collected.iter().filter_map(|&(set, _)| objs_of(set)) {
        entries += objs.len();
        for &o in objs {
            with_spans[o as usize] = true;
        }
    }
    let nwith = with_spans.iter().filter(|&&w| w).count();
    let widen = entries.saturating_add(nwith.saturating_mul(ntop)) > budget;
    drop(with_spans);
    let mut spans_on: Vec<Vec<Span>> = vec![Vec::new(); index.nobj + 1];
    let mut top: Vec<Span> = Vec::new();
    for (set, sp) in collected {
        match objs_of(set) {
            Some(objs) if !widen => {
                for &o in objs {
                    spans_on[o as usize].push(sp);
                }
            }
            _ => top.push(sp),
        }
    }
    if top.is_empty() && spans_on.iter().all(|s| s.is_empty()) {
        return Vec::new();
    }
    // ⊤ spans belong to every object that has spans, and to the pseudo-object that every
    // event on some object is on.
    if !top.is_empty() {
        for s in spans_on.iter_mut().filter(|s| !s.is_empty()) {
            s.extend_from_slice(&top);
        }
        spans_on[all as usize] = top.clone();
    }
    // Events on each object that has spans.
    let wanted: Vec<bool> = spans_on.iter().map(|s| !s.is_empty()).collect();
    let mut on: Vec<Vec<u32>> = vec![Vec::new(); index.nobj + 1];
    let first_last: Vec<(u32, u32)> = threads
        .iter()
        .map(|th| (th[0], *th.last().unwrap()))
        .collect();
    let thread_events = |t: u32| -> SmallVec<[u32; 2]> {
        match dense.get(&t) {
            Some(&d) => {
                let (f, l) = first_last[d as usize];
                if f == l {
                    SmallVec::from_slice(&[f])
                } else {
                    SmallVec::from_slice(&[f, l])
                }
            }
            None => SmallVec::new(),
        }
    };
    let add = |o: u32, i: u32, on: &mut Vec<Vec<u32>>| {
        if wanted[o as usize] {
            on[o as usize].push(i);
        }
    };
    for (i, e) in events.iter().enumerate() {
        let i = i as u32;
        let objs: &[u32] = if e.kind.is_access() {
            ObjectIndex::objs(&index.var_objs, e.target)
        } else if e.kind.has_lock() {
            ObjectIndex::objs(&index.lock_objs, e.target)
        } else if e.kind.has_thread() {
            ObjectIndex::objs(&index.thread_objs, e.target)
        } else {
            &[]
        };
        for &o in objs {
            add(o, i, &mut on);
        }
        let on_something = e.kind.is_access() || e.kind.has_lock() || e.kind.has_thread();
        if on_something {
            add(all, i, &mut on);
        }
    }
    // A thread's first and last events are on its Thread object.
    for (t, objs) in index.thread_objs.iter().enumerate() {
        if objs.is_empty() && top.is_empty() {
            continue;
        }
        for i in thread_events(t as u32) {
            for &o in objs {
                add(o, i, &mut on);
            }
            if !top.is_empty() {
                add(all, i, &mut on);
            }
        }
    }
    let mut edges: Vec<(u32, u32)> = Vec::new();
    for (o, spans) in spans_on.iter_mut().enumerate() {
        if spans.is_empty() {
            continue;
        }
        let on_o = &mut on[o];
        on_o.sort_unstable();
        on_o.dedup();
        object_edges(&threads, &tix, spans, on_o, &mut edges);
    }
    edges.sort_unstable_by_key(|&(x, y)| (y, x));
    edges.dedup();
    edges
}

/// One run of C_o: thread `t`'s events at positions `lo..=hi`.
#[derive(Clone, Copy, Debug)]
struct Run {
    t: u32,
    lo: u32,
    hi: u32,
}

/// The edges of one object (see the module doc): chain its spans' events, and attach
/// the other events on it to their neighbours in the chain.
fn object_edges(
    threads: &[Vec<u32>],
    tix: &[u32],
    spans: &mut [Span],
    on: &[u32],
    edges: &mut Vec<(u32, u32)>,
) {
    // Merge each thread's spans into disjoint intervals.
    spans.sort_unstable_by_key(|s| (s.thread, s.lo));
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for &s in spans.iter() {
        match merged.last_mut() {
            Some(m) if m.thread == s.thread && s.lo <= m.hi + 1 => m.hi = m.hi.max(s.hi),
            _ => merged.push(s),
        }
    }
    // k-way merge by trace index, one run at a time.
    let g = |t: u32, p: u32| threads[t as usize][p as usize];
    let mut heap: BinaryHeap<Reverse<(u32, usize)>> = merged
        .iter()
        .enumerate()
        .map(|(k, s)| Reverse((g(s.thread, s.lo), k)))
        .collect();
    let mut cur: Vec<u32> = merged.iter().map(|s| s.lo).collect();
    let mut runs: Vec<Run> = Vec::new();
    while let Some(Reverse((_, k))) = heap.pop() {
        let s = merged[k];
        let lo = cur[k];
        // The run extends while this thread's next event precedes every other head.
        let hi = match heap.peek() {
            None => s.hi,
            Some(Reverse((other, _))) => {
                let th = &threads[s.thread as usize];
                let upto = th[lo as usize..=s.hi as usize].partition_point(|&i| i < *other);
                lo + upto as u32 - 1
            }
        };
        if let Some(prev) = runs.last() {
            if prev.t != s.thread {
                edges.push((g(prev.t, prev.hi), g(s.thread, lo)));
            }
        }
        runs.push(Run {
            t: s.thread,
            lo,
            hi,
        });
        if hi < s.hi {
            cur[k] = hi + 1;
            heap.push(Reverse((g(s.thread, hi + 1), k)));
        }
    }
    // Other events on the object: an edge from the nearest chain element before, and
    // to the nearest one after (runs are disjoint and sorted in trace order).
    for &e in on {
        let t = tix[e as usize];
        let r = runs.partition_point(|r| g(r.t, r.lo) <= e);
        let (pred, succ) = if r > 0 && e <= g(runs[r - 1].t, runs[r - 1].hi) {
            let run = runs[r - 1];
            if run.t == t {
                continue; // inside the chain already
            }
            // e falls inside another thread's run.
            let th = &threads[run.t as usize];
            let k = th[run.lo as usize..=run.hi as usize].partition_point(|&i| i < e);
            let k = run.lo + k as u32;
            (th[k as usize - 1], th[k as usize])
        } else {
            let pred = if r > 0 {
                g(runs[r - 1].t, runs[r - 1].hi)
            } else {
                NONE
            };
            let succ = runs.get(r).map_or(NONE, |n| g(n.t, n.lo));
            (pred, succ)
        };
        if pred != NONE && tix[pred as usize] != t {
            edges.push((pred, e));
        }
        if succ != NONE && tix[succ as usize] != t {
            edges.push((e, succ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jrace_trace::std_format::parse_str;

    fn edges_of(text: &str) -> Vec<(u32, u32)> {
        let t = parse_str(text, "t.std").unwrap();
        let idx = ObjectIndex::new(&t.symbols);
        barrier_edges(&t.events, &idx)
            .into_iter()
            .map(|(x, y)| (x + 1, y + 1))
            .collect()
    }

    #[test]
    fn overlapping_sets_are_chained_in_trace_order() {
        // R1: e2 < e3 < e4 < e5 through Y; the write e1 is not on Y.
        let t = "T1|w(x,1)|3\nT2|enter(Missing2;Y)|7\nT1|enter(Missing1;Y)|4\nT1|exit(Missing1)|4\nT2|exit(Missing2)|7\nT2|r(x,1)|8\n";
        assert_eq!(edges_of(t), vec![(2, 3), (4, 5)]);
    }

    #[test]
    fn disjoint_sets_add_nothing() {
        let t = "T1|w(x,1)|3\nT2|enter(Missing2;Y2)|7\nT1|enter(Missing1;Y1)|4\nT1|exit(Missing1)|4\nT2|exit(Missing2)|7\nT2|r(x,1)|8\n";
        assert!(edges_of(t).is_empty());
    }

    #[test]
    fn events_on_an_object_attach_to_their_neighbours() {
        // R8: T1's write of X.flag lies inside d's span: e1 < e3 < e4.
        let t = "T3|enter(d;X)|30\nT1|r(v,0)|10\nT1|w(X.flag,1)|11\nT3|exit(d)|30\nT3|w(v,1)|31\n";
        assert_eq!(edges_of(t), vec![(1, 3), (3, 4)]);
        // A lock `Class@X` and the thread named in D are on their objects too.
        let t = "A|enter(m;7,B)|1\nA|exit(m)|1\nB|acq(Object@7)|2\nB|rel(Object@7)|2\nB|w(z)|3\n";
        // B's lock operations (object 7) and its first and last events (thread object
        // B) follow the exit.
        assert_eq!(edges_of(t), vec![(2, 3), (2, 4), (2, 5)]);
    }

    #[test]
    fn top_sets_cover_every_object() {
        let t = "T1|enter(m;*)|1\nT2|w(x)|2\nT1|exit(m)|1\nT2|w(y)|3\n";
        assert_eq!(edges_of(t), vec![(1, 2), (2, 3), (3, 4)]);
    }

    /// Over the budget, every BarrierPair is taken as ⊤: the same edges as a trace whose
    /// sets are all `*`.
    #[test]
    fn over_the_budget_every_set_is_top() {
        let named = "T1|w(x,1)|3\nT2|enter(Missing2;Y2)|7\nT1|enter(Missing1;Y1)|4\nT1|exit(Missing1)|4\nT2|exit(Missing2)|7\nT2|r(x,1)|8\nT3|w(Y1.f,1)|9\n";
        let top = named.replace(";Y2)", ";*)").replace(";Y1)", ";*)");
        let within = |text: &str, budget| {
            let tr = jrace_trace::std_format::parse_str(text, "t.std").unwrap();
            barrier_edges_within(&tr.events, &ObjectIndex::new(&tr.symbols), budget)
        };
        assert_eq!(within(named, 0), within(&top, usize::MAX));
        assert_ne!(within(named, usize::MAX), within(named, 0));
    }

    #[test]
    fn nested_spans_pair_lifo_and_runs_skip_same_thread_links() {
        // R10: the inner M(B) ends before the write; T2's N(B) follows it.
        let t = "T1|enter(M;A)|10\nT1|enter(M;B)|11\nT1|exit(M)|11\nT1|w(v,1)|12\nT1|exit(M)|10\nT2|enter(N;B)|20\nT2|exit(N)|20\nT2|r(v,1)|21\n";
        assert_eq!(edges_of(t), vec![(3, 6)]);
    }
}
