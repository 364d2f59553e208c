//! `hb`: Java happens-before with vector clocks and FastTrack-style epochs.
//!
//! Happens-before is program order, fork → child, child → join, release (and `wait`) →
//! every later acquire (and `wake`) of the same lock, `vwrite` → every later `vread` of
//! the same variable (the JMM's synchronization order), and `notify` → the `wake` it
//! matched. Two conflicting plain accesses of different threads race when neither
//! happens before the other.
//!
//! **Promise**: sound for the *first* race only. Every pair it reports is unordered by HB,
//! but after the first race a later pair may be infeasible in every reordering (its order
//! can be forced by values read), so later reports can be false alarms. Not complete for
//! predictable races: it never reorders critical sections.
//!
//! **Every signature, not only the last access**: for each variable the detector keeps one
//! epoch per (thread, location, read/write), the latest such access. If an earlier access
//! at the same (thread, location, kind) is unordered with the current one, so is the
//! latest (it comes later in that thread), so checking the latest finds every unordered
//! location pair. Memory grows with the number of distinct access sites per variable.

use crate::detector::{Detector, Outcome, RaceSink};
use crate::sync::NotifyMatcher;
use crate::vc::VectorClock;
use jrace_trace::{Event, Kind, LocId, ThreadId};

/// The latest access of one (thread, location, kind) to a variable.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AccessEntry {
    pub thread: ThreadId,
    pub loc: LocId,
    pub write: bool,
    /// The thread's own clock component at the access.
    pub epoch: u32,
    pub idx: u64,
}

/// Per-variable access histories shared by the epoch-based detectors (hb, shb).
#[derive(Default)]
pub(crate) struct AccessHistory {
    vars: Vec<Vec<AccessEntry>>,
}

impl AccessHistory {
    /// Reports every recorded access of `var` that conflicts with this one, belongs to
    /// another thread and is not ordered before it by `clock`; then records this access.
    #[inline]
    pub fn check_and_record(
        &mut self,
        idx: u64,
        e: &Event,
        clock: &VectorClock,
        epoch: u32,
        races: &mut RaceSink,
    ) {
        let var = e.target as usize;
        if var >= self.vars.len() {
            self.vars.resize_with(var + 1, Vec::new);
        }
        let write = e.kind == Kind::Write;
        let hist = &mut self.vars[var];
        let mut slot = None;
        for (i, a) in hist.iter().enumerate() {
            if a.thread == e.thread {
                if a.loc == e.loc && a.write == write {
                    slot = Some(i);
                }
            } else if (a.write || write) && a.epoch > clock.get(a.thread) {
                races.report(e.target, a.idx, a.loc, idx, e.loc);
            }
        }
        let entry = AccessEntry { thread: e.thread, loc: e.loc, write, epoch, idx };
        match slot {
            Some(i) => hist[i] = entry,
            None => hist.push(entry),
        }
    }
}

/// The happens-before clocks themselves, shared by hb and shb: threads, locks,
/// volatile variables, fork/join and notify/wake.
#[derive(Default)]
pub(crate) struct HbClocks {
    pub threads: Vec<VectorClock>,
    locks: Vec<VectorClock>,
    volatiles: Vec<VectorClock>,
    notifies: NotifyMatcher<VectorClock>,
}

fn slot<T: Default>(v: &mut Vec<T>, i: u32) -> &mut T {
    let i = i as usize;
    if i >= v.len() {
        v.resize_with(i + 1, T::default);
    }
    &mut v[i]
}

impl HbClocks {
    /// The clock of thread `t`, created on first use with its own component at 1.
    #[inline]
    pub fn thread(&mut self, t: ThreadId) -> &mut VectorClock {
        let c = slot(&mut self.threads, t);
        if c.get(t) == 0 {
            c.set(t, 1);
        }
        c
    }

    /// Applies the synchronization effect of a non-access event. Returns nothing: the
    /// caller reads the thread's clock afterwards.
    pub fn sync(&mut self, idx: u64, e: &Event) {
        let t = e.thread;
        match e.kind {
            Kind::Acquire if !e.is_nested() => {
                let l = slot(&mut self.locks, e.target).clone();
                self.thread(t).join(&l);
            }
            Kind::Release | Kind::Wait if !e.is_nested() => {
                let c = self.thread(t).clone();
                slot(&mut self.locks, e.target).assign(&c);
                self.thread(t).inc(t);
                if e.kind == Kind::Wait {
                    self.notifies.wait(t, e.target, idx);
                }
            }
            Kind::Wake => {
                let l = slot(&mut self.locks, e.target).clone();
                self.thread(t).join(&l);
                if let Some((_, n)) = self.notifies.wake(t, e.target) {
                    self.thread(t).join(&n);
                }
            }
            Kind::Notify | Kind::NotifyAll => {
                let c = self.thread(t).clone();
                self.notifies.notify(e.target, idx, e.kind == Kind::NotifyAll, || c);
                self.thread(t).inc(t);
            }
            Kind::Fork => {
                let c = self.thread(t).clone();
                self.thread(e.target).join(&c);
                self.thread(t).inc(t);
            }
            Kind::Join => {
                let c = self.thread(e.target).clone();
                self.thread(t).join(&c);
            }
            Kind::VWrite => {
                let c = self.thread(t).clone();
                slot(&mut self.volatiles, e.target).join(&c);
                self.thread(t).inc(t);
            }
            Kind::VRead => {
                let v = slot(&mut self.volatiles, e.target).clone();
                self.thread(t).join(&v);
            }
            _ => {}
        }
    }
}

#[derive(Default)]
pub struct HbDetector {
    clocks: HbClocks,
    history: AccessHistory,
}

impl Detector for HbDetector {
    fn name(&self) -> &'static str {
        "hb"
    }

    fn on_event(&mut self, idx: u64, e: &Event, races: &mut RaceSink) {
        match e.kind {
            Kind::Read | Kind::Write => {
                let c = self.clocks.thread(e.thread);
                let epoch = c.get(e.thread);
                self.history.check_and_record(idx, e, c, epoch, races);
            }
            _ => self.clocks.sync(idx, e),
        }
    }

    fn finish(&mut self, _races: &mut RaceSink) -> Outcome {
        Outcome::default()
    }
}
