//! The brute-force oracle: the exact set of *predictable races* of a tiny trace, by
//! exhaustive search over its correct reorderings (docs/DETECTORS.md#words, the "truth" of
//! the test vectors). Only for tests: it is exponential, meant for traces of up to ~20
//! events.
//!
//! It derives its facts about the trace (observed writers, fork and wake matching) on
//! its own, although [`crate::witness`] and m2's model compute the same facts: the
//! property tests check witnesses and m2 against this oracle, and a bug in code they
//! shared would pass unnoticed.
//!
//! A *correct reordering* is a sequence that
//!
//! - contains a prefix, in program order, of each thread;
//! - respects lock semantics: an outermost `acquire` (or a `wake`) only of a free lock,
//!   `release` and `wait` free it; re-entrant inner acquires and releases
//!   ([`jrace_trace::FLAG_NESTED`]) do nothing;
//! - keeps the hard edges: `fork(T)` before T's first event; `join(T)` only after T's
//!   last event (T must have completed all its events), or after `fork(T)` when T has no
//!   events; `wait → notify → wake`, where a
//!   `wake` is matched with its notify as in the original trace ([`crate::sync`]) and
//!   that notify may run only after the `wait` of every wake matched with it. A `wake`
//!   with no matched notify gets no edge. ([`predictable_deadlocks`] lets a notify run
//!   before such a `wait` too, as Java may: that wake then never runs);
//! - keeps read-modify-writes atomic: a volatile read followed in its thread by a volatile
//!   write of the same variable, with no other thread's write of it in between in the
//!   trace (a compare-and-set, `getAndAdd`), admits no other thread's write of that
//!   variable, nor another such read of it, between its read and its write;
//! - makes every read, plain or volatile, read the same write (or the initial value) as in
//!   the original trace. The write a read observed is the last earlier write to its
//!   variable in the trace (docs/DETECTORS.md#reads-from), whether or not values were
//!   recorded: the oracle never uses values.
//!
//! Two conflicting plain accesses `e1`, `e2` (same variable, different threads, at least
//! one a write) are a *predictable race* if some correct reordering ends with both
//! enabled: each is the next event of its thread and could execute (the racing reads'
//! values are free, so only the fork edge can block an access). Volatile accesses are
//! ordinary variables here and are never reported. Branches, `begin`/`end`,
//! `enter`/`exit` are no-ops.
//!
//! The search is a depth-first walk over states (per-thread positions, the last writer of
//! each variable, the lock owners), each state visited once. Every prefix of a correct
//! reordering is itself one, so the walk reaches exactly the correct reorderings.

use crate::sync::NotifyMatcher;
use crate::testing::sig_string;
use jrace_trace::{Event, Kind, Trace};
use std::collections::{BTreeSet, HashMap, HashSet};

const NONE: u32 = u32::MAX;

/// Every predictable race of `trace` as a pair of 0-based event indices, `first < second`.
pub fn predictable_pairs(trace: &Trace) -> BTreeSet<(usize, usize)> {
    Search::new(trace).run()
}

/// Every predictable race of `trace` as signature strings ([`sig_string`]), comparable
/// with [`crate::testing::run_detector`].
pub fn predictable_races(trace: &Trace) -> BTreeSet<String> {
    let sym = &trace.symbols;
    predictable_pairs(trace)
        .into_iter()
        .map(|(a, b)| {
            let (ea, eb) = (&trace.events[a], &trace.events[b]);
            sig_string(
                sym.static_name(ea.target),
                sym.loc_name(ea.loc),
                sym.loc_name(eb.loc),
            )
        })
        .collect()
}

/// [`predictable_pairs`] where, as in [`predictable_deadlocks`], a notify may also run
/// before the `wait` of a wake matched with it (a lost notification, which a Java program
/// may have: the wake then never runs). The truth for weakly sound detectors (wcp, cp),
/// whose orders never keep a notify after a wait it might not wake.
pub fn predictable_pairs_with_lost_notifications(trace: &Trace) -> BTreeSet<(usize, usize)> {
    let mut search = Search::new(trace);
    search.lost_notifications = true;
    search.run()
}

/// Every deadlock some correct reordering of `trace` reaches: threads each of whose next
/// event is a blocking (outermost, not `tryLock`) acquisition of a lock that the next
/// thread of the cycle holds, as their sorted 0-based event indices.
///
/// Here a notify may also run before the `wait` of a wake matched with it, as a Java
/// program may: it then notifies nobody, and that wake never runs (a lost
/// notification). The deadlock detector's schedules are validated in a model that allows
/// this (`witness::Model::Cf`), and a deadlock reached so is real.
pub fn predictable_deadlocks(trace: &Trace) -> BTreeSet<Vec<usize>> {
    let mut search = Search::new(trace);
    search.lost_notifications = true;
    let mut out = BTreeSet::new();
    search.explore(|st| search.deadlocks_at(st, &mut out));
    out
}

/// Precomputed constraints of one trace.
struct Search<'a> {
    events: &'a [Event],
    /// Dense thread index of each event.
    tix: Vec<usize>,
    /// Position of each event within its thread.
    local: Vec<u32>,
    /// Events of each dense thread, in program order.
    threads: Vec<Vec<usize>>,
    /// Dense index of each thread id.
    dense: HashMap<u32, usize>,
    /// The fork event of each dense thread, if forked.
    fork_of: Vec<Option<usize>>,
    /// The fork events of threads without events.
    silent_fork: HashMap<u32, usize>,
    /// For reads: the write observed (event index) or `NONE` for the initial value.
    observed: Vec<u32>,
    /// For wakes: the matched notify.
    wake_notify: Vec<Option<usize>>,
    /// For notifies: the waits of the wakes matched with it.
    notify_waits: HashMap<usize, Vec<usize>>,
    /// For notifies: the wakes matched with it, with their waits.
    notify_wakes: HashMap<usize, Vec<(usize, usize)>>,
    /// A notify may run before the wait of a wake matched with it, which then never runs.
    lost_notifications: bool,
    /// The reads of read-modify-writes.
    rmw_read: HashSet<usize>,
    nvars: usize,
    nlocks: usize,
}

impl<'a> Search<'a> {
    fn new(trace: &'a Trace) -> Self {
        let events = &trace.events[..];
        let n = events.len();
        let mut dense = HashMap::new();
        let mut threads: Vec<Vec<usize>> = Vec::new();
        let mut tix = Vec::with_capacity(n);
        let mut local = Vec::with_capacity(n);
        let mut dense_of = |t: u32, threads: &mut Vec<Vec<usize>>| -> usize {
            *dense.entry(t).or_insert_with(|| {
                threads.push(Vec::new());
                threads.len() - 1
            })
        };
        for (i, e) in events.iter().enumerate() {
            let d = dense_of(e.thread, &mut threads);
            tix.push(d);
            local.push(threads[d].len() as u32);
            threads[d].push(i);
        }
        let mut fork_of = vec![None; threads.len()];
        let mut silent_fork = HashMap::new();
        let mut observed = vec![NONE; n];
        let mut last_write: HashMap<u32, u32> = HashMap::new();
        let mut wake_notify = vec![None; n];
        let mut notify_waits: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut notify_wakes: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
        let mut matcher: NotifyMatcher<()> = NotifyMatcher::new();
        let mut wait_of: HashMap<u32, usize> = HashMap::new();
        let (mut nvars, mut nlocks) = (0usize, 0usize);
        let mut rmw_read = HashSet::new();
        for (i, e) in events.iter().enumerate() {
            match e.kind {
                Kind::Read | Kind::VRead => {
                    observed[i] = last_write.get(&e.target).copied().unwrap_or(NONE);
                    nvars = nvars.max(e.target as usize + 1);
                }
                Kind::Write | Kind::VWrite => {
                    let l = local[i] as usize;
                    if e.kind == Kind::VWrite && l > 0 {
                        let p = threads[tix[i]][l - 1];
                        let r = &events[p];
                        let between = last_write.get(&e.target).is_some_and(|&w| w as usize > p);
                        if r.kind == Kind::VRead && r.target == e.target && !between {
                            rmw_read.insert(p);
                        }
                    }
                    last_write.insert(e.target, i as u32);
                    nvars = nvars.max(e.target as usize + 1);
                }
                Kind::Fork => match dense.get(&e.target) {
                    Some(&d) => fork_of[d] = Some(i),
                    None => {
                        silent_fork.insert(e.target, i);
                    }
                },
                Kind::Wait => {
                    matcher.wait(e.thread, e.target, i as u64);
                    wait_of.insert(e.thread, i);
                }
                Kind::Notify | Kind::NotifyAll => {
                    matcher.notify(e.target, i as u64, e.kind == Kind::NotifyAll, || ());
                }
                Kind::Wake => {
                    if let Some((n, ())) = matcher.wake(e.thread, e.target) {
                        wake_notify[i] = Some(n as usize);
                        if let Some(&w) = wait_of.get(&e.thread) {
                            notify_waits.entry(n as usize).or_default().push(w);
                            notify_wakes.entry(n as usize).or_default().push((w, i));
                        }
                    }
                }
                _ => {}
            }
            if e.kind.has_lock() {
                nlocks = nlocks.max(e.target as usize + 1);
            }
        }
        Search {
            events,
            tix,
            local,
            threads,
            dense,
            fork_of,
            silent_fork,
            observed,
            wake_notify,
            notify_waits,
            notify_wakes,
            lost_notifications: false,
            rmw_read,
            nvars,
            nlocks,
        }
    }

    /// Whether a thread other than `d` is between the read and the write of a
    /// read-modify-write of variable `x`.
    fn rmw_open(&self, st: &State, d: usize, x: u32) -> bool {
        (0..self.threads.len()).any(|u| {
            let p = st.pos[u] as usize;
            u != d
                && p > 0
                && p < self.threads[u].len()
                && self.rmw_read.contains(&self.threads[u][p - 1])
                && self.events[self.threads[u][p - 1]].target == x
        })
    }

    /// Whether event `i` has executed in a state with positions `pos`.
    fn done(&self, pos: &[u32], i: usize) -> bool {
        pos[self.tix[i]] > self.local[i]
    }

    /// Whether thread `d`'s next event may run (ignoring reads-from when `free_read`).
    fn enabled(&self, st: &State, d: usize, free_read: bool) -> Option<usize> {
        let p = st.pos[d] as usize;
        let &i = self.threads[d].get(p)?;
        if p == 0 {
            if let Some(f) = self.fork_of[d] {
                if !self.done(&st.pos, f) {
                    return None;
                }
            }
        }
        let e = &self.events[i];
        let opens = self.rmw_read.contains(&i);
        if (e.kind.is_write() || opens) && self.rmw_open(st, d, e.target) {
            return None;
        }
        let ok = match e.kind {
            Kind::Read | Kind::VRead => {
                free_read || st.last_write[e.target as usize] == self.observed[i]
            }
            Kind::Acquire => e.is_nested() || st.owner[e.target as usize] == NONE,
            Kind::Wake => {
                st.owner[e.target as usize] == NONE
                    && self.wake_notify[i].is_none_or(|n| self.done(&st.pos, n))
                    && st.lost.binary_search(&i).is_err()
            }
            Kind::Notify | Kind::NotifyAll => {
                self.lost_notifications
                    || self
                        .notify_waits
                        .get(&i)
                        .is_none_or(|ws| ws.iter().all(|&w| self.done(&st.pos, w)))
            }
            Kind::Join => match self.dense.get(&e.target) {
                Some(&c) => st.pos[c] as usize == self.threads[c].len(),
                None => self
                    .silent_fork
                    .get(&e.target)
                    .is_none_or(|&f| self.done(&st.pos, f)),
            },
            _ => true,
        };
        ok.then_some(i)
    }

    fn step(&self, st: &State, d: usize, i: usize) -> State {
        let mut s = st.clone();
        s.pos[d] += 1;
        let e = &self.events[i];
        match e.kind {
            Kind::Write | Kind::VWrite => s.last_write[e.target as usize] = i as u32,
            Kind::Acquire if !e.is_nested() => s.owner[e.target as usize] = d as u32,
            Kind::Wake => s.owner[e.target as usize] = d as u32,
            Kind::Release if !e.is_nested() => s.owner[e.target as usize] = NONE,
            Kind::Wait => s.owner[e.target as usize] = NONE,
            Kind::Notify | Kind::NotifyAll => {
                for &(w, wake) in self.notify_wakes.get(&i).into_iter().flatten() {
                    if !self.done(&st.pos, w) {
                        if let Err(at) = s.lost.binary_search(&wake) {
                            s.lost.insert(at, wake);
                        }
                    }
                }
            }
            _ => {}
        }
        s
    }

    /// Calls `visit` once with every state a correct reordering reaches.
    fn explore(&self, mut visit: impl FnMut(&State)) {
        let start = State {
            pos: vec![0; self.threads.len()],
            last_write: vec![NONE; self.nvars],
            owner: vec![NONE; self.nlocks],
            lost: Vec::new(),
        };
        let mut seen: HashSet<State> = HashSet::new();
        let mut stack = vec![start.clone()];
        seen.insert(start);
        let nt = self.threads.len();
        while let Some(st) = stack.pop() {
            visit(&st);
            for d in 0..nt {
                if let Some(i) = self.enabled(&st, d, false) {
                    let next = self.step(&st, d, i);
                    if seen.insert(next.clone()) {
                        stack.push(next);
                    }
                }
            }
        }
    }

    /// The deadlocks of state `st`: cycles of threads whose next event is a blocking
    /// acquisition of a lock the next thread of the cycle holds, as their sorted
    /// acquisitions.
    fn deadlocks_at(&self, st: &State, out: &mut BTreeSet<Vec<usize>>) {
        let nt = self.threads.len();
        // Whom each thread waits for.
        let waits_for: Vec<Option<usize>> = (0..nt)
            .map(|d| {
                let p = st.pos[d] as usize;
                let &i = self.threads[d].get(p)?;
                if p == 0 && self.fork_of[d].is_some_and(|f| !self.done(&st.pos, f)) {
                    return None;
                }
                let e = &self.events[i];
                if e.kind != Kind::Acquire || e.is_nested() || e.is_try_acquire() {
                    return None;
                }
                match st.owner[e.target as usize] {
                    NONE => None,
                    o if o as usize == d => None,
                    o => Some(o as usize),
                }
            })
            .collect();
        for start in 0..nt {
            let mut path = vec![start];
            let mut cur = start;
            while let Some(next) = waits_for[cur] {
                if next == start {
                    let mut evs: Vec<usize> = path
                        .iter()
                        .map(|&d| self.threads[d][st.pos[d] as usize])
                        .collect();
                    evs.sort_unstable();
                    out.insert(evs);
                    break;
                }
                if path.contains(&next) || path.len() > nt {
                    break;
                }
                path.push(next);
                cur = next;
            }
        }
    }

    fn run(&self) -> BTreeSet<(usize, usize)> {
        let mut races = BTreeSet::new();
        let nt = self.threads.len();
        self.explore(|st| {
            // Races: two enabled next accesses of different threads.
            for a in 0..nt {
                let Some(i) = self.enabled(st, a, true) else {
                    continue;
                };
                let ei = &self.events[i];
                if !ei.kind.is_plain_access() {
                    continue;
                }
                for b in a + 1..nt {
                    let Some(j) = self.enabled(st, b, true) else {
                        continue;
                    };
                    let ej = &self.events[j];
                    if ej.kind.is_plain_access()
                        && ej.target == ei.target
                        && (ei.kind == Kind::Write || ej.kind == Kind::Write)
                    {
                        races.insert((i.min(j), i.max(j)));
                    }
                }
            }
        });
        races
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct State {
    pos: Vec<u32>,
    last_write: Vec<u32>,
    owner: Vec<u32>,
    /// Wakes whose notify ran before their wait (sorted): they never run.
    lost: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn races(text: &str) -> BTreeSet<String> {
        predictable_races(&jrace_trace::std_format::parse_str(text, "t").unwrap())
    }

    #[test]
    fn fig1a_swaps_sections() {
        let t =
            "t1|acq(l)|1\nt1|w(x)|2\nt1|rel(l)|3\nt2|acq(l)|4\nt2|w(x)|5\nt2|rel(l)|6\nt2|r(x)|7\n";
        assert_eq!(races(t), ["x:(2,7)".to_string()].into());
    }

    #[test]
    fn racing_read_value_is_free() {
        let t = "t1|w(x)|1\nt1|w(x)|2\nt2|r(x)|3\n";
        assert_eq!(
            races(t),
            ["x:(1,3)".to_string(), "x:(2,3)".to_string()].into()
        );
    }

    #[test]
    fn fork_and_join_order() {
        let t = "t1|w(x)|1\nt1|fork(t2)|2\nt2|w(x)|3\nt1|join(t2)|4\nt1|r(x)|5\n";
        assert!(races(t).is_empty());
        let t = "t1|fork(t2)|1\nt1|w(x)|2\nt2|w(x)|3\n";
        assert_eq!(races(t), ["x:(2,3)".to_string()].into());
    }
}
