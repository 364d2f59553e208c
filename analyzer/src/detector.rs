//! The one interface every detector implements, and the sink that collects its races.
//!
//! A detector sees the trace as a stream: [`Detector::on_event`] once per event in
//! global order, then [`Detector::finish`]. Detectors that need the whole trace (cp)
//! buffer it themselves. Races are reported per dynamic variable as a pair of event
//! indices; the [`RaceSink`] keeps one representative pair per (variable, location pair),
//! and the report later folds variables into race signatures (docs/REPORT.md).
//!
//! A detector that builds a schedule for a race (m2) hands it over with
//! [`RaceSink::report_with_schedule`]; the sink keeps it only while the pair is the
//! representative of its (variable, location pair). Schedules are never trusted: the
//! witness step ([`crate::witness`]) validates them like any other candidate. Detectors
//! that never call it (hb, shb, wcp, ...) pay nothing: [`RaceSink::report`] does not
//! look at schedules.

use jrace_trace::{Event, Kind, LocId, ThreadId, VarId};
use rustc_hash::FxHashMap as HashMap;

/// One racing pair: 0-based event indices in global order, `first < second`, with what
/// the report says of each access (location, thread, read or write), so that a report
/// needs no second pass over the trace to name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RacePair {
    pub var: VarId,
    pub first: u64,
    pub second: u64,
    pub first_loc: LocId,
    pub second_loc: LocId,
    pub first_thread: ThreadId,
    pub second_thread: ThreadId,
    pub first_write: bool,
    pub second_write: bool,
}

impl RacePair {
    /// The first access.
    pub fn first_access(&self) -> RaceAccess {
        RaceAccess {
            idx: self.first,
            loc: self.first_loc,
            thread: self.first_thread,
            write: self.first_write,
        }
    }
    /// The second access.
    pub fn second_access(&self) -> RaceAccess {
        RaceAccess {
            idx: self.second,
            loc: self.second_loc,
            thread: self.second_thread,
            write: self.second_write,
        }
    }
}

/// One access of a reported race: its 0-based event index, location, thread and whether
/// it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RaceAccess {
    pub idx: u64,
    pub loc: LocId,
    pub thread: ThreadId,
    pub write: bool,
}

impl RaceAccess {
    /// Access `e`, event `idx` of the trace.
    #[inline]
    pub fn of(idx: u64, e: &Event) -> RaceAccess {
        RaceAccess {
            idx,
            loc: e.loc,
            thread: e.thread,
            write: e.kind == Kind::Write,
        }
    }
}

/// (variable, low location, high location).
type PairKey = (VarId, LocId, LocId);
/// The first and second access, `first.idx < second.idx`.
type Representative = (RaceAccess, RaceAccess);

/// Collects races, one representative per (variable, unordered location pair): the pair
/// with the earliest second event, then the earliest first event.
#[derive(Debug, Default)]
pub struct RaceSink {
    found: HashMap<PairKey, Representative>,
    /// Detector-built schedules, tagged with the (first, second) pair they were built
    /// for; one whose pair is no longer the representative is stale and ignored.
    schedules: HashMap<PairKey, (u64, u64, Vec<u64>)>,
    /// Set when nobody will look at schedules: detectors may skip building them.
    no_schedules: bool,
}

/// A detector-built schedule for a reported pair: 0-based event indices in schedule
/// order, ending with the racing pair (either order). Unvalidated.
pub type Schedule = Vec<u64>;

impl RaceSink {
    pub fn new() -> RaceSink {
        RaceSink::default()
    }

    /// A sink that drops schedules ([`RaceSink::wants_schedules`] is false).
    pub fn without_schedules() -> RaceSink {
        RaceSink {
            no_schedules: true,
            ..RaceSink::default()
        }
    }

    /// Whether schedules passed to [`RaceSink::report_with_schedule`] are kept. Detectors
    /// whose schedules cost more than the race check itself build them only when true.
    pub fn wants_schedules(&self) -> bool {
        !self.no_schedules
    }

    /// Reports that accesses `a` and `b` to `var` race. Order of `a` and `b` does not
    /// matter. Returns whether this (variable, location pair) is new to the sink.
    #[inline]
    pub fn report(&mut self, var: VarId, a: RaceAccess, b: RaceAccess) -> bool {
        debug_assert_ne!(a.idx, b.idx);
        let v = if a.idx < b.idx { (a, b) } else { (b, a) };
        let key = (var, a.loc.min(b.loc), a.loc.max(b.loc));
        match self.found.entry(key) {
            std::collections::hash_map::Entry::Occupied(mut o) => {
                let p = o.get_mut();
                if (v.1.idx, v.0.idx) < (p.1.idx, p.0.idx) {
                    *p = v
                }
                false
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(v);
                true
            }
        }
    }

    /// Like [`RaceSink::report`], with a schedule the detector built for this pair: event
    /// indices (0-based) in schedule order, ending with `a` and `b` (either order), meant
    /// to be a witness (docs/REPORT.md#witnesses). Kept while this pair is the
    /// representative of its (variable, location pair); the witness step validates it
    /// before using it.
    pub fn report_with_schedule(
        &mut self,
        var: VarId,
        a: RaceAccess,
        b: RaceAccess,
        schedule: Schedule,
    ) {
        self.report(var, a, b);
        if self.no_schedules {
            return;
        }
        let key = (var, a.loc.min(b.loc), a.loc.max(b.loc));
        let (first, second) = (a.idx.min(b.idx), a.idx.max(b.idx));
        if self
            .found
            .get(&key)
            .is_some_and(|p| (p.0.idx, p.1.idx) == (first, second))
        {
            self.schedules.insert(key, (first, second, schedule));
        }
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
            .map(|(&(var, _, _), &(a, b))| RacePair {
                var,
                first: a.idx,
                second: b.idx,
                first_loc: a.loc,
                second_loc: b.loc,
                first_thread: a.thread,
                second_thread: b.thread,
                first_write: a.write,
                second_write: b.write,
            })
            .collect();
        v.sort_by_key(|p| (p.second, p.first, p.var));
        v
    }
}

impl RaceSink {
    /// The schedules attached to current representatives, by (first, second).
    pub fn schedules(&self) -> HashMap<(u64, u64), Schedule> {
        self.schedules
            .iter()
            .filter(|(key, (first, second, _))| {
                self.found
                    .get(key)
                    .is_some_and(|p| (p.0.idx, p.1.idx) == (*first, *second))
            })
            .map(|(_, (first, second, s))| ((*first, *second), s.clone()))
            .collect()
    }

    /// Like [`RaceSink::schedules`], moving them out of the sink.
    pub fn take_schedules(&mut self) -> HashMap<(u64, u64), Schedule> {
        let found = &self.found;
        std::mem::take(&mut self.schedules)
            .into_iter()
            .filter(|(key, (first, second, _))| {
                found
                    .get(key)
                    .is_some_and(|p| (p.0.idx, p.1.idx) == (*first, *second))
            })
            .map(|(_, (first, second, s))| ((first, second), s))
            .collect()
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
    /// Something the user should know about this run (e.g. lockset variables it stopped
    /// checking after a flood of warnings).
    pub note: Option<String>,
    /// Predicted deadlocks, from the `deadlock` detector ([`crate::deadlock`]).
    pub deadlocks: Vec<crate::deadlock::Deadlock>,
}

/// Where a detector with a long [`Detector::finish`] (the solver detectors) says how far
/// it is: a progress bar on a terminal, nothing elsewhere.
pub trait Progress: Send + Sync {
    /// `done` of `total` units (e.g. windows) of `detector`'s work, with a short status
    /// (e.g. queries, races and unknowns so far).
    fn update(&self, detector: &str, done: u64, total: u64, status: &str);
}

/// A race detector over jrace's event model.
pub trait Detector: Send {
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
    /// Called once after the last event and before [`Detector::finish`], with the
    /// trace's names (complete by then). Detectors that decide each race signature once
    /// (mcm, said: `Symbols::var_static`) keep what they need; the default ignores it.
    fn set_symbols(&mut self, _symbols: &jrace_trace::Symbols) {}
    /// Called once after the last event and before [`Detector::finish`]: whether the
    /// trace's branches are every control decision of the run
    /// ([`jrace_trace::EventSource::branches_complete`]). The detectors whose model uses
    /// branches (mcm, said, rdit, deadlock) keep it; the default ignores it.
    fn set_branches_complete(&mut self, _complete: bool) {}
    /// Called once after the last event.
    fn finish(&mut self, races: &mut RaceSink) -> Outcome;
    /// Where to report progress during [`Detector::finish`]; the default ignores it.
    fn set_progress(&mut self, _progress: std::sync::Arc<dyn Progress>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A schedule is kept only while its pair is the representative.
    fn at(idx: u64, loc: LocId) -> RaceAccess {
        RaceAccess {
            idx,
            loc,
            thread: loc,
            write: true,
        }
    }

    #[test]
    fn schedules_follow_the_representative() {
        let mut s = RaceSink::new();
        s.report_with_schedule(0, at(5, 1), at(9, 2), vec![5, 9]);
        assert_eq!(s.schedules().get(&(5, 9)), Some(&vec![5, 9]));
        // A later pair of the same (variable, location pair) is not kept.
        s.report_with_schedule(0, at(6, 1), at(10, 2), vec![6, 10]);
        assert_eq!(s.schedules().len(), 1);
        // An earlier plain report takes over: the schedule is stale.
        s.report(0, at(3, 1), at(8, 2));
        assert!(s.schedules().is_empty());
        // An earlier pair with a schedule takes over again (arguments in either order).
        s.report_with_schedule(0, at(7, 2), at(2, 1), vec![2, 7]);
        let mut taken = s.take_schedules();
        assert_eq!(taken.remove(&(2, 7)), Some(vec![2, 7]));
        assert!(taken.is_empty());
        let mut n = RaceSink::without_schedules();
        assert!(!n.wants_schedules());
        n.report_with_schedule(0, at(5, 1), at(9, 2), vec![5, 9]);
        assert_eq!(n.len(), 1);
        assert!(n.schedules().is_empty());
    }
}
