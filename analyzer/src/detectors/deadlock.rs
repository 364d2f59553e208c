//! `deadlock`: lock-order cycles that another schedule of the recorded run reaches.
//!
//! **Candidates.** Thread `t` acquiring lock `l` while it holds `h` is an edge `h → l` of
//! the lock graph. A cycle `l_0 → l_1 → … → l_0` whose edges belong to distinct threads is
//! a *deadlock pattern*: acquisitions `e_0 … e_{k-1}` where `e_j` (thread `t_j`, holding
//! `l_j`) requests `l_{j+1}`, which `t_{j+1}` holds at `e_{j+1}`. Re-entrant acquisitions
//! never block and are not edges; neither is an acquisition that could not have blocked
//! (a successful `tryLock`, [`jrace_trace::ACQUIRE_TRY`]).
//!
//! **Deciding one soundly** (after Tunç, Mathur, Pavlogiannis, Viswanathan, *Sound Dynamic
//! Deadlock Prediction in Linear Time*, PLDI 2023): the pattern is reported only when the
//! *closure* of the events before each `e_j` in its thread leaves every `e_j` out. The
//! closure is the smallest set of events containing them that is closed under program
//! order, reads-from (a read needs the write it read in the trace), lock order (a
//! critical section needs every earlier critical section of its lock to be complete: the
//! sync-preserving condition), fork, join, notify/wake, and calls into excluded code (a
//! return from one needs everything before it in the trace, since what the callee read
//! is unknown). Run in trace order, the closure is a correct reordering of the trace
//! (every read sees the write it saw, so every thread behaves as recorded) after which
//! each `e_j` is its thread's next event and its lock is held by the next thread of the
//! cycle: the threads can only wait for each other. That schedule is checked by the
//! witness validator ([`crate::witness::Facts::validate_prefix`]) before the deadlock is
//! reported, with the final lock state checked here; a failure is a bug, never a report.
//!
//! **Search.** The closure only grows when a pattern's acquisitions move later, so for one
//! cycle of locks and threads the earliest deadlocking instance is found by moving each
//! acquisition that the closure swallowed to its next instance, keeping the closure
//! incremental: one pass over the trace per cycle. Cycles are over at most
//! [`MAX_CYCLE`] threads; a pattern whose code locations were already reported is not
//! searched again. Work beyond the budget leaves patterns undecided (`unknown`), never
//! reported.
//!
//! The closure is sound but not complete: deadlocks that need a critical section moved
//! before an earlier one of its lock are not predicted.

use crate::causal::driver::{CutQueries, CutVerdict};
use crate::causal::window::has_barriers;
use crate::detector::{Detector, Outcome, RaceSink};
use crate::facts::barrier::{barrier_edges, ObjectIndex};
use crate::facts::Facts;
use crate::witness::Model;
use jrace_trace::{Event, Kind, LocId, LockId, Symbols, ThreadId, Trace};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// Threads in a cycle at most.
pub const MAX_CYCLE: usize = 4;
/// Cycles of locks and threads examined at most; the rest are counted as undecided.
const MAX_PATTERNS: usize = 20_000;
/// Acquisitions kept as instances of lock-graph edges at most (dropping some can only
/// lose deadlocks).
const MAX_INSTANCES: usize = 4_000_000;
/// Solver queries for two-thread cycles the closure does not decide: per cycle, and in
/// all (each bounded by the solver timeout, all by [`SOLVER_BUDGET`]).
const MAX_QUERIES_PER_PATTERN: usize = 16;
const MAX_QUERIES: usize = 64;
/// Time the solver may take over a whole run; later queries are not asked (undecided).
const SOLVER_BUDGET: std::time::Duration = std::time::Duration::from_secs(30);
const NONE: u32 = u32::MAX;

/// One thread of a predicted deadlock: it holds `holds` (taken at event `held_at`) and
/// requests `requests` at event `request`, which the next thread of the cycle holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadlockThread {
    pub thread: ThreadId,
    pub holds: LockId,
    /// 0-based index of the event that took `holds`.
    pub held_at: u64,
    pub held_loc: LocId,
    pub requests: LockId,
    /// 0-based index of the acquisition that blocks.
    pub request: u64,
    pub request_loc: LocId,
}

/// A predicted deadlock: the threads of the cycle, each waiting for the next one's lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    pub threads: Vec<DeadlockThread>,
    /// The validated schedule that reaches it (0-based event indices; every thread of the
    /// cycle then requests its lock), kept when the sink wants schedules.
    pub schedule: Option<Vec<u64>>,
    /// Its length.
    pub schedule_len: u64,
}

impl Deadlock {
    /// The code locations of the cycle, rotation-free: what makes two reports one bug.
    pub fn signature(&self) -> Vec<(LocId, LocId)> {
        let mut s: Vec<_> = self
            .threads
            .iter()
            .map(|t| (t.held_loc, t.request_loc))
            .collect();
        s.sort_unstable();
        s
    }
}

/// See the module documentation.
#[derive(Default)]
pub struct DeadlockDetector {
    events: Vec<Event>,
    /// Threads' and locks' names, for the validator's messages.
    names: Symbols,
    /// The solver's options (window margin, timeout) for two-thread cycles.
    opts: crate::causal::Options,
}

impl DeadlockDetector {
    pub fn new(opts: crate::causal::Options) -> Self {
        DeadlockDetector {
            opts,
            ..Default::default()
        }
    }
}

impl Detector for DeadlockDetector {
    fn name(&self) -> &'static str {
        "deadlock"
    }

    fn on_event(&mut self, _idx: u64, e: &Event, _races: &mut RaceSink) {
        self.events.push(*e);
    }

    fn on_batch(&mut self, _first_idx: u64, events: &[Event], _races: &mut RaceSink) {
        self.events.extend_from_slice(events);
    }

    fn set_symbols(&mut self, symbols: &Symbols) {
        self.names.threads = symbols.threads.clone();
        self.names.locks = symbols.locks.clone();
    }

    fn set_branches_complete(&mut self, complete: bool) {
        self.opts.branches = Some(complete);
    }

    fn finish(&mut self, races: &mut RaceSink) -> Outcome {
        let events = std::mem::take(&mut self.events);
        let trace = Trace {
            symbols: std::mem::take(&mut self.names),
            has_branches: self
                .opts
                .branches
                .unwrap_or_else(|| crate::causal::window::has_branches(&events)),
            events,
        };
        let found = find_deadlocks(&trace, races.wants_schedules(), &self.opts);
        let mut notes = Vec::new();
        if found.instances_dropped {
            notes.push(format!(
                "more than {MAX_INSTANCES} nested acquisitions: the later ones were not examined"
            ));
        }
        if found.invalid > 0 {
            // A bug in jrace: the closure's schedule did not validate. Never reported.
            notes.push(format!(
                "{} deadlock schedules failed validation and were dropped (a bug in jrace, please report it)",
                found.invalid
            ));
        }
        Outcome {
            unknown: Some(found.undecided),
            note: (!notes.is_empty()).then(|| notes.join("; ")),
            deadlocks: found.deadlocks,
            ..Outcome::default()
        }
    }
}

/// What [`find_deadlocks`] found.
#[derive(Debug, Default)]
pub struct Found {
    pub deadlocks: Vec<Deadlock>,
    /// Patterns not decided within the budget.
    pub undecided: u64,
    /// Schedules the validator refused (a bug; never reported).
    pub invalid: u64,
    pub instances_dropped: bool,
}

/// One acquisition while holding a lock: the acquire and the event that took the held
/// lock.
#[derive(Clone, Copy, Debug)]
struct Instance {
    request: u32,
    held_at: u32,
}

/// Who takes a lock-graph edge: the thread, and where it took the held lock and requests
/// the other (one deadlock per set of code locations is reported, so instances at other
/// code are searched apart).
type Owner = (ThreadId, LocId, LocId);

/// Lock-graph edges: (held, requested) → per owner, its instances in trace order.
type Edges = BTreeMap<(LockId, LockId), BTreeMap<Owner, Vec<Instance>>>;

/// The lock graph of `events`, and for each event that takes a lock (an outermost
/// acquire or a wake) the event that gives it back (release or wait), or [`NONE`].
fn lock_graph(events: &[Event]) -> (Edges, Vec<u32>, bool) {
    let mut edges: Edges = BTreeMap::new();
    let mut held: HashMap<ThreadId, Vec<(LockId, u32)>> = HashMap::default();
    let mut end_of = vec![NONE; events.len()];
    let mut kept = 0usize;
    let mut dropped = false;
    for (i, e) in events.iter().enumerate() {
        let i = i as u32;
        match e.kind {
            Kind::Acquire if !e.is_nested() => {
                let h = held.entry(e.thread).or_default();
                if !e.is_try_acquire() {
                    for &(lock, at) in h.iter().filter(|(lock, _)| *lock != e.target) {
                        if kept >= MAX_INSTANCES {
                            dropped = true;
                            break;
                        }
                        kept += 1;
                        edges
                            .entry((lock, e.target))
                            .or_default()
                            .entry((e.thread, events[at as usize].loc, e.loc))
                            .or_default()
                            .push(Instance {
                                request: i,
                                held_at: at,
                            });
                    }
                }
                h.push((e.target, i));
            }
            Kind::Wake => {
                held.entry(e.thread).or_default().push((e.target, i));
            }
            Kind::Release | Kind::Wait if e.kind == Kind::Wait || !e.is_nested() => {
                if let Some(h) = held.get_mut(&e.thread) {
                    if let Some(p) = h.iter().rposition(|(l, _)| *l == e.target) {
                        end_of[h[p].1 as usize] = i;
                        h.remove(p);
                    }
                }
            }
            _ => {}
        }
    }
    (edges, end_of, dropped)
}

/// A deadlock pattern: per thread of the cycle, (thread, held lock, requested lock), the
/// requested lock of one being the held lock of the next.
type Pattern = Vec<(Owner, LockId, LockId)>;

/// The cycles of the lock graph with a distinct thread per edge, at most `limit` (the
/// flag says whether there were more).
fn patterns(edges: &Edges, limit: usize) -> (Vec<Pattern>, bool) {
    let mut succ: BTreeMap<LockId, Vec<LockId>> = BTreeMap::new();
    for &(h, l) in edges.keys() {
        succ.entry(h).or_default().push(l);
    }
    let mut out = Vec::new();
    let mut over = false;
    // Each cycle once: from its smallest lock, through larger locks only.
    for &start in succ.keys() {
        let mut path = vec![start];
        lock_cycles(&succ, start, &mut path, &mut |cycle| {
            let k = cycle.len();
            let steps: Vec<(LockId, LockId)> =
                (0..k).map(|j| (cycle[j], cycle[(j + 1) % k])).collect();
            assign_threads(edges, &steps, &mut Vec::new(), &mut |threads| {
                if out.len() >= limit {
                    over = true;
                    return false;
                }
                out.push(
                    steps
                        .iter()
                        .zip(threads)
                        .map(|(&(h, l), &t)| (t, h, l))
                        .collect(),
                );
                true
            })
        });
    }
    (out, over)
}

/// Calls `f` with every simple cycle through `path[0]` whose other locks are larger than
/// it, up to [`MAX_CYCLE`] locks; stops when `f` returns false.
fn lock_cycles(
    succ: &BTreeMap<LockId, Vec<LockId>>,
    start: LockId,
    path: &mut Vec<LockId>,
    f: &mut dyn FnMut(&[LockId]) -> bool,
) -> bool {
    let last = *path.last().expect("path starts with start");
    for &next in succ.get(&last).map_or(&[][..], |v| v.as_slice()) {
        if next == start && path.len() >= 2 {
            if !f(path) {
                return false;
            }
        } else if next > start && !path.contains(&next) && path.len() < MAX_CYCLE {
            path.push(next);
            let go = lock_cycles(succ, start, path, f);
            path.pop();
            if !go {
                return false;
            }
        }
    }
    true
}

/// Calls `f` with every choice of owners of distinct threads, one per step's edge.
fn assign_threads(
    edges: &Edges,
    steps: &[(LockId, LockId)],
    chosen: &mut Vec<Owner>,
    f: &mut dyn FnMut(&[Owner]) -> bool,
) -> bool {
    let j = chosen.len();
    if j == steps.len() {
        return f(chosen);
    }
    for &t in edges[&steps[j]].keys() {
        if chosen.iter().any(|c| c.0 == t.0) {
            continue;
        }
        chosen.push(t);
        let go = assign_threads(edges, steps, chosen, f);
        chosen.pop();
        if !go {
            return false;
        }
    }
    true
}

/// The closure of a set of thread prefixes, grown incrementally (module documentation).
/// A set closed under program order is one prefix length per thread.
struct Closure<'f> {
    facts: &'f Facts<'f>,
    events: &'f [Event],
    end_of: &'f [u32],
    /// Per lock: the latest (in the trace) of its critical sections in the closure.
    latest: HashMap<LockId, u32>,
    /// A critical section in the closure that never ends had to end: nothing closed
    /// contains this set.
    infeasible: bool,
    /// BarrierPair edges into each event (calls into excluded code, every reachable set
    /// taken as `*`): what must run before it.
    before: &'f HashMap<u32, Vec<u32>>,
    /// Per dense thread: how many of its events are in the closure.
    upto: Vec<u32>,
    /// Per dense thread: how many of those have had their rules applied.
    done: Vec<u32>,
    queue: Vec<u32>,
    /// Events whose rules were applied so far.
    work: u64,
    /// Per dense thread: the position of its watched request (`u32::MAX`: none); the set
    /// may hold that many of its events without swallowing the request.
    limit: Vec<u32>,
    /// A watched request is in.
    swallowed: bool,
}

impl<'f> Closure<'f> {
    fn new(
        facts: &'f Facts<'f>,
        events: &'f [Event],
        end_of: &'f [u32],
        before: &'f HashMap<u32, Vec<u32>>,
    ) -> Self {
        let n = facts.thread_count();
        Closure {
            facts,
            events,
            end_of,
            latest: HashMap::default(),
            infeasible: false,
            before,
            upto: vec![0; n],
            done: vec![0; n],
            queue: Vec::new(),
            work: 0,
            limit: vec![u32::MAX; n],
            swallowed: false,
        }
    }

    /// Thread `d`'s first `len` events are in.
    fn raise(&mut self, d: u32, len: u32) {
        if len > self.limit[d as usize] {
            self.swallowed = true;
        }
        let u = &mut self.upto[d as usize];
        if *u < len {
            if *u == self.done[d as usize] {
                self.queue.push(d);
            }
            *u = len;
        }
    }

    /// Event `i` is in (and so is everything before it in its thread).
    fn need(&mut self, i: u32) {
        let (d, l) = self.facts.place(i);
        self.raise(d, l + 1);
    }

    /// The critical section that event `i` begins ends in the closure.
    fn need_end(&mut self, i: u32) {
        match self.end_of[i as usize] {
            NONE => self.infeasible = true,
            end => self.need(end),
        }
    }

    /// Watches the requests `events`: [`Closure::close`] stops as soon as one is in.
    fn watch(&mut self, events: impl Iterator<Item = u32>) {
        self.limit.iter_mut().for_each(|l| *l = u32::MAX);
        self.swallowed = false;
        for i in events {
            let (d, l) = self.facts.place(i);
            self.limit[d as usize] = l;
            self.swallowed |= self.upto[d as usize] > l;
        }
    }

    /// Whether event `i` is in.
    fn contains(&self, i: u32) -> bool {
        let (d, l) = self.facts.place(i);
        self.upto[d as usize] > l
    }

    /// Applies the rules until the set is closed; false when `budget` ran out first.
    /// Stops early, with the set not closed yet, once a watched request is in
    /// ([`Closure::watch`]): the search moves that request on and goes on from here.
    fn close(&mut self, budget: u64) -> bool {
        while let Some(d) = self.queue.pop() {
            while self.done[d as usize] < self.upto[d as usize] {
                if self.swallowed {
                    self.queue.push(d);
                    return true;
                }
                if self.work >= budget {
                    self.queue.push(d);
                    return false;
                }
                let local = self.done[d as usize];
                self.done[d as usize] += 1;
                self.work += 1;
                let i = self.facts.thread_events(d)[local as usize];
                self.rules(d, local, i);
            }
        }
        true
    }

    fn rules(&mut self, d: u32, local: u32, i: u32) {
        let facts = self.facts;
        if local == 0 {
            if let Some(f) = facts.fork_event(d) {
                self.need(f);
            }
        }
        let e = &self.events[i as usize];
        match e.kind {
            Kind::Read | Kind::VRead => {
                let w = facts.observed()[i as usize];
                if w != NONE {
                    self.need(w);
                }
            }
            Kind::Acquire | Kind::Wake if e.kind == Kind::Wake || !e.is_nested() => {
                // Sync-preserving: of two critical sections of one lock in the closure,
                // the earlier one ends before the later one begins.
                match self.latest.get(&e.target).copied() {
                    None => {
                        self.latest.insert(e.target, i);
                    }
                    Some(m) if i < m => self.need_end(i),
                    Some(m) => {
                        self.need_end(m);
                        self.latest.insert(e.target, i);
                    }
                }
                if let Some(n) = facts.wake_notify(i) {
                    self.need(n);
                }
            }
            Kind::Notify | Kind::NotifyAll => {
                for &w in facts.notify_waits(i) {
                    self.need(w);
                }
            }
            Kind::Join => match facts.dense_thread(e.target) {
                Some(c) => {
                    let len = facts.thread_events(c).len() as u32;
                    self.raise(c, len);
                }
                None => {
                    if let Some(f) = facts.join_after(e.target) {
                        self.need(f);
                    }
                }
            },
            _ => {}
        }
        let before = self.before;
        for &x in before.get(&i).into_iter().flatten() {
            self.need(x);
        }
    }

    /// The closure in trace order.
    fn schedule(&self) -> Vec<usize> {
        let mut s: Vec<usize> = (0..self.facts.thread_count() as u32)
            .flat_map(|d| {
                let n = self.upto[d as usize] as usize;
                self.facts.thread_events(d)[..n].iter().map(|&i| i as usize)
            })
            .collect();
        s.sort_unstable();
        s
    }
}

/// A deadlocking choice of instances (indices into a pattern's lists) and its schedule.
type Choice = (Vec<usize>, Vec<usize>);

/// The sync-preserving search for one pattern (module documentation): the earliest
/// instances (indices into `lists`) whose closure leaves every request out, with the
/// closure in trace order; `Some(None)` when there are none; `None` when `budget` ran
/// out first. Also returns the work spent.
fn sync_preserving(
    facts: &Facts,
    events: &[Event],
    end_of: &[u32],
    before: &HashMap<u32, Vec<u32>>,
    lists: &[&[Instance]],
    budget: u64,
) -> (Option<Option<Choice>>, u64) {
    let mut closure = Closure::new(facts, events, end_of, before);
    let mut cur = vec![0usize; lists.len()];
    let outcome = loop {
        closure.watch(cur.iter().zip(lists).map(|(&k, list)| list[k].request));
        for (k, list) in cur.iter().zip(lists) {
            let (d, l) = facts.place(list[*k].request);
            closure.raise(d, l);
        }
        if !closure.close(budget) {
            break None;
        }
        if closure.infeasible {
            break Some(None);
        }
        let mut moved = false;
        let mut exhausted = false;
        for (k, list) in cur.iter_mut().zip(lists) {
            while *k < list.len() && closure.contains(list[*k].request) {
                *k += 1;
                moved = true;
            }
            exhausted |= *k == list.len();
        }
        if exhausted {
            break Some(None);
        }
        if !moved {
            break Some(Some((cur, closure.schedule())));
        }
    };
    (outcome, closure.work)
}

/// Instance pairs of a two-thread pattern for the solver, nearest first.
fn solver_pairs(a: &[Instance], b: &[Instance]) -> Vec<(Instance, Instance)> {
    const EACH: usize = 64;
    let mut v: Vec<(Instance, Instance)> = a
        .iter()
        .take(EACH)
        .flat_map(|&x| b.iter().take(EACH).map(move |&y| (x, y)))
        .collect();
    v.sort_by_key(|(x, y)| (x.request.abs_diff(y.request), x.request.min(y.request)));
    v.truncate(MAX_QUERIES_PER_PATTERN);
    v
}

/// Every predicted deadlock of `trace`, one per set of code locations, each with a
/// validated schedule (kept in the result when `keep_schedules`). Two-thread cycles that
/// the sync-preserving closure does not decide go to mcm's cut query (`opts`: its margin
/// and timeout), whose schedules are validated in the maximal causal model.
pub fn find_deadlocks(trace: &Trace, keep_schedules: bool, opts: &crate::causal::Options) -> Found {
    let events = &trace.events;
    let (edges, end_of, instances_dropped) = lock_graph(events);
    let mut found = Found {
        instances_dropped,
        ..Found::default()
    };
    let (pats, over) = patterns(&edges, MAX_PATTERNS);
    if pats.is_empty() {
        return found;
    }
    if over {
        found.undecided += 1;
    }
    let mut facts = Facts::new(trace);
    // Calls into excluded code order events as mcm orders them (every set as `*`).
    let bp_edges = if has_barriers(events) {
        barrier_edges(events, &ObjectIndex::default())
    } else {
        Vec::new()
    };
    facts.set_order_edges(&bp_edges);
    let mut before: HashMap<u32, Vec<u32>> = HashMap::default();
    for &(x, y) in &bp_edges {
        before.entry(y).or_default().push(x);
    }
    let facts = facts;
    let mut solver: Option<CutQueries> = None;
    let mut queries = 0usize;
    let mut solver_time = std::time::Duration::ZERO;
    // Closure work over all patterns: a few passes over the trace, at least.
    let budget = (events.len() as u64).saturating_mul(64).max(50_000_000);
    let mut spent = 0u64;
    // Signatures reported (read by the solver's loop while `report` adds to them).
    let seen: std::cell::RefCell<std::collections::HashSet<Vec<(LocId, LocId)>>> =
        Default::default();
    let signature = |choice: &[Instance]| {
        let mut s: Vec<(LocId, LocId)> = choice
            .iter()
            .map(|x| {
                (
                    events[x.held_at as usize].loc,
                    events[x.request as usize].loc,
                )
            })
            .collect();
        s.sort_unstable();
        s
    };
    for pat in &pats {
        let lists: Vec<&[Instance]> = pat
            .iter()
            .map(|&(o, h, l)| edges[&(h, l)][&o].as_slice())
            .collect();
        // Every instance of a pattern is at the same code locations (edges are kept apart
        // per location pair): once they are reported, the pattern has nothing new.
        let firsts: Vec<Instance> = lists.iter().map(|l| l[0]).collect();
        if seen.borrow().contains(&signature(&firsts)) {
            continue;
        }
        // Reports `choice` with `schedule` if it validates in `model`; whether it did.
        let mut report = |choice: &[Instance], schedule: Vec<usize>, model: Model| -> bool {
            let sig = signature(choice);
            if seen.borrow().contains(&sig) {
                return true;
            }
            let threads: Vec<DeadlockThread> = pat
                .iter()
                .zip(choice)
                .map(|(&((t, _, _), h, l), x)| DeadlockThread {
                    thread: t,
                    holds: h,
                    held_at: x.held_at as u64,
                    held_loc: events[x.held_at as usize].loc,
                    requests: l,
                    request: x.request as u64,
                    request_loc: events[x.request as usize].loc,
                })
                .collect();
            if check(&facts, model, &schedule, &threads).is_err() {
                found.invalid += 1;
                return false;
            }
            seen.borrow_mut().insert(sig);
            found.deadlocks.push(Deadlock {
                threads,
                schedule_len: schedule.len() as u64,
                schedule: keep_schedules.then(|| schedule.iter().map(|&i| i as u64).collect()),
            });
            true
        };
        let spd = if spent < budget {
            let (o, work) =
                sync_preserving(&facts, events, &end_of, &before, &lists, budget - spent);
            spent += work;
            o
        } else {
            None
        };
        if let Some(Some((cur, schedule))) = spd {
            let choice: Vec<Instance> = cur.iter().zip(&lists).map(|(&k, l)| l[k]).collect();
            report(&choice, schedule, Model::Rf);
            continue;
        }
        // Not sync-preserving (or out of budget): for two threads, the solver.
        if pat.len() != 2 {
            found.undecided += u64::from(spd.is_none());
            continue;
        }
        let mut undecided = spd.is_none();
        for (x, y) in solver_pairs(lists[0], lists[1]) {
            if seen.borrow().contains(&signature(&[x, y])) {
                undecided = false;
                break;
            }
            if queries >= MAX_QUERIES || solver_time >= SOLVER_BUDGET {
                undecided = true;
                break;
            }
            queries += 1;
            let cq = solver
                .get_or_insert_with(|| CutQueries::new(trace, &facts, bp_edges.clone(), opts));
            let t0 = std::time::Instant::now();
            let verdict = cq.decide(x.request as usize, y.request as usize);
            solver_time += t0.elapsed();
            match verdict {
                CutVerdict::Reached(schedule) => {
                    if report(&[x, y], schedule, Model::Cf) {
                        undecided = false;
                        break;
                    }
                }
                CutVerdict::Unreachable => {}
                CutVerdict::Unknown => undecided = true,
            }
        }
        found.undecided += u64::from(undecided);
    }
    found
        .deadlocks
        .sort_by_key(|d| d.threads.iter().map(|t| t.request).max());
    found
}

/// Checks that `schedule` is a correct reordering of the trace after which every thread
/// of the cycle requests its lock next while the next thread of the cycle holds it.
pub fn check(
    facts: &Facts,
    model: Model,
    schedule: &[usize],
    threads: &[DeadlockThread],
) -> Result<(), String> {
    let end = facts
        .validate_prefix_model(model, schedule)
        .map_err(|e| format!("not a correct reordering: {e:?}"))?;
    let events = &facts.trace().events;
    let dense = |t: ThreadId| {
        facts
            .dense_thread(t)
            .ok_or_else(|| format!("thread {t} has no events"))
    };
    let k = threads.len();
    for (j, t) in threads.iter().enumerate() {
        let d = dense(t.thread)?;
        let ran = end.ran[d as usize] as usize;
        let evs = facts.thread_events(d);
        if evs.get(ran).map(|&x| x as u64) != Some(t.request) {
            return Err(format!(
                "event {} is not the next event of its thread",
                t.request + 1
            ));
        }
        let e = &events[t.request as usize];
        if e.kind != Kind::Acquire || e.is_nested() || e.is_try_acquire() || e.target != t.requests
        {
            return Err(format!(
                "event {} is not a blocking acquisition",
                t.request + 1
            ));
        }
        let holder = threads[(j + 1) % k].thread;
        let owner = end.owner.get(t.requests as usize).copied();
        if owner != Some(dense(holder)?) || holder == t.thread {
            return Err(format!(
                "the lock event {} requests is not held by the next thread of the cycle",
                t.request + 1
            ));
        }
    }
    Ok(())
}
