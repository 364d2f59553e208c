//! `shb`: schedulable happens-before (Mathur, Kini, Viswanathan, OOPSLA 2018).
//!
//! SHB is [`crate::hb`]'s happens-before plus a reads-from edge into every read: from the
//! write it observed (the last earlier write to its variable in the trace, which is what a
//! read without a recorded value reads, docs/DETECTORS.md#reads-from) to the read. A read
//! is checked against earlier writes *before* it joins its writer's clock, so the racing
//! read's own reads-from edge never hides its race; a write is checked against earlier
//! reads and writes as in hb. Volatile reads already synchronize with volatile writes
//! through HB (the JMM's `vw → every later vr`); the reads-from edge is also added when a
//! plain read observes a volatile write or a volatile read observes a plain write, so mixed
//! accesses stay sound. The writer's local clock ticks after every write, so the edge
//! covers exactly the events up to the write.
//!
//! **Promise**: sound for *every* race it reports, not only the first. For a reported pair
//! `(e1, e2)`, the events SHB-before `e1` or before `e2` (without `e2`'s own reads-from
//! edge), in trace order, form a correct reordering after which both are enabled: every
//! read in it keeps its writer because that writer is SHB-before it, locks stay exclusive
//! because HB orders the sections, and fork/join and notify → wake are HB edges. Not
//! complete: like HB it never reverses two critical sections on one lock, and a reads-from
//! chain that some witness could reorder still orders a pair (test vectors fig1a, fig6).
//!
//! Every signature is reported, not only the last access: it keeps the same per
//! (thread, location, kind) access history as hb ([`crate::hb::AccessHistory`]).

use crate::detector::{Detector, Outcome, RaceSink};
use crate::hb::{AccessHistory, HbClocks};
use crate::vc::VectorClock;
use jrace_trace::{Event, Kind, ThreadId};
use std::sync::Arc;

#[derive(Default)]
pub struct ShbDetector {
    clocks: HbClocks,
    history: AccessHistory,
    /// Per variable: its last write (plain or volatile), if any.
    last_write: Vec<Option<LastWrite>>,
    /// Per thread: its clock as it was since its last change other than its own ticks,
    /// shared by the last writes made meanwhile (`None`: not taken since that change).
    snapshots: Vec<Option<Arc<VectorClock>>>,
}

/// A write as a read joins it: the writer's clock at the write is `snapshot` with the
/// writer's own component raised to `epoch`. Why not a clock per variable: between two
/// synchronizations a thread's clock changes only in its own component, so the writes
/// made meanwhile share one snapshot; a variable then costs 16 bytes, not a clock of its
/// own (on Derby 4x300, about a million written variables), and a write no clock copy.
struct LastWrite {
    thread: ThreadId,
    epoch: u32,
    snapshot: Arc<VectorClock>,
}

impl ShbDetector {
    /// Records `e` (a write of thread `t` at its current clock) as its variable's last
    /// write.
    fn record_write(&mut self, e: &Event) {
        let t = e.thread;
        let i = e.target as usize;
        if i >= self.last_write.len() {
            self.last_write.resize_with(i + 1, || None);
        }
        let ti = t as usize;
        if ti >= self.snapshots.len() {
            self.snapshots.resize_with(ti + 1, || None);
        }
        let c = self.clocks.thread(t);
        let epoch = c.get(t);
        let snapshot = self.snapshots[ti]
            .get_or_insert_with(|| Arc::new(c.clone()))
            .clone();
        self.last_write[i] = Some(LastWrite {
            thread: t,
            epoch,
            snapshot,
        });
    }

    /// Thread `t`'s clock changed other than by its own tick.
    #[inline]
    fn changed(&mut self, t: ThreadId) {
        if let Some(s) = self.snapshots.get_mut(t as usize) {
            *s = None;
        }
    }

    /// The reads-from edge: the reading thread joins the clock of the write it observed.
    /// A reader that already has the write in its clock has all the writer knew then
    /// (clocks only grow by joining whole clocks), so it joins nothing.
    fn join_writer(&mut self, e: &Event) {
        let Some(Some(w)) = self.last_write.get(e.target as usize) else {
            return;
        };
        let c = self.clocks.thread(e.thread);
        if w.thread == e.thread || c.get(w.thread) >= w.epoch {
            return;
        }
        c.join(&w.snapshot);
        c.set(w.thread, w.epoch);
        self.changed(e.thread);
    }

    /// A synchronization event: through [`HbClocks::sync`], which changes the clock of
    /// `e`'s thread (and of the thread a `fork` starts).
    fn sync(&mut self, idx: u64, e: &Event) {
        self.clocks.sync(idx, e);
        self.changed(e.thread);
        if e.kind == Kind::Fork {
            self.changed(e.target);
        }
    }
}

impl Detector for ShbDetector {
    fn name(&self) -> &'static str {
        "shb"
    }

    fn on_event(&mut self, idx: u64, e: &Event, races: &mut RaceSink) {
        let t = e.thread;
        match e.kind {
            Kind::Read => {
                let c = self.clocks.thread(t);
                let epoch = c.get(t);
                self.history.check_and_record(idx, e, c, epoch, races);
                self.join_writer(e);
            }
            Kind::Write => {
                let c = self.clocks.thread(t);
                let epoch = c.get(t);
                self.history.check_and_record(idx, e, c, epoch, races);
                self.record_write(e);
                // Only the thread's own component: its snapshot still holds.
                self.clocks.thread(t).inc(t);
            }
            Kind::VRead => {
                self.sync(idx, e);
                self.join_writer(e);
            }
            Kind::VWrite => {
                self.record_write(e);
                // Joins the volatile's clock and ticks the thread.
                self.sync(idx, e);
            }
            _ => self.sync(idx, e),
        }
    }

    fn on_batch(&mut self, first_idx: u64, events: &[Event], races: &mut RaceSink) {
        crate::history::on_batch_prefetching(self, |d| &d.history, first_idx, events, races);
    }

    fn finish(&mut self, _races: &mut RaceSink) -> Outcome {
        Outcome::default()
    }
}
