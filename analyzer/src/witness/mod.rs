//! Race witnesses: schedules that run the two racing accesses back to back, built from
//! the recorded trace and checked by a validator before anyone sees them
//! (docs/DETECTORS.md#witnesses, docs/REPORT.md#witnesses).
//!
//! A **witness** for a race `(first, second)` is a sequence of event indices `W′·a·b`
//! where `{a, b} = {first, second}` and `W′` is a *correct reordering* of part of the
//! trace after which both racing accesses are the next events of their threads. The
//! notion of correct reordering is exactly the one of the brute-force oracle
//! ([`crate::oracle`]), so a validated witness is always a predictable race:
//!
//! | rule | check |
//! |---|---|
//! | `W-FORMAT` | indices in range, no duplicates, at least two entries |
//! | `W-RACE` | the last two entries are plain accesses to one variable by different threads, at least one a write (and, when asked, exactly the requested pair) |
//! | `W-PO` | each event is the next unscheduled event of its thread (every thread runs a prefix of its program order) |
//! | `W-FORK` | a forked thread's first event comes after its `fork` |
//! | `W-JOIN` | `join(u)` comes after every event of `u` in the trace |
//! | `W-LOCK` | an outermost `acquire` or a `wake` needs the lock free; `release`, `wait`, `notify` need it held by their thread; re-entrant inner acquires and releases ([`jrace_trace::FLAG_NESTED`]) need the thread to hold it and change nothing |
//! | `W-NOTIFY` | a `wake` comes after the notify it was matched with in the trace ([`crate::sync`]); a notify comes after the `wait` of every wake matched with it |
//! | `W-RF` | every read, plain or volatile, except a racing read at the end, reads from the same write (or the initial value) as in the trace: the last earlier write to its variable in the trace (docs/DETECTORS.md#reads-from) |
//! | `W-ATOMIC` | a read-modify-write (a volatile read and the volatile write of the same variable right after it in its thread: a compare-and-set, `getAndAdd`, ...) is atomic: no other thread writes the variable, or starts a read-modify-write of it, between its read and its write ([`Facts::rmw_write`]) |
//!
//! This is the "rf" model. Values are never used.
//!
//! The value-based models ([`Model`]) serve the solver detectors: in **value** (said) every
//! read before the pair returns its recorded value (`W-VAL`); in **cf** (mcm) a read may
//! return another value, which *taints* its thread, and a tainted thread may not run a
//! `br`, `enter` or `exit` (`W-CF`); writes of a tainted thread carry unknown values. In a
//! trace without branches (conservative mode) every read may decide what its thread does
//! next, its ending too: a tainted thread runs nothing more, and a `join` of it may not
//! run. A
//! read returns its recorded value when it reads from its recorded writer, itself concrete,
//! or when the value it reads equals the recorded one ([`value_keys`]: values as recorded,
//! or per-write tokens in traces without values; a variable starts with the value its first
//! access read, unknown when that access is a write). In both value models a notify need
//! not wait for the `wait` of a wake matched with it: it then notifies nobody, and that
//! wake may not run later (lost notification).
//!
//! **Construction** ([`Witnesser`]), for any reported pair, tries in order and keeps the
//! first schedule the validator accepts:
//!
//! 0. *Detector-built*: a schedule the detector attached to the pair
//!    ([`crate::RaceSink::report_with_schedule`], [`crate::engine::DetectorRun::schedules`]);
//!    m2 attaches the witness behind each of its reports. It goes through the same
//!    validator: a wrong one is discarded, never shown.
//! 1. *SHB closure*: the events that happen (SHB: hb plus reads-from) before either
//!    access, not counting the racing reads' own reads-from edges, in trace order,
//!    then the two accesses. This is the witness behind SHB's soundness theorem and
//!    is valid for every pair SHB leaves unordered; for other pairs it may be invalid,
//!    which the validator catches.
//! 2. *Greedy prefix extension* (after Shacham, Sagiv, Schuster's Fig. 8): the trace up to
//!    the first access, then the events up to the second access in trace order, skipping
//!    every event of a *frozen* thread; the first access's thread starts frozen, and a
//!    thread freezes at its first event that the validator's rules do not allow yet (a read
//!    whose writer was skipped, an acquire of a lock a frozen thread holds, a join of a
//!    frozen thread, a wake whose notify was skipped, ...).
//! 3. *Greedy with retreat*: the same, with the first access's thread frozen earlier, at
//!    the acquire of a lock it holds at the access (nearest first), and caught up just
//!    before the race.
//!
//! Nothing guarantees that a race found by hb, wcp, cp or lockset has a witness (and
//! lockset's often have none); shb's always do (SHB closure), and m2's always do (its own
//! schedule), which [`witness_analysis`] checks.
//!
//! **Presentation.** The witness kept is put in canonical form ([`Facts::canonical`]: the
//! order of dependent events kept, the earliest recorded event first, so it follows the
//! recording as long as it can) and, for `jrace witness --minimize`, cut down to the
//! events the race needs ([`Facts::minimize`]); both results are validated again and
//! dropped for the witness as found if they fail. On traces with calls into excluded
//! code, races of the detectors that model them ([`crate::registry::barrier_aware`]) get witnesses that
//! keep the BarrierPair order (`W-BARRIER` required), and canonical form and
//! minimization keep that order in every witness.

//! **Files.** This module has the validator (the trace's facts and the value keys the
//! value models compare are [`crate::facts`]'s); `sim` the state a schedule is run in; `shape` canonical form and
//! minimization; `construct` the candidates and the witness step of the pipeline.

use crate::engine::{Analysis, SigKey};
use crate::hb::HbClocks;
use crate::vc::VectorClock;
use crate::RacePair;
use jrace_trace::{Kind, ThreadId, Trace};
use std::collections::{BTreeSet, HashMap};
use std::fmt;

mod construct;
mod shape;
mod sim;

pub use crate::facts::values::*;
pub use crate::facts::Facts;
use crate::facts::NONE;
pub use construct::*;
use sim::Sim;

/// [`Facts::canonical`] leaves a witness as found when more than this many of its events
/// would have to be reordered: canonicalizing and validating again costs time linear in
/// the whole schedule, per race, and such witnesses (m2's on long traces) are shown with
/// their long prefix elided anyway.
pub const CANONICAL_MAX_REORDER: usize = 100_000;

// Which detectors' every race must carry a validated witness (docs/REPORT.md#witnesses:
// shb's come from the SHB closure, m2's, mcm's, said's and rdit's from the schedules they
// attach) and which model calls into excluded code (their races' witnesses keep the
// BarrierPair order): crate::registry.

/// The feasibility model a schedule is checked in (docs/DETECTORS.md#witnesses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Model {
    /// Every read reads from its recorded writer (`W-RF`).
    Rf,
    /// Every read returns its recorded value (`W-VAL`): said's witnesses.
    Value,
    /// Reads may change; a thread whose read changed runs no branch (`W-CF`), and in a
    /// trace without branches nothing more, nor is it joined: mcm's.
    Cf,
}

/// The model a detector's own schedules are checked in.
pub fn model_for(detector: &str) -> Model {
    match detector {
        "mcm" | "rdit" => Model::Cf,
        "said" => Model::Value,
        _ => Model::Rf,
    }
}

/// Which validation rule a schedule breaks (the table above).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    Format,
    Race,
    Po,
    Fork,
    Join,
    Lock,
    Notify,
    Rf,
    Val,
    Cf,
    Barrier,
    Atomic,
}

impl Rule {
    pub fn code(self) -> &'static str {
        match self {
            Rule::Format => "W-FORMAT",
            Rule::Race => "W-RACE",
            Rule::Po => "W-PO",
            Rule::Fork => "W-FORK",
            Rule::Join => "W-JOIN",
            Rule::Lock => "W-LOCK",
            Rule::Notify => "W-NOTIFY",
            Rule::Rf => "W-RF",
            Rule::Val => "W-VAL",
            Rule::Cf => "W-CF",
            Rule::Barrier => "W-BARRIER",
            Rule::Atomic => "W-ATOMIC",
        }
    }
}

/// Why a schedule is not a witness: the first rule it breaks and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WitnessError {
    pub rule: Rule,
    /// 1-based position in the schedule (0 when the schedule as a whole is wrong).
    pub step: usize,
    /// 0-based index of the event at that step, when there is one.
    pub event: Option<usize>,
    pub reason: String,
}

impl fmt::Display for WitnessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.rule.code())?;
        if self.step > 0 {
            write!(f, " at step {}", self.step)?;
        }
        if let Some(e) = self.event {
            write!(f, " (event {})", e + 1)?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for WitnessError {}

impl<'a> Facts<'a> {
    /// Checks a full witness: a correct reordering ending with two racing accesses.
    pub fn validate(&self, schedule: &[usize]) -> Result<(), WitnessError> {
        self.check_race_shape(schedule)?;
        self.walk(schedule, true)
    }

    /// Like [`Facts::validate`], and the last two entries must be `first` and `second`
    /// (in either order).
    pub fn validate_race(
        &self,
        first: usize,
        second: usize,
        schedule: &[usize],
    ) -> Result<(), WitnessError> {
        self.check_race_shape(schedule)?;
        let k = schedule.len();
        let (x, y) = (schedule[k - 2], schedule[k - 1]);
        ends_with_pair(k, (x, y), (first, second))?;
        self.walk(schedule, true)
    }

    /// Like [`Facts::validate_race`], in the given feasibility model.
    pub fn validate_race_model(
        &self,
        model: Model,
        first: usize,
        second: usize,
        schedule: &[usize],
    ) -> Result<(), WitnessError> {
        let start = self.checkpoint(model, 0);
        self.validate_race_from(&start, first, second, schedule)
    }

    /// The state after the first `len` events of the trace ran as recorded, from which
    /// [`Facts::validate_race_from`] checks the rest of a schedule.
    pub fn checkpoint(&self, model: Model, len: usize) -> Checkpoint {
        let mut c = Checkpoint {
            sim: Sim::with_model(self, model),
            len: 0,
        };
        self.advance(&mut c, len);
        c
    }

    /// Moves a checkpoint forward to the first `len` events (never backward).
    pub fn advance(&self, c: &mut Checkpoint, len: usize) {
        let len = len.min(self.trace.events.len());
        while c.len < len {
            c.sim.apply(self, c.len);
            c.len += 1;
        }
    }

    /// Checks the witness `0..c.len` (as recorded) followed by `tail`, ending with the
    /// race `(first, second)` in either order, in the checkpoint's model. Steps in errors
    /// count from the start of the whole schedule.
    pub fn validate_race_from(
        &self,
        c: &Checkpoint,
        first: usize,
        second: usize,
        tail: &[usize],
    ) -> Result<(), WitnessError> {
        let off = c.len;
        let shift = |mut e: WitnessError| {
            if e.step > 0 {
                e.step += off;
            }
            e
        };
        let k = tail.len();
        if k < 2 || tail[k - 2..].iter().any(|&i| i < off) {
            return Err(WitnessError {
                rule: Rule::Format,
                step: 0,
                event: None,
                reason: "the racing events must follow the recorded prefix".to_owned(),
            });
        }
        self.check_race_shape(tail).map_err(shift)?;
        let (x, y) = (tail[k - 2], tail[k - 1]);
        ends_with_pair(k, (x, y), (first, second)).map_err(shift)?;
        let n = self.trace.events.len();
        let mut sim = c.sim.clone();
        for (s, &i) in tail.iter().enumerate() {
            if i >= n {
                return Err(out_of_range(off + s + 1, i, n));
            }
            let exempt = s + 2 >= k;
            sim.check(self, i, exempt)
                .map_err(|(rule, reason)| WitnessError {
                    rule,
                    step: off + s + 1,
                    event: Some(i),
                    reason,
                })?;
            sim.apply(self, i);
        }
        Ok(())
    }

    /// A witness for the race `(first, second)` (`first` recorded earlier) found without a
    /// solver: the recorded order from the checkpoint up to `second`, with `first`'s thread
    /// held back at `first` and every thread stopped at its first event that cannot run
    /// then (it needed what the held-back thread did later, or a read changed before a
    /// branch), then the pair. `None` when `second`'s thread would be stopped, or the
    /// schedule does not validate. Most predictable races in real traces are this one
    /// move away from the recorded run (an access delayed past another thread's unrelated
    /// work); a solver can spend its whole timeout finding the same schedule among
    /// hundreds of lock sections.
    ///
    /// `conservative`: the trace does not record branches, so every read guards what its
    /// thread does next and must keep its recorded value (else the model's own rule for a
    /// read that changed applies: its thread may go on until its next branch).
    pub fn delayed_race(
        &self,
        c: &Checkpoint,
        first: usize,
        second: usize,
        conservative: bool,
    ) -> Option<Vec<usize>> {
        if first >= second
            || second >= self.trace.events.len()
            || first < c.len
            || self.tix[first] == self.tix[second]
        {
            return None;
        }
        thread_local! {
            static SCRATCH: std::cell::RefCell<Option<Sim>> = const { std::cell::RefCell::new(None) };
        }
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            let sim = match s.as_mut() {
                Some(sim) => {
                    sim.copy_from(&c.sim);
                    sim
                }
                None => s.insert(c.sim.clone()),
            };
            self.delay_in(sim, c, first, second, conservative)
        })
    }

    fn delay_in(
        &self,
        sim: &mut Sim,
        c: &Checkpoint,
        first: usize,
        second: usize,
        conservative: bool,
    ) -> Option<Vec<usize>> {
        let (tf, ts) = (self.tix[first] as usize, self.tix[second] as usize);
        let mut stopped = vec![false; self.threads.len()];
        let mut tail = Vec::new();
        for i in c.len..second {
            let t = self.tix[i] as usize;
            if stopped[t] {
                continue;
            }
            let changed = conservative
                && matches!(self.ev(i).kind, Kind::Read | Kind::VRead)
                && sim.model() != Model::Rf
                && !sim.concrete_read(self, i);
            if (t == tf && i >= first) || changed || sim.check(self, i, false).is_err() {
                if t == ts {
                    return None;
                }
                stopped[t] = true;
                continue;
            }
            sim.apply(self, i);
            tail.push(i);
        }
        // The pair, as validate_race_from runs it (racing reads exempt).
        self.check_race_shape(&[first, second]).ok()?;
        sim.check(self, first, true).ok()?;
        sim.apply(self, first);
        sim.check(self, second, true).ok()?;
        tail.push(first);
        tail.push(second);
        // Only what the pair needs, as a solver's cut would be: a shorter schedule for
        // `jrace replay` to hold threads to. The whole one when the cut does not validate.
        let cut = self.needed_by_pair(&tail);
        if cut.len() < tail.len() && self.validate_race_from(c, first, second, &cut).is_ok() {
            return Some(cut);
        }
        Some(tail)
    }

    /// The events of `schedule` (ending with a racing pair) that the pair needs: per
    /// thread a prefix, closed under what each kept event needs to run as it does in the
    /// schedule (a read its writer, an acquire or wake the release before it, a notify
    /// its wake, a begin its fork, a join the joined thread's last event or, if it has
    /// none, its fork).
    fn needed_by_pair(&self, schedule: &[usize]) -> Vec<usize> {
        let n = schedule.len();
        let nt = self.threads.len();
        // Per schedule position: the position it depends on.
        let mut dep = vec![usize::MAX; n];
        let mut last_write: HashMap<u32, usize> = HashMap::default();
        let mut last_release: HashMap<u32, usize> = HashMap::default();
        let mut fork_of: HashMap<ThreadId, usize> = HashMap::default();
        let mut pos_of: HashMap<usize, usize> = HashMap::default();
        for (p, &i) in schedule.iter().enumerate() {
            let e = self.ev(i);
            pos_of.insert(i, p);
            let d = match e.kind {
                Kind::Read | Kind::VRead => last_write.get(&e.target).copied(),
                Kind::Write | Kind::VWrite => {
                    last_write.insert(e.target, p);
                    None
                }
                Kind::Acquire => last_release.get(&e.target).copied(),
                Kind::Release | Kind::Wait => {
                    last_release.insert(e.target, p);
                    None
                }
                // A wake needs its notify and the monitor's last release: the later of
                // the two is kept (usually the notifier's release, whose thread prefix
                // brings the notify); a cut that misses the other fails validation, and
                // the whole schedule is used.
                Kind::Wake => {
                    let notify = self
                        .wake_notify(i as u32)
                        .and_then(|k| pos_of.get(&(k as usize)).copied());
                    last_release.get(&e.target).copied().max(notify)
                }
                Kind::Fork => {
                    fork_of.insert(e.target, p);
                    None
                }
                Kind::Begin => fork_of.get(&e.thread).copied(),
                Kind::Join => self
                    .join_after(e.target)
                    .and_then(|k| pos_of.get(&(k as usize)).copied()),
                _ => None,
            };
            dep[p] = d.unwrap_or(usize::MAX);
        }
        let mut by_thread: Vec<Vec<usize>> = vec![Vec::new(); nt];
        for (p, &i) in schedule.iter().enumerate() {
            by_thread[self.tix[i] as usize].push(p);
        }
        let mut kept = vec![0usize; nt];
        let mut keep = vec![false; n];
        let mut todo = vec![n - 2, n - 1];
        while let Some(p) = todo.pop() {
            let t = self.tix[schedule[p]] as usize;
            let list = &by_thread[t];
            let upto = list.partition_point(|&q| q <= p);
            while kept[t] < upto {
                let q = list[kept[t]];
                kept[t] += 1;
                keep[q] = true;
                if dep[q] != usize::MAX && !keep[dep[q]] {
                    todo.push(dep[q]);
                }
            }
        }
        schedule
            .iter()
            .zip(&keep)
            .filter(|&(_, &k)| k)
            .map(|(&i, _)| i)
            .collect()
    }

    /// Checks a schedule that is only a correct reordering (no race at its end).
    pub fn validate_prefix(&self, schedule: &[usize]) -> Result<(), WitnessError> {
        self.walk(schedule, false)
    }

    /// Like [`Facts::validate_prefix`], in the given feasibility model; returns where the
    /// schedule leaves the threads and locks.
    pub fn validate_prefix_model(
        &self,
        model: Model,
        schedule: &[usize],
    ) -> Result<PrefixEnd, WitnessError> {
        self.validate_prefix_with(Sim::with_model(self, model), schedule)
    }

    fn validate_prefix_with(
        &self,
        sim: Sim,
        schedule: &[usize],
    ) -> Result<PrefixEnd, WitnessError> {
        let sim = self.walk_with(sim, schedule, false)?;
        Ok(PrefixEnd {
            ran: sim.pos().to_vec(),
            owner: sim.owners().to_vec(),
        })
    }

    fn check_race_shape(&self, schedule: &[usize]) -> Result<(), WitnessError> {
        let k = schedule.len();
        let n = self.trace.events.len();
        if k < 2 {
            return Err(WitnessError {
                rule: Rule::Format,
                step: 0,
                event: None,
                reason: format!("a witness has at least two entries, this one has {k}"),
            });
        }
        for (s, &i) in schedule[k - 2..].iter().enumerate() {
            if i >= n {
                return Err(out_of_range(k - 1 + s, i, n));
            }
        }
        let (x, y) = (schedule[k - 2], schedule[k - 1]);
        let (ex, ey) = (self.ev(x), self.ev(y));
        let bad = if !ex.kind.is_plain_access() || !ey.kind.is_plain_access() {
            Some("both must be plain reads or writes")
        } else if ex.target != ey.target {
            Some("they access different variables")
        } else if ex.thread == ey.thread {
            Some("they belong to the same thread")
        } else if ex.kind != Kind::Write && ey.kind != Kind::Write {
            Some("neither is a write")
        } else {
            None
        };
        match bad {
            Some(why) => Err(WitnessError {
                rule: Rule::Race,
                step: k - 1,
                event: Some(x),
                reason: format!(
                    "the last two entries, {} and {}, are not a race: {why}",
                    self.describe(x),
                    self.describe(y)
                ),
            }),
            None => Ok(()),
        }
    }

    fn walk(&self, schedule: &[usize], race: bool) -> Result<(), WitnessError> {
        self.walk_with(Sim::new(self), schedule, race).map(|_| ())
    }

    fn walk_with(&self, mut sim: Sim, schedule: &[usize], race: bool) -> Result<Sim, WitnessError> {
        let n = self.trace.events.len();
        let k = schedule.len();
        for (s, &i) in schedule.iter().enumerate() {
            if i >= n {
                return Err(out_of_range(s + 1, i, n));
            }
            let exempt = race && s + 2 >= k;
            sim.check(self, i, exempt)
                .map_err(|(rule, reason)| WitnessError {
                    rule,
                    step: s + 1,
                    event: Some(i),
                    reason,
                })?;
            sim.apply(self, i);
        }
        Ok(sim)
    }
}

/// Where a validated prefix leaves the trace ([`Facts::validate_prefix_model`]).
#[derive(Clone, Debug)]
pub struct PrefixEnd {
    /// Per dense thread ([`Facts::dense_thread`]): how many of its events ran.
    pub ran: Vec<u32>,
    /// Per lock: the dense thread holding it, or `u32::MAX`.
    pub owner: Vec<u32>,
}

/// `W-RACE` for a requested pair: a schedule of `k` steps ending with `(x, y)` must end
/// with the race's events `(first, second)`, in either order.
fn ends_with_pair(
    k: usize,
    (x, y): (usize, usize),
    (first, second): (usize, usize),
) -> Result<(), WitnessError> {
    if (x == first && y == second) || (x == second && y == first) {
        return Ok(());
    }
    Err(WitnessError {
        rule: Rule::Race,
        step: k - 1,
        event: Some(x),
        reason: format!(
            "the schedule ends with events {} and {}, not with the race's events {} and {}",
            x + 1,
            y + 1,
            first + 1,
            second + 1
        ),
    })
}

fn out_of_range(step: usize, i: usize, n: usize) -> WitnessError {
    WitnessError {
        rule: Rule::Format,
        step,
        event: None,
        reason: format!("event {} does not exist (the trace has {n} events)", i + 1),
    }
}

/// A schedule's state after a recorded prefix of the trace ([`Facts::checkpoint`]).
#[derive(Clone)]
pub struct Checkpoint {
    sim: Sim,
    len: usize,
}

impl Checkpoint {
    /// How many recorded events it has run.
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Checks `schedule` (0-based event indices) as a witness of a race in `trace`.
pub fn validate(trace: &Trace, schedule: &[usize]) -> Result<(), WitnessError> {
    Facts::new(trace).validate(schedule)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Trace {
        jrace_trace::std_format::parse_str(text, "t.std").unwrap()
    }

    /// 1-based ids, as event numbers in reports.
    fn ids(v: &[usize]) -> Vec<usize> {
        v.iter().map(|i| i - 1).collect()
    }

    const TV1: &str = "T1|acq(KeyLock)|Worker.java:1\nT1|r(numDelItr,0)|Worker.java:2\nT1|rel(KeyLock)|Worker.java:4\nT2|acq(KeyLock)|Worker.java:1\nT2|r(numDelItr,0)|Worker.java:2\nT2|rel(KeyLock)|Worker.java:4\nT1|acq(NumLock)|Worker.java:6\nT1|w(NumDeleted,1)|Worker.java:9\nT1|rel(NumLock)|Worker.java:11\nT1|acq(DelLock)|Worker.java:13\nT1|r(numDelItr,0)|Worker.java:14\nT1|w(numDelItr,1)|Worker.java:14\nT1|rel(DelLock)|Worker.java:15\n";

    const TV2: &str = "main|w(cfg,1)|Main.java:3\nmain|fork(W1)|Main.java:4\nmain|w(cfg,2)|Main.java:5\nmain|fork(W2)|Main.java:6\nW2|begin|Helper.java:1\nW2|w(log,1)|Helper.java:2\nW2|end|Helper.java:3\nW1|begin|Worker.java:10\nW1|r(cfg,2)|Worker.java:11\nW1|w(result,7)|Worker.java:12\nW1|end|Worker.java:13\nmain|join(W1)|Main.java:7\nmain|r(result,7)|Main.java:8\n";

    const TV3: &str = "C|acq(m)|Cons.java:20\nC|r(ready,0)|Cons.java:21\nC|br|Cons.java:21\nC|wait(m)|Cons.java:22\nP|acq(m)|Prod.java:11\nP|w(ready,1)|Prod.java:12\nP|notify(m)|Prod.java:13\nP|rel(m)|Prod.java:14\nP|w(count,1)|Prod.java:15\nC|wake(m)|Cons.java:22\nC|r(ready,1)|Cons.java:21\nC|br|Cons.java:21\nC|rel(m)|Cons.java:24\nC|r(count,1)|Cons.java:25\n";

    const TV4: &str = "A|acq(m)|Cache.java:20\nA|acq(m)|Cache.java:31\nA|w(size,1)|Cache.java:32\nA|rel(m)|Cache.java:33\nA|vw(ver,1)|Cache.java:21\nA|w(hits,1)|Cache.java:22\nA|rel(m)|Cache.java:23\nC|acq(m)|Stats.java:50\nC|r(size,1)|Stats.java:51\nC|rel(m)|Stats.java:52\nB|vr(ver,1)|Reader.java:40\nB|br|Reader.java:40\nB|r(hits,1)|Reader.java:41\n";

    const TV5: &str = "t1|fork(t2)|1\nt1|acq(l)|2\nt1|w(x,1)|3\nt1|w(y,1)|4\nt1|rel(l)|5\nt2|begin|6\nt2|acq(l)|7\nt2|r(y,1)|8\nt2|rel(l)|9\nt2|r(x,1)|10\nt2|br|11\nt2|w(z,1)|12\nt2|end|13\nt1|join(t2)|14\nt1|r(z,1)|15\nt1|br|16\n";

    const TV7: &str = "t1|w(x,1)|Writer.java:5\nt1|w(y,1)|Writer.java:6\nt3|acq(l)|Starter.java:10\nt3|fork(t2)|Starter.java:11\nt3|r(y,1)|Starter.java:12\nt3|br|Starter.java:12\nt3|rel(l)|Starter.java:15\nt2|begin|Reader.java:20\nt2|acq(l)|Reader.java:21\nt2|rel(l)|Reader.java:21\nt2|r(x,1)|Reader.java:22\n";

    fn fails(text: &str, sched: &[usize], rule: Rule, step: usize) {
        let t = parse(text);
        let err = validate(&t, &ids(sched)).expect_err("must be rejected");
        assert_eq!((err.rule, err.step), (rule, step), "{err}");
    }

    #[test]
    fn notes_witnesses_validate() {
        for (text, sched) in [
            (TV1, &[1, 2, 3, 4, 7, 8, 9, 10, 11, 5, 12][..]),
            (TV1, &[1, 2, 3, 7, 8, 9, 10, 11, 4, 5, 12]),
            (TV2, &[1, 2, 8, 3, 9]),
            (TV3, &[1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 9, 14]),
            (TV4, &[1, 2, 3, 4, 5, 11, 12, 6, 13]),
            (TV7, &[1, 3, 4, 2, 5]),
        ] {
            let t = parse(text);
            validate(&t, &ids(sched)).unwrap_or_else(|e| panic!("{e}\n{text}"));
        }
    }

    #[test]
    fn notes_invalid_witnesses_fail_at_the_stated_step() {
        fails(
            TV3,
            &[1, 2, 3, 4, 10, 11, 12, 13, 5, 6, 7, 8, 9, 14],
            Rule::Notify,
            5,
        );
        fails(
            TV5,
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 12, 15],
            Rule::Join,
            12,
        );
        fails(
            TV5,
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15],
            Rule::Po,
            13,
        );
        fails(
            TV4,
            &[1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 6, 13],
            Rule::Lock,
            6,
        );
        fails(TV5, &[1, 6, 7, 8, 9, 2, 3, 10], Rule::Rf, 4);
        fails(TV2, &[1, 8, 2, 3, 9], Rule::Fork, 2);
        fails(TV2, &[1, 2, 8, 9], Rule::Race, 3);
        fails(TV2, &[1, 2, 8, 3, 3, 9], Rule::Format, 5);
        fails(TV2, &[9], Rule::Format, 0);
    }

    /// hb's representative (1, 4) of signature x:(A,B) has no witness (t2's read of y
    /// needs t1's write of x first); shb's pair (4, 5) of the same signature has one, and
    /// becomes the race's representative.
    #[test]
    fn representative_moves_to_a_witnessed_pair() {
        let t = parse("t1|w(x)|A\nt1|w(y)|C\nt2|r(y)|D\nt2|r(x)|B\nt1|w(x)|A\n");
        let ds: Vec<Box<dyn crate::Detector>> = ["hb", "shb"]
            .iter()
            .map(|n| crate::make_detector(n).unwrap())
            .collect();
        let mut a =
            crate::engine::run(&mut jrace_trace::MemSource::new(&t), ds, &mut |_| {}).unwrap();
        let x = a
            .races
            .iter()
            .position(|r| t.symbols.static_name(r.pair.var) == "x")
            .unwrap();
        assert_eq!((a.races[x].pair.first, a.races[x].pair.second), (0, 3));
        let id = a.races[x].id;
        let rw = witness_analysis(&t, &mut a);
        assert!(rw.missing.is_empty());
        assert_eq!((a.races[x].pair.first, a.races[x].pair.second), (3, 4));
        assert_eq!(a.races[x].id, id);
        let w = rw.witnesses[x].as_ref().unwrap();
        assert_eq!(w.schedule, vec![0, 1, 2, 3, 4]);
        validate(&t, &w.schedule).unwrap();
    }

    #[test]
    fn every_trace_prefix_validates() {
        for text in [TV1, TV2, TV3, TV4, TV5, TV7] {
            let t = parse(text);
            let f = Facts::new(&t);
            for k in 0..=t.events.len() {
                let s: Vec<usize> = (0..k).collect();
                f.validate_prefix(&s)
                    .unwrap_or_else(|e| panic!("{e}\n{text}"));
            }
        }
    }

    #[test]
    fn constructions_find_the_notes_witnesses() {
        for (text, a, b, method) in [
            (TV1, 5, 12, None),
            (TV2, 3, 9, None),
            (TV3, 9, 14, None),
            (TV4, 6, 13, None),
            (TV7, 2, 5, None),
            // Only greedy with retreat: t1 holds l at the write, t2 needs it.
            (
                "t1|acq(l)|1\nt1|w(x)|2\nt1|rel(l)|3\nt2|acq(l)|4\nt2|rel(l)|5\nt2|w(x)|6\n",
                2,
                6,
                Some(Method::GreedyRetreat),
            ),
        ] {
            let t = parse(text);
            let w = Witnesser::new(&t, [(a - 1, b - 1)]);
            let wit = w
                .witness(a - 1, b - 1)
                .unwrap_or_else(|| panic!("no witness for ({a},{b})\n{text}"));
            if let Some(m) = method {
                assert_eq!(wit.method, m);
            }
            validate(&t, &wit.schedule).unwrap();
        }
        // Not races: TV2 (10, 13) is join-ordered, TV7 (1, 11) needs a changed read.
        for (text, a, b) in [(TV2, 10, 13), (TV7, 1, 11), (TV5, 12, 15)] {
            let t = parse(text);
            let w = Witnesser::new(&t, [(a - 1, b - 1)]);
            assert_eq!(w.witness(a - 1, b - 1), None, "({a},{b})\n{text}");
        }
    }
}
