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
use jrace_trace::{Event, Kind};

#[derive(Default)]
pub struct ShbDetector {
    clocks: HbClocks,
    history: AccessHistory,
    /// Per variable: the clock of its last write (plain or volatile), if any.
    last_write: Vec<Option<VectorClock>>,
}

/// Stores `clock` as the last write of `var`, reusing the allocation.
fn record_write(last_write: &mut Vec<Option<VectorClock>>, var: u32, clock: &VectorClock) {
    let i = var as usize;
    if i >= last_write.len() {
        last_write.resize_with(i + 1, || None);
    }
    match &mut last_write[i] {
        Some(c) => c.assign(clock),
        slot @ None => *slot = Some(clock.clone()),
    }
}

impl ShbDetector {
    /// The reads-from edge: the reading thread joins the clock of the write it observed.
    fn join_writer(&mut self, e: &Event) {
        if let Some(Some(w)) = self.last_write.get(e.target as usize) {
            self.clocks.thread(e.thread).join(w);
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
                record_write(&mut self.last_write, e.target, c);
                c.inc(t);
            }
            Kind::VRead => {
                self.clocks.sync(idx, e);
                self.join_writer(e);
            }
            Kind::VWrite => {
                record_write(&mut self.last_write, e.target, self.clocks.thread(t));
                // Joins the volatile's clock and ticks the thread.
                self.clocks.sync(idx, e);
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
