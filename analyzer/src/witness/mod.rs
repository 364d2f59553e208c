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
//!
//! This is the "rf" model. Values are never used.
//!
//! The value-based models ([`Model`]) serve the solver detectors: in **value** (said) every
//! read before the pair returns its recorded value (`W-VAL`); in **cf** (mcm) a read may
//! return another value, which *taints* its thread, and a tainted thread may not run a
//! `br`, `enter` or `exit` (`W-CF`); writes of a tainted thread carry unknown values. A
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

use crate::engine::{Analysis, SigKey};
use crate::hb::HbClocks;
use crate::sync::NotifyMatcher;
use crate::vc::VectorClock;
use crate::RacePair;
use jrace_trace::{Event, Kind, ThreadId, Trace};
use std::collections::{BTreeSet, HashMap};
use std::fmt;

const NONE: u32 = u32::MAX;

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
    /// Reads may change; a thread whose read changed runs no branch (`W-CF`): mcm's.
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

/// A value as the value models compare them: `(0, v)` a recorded value `v`, `(1, i)` the
/// value written by event `i`, which no other write has (a write without a value, or a
/// JDK write, [`jrace_trace::FLAG_JDK`]), `(2, 0)` the initial value seen by a read
/// without a value that observed no write.
pub type ValueKey = (u8, i64);

/// The value key of every access (other events get `(2, 0)`): recorded values where the
/// trace has them; for a write without one, or a JDK write, a token of its own; for a read
/// the key of the write it observed (docs/DETECTORS.md#reads-from) when it has that write's
/// value (or no value), else its own value; the initial-value token for a read without a
/// value that observed no write.
pub fn value_keys(events: &[Event]) -> Vec<ValueKey> {
    // Per variable: the key and the value (if any) of its last write.
    let mut last: Dense<Option<(ValueKey, Option<i64>)>> = Dense::default();
    events
        .iter()
        .enumerate()
        .map(|(i, e)| match e.kind {
            Kind::Write | Kind::VWrite => {
                // The JDK's own writes (and writes without values) are their own key: what
                // a JDK read saw decides code the trace does not show, so it may only read
                // from its recorded writer, never from another write of the same value.
                let k = if e.has_value() && !e.is_jdk() {
                    (0, e.value)
                } else {
                    (1, i as i64)
                };
                *last.get_mut(e.target) = Some((k, e.has_value().then_some(e.value)));
                k
            }
            Kind::Read | Kind::VRead => {
                match last.get(e.target) {
                    // Reads its writer's value: the writer's key (a JDK writer's own).
                    Some((k, v)) if !e.has_value() || v == Some(e.value) => k,
                    // A value its writer did not write: its own value (unexplained reads).
                    _ if e.has_value() => (0, e.value),
                    Some((k, _)) => k,
                    None => (2, 0),
                }
            }
            _ => (2, 0),
        })
        .collect()
}

/// A map from dense ids (variables, threads) to values: a vector that grows on demand,
/// much cheaper than hashing once per event of a long trace.
pub struct Dense<T> {
    v: Vec<T>,
}

impl<T> Default for Dense<T> {
    fn default() -> Self {
        Dense { v: Vec::new() }
    }
}

impl<T: Default + Copy> Dense<T> {
    pub fn get_mut(&mut self, id: u32) -> &mut T {
        crate::wcp::slot(&mut self.v, id)
    }

    /// The value of `id`, the default when never set.
    pub fn get(&self, id: u32) -> T {
        self.v.get(id as usize).copied().unwrap_or_default()
    }

    pub fn into_vec(self) -> Vec<T> {
        self.v
    }
}

/// Per variable: its value before the trace, when known: the value its first access read
/// (None when that access is a write, or the variable is never accessed).
pub fn initial_values(events: &[Event], keys: &[ValueKey]) -> HashMap<u32, Option<ValueKey>> {
    initial_values_dense(events, keys)
        .into_iter()
        .enumerate()
        .filter_map(|(v, k)| k.map(|k| (v as u32, k)))
        .collect()
}

/// [`initial_values`] indexed by variable (`None` for a variable never accessed).
pub fn initial_values_dense(events: &[Event], keys: &[ValueKey]) -> Vec<Option<Option<ValueKey>>> {
    let mut init: Dense<Option<Option<ValueKey>>> = Dense::default();
    for (i, e) in events.iter().enumerate() {
        if e.kind.is_access() {
            let slot = init.get_mut(e.target);
            if slot.is_none() {
                *slot = Some(if e.kind.is_write() {
                    None
                } else {
                    Some(keys[i])
                });
            }
        }
    }
    init.into_vec()
}

/// The reads whose recorded value no traced write explains (test vector r08b_missingwrite):
/// a valued read whose observed write has another recorded value, or that observed no write
/// and differs from the variable's initial value (the first value read). Missing code (an
/// excluded library, native code, a copy the agent did not record) wrote it, at a moment
/// the trace does not show, so such a read returns its recorded value for sure only where
/// it was recorded: after exactly the events before it in the trace. The encodings give it
/// no recorded-writer or initial-value alternative, only writes of the same value.
/// ([`UnexplainedCounter`] is the definition, event by event.)
pub fn unexplained_reads(events: &[Event]) -> std::collections::HashSet<u32> {
    let mut c = UnexplainedCounter::default();
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| c.add(e))
        .map(|(i, _)| i as u32)
        .collect()
}

/// The reads no traced write explains ([`unexplained_reads`]), decided event by event in
/// trace order (also while streaming: `jrace stats`). Per variable it keeps the value key
/// of its first access if that is a read (its initial value, [`initial_values`]) and the
/// value of its last write.
#[derive(Default)]
pub struct UnexplainedCounter {
    /// Per variable: whether it was seen, the key of its first access if a read, and the
    /// value of its last write.
    vars: Dense<(bool, Option<ValueKey>, Option<Option<i64>>)>,
    /// Valued reads seen, and those no traced write explains.
    pub reads: u64,
    pub unexplained: u64,
}

impl UnexplainedCounter {
    /// Takes the next event of the trace; `true` when it is a read no traced write
    /// explains.
    pub fn add(&mut self, e: &Event) -> bool {
        if !e.kind.is_access() {
            return false;
        }
        let st = self.vars.get_mut(e.target);
        let seen = std::mem::replace(&mut st.0, true);
        let st = (&mut st.1, &mut st.2);
        if e.kind.is_write() {
            *st.1 = Some(e.has_value().then_some(e.value));
            return false;
        }
        if !seen {
            *st.0 = Some(if e.has_value() { (0, e.value) } else { (2, 0) });
        }
        if !e.has_value() {
            return false;
        }
        self.reads += 1;
        let explained = match *st.1 {
            Some(w) => w.is_none_or(|v| v == e.value),
            None => *st.0 == Some((0, e.value)),
        };
        self.unexplained += u64::from(!explained);
        !explained
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

/// Facts about a trace that the validator and the constructions need, computed once.
pub struct Facts<'a> {
    trace: &'a Trace,
    /// Dense thread index of each event.
    tix: Vec<u32>,
    /// Position of each event within its thread.
    local: Vec<u32>,
    /// Events of each dense thread, in program order.
    threads: Vec<Vec<u32>>,
    dense: HashMap<ThreadId, u32>,
    /// Per dense thread: its `fork` event, or `NONE`.
    fork_of: Vec<u32>,
    /// Per read (plain or volatile): the write it observed in the trace, or `NONE`.
    observed: Vec<u32>,
    /// Per wake: the notify it was matched with, or `NONE`.
    wake_notify: Vec<u32>,
    /// Per notify: the waits of the wakes matched with it.
    notify_waits: HashMap<u32, Vec<u32>>,
    /// Per wake with a matched notify: the `wait` it returns from.
    wake_wait: HashMap<u32, u32>,
    /// Value key of every access ([`value_keys`]).
    keys: Vec<ValueKey>,
    /// Per variable: its known initial value ([`initial_values`]).
    init: Vec<Option<ValueKey>>,
    nvars: usize,
    nlocks: usize,
    /// [`unexplained_reads`].
    unexplained: std::collections::HashSet<u32>,
    /// Extra must-happen-before edges a schedule must respect (`rdit`'s BarrierPair
    /// edges, [`Facts::set_order_edges`]): per event, the events that must run first.
    before: HashMap<u32, Vec<u32>>,
    /// Edges that canonical form and minimization keep where a schedule has them, but
    /// validation does not require ([`Facts::set_kept_edges`]).
    kept: HashMap<u32, Vec<u32>>,
}

impl<'a> Facts<'a> {
    pub fn new(trace: &'a Trace) -> Facts<'a> {
        let events = &trace.events;
        let n = events.len();
        let mut dense: HashMap<ThreadId, u32> = HashMap::new();
        let mut dense_of: Dense<u32> = Dense::default(); // dense index + 1, 0: none yet
        let mut threads: Vec<Vec<u32>> = Vec::new();
        let mut tix = Vec::with_capacity(n);
        let mut local = Vec::with_capacity(n);
        for (i, e) in events.iter().enumerate() {
            let slot = dense_of.get_mut(e.thread);
            if *slot == 0 {
                threads.push(Vec::new());
                *slot = threads.len() as u32;
                dense.insert(e.thread, *slot - 1);
            }
            let d = *slot - 1;
            tix.push(d);
            local.push(threads[d as usize].len() as u32);
            threads[d as usize].push(i as u32);
        }
        let mut fork_of = vec![NONE; threads.len()];
        let mut observed = vec![NONE; n];
        let mut wake_notify = vec![NONE; n];
        let mut notify_waits: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut wake_wait: HashMap<u32, u32> = HashMap::new();
        let mut last_write: Dense<u32> = Dense::default(); // index + 1, 0: none
        let mut matcher: NotifyMatcher<()> = NotifyMatcher::new();
        let mut wait_of: HashMap<ThreadId, u32> = HashMap::new();
        let (mut nvars, mut nlocks) = (0usize, 0usize);
        for (i, e) in events.iter().enumerate() {
            let i32_ = i as u32;
            match e.kind {
                Kind::Read | Kind::VRead => {
                    observed[i] = last_write.get(e.target).wrapping_sub(1);
                    nvars = nvars.max(e.target as usize + 1);
                }
                Kind::Write | Kind::VWrite => {
                    *last_write.get_mut(e.target) = i32_ + 1;
                    nvars = nvars.max(e.target as usize + 1);
                }
                Kind::Fork => {
                    if let Some(&d) = dense.get(&e.target) {
                        fork_of[d as usize] = i32_;
                    }
                }
                Kind::Wait => {
                    matcher.wait(e.thread, e.target, i as u64);
                    wait_of.insert(e.thread, i32_);
                }
                Kind::Notify | Kind::NotifyAll => {
                    matcher.notify(e.target, i as u64, e.kind == Kind::NotifyAll, || ());
                }
                Kind::Wake => {
                    if let Some((nt, ())) = matcher.wake(e.thread, e.target) {
                        wake_notify[i] = nt as u32;
                        if let Some(&w) = wait_of.get(&e.thread) {
                            notify_waits.entry(nt as u32).or_default().push(w);
                            wake_wait.insert(i32_, w);
                        }
                    }
                }
                _ => {}
            }
            if e.kind.has_lock() {
                nlocks = nlocks.max(e.target as usize + 1);
            }
        }
        let keys = value_keys(events);
        let mut init: Vec<Option<ValueKey>> = initial_values_dense(events, &keys)
            .into_iter()
            .map(Option::flatten)
            .collect();
        init.resize(nvars, None);
        let unexplained = unexplained_reads(events);
        Facts {
            unexplained,
            wake_wait,
            keys,
            init,
            trace,
            tix,
            local,
            threads,
            dense,
            fork_of,
            observed,
            wake_notify,
            notify_waits,
            nvars,
            nlocks,
            before: HashMap::new(),
            kept: HashMap::new(),
        }
    }

    /// Value key of every event ([`value_keys`]).
    pub fn keys(&self) -> &[ValueKey] {
        &self.keys
    }

    /// Per event: for a read, the write it observed in the trace, else [`NONE`].
    pub fn observed(&self) -> &[u32] {
        &self.observed
    }

    /// The known initial value of variable `v` ([`initial_values`]).
    pub fn initial(&self, v: u32) -> Option<ValueKey> {
        self.init.get(v as usize).copied().flatten()
    }

    /// The notify a `wake` (event `i`) was matched with.
    pub fn wake_notify(&self, i: u32) -> Option<u32> {
        self.wake_notify
            .get(i as usize)
            .copied()
            .filter(|&n| n != NONE)
    }

    /// The `wait` a matched `wake` (event `i`) returns from.
    pub fn wake_wait(&self, i: u32) -> Option<u32> {
        self.wake_wait.get(&i).copied()
    }

    /// The dense index of event `i`'s thread and its position in that thread.
    pub fn place(&self, i: u32) -> (u32, u32) {
        (self.tix[i as usize], self.local[i as usize])
    }

    /// The events of dense thread `d`, in program order.
    pub fn thread_events(&self, d: u32) -> &[u32] {
        &self.threads[d as usize]
    }

    /// How many threads have events (dense indices `0..n`).
    pub fn thread_count(&self) -> usize {
        self.threads.len()
    }

    /// The `fork` event of dense thread `d`, if the trace has one.
    pub fn fork_event(&self, d: u32) -> Option<u32> {
        Some(self.fork_of[d as usize]).filter(|&f| f != NONE)
    }

    /// The dense index of thread `t`, if it has events.
    pub fn dense_thread(&self, t: ThreadId) -> Option<u32> {
        self.dense.get(&t).copied()
    }

    /// The `wait`s of the wakes matched with notify `i`.
    pub fn notify_waits(&self, i: u32) -> &[u32] {
        self.notify_waits.get(&i).map_or(&[], |v| v.as_slice())
    }

    /// Whether read `i` is one no traced write explains ([`unexplained_reads`]).
    pub fn is_unexplained(&self, i: u32) -> bool {
        self.unexplained.contains(&i)
    }

    /// The first and last event of thread `t`, if it has any.
    pub fn thread_span(&self, t: ThreadId) -> Option<(u32, u32)> {
        let th = &self.threads[*self.dense.get(&t)? as usize];
        Some((*th.first()?, *th.last()?))
    }

    /// Adds must-happen-before edges `(from, to)` (event indices) to the rules every
    /// schedule is checked against (`W-BARRIER`): `rdit`'s BarrierPair ordering.
    pub fn set_order_edges(&mut self, edges: &[(u32, u32)]) {
        for &(x, y) in edges {
            self.before.entry(y).or_default().push(x);
        }
    }

    /// Adds edges `(from, to)` that [`Facts::canonical`] and [`Facts::minimize`] keep
    /// when a schedule runs `from` before `to`, without making validation require them:
    /// the BarrierPair order of a trace with calls into excluded code, which rdit's
    /// witnesses respect and other detectors' need not.
    pub fn set_kept_edges(&mut self, edges: &[(u32, u32)]) {
        for &(x, y) in edges {
            self.kept.entry(y).or_default().push(x);
        }
    }

    /// The must-happen-before and kept edges into event `i`.
    fn preds(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        let k = i as u32;
        let a = self.before.get(&k).into_iter().flatten();
        let b = self.kept.get(&k).into_iter().flatten();
        a.chain(b).copied()
    }

    pub fn trace(&self) -> &'a Trace {
        self.trace
    }

    fn ev(&self, i: usize) -> &Event {
        &self.trace.events[i]
    }

    /// `thread op(target)` of event `i`, for messages.
    fn describe(&self, i: usize) -> String {
        let e = self.ev(i);
        let sym = &self.trace.symbols;
        let target = if e.kind.is_access() {
            // By name when the trace has its variables' names (a detector may validate
            // with threads' and locks' names only).
            let v = sym.vars.names().get(e.target as usize);
            format!("({})", v.map_or("?", |v| v.as_str()))
        } else if e.kind.has_lock() {
            format!("({})", sym.lock_name(e.target))
        } else if e.kind.has_thread() {
            format!("({})", sym.thread_name(e.target))
        } else {
            String::new()
        };
        format!(
            "{} {}{} (event {})",
            sym.thread_name(e.thread),
            e.kind.name(),
            target,
            i + 1
        )
    }

    fn thread_name_dense(&self, d: u32) -> &str {
        let first = self.threads[d as usize][0] as usize;
        self.trace.symbols.thread_name(self.ev(first).thread)
    }

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
        if !((x == first && y == second) || (x == second && y == first)) {
            return Err(WitnessError {
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
            });
        }
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
        if !((x == first && y == second) || (x == second && y == first)) {
            return Err(shift(WitnessError {
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
            }));
        }
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

    /// The canonical form of a witness: of the schedules that keep the order of every two
    /// *dependent* events of `schedule` (same thread; same lock; same variable with a write
    /// among them; a `fork` before its thread's events, a thread's events before its
    /// `join`; a BarrierPair edge), the one that always runs the available event recorded
    /// first, with the racing pair held back to the end.
    ///
    /// Every validation rule depends only on the order of dependent events, except that
    /// a read no recorded write explains is concrete only at its recorded place, so
    /// callers validate the result and keep `schedule` if it fails
    /// ([`Witnesser`] does). The result runs as much of the recording as recorded as any
    /// reordering can, so the view elides more and departs later. A witness with more
    /// than [`CANONICAL_MAX_REORDER`] events to reorder is returned as it is.
    pub fn canonical(&self, schedule: &[usize]) -> Vec<usize> {
        let k = schedule.len();
        if k <= 2 {
            return schedule.to_vec();
        }
        let body = &schedule[..k - 2];
        // An increasing body is its own canonical form (no order is smaller). Otherwise,
        // with d the first descent, every event before d smaller than all events from d
        // on is emitted where it stands (it is the smallest event left when its turn
        // comes, and depends only on earlier ones): only the rest is reordered.
        let Some(d) = (1..body.len()).find(|&s| body[s] < body[s - 1]) else {
            return schedule.to_vec();
        };
        let min_after = body[d..].iter().copied().min().unwrap_or(usize::MAX);
        let p = body[..d].iter().take_while(|&&i| i < min_after).count();
        let rest = &body[p..];
        let m = rest.len();
        if m > CANONICAL_MAX_REORDER {
            return schedule.to_vec();
        }
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut last_thread: HashMap<u32, u32> = HashMap::new();
        let mut first_of_thread: HashMap<u32, u32> = HashMap::new();
        let mut last_lock: HashMap<u32, u32> = HashMap::new();
        // Per variable: the last write and the reads since it.
        let mut var_state: HashMap<u32, (Option<u32>, Vec<u32>)> = HashMap::new();
        for (s, &i) in rest.iter().enumerate() {
            let s = s as u32;
            let e = self.ev(i);
            let t = self.tix[i];
            if let Some(q) = last_thread.insert(t, s) {
                edges.push((q, s));
            }
            first_of_thread.entry(t).or_insert(s);
            if e.kind.has_lock() {
                if let Some(q) = last_lock.insert(e.target, s) {
                    edges.push((q, s));
                }
            }
            if e.kind.is_access() {
                let st = var_state.entry(e.target).or_default();
                if e.kind.is_write() {
                    edges.extend(st.0.into_iter().chain(st.1.drain(..)).map(|q| (q, s)));
                    st.0 = Some(s);
                } else {
                    st.1.push(s);
                    if let Some(q) = st.0 {
                        edges.push((q, s));
                    }
                }
            }
            // The child's events before its join (forks: below).
            if e.kind == Kind::Join {
                if let Some(&q) = self.dense.get(&e.target).and_then(|c| last_thread.get(c)) {
                    edges.push((q, s));
                }
            }
        }
        // A fork before its child's first event (the rest follow by program order).
        for (s, &i) in rest.iter().enumerate() {
            let e = self.ev(i);
            if e.kind == Kind::Fork {
                if let Some(&q) = self
                    .dense
                    .get(&e.target)
                    .and_then(|c| first_of_thread.get(c))
                {
                    if q as usize > s {
                        edges.push((s as u32, q));
                    }
                }
            }
        }
        if !self.before.is_empty() || !self.kept.is_empty() {
            let mut pos: Vec<(usize, u32)> = rest
                .iter()
                .enumerate()
                .map(|(s, &i)| (i, s as u32))
                .collect();
            pos.sort_unstable();
            let at = |x: usize| pos.binary_search_by_key(&x, |p| p.0).ok().map(|j| pos[j].1);
            for (s, &i) in rest.iter().enumerate() {
                for x in self.preds(i) {
                    if let Some(q) = at(x as usize) {
                        if (q as usize) < s {
                            edges.push((q, s as u32));
                        }
                    }
                }
            }
        }
        // Successor lists (CSR) and in-degrees.
        let mut start = vec![0u32; m + 1];
        let mut indeg = vec![0u32; m];
        for &(x, y) in &edges {
            start[x as usize + 1] += 1;
            indeg[y as usize] += 1;
        }
        for j in 0..m {
            start[j + 1] += start[j];
        }
        let mut succ = vec![0u32; edges.len()];
        let mut fill = start.clone();
        for &(x, y) in &edges {
            succ[fill[x as usize] as usize] = y;
            fill[x as usize] += 1;
        }
        let mut out = Vec::with_capacity(k);
        out.extend_from_slice(&body[..p]);
        let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<(usize, u32)>> = (0..m)
            .filter(|&s| indeg[s] == 0)
            .map(|s| std::cmp::Reverse((rest[s], s as u32)))
            .collect();
        while let Some(std::cmp::Reverse((i, s))) = ready.pop() {
            out.push(i);
            let s = s as usize;
            for &u in &succ[start[s] as usize..start[s + 1] as usize] {
                let u = u as usize;
                indeg[u] -= 1;
                if indeg[u] == 0 {
                    ready.push(std::cmp::Reverse((rest[u], u as u32)));
                }
            }
        }
        debug_assert_eq!(out.len(), k - 2, "the dependence order is acyclic");
        if out.len() != k - 2 {
            return schedule.to_vec();
        }
        out.extend_from_slice(&schedule[k - 2..]);
        out
    }

    /// A minimized witness (`jrace witness --minimize`): the events of `schedule` the
    /// racing pair needs, in the same order. Starting from the pair and their program-order
    /// predecessors, it adds until nothing changes: the writer each read has in the
    /// schedule (the last earlier write to its variable), the previous release or wait of
    /// an acquire's or wake's lock, a wake's notify and a notify's matched waits, every
    /// event of a joined thread, the fork of every thread present, BarrierPair
    /// predecessors, and the program-order predecessors of each. Callers validate the
    /// result ([`Witnesser::minimized`] does) and keep `schedule` if it fails.
    pub fn minimize(&self, schedule: &[usize]) -> Vec<usize> {
        let k = schedule.len();
        if k <= 2 {
            return schedule.to_vec();
        }
        let pos: HashMap<usize, usize> =
            schedule.iter().enumerate().map(|(s, &i)| (i, s)).collect();
        // Per position: the previous write of the same variable and the previous
        // release/wait of the same lock, in schedule order.
        let mut prev_write = vec![usize::MAX; k];
        let mut prev_free = vec![usize::MAX; k];
        let mut last_write: HashMap<u32, usize> = HashMap::new();
        let mut last_free: HashMap<u32, usize> = HashMap::new();
        for (s, &i) in schedule.iter().enumerate() {
            let e = self.ev(i);
            if e.kind.is_access() {
                if let Some(&w) = last_write.get(&e.target) {
                    prev_write[s] = w;
                }
                if e.kind.is_write() {
                    last_write.insert(e.target, s);
                }
            }
            if e.kind.has_lock() {
                if let Some(&r) = last_free.get(&e.target) {
                    prev_free[s] = r;
                }
                if matches!(e.kind, Kind::Release | Kind::Wait) && !e.is_nested() {
                    last_free.insert(e.target, s);
                }
            }
        }
        let mut keep = vec![false; k];
        let mut work: Vec<usize> = vec![k - 2, k - 1];
        // Program-order predecessors are added thread by thread: `upto[t]` is how far
        // (in the thread's events) the kept prefix reaches.
        let mut upto: HashMap<u32, u32> = HashMap::new();
        while let Some(s) = work.pop() {
            if s == usize::MAX || keep[s] {
                continue;
            }
            keep[s] = true;
            let i = schedule[s];
            let e = self.ev(i);
            let t = self.tix[i];
            let local = self.local[i] + 1;
            let reach = upto.entry(t).or_insert(0);
            if *reach < local {
                for &j in &self.threads[t as usize][*reach as usize..local as usize] {
                    if let Some(&q) = pos.get(&(j as usize)) {
                        work.push(q);
                    }
                }
                *reach = local;
                if let Some(&q) = pos.get(&(self.fork_of[t as usize] as usize)) {
                    work.push(q);
                }
            }
            if s + 2 < k && matches!(e.kind, Kind::Read | Kind::VRead) {
                work.push(prev_write[s]);
            }
            if matches!(e.kind, Kind::Acquire | Kind::Wake) && !e.is_nested() {
                work.push(prev_free[s]);
            }
            let mut add = |j: u32| {
                if let Some(&q) = pos.get(&(j as usize)) {
                    work.push(q);
                }
            };
            if e.kind == Kind::Wake && self.wake_notify[i] != NONE {
                add(self.wake_notify[i]);
            }
            for &w in self.notify_waits.get(&(i as u32)).into_iter().flatten() {
                add(w);
            }
            if e.kind == Kind::Join {
                if let Some(&u) = self.dense.get(&e.target) {
                    for &j in &self.threads[u as usize] {
                        add(j);
                    }
                }
            }
            for x in self.preds(i) {
                add(x);
            }
        }
        schedule
            .iter()
            .zip(&keep)
            .filter(|(_, &kept)| kept)
            .map(|(&i, _)| i)
            .collect()
    }

    /// Checks a schedule that is only a correct reordering (no race at its end).
    pub fn validate_prefix(&self, schedule: &[usize]) -> Result<(), WitnessError> {
        self.walk(schedule, false)
    }

    /// Like [`Facts::validate_prefix`], in the given feasibility model.
    pub fn validate_prefix_model(
        &self,
        model: Model,
        schedule: &[usize],
    ) -> Result<(), WitnessError> {
        self.walk_with(Sim::with_model(self, model), schedule, false)
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
        self.walk_with(Sim::new(self), schedule, race)
    }

    fn walk_with(&self, mut sim: Sim, schedule: &[usize], race: bool) -> Result<(), WitnessError> {
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
        Ok(())
    }
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

/// The state of a schedule being run: per-thread positions, last writers, lock owners.
#[derive(Clone)]
struct Sim {
    pos: Vec<u32>,
    last_write: Vec<u32>,
    /// Dense thread holding each lock, or `NONE`.
    owner: Vec<u32>,
    model: Model,
    /// Value models: each variable's current value, `None` when unknown.
    cur: Vec<Option<ValueKey>>,
    /// Value models: threads that read a value other than the recorded one.
    taint: Vec<bool>,
    /// Value models: waits whose matched notify ran before them (their wake may not run).
    lost: Vec<u32>,
    /// How many events are done, and the first event not done (the schedule so far is
    /// the recorded prefix `0..frontier` exactly when both equal).
    ndone: usize,
    frontier: usize,
}

impl Sim {
    fn new(f: &Facts) -> Sim {
        Sim::with_model(f, Model::Rf)
    }

    fn with_model(f: &Facts, model: Model) -> Sim {
        let valued = model != Model::Rf;
        Sim {
            pos: vec![0; f.threads.len()],
            last_write: vec![NONE; f.nvars],
            owner: vec![NONE; f.nlocks],
            model,
            cur: if valued { f.init.clone() } else { Vec::new() },
            taint: vec![false; if valued { f.threads.len() } else { 0 }],
            lost: Vec::new(),
            ndone: 0,
            frontier: 0,
        }
    }

    /// Value models: whether read `i` would return its recorded value now: its value is
    /// the current one, or it reads from its recorded writer, and for a read whose value
    /// missing code wrote ([`unexplained_reads`]) only at its recorded place.
    fn concrete_read(&self, f: &Facts, i: usize) -> bool {
        let v = f.ev(i).target as usize;
        let cur = self.cur[v];
        cur == Some(f.keys[i])
            || (self.last_write[v] == f.observed[i]
                && (f.observed[i] == NONE || cur.is_some())
                && (!f.unexplained.contains(&(i as u32))
                    || (self.ndone == i && self.frontier == i)))
    }

    fn done(&self, f: &Facts, i: u32) -> bool {
        self.pos[f.tix[i as usize] as usize] > f.local[i as usize]
    }

    /// Whether event `i` may run next; `exempt` skips the reads-from rule (racing reads).
    fn check(&self, f: &Facts, i: usize, exempt: bool) -> Result<(), (Rule, String)> {
        let t = f.tix[i] as usize;
        let e = f.ev(i);
        let sym = &f.trace.symbols;
        let p = self.pos[t];
        let l = f.local[i];
        if l < p {
            return Err((
                Rule::Format,
                format!("{} is already in the schedule", f.describe(i)),
            ));
        }
        if l > p {
            let missing = f.threads[t][p as usize] as usize;
            return Err((
                Rule::Po,
                format!(
                    "{} is not the next event of its thread: {} comes first",
                    f.describe(i),
                    f.describe(missing)
                ),
            ));
        }
        if l == 0 && f.fork_of[t] != NONE && !self.done(f, f.fork_of[t]) {
            return Err((
                Rule::Fork,
                format!(
                    "{} runs before thread {} is forked by {}",
                    f.describe(i),
                    sym.thread_name(e.thread),
                    f.describe(f.fork_of[t] as usize)
                ),
            ));
        }
        if let Some(&x) = f
            .before
            .get(&(i as u32))
            .and_then(|xs| xs.iter().find(|&&x| !self.done(f, x)))
        {
            return Err((
                Rule::Barrier,
                format!(
                    "{} runs before {}, which missing code orders before it (BarrierPair)",
                    f.describe(i),
                    f.describe(x as usize)
                ),
            ));
        }
        let owner = |lk: u32| self.owner[lk as usize];
        let holder = |lk: u32| match owner(lk) {
            NONE => "no thread".to_owned(),
            o => format!("thread {}", f.thread_name_dense(o)),
        };
        if self.model != Model::Rf {
            match e.kind {
                Kind::Read | Kind::VRead
                    if !exempt && self.model == Model::Value && !self.concrete_read(f, i) =>
                {
                    return Err((
                        Rule::Val,
                        format!(
                            "{} would not return its recorded value {}",
                            f.describe(i),
                            e.value
                        ),
                    ));
                }
                Kind::Branch | Kind::Enter | Kind::Exit if self.taint[t] => {
                    return Err((
                        Rule::Cf,
                        format!(
                            "{}: an earlier read of its thread returned another value than recorded, so this control decision may differ",
                            f.describe(i)
                        ),
                    ));
                }
                _ => {}
            }
        }
        match e.kind {
            Kind::Read | Kind::VRead if !exempt && self.model == Model::Rf => {
                let want = f.observed[i];
                let got = self.last_write[e.target as usize];
                if got != want {
                    let name = |w: u32| {
                        if w == NONE {
                            "the initial value".to_owned()
                        } else {
                            f.describe(w as usize)
                        }
                    };
                    return Err((
                        Rule::Rf,
                        format!(
                            "{} would read from {}, but in the trace it reads from {}",
                            f.describe(i),
                            name(got),
                            name(want)
                        ),
                    ));
                }
            }
            Kind::Acquire => {
                let ok = if e.is_nested() {
                    owner(e.target) == t as u32
                } else {
                    owner(e.target) == NONE
                };
                if !ok {
                    return Err((
                        Rule::Lock,
                        format!(
                            "{}: lock {} is held by {}",
                            f.describe(i),
                            sym.lock_name(e.target),
                            holder(e.target)
                        ),
                    ));
                }
            }
            Kind::Release | Kind::Wait | Kind::Notify | Kind::NotifyAll => {
                if owner(e.target) != t as u32 {
                    return Err((
                        Rule::Lock,
                        format!(
                            "{}: lock {} is held by {}, not by this thread",
                            f.describe(i),
                            sym.lock_name(e.target),
                            holder(e.target)
                        ),
                    ));
                }
                if let Some(ws) = f
                    .notify_waits
                    .get(&(i as u32))
                    .filter(|_| self.model == Model::Rf)
                {
                    if let Some(&w) = ws.iter().find(|&&w| !self.done(f, w)) {
                        return Err((
                            Rule::Notify,
                            format!(
                                "{} runs before {}, whose wake it is matched with",
                                f.describe(i),
                                f.describe(w as usize)
                            ),
                        ));
                    }
                }
            }
            Kind::Wake => {
                if owner(e.target) != NONE {
                    return Err((
                        Rule::Lock,
                        format!(
                            "{} cannot re-acquire lock {}: it is held by {}",
                            f.describe(i),
                            sym.lock_name(e.target),
                            holder(e.target)
                        ),
                    ));
                }
                let nt = f.wake_notify[i];
                if let Some(w) = f
                    .wake_wait
                    .get(&(i as u32))
                    .filter(|w| self.lost.contains(w))
                {
                    return Err((
                        Rule::Notify,
                        format!(
                            "{} cannot return: its notify {} ran before {}, and notified nobody",
                            f.describe(i),
                            f.describe(nt as usize),
                            f.describe(*w as usize)
                        ),
                    ));
                }
                if nt != NONE && !self.done(f, nt) {
                    return Err((
                        Rule::Notify,
                        format!(
                            "{} runs before {}, the notify it is matched with",
                            f.describe(i),
                            f.describe(nt as usize)
                        ),
                    ));
                }
            }
            Kind::Join => {
                if let Some(&c) = f.dense.get(&e.target) {
                    let c = c as usize;
                    let len = f.threads[c].len() as u32;
                    if self.pos[c] < len {
                        return Err((
                            Rule::Join,
                            format!(
                                "{} runs before thread {}'s {} is scheduled",
                                f.describe(i),
                                sym.thread_name(e.target),
                                f.describe(f.threads[c][self.pos[c] as usize] as usize)
                            ),
                        ));
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn apply(&mut self, f: &Facts, i: usize) {
        let t = f.tix[i];
        let e = f.ev(i);
        if self.model != Model::Rf {
            match e.kind {
                Kind::Read | Kind::VRead if !self.concrete_read(f, i) => {
                    self.taint[t as usize] = true;
                }
                Kind::Write | Kind::VWrite => {
                    self.cur[e.target as usize] = if self.taint[t as usize] {
                        None
                    } else {
                        Some(f.keys[i])
                    };
                }
                Kind::Notify | Kind::NotifyAll => {
                    if let Some(ws) = f.notify_waits.get(&(i as u32)) {
                        for &w in ws {
                            if !self.done(f, w) {
                                self.lost.push(w);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        self.pos[t as usize] += 1;
        self.ndone += 1;
        if !f.unexplained.is_empty() {
            while self.frontier < f.trace.events.len() && self.done(f, self.frontier as u32) {
                self.frontier += 1;
            }
        }
        match e.kind {
            Kind::Write | Kind::VWrite => self.last_write[e.target as usize] = i as u32,
            Kind::Acquire if !e.is_nested() => self.owner[e.target as usize] = t,
            Kind::Wake => self.owner[e.target as usize] = t,
            Kind::Release if !e.is_nested() => self.owner[e.target as usize] = NONE,
            Kind::Wait => self.owner[e.target as usize] = NONE,
            _ => {}
        }
    }
}

/// Checks `schedule` (0-based event indices) as a witness of a race in `trace`.
pub fn validate(trace: &Trace, schedule: &[usize]) -> Result<(), WitnessError> {
    Facts::new(trace).validate(schedule)
}

/// How a witness was built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// A schedule the detector built and attached to the pair.
    Detector,
    /// The SHB closure of the two accesses.
    ShbClosure,
    /// Greedy prefix extension with the first access's thread frozen at the access.
    Greedy,
    /// Greedy prefix extension with retreat to an earlier acquire, then catch-up.
    GreedyRetreat,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Detector => "detector",
            Method::ShbClosure => "shb-closure",
            Method::Greedy => "greedy",
            Method::GreedyRetreat => "greedy-retreat",
        }
    }
}

/// A validated witness: 0-based event indices in schedule order, the last two the race.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    pub schedule: Vec<usize>,
    pub method: Method,
}

/// SHB clocks: for every event the local component of its thread's clock, and the full
/// clock (before the event, and before a read's own reads-from edge) for chosen events.
struct ShbIndex {
    stamp: Vec<u32>,
    clocks: HashMap<usize, VectorClock>,
}

impl ShbIndex {
    fn new(trace: &Trace, needed: &BTreeSet<usize>) -> ShbIndex {
        let mut hb = HbClocks::default();
        let mut last_write: Vec<Option<VectorClock>> = Vec::new();
        let mut stamp = Vec::with_capacity(trace.events.len());
        let mut clocks = HashMap::new();
        for (i, e) in trace.events.iter().enumerate() {
            let t = e.thread;
            let c = hb.thread(t);
            stamp.push(c.get(t));
            if needed.contains(&i) {
                clocks.insert(i, c.clone());
            }
            let v = e.target as usize;
            match e.kind {
                Kind::Read | Kind::VRead => {
                    if e.kind == Kind::VRead {
                        hb.sync(i as u64, e);
                    }
                    if let Some(Some(w)) = last_write.get(v) {
                        hb.thread(t).join(w);
                    }
                }
                Kind::Write | Kind::VWrite => {
                    if v >= last_write.len() {
                        last_write.resize_with(v + 1, || None);
                    }
                    let c = hb.thread(t);
                    match &mut last_write[v] {
                        Some(w) => w.assign(c),
                        slot @ None => *slot = Some(c.clone()),
                    }
                    if e.kind == Kind::Write {
                        hb.thread(t).inc(t);
                    } else {
                        hb.sync(i as u64, e);
                    }
                }
                _ => hb.sync(i as u64, e),
            }
        }
        ShbIndex { stamp, clocks }
    }

    /// The SHB closure schedule of `(a, b)`, `a < b`, if both clocks are known.
    fn closure(&self, trace: &Trace, a: usize, b: usize) -> Option<Vec<usize>> {
        let ca = self.clocks.get(&a)?;
        let cb = self.clocks.get(&b)?;
        let ev = &trace.events;
        let mut s: Vec<usize> = (0..b)
            .filter(|&j| {
                j != a && {
                    let t = ev[j].thread;
                    (j < a && self.stamp[j] <= ca.get(t)) || self.stamp[j] <= cb.get(t)
                }
            })
            .collect();
        s.push(a);
        s.push(b);
        Some(s)
    }
}

/// Builds validated witnesses for pairs of one trace.
pub struct Witnesser<'a> {
    facts: Facts<'a>,
    shb: ShbIndex,
}

impl<'a> Witnesser<'a> {
    /// `pairs` are the `(first, second)` pairs witnesses will be asked for (their SHB
    /// clocks are kept; other pairs fall back to the greedy constructions).
    pub fn new(trace: &'a Trace, pairs: impl IntoIterator<Item = (usize, usize)>) -> Self {
        let needed: BTreeSet<usize> = pairs.into_iter().flat_map(|(a, b)| [a, b]).collect();
        Witnesser {
            facts: Facts::new(trace),
            shb: ShbIndex::new(trace, &needed),
        }
    }

    pub fn facts(&self) -> &Facts<'a> {
        &self.facts
    }

    /// Every candidate schedule for `(a, b)`, validated or not, with its method: for
    /// tests and diagnostics. [`Witnesser::witness`] keeps the first valid one.
    pub fn candidates(&self, a: usize, b: usize) -> Vec<(Method, Vec<usize>)> {
        let (a, b) = (a.min(b), a.max(b));
        let mut out = Vec::new();
        if let Some(s) = self.shb.closure(self.facts.trace, a, b) {
            out.push((Method::ShbClosure, s));
        }
        if let Some(s) = self.greedy(a, b, a) {
            out.push((Method::Greedy, s));
        }
        for f in self.retreat_points(a) {
            if let Some(s) = self.greedy(a, b, f) {
                out.push((Method::GreedyRetreat, s));
            }
        }
        out
    }

    /// `schedule`, a detector-built candidate for the race `(a, b)`, as a witness if the
    /// validator accepts it.
    pub fn check_provided(&self, a: usize, b: usize, schedule: &[u64]) -> Option<Witness> {
        let s: Vec<usize> = schedule
            .iter()
            .map(|&i| usize::try_from(i).unwrap_or(usize::MAX))
            .collect();
        self.facts.validate_race(a, b, &s).ok()?;
        Some(Witness {
            schedule: s,
            method: Method::Detector,
        })
    }

    /// Like [`Witnesser::check_provided`], validated in `model` (mcm's schedules in
    /// [`Model::Cf`], said's in [`Model::Value`]).
    pub fn check_provided_model(
        &self,
        model: Model,
        a: usize,
        b: usize,
        schedule: &[u64],
    ) -> Option<Witness> {
        let s: Vec<usize> = schedule
            .iter()
            .map(|&i| usize::try_from(i).unwrap_or(usize::MAX))
            .collect();
        self.facts.validate_race_model(model, a, b, &s).ok()?;
        Some(Witness {
            schedule: s,
            method: Method::Detector,
        })
    }

    /// A validated witness for the race `(a, b)`: the first of `provided` (detector-built
    /// schedules) the validator accepts, else [`Witnesser::witness`].
    pub fn witness_or_provided(&self, a: usize, b: usize, provided: &[&[u64]]) -> Option<Witness> {
        provided
            .iter()
            .find_map(|s| self.check_provided(a, b, s))
            .or_else(|| self.witness(a, b))
    }

    /// A validated witness for the race `(a, b)` from the constructions, or `None`.
    pub fn witness(&self, a: usize, b: usize) -> Option<Witness> {
        let (a, b) = (a.min(b), a.max(b));
        let n = self.facts.trace.events.len();
        if b >= n || a == b {
            return None;
        }
        let ok = |s: &Vec<usize>| self.facts.validate_race(a, b, s).is_ok();
        if let Some(s) = self.shb.closure(self.facts.trace, a, b) {
            if ok(&s) {
                return Some(Witness {
                    schedule: s,
                    method: Method::ShbClosure,
                });
            }
        }
        if let Some(s) = self.greedy(a, b, a) {
            if ok(&s) {
                return Some(Witness {
                    schedule: s,
                    method: Method::Greedy,
                });
            }
        }
        for f in self.retreat_points(a) {
            if let Some(s) = self.greedy(a, b, f) {
                if ok(&s) {
                    return Some(Witness {
                        schedule: s,
                        method: Method::GreedyRetreat,
                    });
                }
            }
        }
        None
    }

    /// `wit`, a witness of `(a, b)` valid in `model`, in canonical form
    /// ([`Facts::canonical`]) when that is valid too (it always should be; a read no
    /// write explains is the one exception the validator can catch), else unchanged.
    pub fn canonical(&self, model: Model, a: usize, b: usize, wit: Witness) -> Witness {
        let c = self.facts.canonical(&wit.schedule);
        self.replaced_if_valid(model, a, b, wit, c)
    }

    /// `wit`, a witness of `(a, b)` valid in `model`, minimized ([`Facts::minimize`])
    /// when that is valid too, else unchanged.
    pub fn minimized(&self, model: Model, a: usize, b: usize, wit: Witness) -> Witness {
        let m = self.facts.minimize(&wit.schedule);
        self.replaced_if_valid(model, a, b, wit, m)
    }

    /// `wit` with its schedule replaced by `schedule` when that differs and validates in
    /// `model`.
    fn replaced_if_valid(
        &self,
        model: Model,
        a: usize,
        b: usize,
        wit: Witness,
        schedule: Vec<usize>,
    ) -> Witness {
        if schedule == wit.schedule
            || self
                .facts
                .validate_race_model(model, a, b, &schedule)
                .is_err()
        {
            return wit;
        }
        Witness {
            schedule,
            method: wit.method,
        }
    }

    /// The acquires (and wakes) of the locks `a`'s thread holds at `a`, nearest first.
    fn retreat_points(&self, a: usize) -> Vec<usize> {
        let f = &self.facts;
        let t = f.tix[a] as usize;
        let mut held: Vec<(u32, usize)> = Vec::new();
        for &j in &f.threads[t][..f.local[a] as usize] {
            let e = f.ev(j as usize);
            match e.kind {
                Kind::Acquire | Kind::Wake if !e.is_nested() => held.push((e.target, j as usize)),
                Kind::Release | Kind::Wait if !e.is_nested() => {
                    if let Some(p) = held.iter().rposition(|&(l, _)| l == e.target) {
                        held.remove(p);
                    }
                }
                _ => {}
            }
        }
        held.iter().rev().map(|&(_, j)| j).collect()
    }

    /// Greedy prefix extension (module doc, steps 2 and 3): the trace before `from` (an
    /// event of `a`'s thread, at most `a`), then the events up to `b` of threads not
    /// frozen, then `a`'s thread from `from` up to `a` (catch-up), then `a` and `b`.
    fn greedy(&self, a: usize, b: usize, from: usize) -> Option<Vec<usize>> {
        let f = &self.facts;
        let (t1, t2) = (f.tix[a] as usize, f.tix[b] as usize);
        if t1 == t2 || from > a || f.tix[from] as usize != t1 {
            return None;
        }
        let mut sim = Sim::new(f);
        let mut sched: Vec<usize> = Vec::with_capacity(b + 2);
        for j in 0..from {
            sim.apply(f, j);
            sched.push(j);
        }
        let mut frozen = vec![false; f.threads.len()];
        frozen[t1] = true;
        for x in from..b {
            let t = f.tix[x] as usize;
            if frozen[t] {
                continue;
            }
            if sim.check(f, x, false).is_ok() {
                sim.apply(f, x);
                sched.push(x);
            } else {
                frozen[t] = true;
                if t == t2 {
                    return None;
                }
            }
        }
        for &j in &f.threads[t1][f.local[from] as usize..f.local[a] as usize] {
            let j = j as usize;
            sim.check(f, j, false).ok()?;
            sim.apply(f, j);
            sched.push(j);
        }
        sim.check(f, a, true).ok()?;
        sim.apply(f, a);
        sched.push(a);
        sim.check(f, b, true).ok()?;
        sched.push(b);
        Some(sched)
    }
}

/// Witnesses for the races of an analysis.
#[derive(Clone, Debug, Default)]
pub struct RaceWitnesses {
    /// One entry per race of the analysis, same order.
    pub witnesses: Vec<Option<Witness>>,
    /// Ids of races reported by a detector in [`crate::registry::must_witness`] that got no witness: a bug.
    pub missing: Vec<u64>,
}

/// Builds a witness for every race of `analysis` (whose events are `trace`'s).
///
/// For each pair, the schedules detectors attached to it
/// ([`crate::engine::DetectorRun::schedules`],
/// validated like the rest) are tried before the constructions.
/// A race signature may have several event pairs (one per detector and per dynamic
/// variable). The representative pair is tried first; when it has no witness but another
/// pair of the same signature has one, that pair becomes the race's representative, so
/// that the report's two accesses are always the witness's last two entries. Race ids do
/// not change.
pub fn witness_analysis(trace: &Trace, analysis: &mut Analysis) -> RaceWitnesses {
    witness_races(trace, analysis, None, false)
}

/// [`witness_analysis`] for the race with id `only` alone when it is given (`jrace
/// witness`: on long traces each witness can hold most of the trace, and building them
/// all to show one costs minutes and gigabytes). Other races get `None` and are never
/// counted as missing. With `minimize`, each witness is also minimized
/// ([`Witnesser::minimized`]).
pub fn witness_races(
    trace: &Trace,
    analysis: &mut Analysis,
    only: Option<u64>,
    minimize: bool,
) -> RaceWitnesses {
    let sym = &analysis.symbols;
    let mut by_key: HashMap<SigKey, Vec<RacePair>> = HashMap::new();
    for run in &analysis.runs {
        for p in &run.pairs {
            let key = (
                sym.static_of(p.var),
                p.first_loc.min(p.second_loc),
                p.first_loc.max(p.second_loc),
            );
            by_key.entry(key).or_default().push(*p);
        }
    }
    let mut candidates: Vec<Vec<RacePair>> = Vec::with_capacity(analysis.races.len());
    for r in &analysis.races {
        let mut v = vec![r.pair];
        let mut others = by_key.remove(&r.key).unwrap_or_default();
        others.sort_by_key(|p| (p.second, p.first));
        for p in others {
            if !v.iter().any(|q| (q.first, q.second) == (p.first, p.second)) {
                v.push(p);
            }
        }
        candidates.push(v);
    }
    let pairs: Vec<(usize, usize)> = candidates
        .iter()
        .zip(&analysis.races)
        .filter(|(_, r)| only.is_none_or(|id| id == r.id))
        .flat_map(|(c, _)| c)
        .map(|p| (p.first as usize, p.second as usize))
        .collect();
    let mut plain = Witnesser::new(trace, pairs.iter().copied());
    // Calls into excluded code: a race of a detector that models them (rdit, and mcm and
    // said, which order everything around them) gets a witness that keeps the
    // BarrierPair order (`W-BARRIER`); the others' witnesses need not, but canonical
    // form and minimization keep that order where they have it.
    let runs = &analysis.runs;
    let aware = |r: &crate::engine::SigRace| {
        r.detectors
            .iter()
            .any(|&d| crate::registry::barrier_aware(runs[d].name))
    };
    let any_aware = analysis
        .races
        .iter()
        .any(|r| only.is_none_or(|id| id == r.id) && aware(r));
    let mut with_bp = None;
    if trace.events.iter().any(|e| e.kind == Kind::Enter) {
        let index = crate::causal::barrier::ObjectIndex::new(&trace.symbols);
        let edges = crate::causal::barrier::barrier_edges(&trace.events, &index);
        plain.facts.set_kept_edges(&edges);
        if any_aware {
            let mut wb = Witnesser::new(trace, pairs.iter().copied());
            wb.facts.set_order_edges(&edges);
            with_bp = Some(wb);
        }
    }
    // Rf schedules first: the strongest model a witness can claim.
    let mut provided: HashMap<(u64, u64), Vec<&[u64]>> = HashMap::new();
    type Valued<'s> = HashMap<(u64, u64), Vec<(Model, &'s [u64])>>;
    let mut provided_valued: Valued = HashMap::new();
    for run in &analysis.runs {
        let model = model_for(run.name);
        for (&pair, s) in &run.schedules {
            if model == Model::Rf {
                provided.entry(pair).or_default().push(s);
            } else {
                provided_valued.entry(pair).or_default().push((model, s));
            }
        }
    }
    let mut out = RaceWitnesses::default();
    for (r, cands) in analysis.races.iter_mut().zip(&candidates) {
        if only.is_some_and(|id| id != r.id) {
            out.witnesses.push(None);
            continue;
        }
        let w = match &with_bp {
            Some(wb) if aware(r) => wb,
            _ => &plain,
        };
        let mut found = None;
        for p in cands {
            let given = provided
                .get(&(p.first, p.second))
                .map_or(&[][..], Vec::as_slice);
            let (x, y) = (p.first as usize, p.second as usize);
            let valued = || {
                provided_valued
                    .get(&(p.first, p.second))
                    .into_iter()
                    .flatten()
                    .find_map(|&(m, s)| Some((m, w.check_provided_model(m, x, y, s)?)))
            };
            let got = w
                .witness_or_provided(x, y, given)
                .map(|wit| (Model::Rf, wit))
                .or_else(valued);
            if let Some((model, wit)) = got {
                r.pair = *p;
                let wit = w.canonical(model, x, y, wit);
                found = Some(if minimize {
                    w.minimized(model, x, y, wit)
                } else {
                    wit
                });
                break;
            }
        }
        let must = r
            .detectors
            .iter()
            .any(|&d| crate::registry::must_witness(analysis.runs[d].name));
        if found.is_none() && must {
            out.missing.push(r.id);
        }
        out.witnesses.push(found);
    }
    out
}

/// The witness as report entries: thread name and 1-based event number, in order.
pub fn steps(trace: &Trace, w: &Witness) -> Vec<crate::report::WitnessStep> {
    let mut names: HashMap<ThreadId, std::sync::Arc<str>> = HashMap::new();
    w.schedule
        .iter()
        .map(|&i| {
            let t = trace.events[i].thread;
            let thread = names
                .entry(t)
                .or_insert_with(|| trace.symbols.thread_name(t).into())
                .clone();
            crate::report::WitnessStep {
                thread,
                event: i as u64 + 1,
            }
        })
        .collect()
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
