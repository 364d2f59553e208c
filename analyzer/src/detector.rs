//! The one interface every detector implements, and the sink that collects its races.
//!
//! A detector sees the trace as a stream: [`Detector::on_event`] once per event in
//! global order, then [`Detector::finish`]. Detectors that need the whole trace (cp)
//! buffer it themselves. Races are reported per dynamic variable as a pair of event
//! indices; the [`RaceSink`] keeps one representative pair per (variable, location pair),
//! and the report later folds variables into race signatures (DESIGN §5).

use jrace_trace::{Event, LocId, VarId};
use rustc_hash::FxHashMap as HashMap;

/// One racing pair: 0-based event indices in global order, `first < second`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RacePair {
    pub var: VarId,
    pub first: u64,
    pub second: u64,
    pub first_loc: LocId,
    pub second_loc: LocId,
}

/// (variable, low location, high location).
type PairKey = (VarId, LocId, LocId);
/// (first event, second event, first's location, second's location).
type Representative = (u64, u64, LocId, LocId);

/// Collects races, one representative per (variable, unordered location pair): the pair
/// with the earliest second event, then the earliest first event.
#[derive(Debug, Default)]
pub struct RaceSink {
    found: HashMap<PairKey, Representative>,
}

impl RaceSink {
    pub fn new() -> RaceSink {
        RaceSink::default()
    }

    /// Reports that the access at `a` (location `a_loc`) and the access at `b` (`b_loc`)
    /// to `var` race. Order of `a` and `b` does not matter.
    pub fn report(&mut self, var: VarId, a: u64, a_loc: LocId, b: u64, b_loc: LocId) {
        debug_assert_ne!(a, b);
        let v = if a < b {
            (a, b, a_loc, b_loc)
        } else {
            (b, a, b_loc, a_loc)
        };
        let key = (var, a_loc.min(b_loc), a_loc.max(b_loc));
        self.found
            .entry(key)
            .and_modify(|p| {
                if (v.1, v.0) < (p.1, p.0) {
                    *p = v
                }
            })
            .or_insert(v);
    }

    /// True if a race on `var` between these two locations was already reported.
    pub fn contains(&self, var: VarId, a_loc: LocId, b_loc: LocId) -> bool {
        self.found
            .contains_key(&(var, a_loc.min(b_loc), a_loc.max(b_loc)))
    }

    pub fn len(&self) -> usize {
        self.found.len()
    }
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// All pairs, sorted by (second, first).
    pub fn pairs(&self) -> Vec<RacePair> {
        let mut v: Vec<RacePair> = self
            .found
            .iter()
            .map(
                |(&(var, _, _), &(first, second, first_loc, second_loc))| RacePair {
                    var,
                    first,
                    second,
                    first_loc,
                    second_loc,
                },
            )
            .collect();
        v.sort_by_key(|p| (p.second, p.first, p.var));
        v
    }
}

/// What a detector says beyond its races.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Candidate pairs the detector could not decide (never reported as races).
    pub unknown: Option<u64>,
    /// Whether the detector proved it found every predictable race.
    pub complete: Option<bool>,
    /// True for detectors whose reports are warnings, not proven races (lockset).
    pub warnings_only: bool,
}

/// A race detector over jrace's event model.
pub trait Detector {
    /// The name used on the command line (`hb`, `shb`, ...).
    fn name(&self) -> &'static str;
    /// Called once per event, in global order; `idx` is the 0-based event index.
    fn on_event(&mut self, idx: u64, e: &Event, races: &mut RaceSink);
    /// Called with consecutive events starting at index `first_idx`; detectors override it
    /// to look ahead (prefetching), the default calls [`Detector::on_event`] for each.
    fn on_batch(&mut self, first_idx: u64, events: &[Event], races: &mut RaceSink) {
        for (k, e) in events.iter().enumerate() {
            self.on_event(first_idx + k as u64, e, races);
        }
    }
    /// Called once after the last event.
    fn finish(&mut self, races: &mut RaceSink) -> Outcome;
}
