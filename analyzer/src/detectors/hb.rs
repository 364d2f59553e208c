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
//! **Every signature, not only the last access**: the access history
//! ([`crate::history`]) keeps the latest access per (thread, location, kind) of each
//! variable, which is enough to find every unordered location pair. Memory grows with the
//! number of distinct access sites per variable.

use crate::detector::{Detector, Outcome, RaceSink};
use crate::sync::NotifyMatcher;
use crate::vc::VectorClock;
use crate::wcp::slot;
use jrace_trace::{Event, Kind, ThreadId};

pub(crate) use crate::history::AccessHistory;

/// The happens-before clocks themselves, shared by hb and shb: threads, locks,
/// volatile variables, fork/join and notify/wake.
#[derive(Default)]
pub(crate) struct HbClocks {
    pub threads: Vec<VectorClock>,
    locks: Vec<VectorClock>,
    /// By variable id: few variables are volatile, and a table over every variable
    /// would cost a clock header per variable of a large trace.
    volatiles: rustc_hash::FxHashMap<u32, VectorClock>,
    notifies: NotifyMatcher<VectorClock>,
}

/// The clock of thread `t`, created on first use with its own component at 1.
#[inline]
fn thread_clock(threads: &mut Vec<VectorClock>, t: ThreadId) -> &mut VectorClock {
    let c = slot(threads, t);
    if c.get(t) == 0 {
        c.set(t, 1);
    }
    c
}

impl HbClocks {
    /// The clock of thread `t`, created on first use with its own component at 1.
    #[inline]
    pub fn thread(&mut self, t: ThreadId) -> &mut VectorClock {
        thread_clock(&mut self.threads, t)
    }

    /// Applies the synchronization effect of a non-access event. Returns nothing: the
    /// caller reads the thread's clock afterwards.
    pub fn sync(&mut self, idx: u64, e: &Event) {
        let t = e.thread;
        match e.kind {
            Kind::Acquire if !e.is_nested() => {
                let l = slot(&mut self.locks, e.target);
                thread_clock(&mut self.threads, t).join(l);
            }
            Kind::Release | Kind::Wait if !e.is_nested() => {
                let c = thread_clock(&mut self.threads, t);
                slot(&mut self.locks, e.target).assign(c);
                c.inc(t);
                if e.kind == Kind::Wait {
                    self.notifies.wait(t, e.target, idx);
                }
            }
            Kind::Wake => {
                let l = slot(&mut self.locks, e.target);
                thread_clock(&mut self.threads, t).join(l);
                if let Some((_, n)) = self.notifies.wake(t, e.target) {
                    self.thread(t).join(&n);
                }
            }
            Kind::Notify | Kind::NotifyAll => {
                let c = self.thread(t).clone();
                self.notifies
                    .notify(e.target, idx, e.kind == Kind::NotifyAll, || c);
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
                let c = thread_clock(&mut self.threads, t);
                self.volatiles.entry(e.target).or_default().join(c);
                c.inc(t);
            }
            Kind::VRead => {
                if let Some(v) = self.volatiles.get(&e.target) {
                    thread_clock(&mut self.threads, t).join(v);
                }
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

    fn on_batch(&mut self, first_idx: u64, events: &[Event], races: &mut RaceSink) {
        crate::history::on_batch_prefetching(self, |d| &d.history, first_idx, events, races);
    }

    fn finish(&mut self, _races: &mut RaceSink) -> Outcome {
        Outcome::default()
    }
}
