//! `lockset`: Eraser-style lockset checking (Savage et al., TOCS 1997), reported as
//! warnings.
//!
//! For every plain access the detector knows the set of locks its thread holds
//! (outermost acquisitions only: re-entrant inner acquires and releases, flagged
//! [`jrace_trace::FLAG_NESTED`], change nothing; `wait` gives its lock up and `wake`
//! takes it back). It reports a pair of conflicting plain accesses (same variable,
//! different threads, at least one a write) whose lock sets are **disjoint**, with two
//! refinements that remove the classic false alarms of initialization and hand-off:
//!
//! - **Eraser's states.** A variable accessed by one thread only is *exclusive* to it
//!   and nothing is reported. When a second thread reads it, it becomes *shared*
//!   (read-only after initialization, still nothing reported). Once a second thread
//!   writes it, or any thread writes it while shared, it is *shared-modified*: from then
//!   on, every access (including that one) is checked against all earlier accesses of
//!   other threads, initialization included. So a write-then-read-only publication
//!   (test vector fig8's `u`) is not reported, while fig8's `x:(7,13)` is.
//! - **Fork/join.** Two accesses ordered by program order, fork and join alone are never
//!   reported; and if every access so far is ordered before a new thread's access (the
//!   variable was handed over by fork or join), the variable stays exclusive and passes
//!   to the new thread.
//!
//! Volatile accesses are never reported and do not synchronize here. Every signature is
//! found, not only the first: for each variable the detector keeps the latest access per
//! (thread, location, read/write, lock set).
//!
//! **Promise**: none. Lockset is neither sound (V4's `a[0]:(2,7)`, V6a's `y:(6,11)` and
//! fig8's `x:(7,13)` are false alarms: lock sets ignore ordering through data and
//! wait/notify) nor complete (a variable never written by two threads, or read-shared,
//! is never checked; accesses under a common lock that still race by program order of
//! sections are not found). It is fast and schedule-independent, so its reports are
//! [`Outcome::warnings_only`].

use crate::detector::{Detector, Outcome, RaceAccess, RaceSink};
use crate::vc::VectorClock;
use jrace_trace::{Event, Kind, LocId, LockId, ThreadId};
use rustc_hash::FxHashMap as HashMap;

/// Eraser's per-variable state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum VarState {
    Virgin,
    /// Accessed only by this thread; `epoch` is its latest access (fork/join clock).
    Exclusive {
        thread: ThreadId,
        epoch: u32,
    },
    Shared,
    SharedModified,
    /// No longer checked: it drew [`MAX_PAIRS`] warnings or [`MAX_HISTORY`] distinct
    /// accesses. Its history is freed.
    GivenUp,
}

/// New location pairs one variable may draw before lockset stops checking it. Shared
/// data touched from hundreds of sites without a common lock draws a warning for nearly
/// every pair of sites: millions of warnings nobody reads, in memory that grows with the
/// square of the sites. The warnings already drawn are kept; the detector's note counts
/// the variables given up.
pub const MAX_PAIRS: u32 = 256;
/// Distinct (thread, location, read/write, lock set) accesses kept per variable before
/// lockset stops checking it.
pub const MAX_HISTORY: usize = 4096;

/// A lock set as stored in a history entry: up to two locks inline (almost every access
/// holds at most two), else the interned set's id. Testing two entries for disjointness
/// then needs no memory beyond the entries themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EntrySet {
    Inline { len: u8, locks: [LockId; 2] },
    Interned(u32),
}

impl EntrySet {
    fn locks<'a>(&'a self, sets: &'a [Vec<LockId>]) -> &'a [LockId] {
        match self {
            EntrySet::Inline { len, locks } => &locks[..*len as usize],
            EntrySet::Interned(id) => &sets[*id as usize],
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Access {
    thread: ThreadId,
    loc: LocId,
    write: bool,
    lockset: EntrySet,
    /// The thread's own fork/join clock component at the access.
    epoch: u32,
    idx: u64,
}

struct VarInfo {
    state: VarState,
    history: Vec<Access>,
    /// New location pairs reported on this variable.
    pairs: u32,
}

#[derive(Default)]
pub struct LocksetDetector {
    /// Fork/join-only clocks (program order, fork, join).
    clocks: Vec<VectorClock>,
    /// Locks each thread holds now (outermost), sorted.
    held: Vec<Vec<LockId>>,
    /// Interned lock sets: id -> sorted locks.
    sets: Vec<Vec<LockId>>,
    set_ids: HashMap<Vec<LockId>, u32>,
    /// Each thread's current lock-set id, until it acquires or releases a lock: looking
    /// the set up on every access dominated the detector's time.
    current_set: Vec<Option<u32>>,
    vars: Vec<Option<VarInfo>>,
    /// Variables given up ([`VarState::GivenUp`]).
    given_up: u64,
}

fn grow<T: Default>(v: &mut Vec<T>, i: usize) -> &mut T {
    if i >= v.len() {
        v.resize_with(i + 1, T::default);
    }
    &mut v[i]
}

/// Whether two sorted lock lists share no lock.
fn disjoint(a: &[LockId], b: &[LockId]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return false,
        }
    }
    true
}

impl LocksetDetector {
    fn entry_set(&self, id: u32) -> EntrySet {
        let s = &self.sets[id as usize];
        match s.len() {
            0 => EntrySet::Inline {
                len: 0,
                locks: [0; 2],
            },
            1 => EntrySet::Inline {
                len: 1,
                locks: [s[0], 0],
            },
            2 => EntrySet::Inline {
                len: 2,
                locks: [s[0], s[1]],
            },
            _ => EntrySet::Interned(id),
        }
    }

    fn clock(&mut self, t: ThreadId) -> &mut VectorClock {
        let c = grow(&mut self.clocks, t as usize);
        if c.get(t) == 0 {
            c.set(t, 1);
        }
        c
    }

    fn lockset_id(&mut self, t: ThreadId) -> u32 {
        if let Some(Some(id)) = self.current_set.get(t as usize) {
            return *id;
        }
        let held = grow(&mut self.held, t as usize);
        let id = match self.set_ids.get(held.as_slice()) {
            Some(&id) => id,
            None => {
                let id = self.sets.len() as u32;
                self.sets.push(held.clone());
                self.set_ids.insert(held.clone(), id);
                id
            }
        };
        *grow(&mut self.current_set, t as usize) = Some(id);
        id
    }

    fn hold(&mut self, t: ThreadId, l: LockId) {
        *grow(&mut self.current_set, t as usize) = None;
        let h = grow(&mut self.held, t as usize);
        if let Err(p) = h.binary_search(&l) {
            h.insert(p, l);
        }
    }

    fn unhold(&mut self, t: ThreadId, l: LockId) {
        *grow(&mut self.current_set, t as usize) = None;
        let h = grow(&mut self.held, t as usize);
        if let Ok(p) = h.binary_search(&l) {
            h.remove(p);
        }
    }

    fn access(&mut self, idx: u64, e: &Event, races: &mut RaceSink) {
        let t = e.thread;
        let write = e.kind == Kind::Write;
        let lockset_id = self.lockset_id(t);
        let lockset = self.entry_set(lockset_id);
        self.clock(t);
        let clock = &self.clocks[t as usize];
        let epoch = clock.get(t);
        let info = grow(&mut self.vars, e.target as usize).get_or_insert_with(|| VarInfo {
            state: VarState::Virgin,
            history: Vec::new(),
            pairs: 0,
        });
        if info.state == VarState::GivenUp {
            return;
        }
        info.state = match info.state {
            VarState::Virgin => VarState::Exclusive { thread: t, epoch },
            VarState::Exclusive { thread, .. } if thread == t => {
                VarState::Exclusive { thread: t, epoch }
            }
            // Handed over: every earlier access is ordered before this one.
            VarState::Exclusive {
                thread,
                epoch: last,
            } if last <= clock.get(thread) => VarState::Exclusive { thread: t, epoch },
            VarState::Exclusive { .. } | VarState::Shared if write => VarState::SharedModified,
            VarState::Exclusive { .. } => VarState::Shared,
            s => s,
        };
        let mut slot = None;
        let check = info.state == VarState::SharedModified;
        let mine = lockset.locks(&self.sets);
        for (i, a) in info.history.iter().enumerate() {
            if a.thread == t {
                if a.loc == e.loc && a.write == write && a.lockset == lockset {
                    slot = Some(i);
                }
            } else if check
                && (a.write || write)
                && a.epoch > clock.get(a.thread)
                && disjoint(a.lockset.locks(&self.sets), mine)
            {
                let was = RaceAccess {
                    idx: a.idx,
                    loc: a.loc,
                    thread: a.thread,
                    write: a.write,
                };
                if races.report(e.target, was, RaceAccess::of(idx, e)) {
                    info.pairs += 1;
                }
            }
        }
        let entry = Access {
            thread: t,
            loc: e.loc,
            write,
            lockset,
            epoch,
            idx,
        };
        match slot {
            Some(i) => info.history[i] = entry,
            None => info.history.push(entry),
        }
        if info.pairs >= MAX_PAIRS || info.history.len() >= MAX_HISTORY {
            info.state = VarState::GivenUp;
            info.history = Vec::new();
            self.given_up += 1;
        }
    }
}

impl Detector for LocksetDetector {
    fn name(&self) -> &'static str {
        "lockset"
    }

    fn on_event(&mut self, idx: u64, e: &Event, races: &mut RaceSink) {
        let t = e.thread;
        match e.kind {
            Kind::Read | Kind::Write => self.access(idx, e, races),
            Kind::Acquire | Kind::Wake if !e.is_nested() => self.hold(t, e.target),
            Kind::Release | Kind::Wait if !e.is_nested() => self.unhold(t, e.target),
            Kind::Fork => {
                let c = self.clock(t).clone();
                self.clock(e.target).join(&c);
                self.clock(t).inc(t);
            }
            Kind::Join => {
                let c = self.clock(e.target).clone();
                self.clock(t).join(&c);
            }
            _ => {}
        }
    }

    fn finish(&mut self, _races: &mut RaceSink) -> Outcome {
        let note = (self.given_up > 0).then(|| {
            format!(
                "stopped checking {} variable{} after {MAX_PAIRS} warnings (or {MAX_HISTORY} \
                 distinct accesses) each",
                self.given_up,
                if self.given_up == 1 { "" } else { "s" }
            )
        });
        Outcome {
            warnings_only: true,
            note,
            ..Outcome::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::run_detector;
    use std::collections::BTreeSet;

    fn lockset(text: &str) -> BTreeSet<String> {
        run_detector(
            &jrace_trace::std_format::parse_str(text, "t").unwrap(),
            "lockset",
        )
    }

    /// A variable written from many sites by two threads without a common lock draws
    /// MAX_PAIRS warnings, then is no longer checked (and says so); another variable is
    /// checked as before.
    #[test]
    fn a_flood_of_warnings_on_one_variable_stops_there() {
        use crate::Detector;
        let sites = 40u32; // 40 x 40 write-write pairs across the threads, > MAX_PAIRS
        let mut text = String::new();
        for s in 0..sites {
            text += &format!("t1|w(x)|a{s}\nt2|w(x)|b{s}\n");
        }
        text += "t1|w(y)|c1\nt2|w(y)|c2\n";
        let trace = jrace_trace::std_format::parse_str(&text, "t").unwrap();
        let mut d = super::LocksetDetector::default();
        let mut sink = crate::RaceSink::new();
        for (i, e) in trace.events.iter().enumerate() {
            d.on_event(i as u64, e, &mut sink);
        }
        let out = d.finish(&mut sink);
        let x = trace.symbols.vars.get("x").unwrap();
        let on_x = sink.pairs().iter().filter(|p| p.var == x).count();
        // The access that crosses the limit reports all of its pairs.
        let max = super::MAX_PAIRS as usize;
        assert!(
            (max..max + sites as usize).contains(&on_x),
            "{on_x} warnings on x"
        );
        assert!(
            sink.pairs().iter().any(|p| p.var != x),
            "y is still checked"
        );
        assert_eq!(
            out.note.as_deref(),
            Some("stopped checking 1 variable after 256 warnings (or 4096 distinct accesses) each")
        );
    }

    #[test]
    fn disjoint_locksets_are_reported_once_shared_modified() {
        let t =
            "t1|acq(l)|1\nt1|w(x)|2\nt1|rel(l)|3\nt2|w(x)|4\nt2|acq(l)|5\nt2|r(x)|6\nt2|rel(l)|7\n";
        assert_eq!(lockset(t), ["x:(2,4)".to_string()].into());
    }

    #[test]
    fn read_shared_and_fork_join_handoff_are_not_reported() {
        // Initialized by t1, then only read by t2.
        assert!(lockset("t1|w(x)|1\nt2|r(x)|2\nt2|r(x)|3\n").is_empty());
        // Handed to t2 by fork and back by join.
        let t = "t1|w(x)|1\nt1|fork(t2)|2\nt2|w(x)|3\nt1|join(t2)|4\nt1|w(x)|5\n";
        assert!(lockset(t).is_empty());
        // Without the join the last write races.
        let t = "t1|w(x)|1\nt1|fork(t2)|2\nt2|w(x)|3\nt1|w(x)|5\n";
        assert_eq!(lockset(t), ["x:(3,5)".to_string()].into());
    }

    #[test]
    fn reentrant_wait_and_wake_keep_the_lockset() {
        // The inner release does not drop l; wait drops it, wake takes it back.
        let t = "t1|acq(l)|1\nt1|acq(l)|2\nt1|rel(l)|3\nt1|w(x)|4\nt1|rel(l)|5\n\
                 t2|acq(l)|6\nt2|w(x)|7\nt2|rel(l)|8\n";
        assert!(lockset(t).is_empty());
        let t = "t1|acq(l)|1\nt1|wait(l)|2\nt2|acq(l)|3\nt2|w(x)|4\nt2|notify(l)|5\nt2|rel(l)|6\n\
                 t1|wake(l)|7\nt1|w(x)|8\nt1|rel(l)|9\n";
        assert!(lockset(t).is_empty());
    }
}
