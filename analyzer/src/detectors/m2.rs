//! `m2`: Pavlogiannis's M2 (POPL 2020; docs/DETECTORS.md#m2). "Lemma" and "Thm"
//! numbers below are the paper's.
//!
//! **The race notion** (docs/DETECTORS.md#words). A conflicting pair of plain accesses is a
//! predictable race when some *correct reordering* of the trace — each thread runs a prefix
//! of its events, every read (plain or volatile) reads the same write as in the trace,
//! locks are respected, and the hard edges hold — ends with both accesses enabled. Branches
//! are ignored: since every read keeps its writer, every thread takes the same path.
//! Fork/join, `wait → notify → wake` are hard edges; `wait`/`wake` are a release/acquire;
//! volatile accesses are ordinary variables that are never reported. `enter`/`exit` are
//! no-ops, as for the other detectors.
//!
//! **The algorithm**. For each candidate `(e1, e2)`: build `X`, the union of the two
//! relative causal cones (rule 4 completes third threads' critical sections); reject if a
//! racing event is in `X`; report by Lemma 5.1 if `X` leaves no lock held; else `decide`:
//! the weakest order respecting the trace, its observation and lock closure, the
//! trace-order insertions of step 6 for some thread `i`, and the max-min linearization,
//! whose witness is replayed before the race is reported.
//!
//! **Promises.**
//! - *Sound for every report*: each reported pair has a witness schedule (Lemma 5.1's
//!   `t|X`, or a replayed max-min linearization). The schedule, expanded to trace events
//!   (`m2/schedule.rs`), is attached to the report ([`RaceSink::report_with_schedule`]),
//!   where `--witness` validates and shows it; m2 is in [`crate::registry::must_witness`].
//!   Lemma 5.1 schedules are only built when the sink wants them
//!   ([`RaceSink::wants_schedules`]) or in debug builds.
//! - *Complete for two threads* (Thm 4.1): with two threads rule 4 never fires and
//!   step 6 inserts nothing, so every predictable race is reported — unless a budget is
//!   hit, which is then counted in `unknown`.
//! - *Dynamic completeness*: every rejection is certain or uncertain (the refined rule: a
//!   racing event in a strict cone, a lock held by both accesses, or a pre-step-6 rejection
//!   without rule 4 is certain; rule-4 rejections, step-6 failures and budget cuts are
//!   not). [`Outcome::unknown`] counts the location pairs with an uncertain rejection and
//!   no report, and [`Outcome::complete`] is true exactly when that is 0: then every
//!   predictable race of the trace is listed. On more than two threads M2 can miss races
//!   (vector item4trap: `unknown: 1`, `complete: false`), and the flag can be conservative
//!   (flagconservative: `unknown: 1` although nothing is missed).
//!
//! **Not used**: HB, CP and WCP shortcuts (unsound in either direction), and the
//! optional "SHB races are races" shortcut, which would make m2 report `m2 ∪ shb` instead
//! of pure M2 (the vectors pin pure M2, item4trap).
//!
//! **Engineering**: the trace is buffered and decided in `finish` (the model's
//! independent passes and the variables' searches run in parallel under rayon; reports
//! are made in variable order, so output is deterministic); candidates
//! are grouped by (variable, thread, location, kind, lockset) and a group pair stops at
//! its first race, is skipped when its location pair is already reported, and is rejected
//! outright when the locksets intersect; strict-cone windows (two pointers) discard
//! certain rejections without a full check; `decide` runs on `X` compressed to variables
//! and locks used by two threads or more, with an incremental closure and an undo log for
//! step 6, and is first tried on the slice of `X` after its open sections (the rest runs
//! first in trace order; on failure, relaxed slices growing backwards look for a closure
//! cycle, then the whole of `X` is decided, see `m2/decide.rs`). Before `decide`, the
//! postponed-tails witness (`m2/tail.rs`: `X` in trace order with the racing threads'
//! open sections moved to the end, checked on those sections alone) settles most
//! candidates; it succeeds only where `decide` would, so verdicts are pure M2's. Per
//! race, nothing costs `O(|X|)` unless the sink wants schedules: a decided witness is
//! replayed on the kept events after the cut only. Deduplication is per dynamic variable
//! and location pair (the detector does not see static names), so on agent traces
//! `unknown` may count a location pair that another object's instance of the same field
//! reported. `JRACE_DEBUG=1` prints phase times and counters on standard error.

// Chain-indexed loops over several parallel arrays read best with an index.
#![allow(clippy::needless_range_loop)]

mod decide;
mod model;
mod schedule;
mod search;
mod tail;

use crate::detector::{Detector, Outcome, RaceSink};
use jrace_trace::Event;

/// Whether `JRACE_DEBUG` asks for m2's phase timings and counters (on standard error).
fn debug() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("JRACE_DEBUG").is_some())
}

/// Phase timer for `JRACE_DEBUG`.
struct Lap(Option<std::time::Instant>);

impl Lap {
    fn new() -> Lap {
        Lap(debug().then(std::time::Instant::now))
    }
    /// Prints the time since the last lap under `what`.
    fn lap(&mut self, what: &str) {
        if let Some(t) = &mut self.0 {
            eprintln!("m2: {what}: {:.3} s", t.elapsed().as_secs_f64());
            *t = std::time::Instant::now();
        }
    }
}

#[derive(Default)]
pub struct M2Detector {
    events: Vec<Event>,
    /// `decide` calls of the last `finish` (for tests and tuning).
    pub decides: u64,
}

impl Detector for M2Detector {
    fn name(&self) -> &'static str {
        "m2"
    }

    fn on_event(&mut self, _idx: u64, e: &Event, _races: &mut RaceSink) {
        self.events.push(*e);
    }

    fn on_batch(&mut self, _first_idx: u64, events: &[Event], _races: &mut RaceSink) {
        self.events.extend_from_slice(events);
    }

    fn finish(&mut self, races: &mut RaceSink) -> Outcome {
        let events = std::mem::take(&mut self.events);
        let model = model::Model::build(&events);
        let summary = search::run(&model, races);
        self.decides = summary.decides;
        Outcome {
            unknown: Some(summary.unknown),
            complete: Some(summary.unknown == 0),
            warnings_only: false,
            ..Outcome::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jrace_trace::MemSource;

    fn outcome_of(path: &str) -> (Outcome, Vec<String>) {
        let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/vectors")
            .join(path);
        let text = std::fs::read_to_string(&p).unwrap();
        let trace = jrace_trace::std_format::parse_str(&text, path).unwrap();
        let a = crate::engine::run(
            &mut MemSource::new(&trace),
            vec![Box::new(M2Detector::default())],
            &mut |_| {},
        )
        .unwrap();
        let sigs = a
            .races
            .iter()
            .map(|r| crate::testing::sig_of(&a.symbols, r))
            .collect();
        (a.runs[0].outcome.clone(), sigs)
    }

    #[test]
    fn completeness_flag_item4trap() {
        let (o, sigs) = outcome_of("item4trap.std");
        assert_eq!(sigs, vec!["y:(2,3)", "z:(5,6)"]);
        assert_eq!(o.unknown, Some(1));
        assert_eq!(o.complete, Some(false));
    }

    #[test]
    fn completeness_flag_flagconservative() {
        let (o, _) = outcome_of("flagconservative.std");
        assert_eq!(o.unknown, Some(1));
        assert_eq!(o.complete, Some(false));
    }

    #[test]
    fn complete_on_decided_vectors() {
        for v in [
            "fig1a.std",
            "fig1b.std",
            "fig2.std",
            "fig6.std",
            "fig7.std",
            "fig8.std",
            "fig9.std",
            "nolock.std",
            "prunepitfall.std",
            "rfprune.std",
            "wcpcp.std",
            "volatile.std",
            "waitnotify.std",
            "rvpredict4.std",
        ] {
            let (o, _) = outcome_of(v);
            assert_eq!(o.unknown, Some(0), "{v}");
            assert_eq!(o.complete, Some(true), "{v}");
        }
    }
}
