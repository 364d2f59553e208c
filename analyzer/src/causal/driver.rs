//! Windows, candidate pairs, rounds of parallel solver queries, witnesses: the part of
//! `mcm` and `said` that is the same for both ([`run`]).
//! Size: one file for one loop (windows, candidate pairs, rounds of queries, witnesses)
//! whose steps share the per-window state.

use super::formula::{mcm_query, place_unconstrained, said_base, said_pair, Constraints};
use super::solve::{with_solver, Answer};
use crate::facts::barrier::{barrier_edges, ObjectIndex};
use std::sync::atomic::{AtomicU64, Ordering};

/// Ids of said's per-window base constraints (see [`with_solver`]).
static NEXT_BASE: AtomicU64 = AtomicU64::new(1);
use super::latch::Latches;
use super::window::{has_barriers, Carry, Global, Window};
use crate::detector::{Progress, RaceAccess, RaceSink};
use crate::facts::Facts;
use crate::witness::{Checkpoint, Model};
use jrace_trace::{Event, LocId, Symbols, ThreadId, Trace, VarId};
use rayon::prelude::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Which encoding a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// RVPredict's maximal causal model, cut encoding (docs/DETECTORS.md#mcm).
    Mcm,
    /// Said et al.'s whole-window read consistency (docs/DETECTORS.md#said).
    Said,
    /// `mcm` over a ≺ extended by BarrierPair edges (docs/DETECTORS.md#rdit).
    Rdit,
}

impl Policy {
    /// The detector's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Mcm => "mcm",
            Policy::Said => "said",
            Policy::Rdit => "rdit",
        }
    }
}

/// Knobs of a run. See [`crate::DetectorOptions`] for the public ones.
#[derive(Clone, Debug)]
pub struct Options {
    /// Window size N in events; windows start every N/2 events (docs/DETECTORS.md#windows-and-solver-limits).
    pub window: usize,
    /// Per-query solver timeout in milliseconds (0: none).
    pub timeout_ms: u32,
    /// At most this many pairs of one race signature are tried per window.
    pub max_pairs_per_signature: usize,
    /// At most this many pairs of one race signature are given to the solver over the
    /// whole run; a signature still undecided then is given up and counted as unknown.
    pub max_queries_per_signature: usize,
    /// At most this many earlier accesses are scanned per access for candidate pairs.
    pub max_scan: usize,
    /// Each query runs on a pair-centered window: from `margin` events before the
    /// pair's first event to `margin` events after its second, within the window (its
    /// own past is fixed as recorded). Bounds the query size on long windows. said's
    /// whole-(query-)window encoding is built per query then (one base per window when a
    /// query spans it): on contended read-write locks, whole 10,000-event windows made
    /// every said query time out (minutes, no race), pair-centered ones answer in
    /// seconds with the race; H2: the same 11 signatures, 10.4 s -> 3.3 s. 1,000:
    /// the same races as 2,000 on the 1 M synthetic trace (220), H2 (14) and Derby (3),
    /// with Derby's solver time 98 s -> 37 s (benchmarks/RESULTS.md, 2026-11-26).
    pub margin: usize,
    /// Whether the recording carried branches (`None`: a trace with a `br` does).
    pub branches: Option<bool>,
    /// Overlapping windows (a new window every N/2 events); without, windows are
    /// disjoint and pairs straddling a border are never checked (for tests).
    pub overlap: bool,
    /// Testing hook: answer `unknown` without solving for every k-th query (0: never),
    /// as a timeout would.
    pub inject_unknown_every: u64,
    /// Refute pairs inside the spans of a common latch ([`super::latch`]) without a
    /// query. Off only to compare with plain mcm.
    pub latches: bool,
    /// Refute pairs a read's fence orders ([`Window::compute_fences`]) without a query.
    /// Off only to compare with plain mcm.
    pub fences: bool,
    /// Before a pair's solver query, try the recorded order with the first access's
    /// thread held back ([`Facts::delayed_race`]); a schedule the validator accepts is
    /// the race, found without the solver. Off only to compare with plain mcm.
    pub delayed: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            window: 10_000,
            timeout_ms: 10_000,
            max_pairs_per_signature: 8,
            max_queries_per_signature: 64,
            max_scan: 256,
            margin: 1_000,
            branches: None,
            overlap: true,
            inject_unknown_every: 0,
            latches: true,
            fences: true,
            delayed: true,
        }
    }
}

/// What a run did, for the outcome, tests and tuning.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub windows: u64,
    /// Milliseconds spent building formulas, and in the solver (summed over threads).
    pub build_ms: u64,
    pub solve_ms: u64,
    /// Pairs that passed the quick check and were given to the solver.
    pub queries: u64,
    pub sat: u64,
    /// Race signatures with an `unknown` answer and no race: never reported.
    pub unknown: u64,
    /// Solver models whose schedule the validator rejected (an encoding bug; the pair is
    /// not reported and is counted in `unknown` too).
    pub invalid_witnesses: u64,
    /// The largest query, in events with an order variable.
    pub max_query_events: u64,
    /// Candidate pairs refuted without a solver by forced sources (≺f but not ≺).
    pub forced: u64,
    /// Signatures given up after [`Options::max_queries_per_signature`] queries (also
    /// counted in `unknown`).
    pub given_up: u64,
    /// Candidate pairs refuted without a solver by a common latch ([`super::latch`]).
    pub latched: u64,
    /// Variables found to be latches.
    pub latch_vars: u64,
    /// Windows without two threads' conflicting accesses, skipped before any table.
    pub quiet_windows: u64,
    /// Candidate pairs refuted without a solver by a read's fence
    /// ([`Window::compute_fences`]).
    pub fenced: u64,
    /// Races found without a solver, by delaying the first access ([`Options::delayed`];
    /// not counted in `queries`).
    pub delayed: u64,
}

/// A race signature (docs/REPORT.md): the variable's static name (its id in
/// `Symbols::var_static`, or the variable itself when names are unknown) and the
/// location pair, low first.
type Key = (u32, LocId, LocId);

/// The signatures already reported, the queries spent on each, and how to name a
/// variable's signature.
struct Sigs<'s> {
    statics: Option<&'s [u32]>,
    done: HashSet<Key>,
    queries: HashMap<Key, usize>,
}

impl Sigs<'_> {
    fn key(&self, var: VarId, a: LocId, b: LocId) -> Key {
        let v = self
            .statics
            .and_then(|s| s.get(var as usize).copied())
            .unwrap_or(var);
        (v, a.min(b), a.max(b))
    }
}

/// A query's answer, with the witness candidate (global indices after the window start,
/// the recorded events between the window and the query's own window included).
enum Verdict {
    Race(Vec<usize>),
    NoRace,
    Unknown,
}

/// Runs `policy` over the whole trace `events`, reporting into `races`. `statics`: the
/// static name of each variable (`Symbols::var_static`), so that each race signature is
/// decided once (without, each variable is its own static name).
pub fn run(
    events: &[Event],
    policy: Policy,
    opts: &Options,
    statics: Option<&[u32]>,
    races: &mut RaceSink,
) -> Stats {
    run_with_objects(events, policy, opts, statics, None, races)
}

/// [`run`], with the trace's reachable sets for `rdit` (without them, every BarrierPair
/// counts as ⊤).
pub fn run_with_objects(
    events: &[Event],
    policy: Policy,
    opts: &Options,
    statics: Option<&[u32]>,
    objects: Option<&ObjectIndex>,
    races: &mut RaceSink,
) -> Stats {
    if events.is_empty() {
        return Stats::default();
    }
    let trace = synthetic_trace(events.to_vec(), opts.branches);
    run_trace(&trace, policy, opts, statics, objects, None, races)
}

/// [`run_with_objects`] on a trace that owns its events (from [`synthetic_trace`]), so
/// that a long trace is not copied; windows done are reported to `progress`.
#[allow(clippy::too_many_arguments)]
pub fn run_trace(
    trace: &Trace,
    policy: Policy,
    opts: &Options,
    statics: Option<&[u32]>,
    objects: Option<&ObjectIndex>,
    progress: Option<&dyn Progress>,
    races: &mut RaceSink,
) -> Stats {
    let mut stats = Stats::default();
    let events = &trace.events[..];
    let n = events.len();
    if n == 0 {
        return stats;
    }
    let t_start = std::time::Instant::now();
    let mut facts = Facts::new(trace);
    let mut bp_edges = Vec::new();
    if has_barriers(events) {
        // rdit orders BarrierPairs by their reachable sets; mcm and said conservatively
        // take every set as `*` (docs/DETECTORS.md#mcm), which orders a superset of pairs.
        let top = ObjectIndex::default();
        let index = match policy {
            Policy::Rdit => objects.unwrap_or(&top),
            Policy::Mcm | Policy::Said => &top,
        };
        bp_edges = barrier_edges(events, index);
        facts.set_order_edges(&bp_edges);
    }
    let mut g = Global::new(events, &facts, Some(trace.has_branches));
    g.bp_edges = bp_edges;
    if opts.latches {
        g.latches = Latches::find(events, g.keys, g.branch_complete);
        stats.latch_vars = g.latches.count as u64;
    }
    if debug_level() > 0 {
        eprintln!(
            "jrace: {policy:?}: trace facts ready, {:.1}s",
            t_start.elapsed().as_secs_f64()
        );
    }
    let model = match policy {
        Policy::Mcm | Policy::Rdit => Model::Cf,
        Policy::Said => Model::Value,
    };
    let mut cp = facts.checkpoint(model, 0);
    let mut carry = Carry::default();
    let size = opts.window.max(2);
    let step = if opts.overlap {
        (size / 2).max(1)
    } else {
        size
    };
    let mut unknown: HashSet<Key> = HashSet::default();
    let mut sigs = Sigs {
        statics,
        done: HashSet::default(),
        queries: HashMap::default(),
    };
    let (mut start, mut prev_end) = (0usize, 0usize);
    let debug = debug_level() > 0;
    let windows_total = if n <= size {
        1
    } else {
        (n - size).div_ceil(step) as u64 + 1
    };
    loop {
        let end = (start + size).min(n);
        carry.advance(&g, start);
        facts.advance(&mut cp, start);
        stats.windows += 1;
        if !may_conflict(&events[start..end], prev_end.saturating_sub(start)) {
            stats.quiet_windows += 1;
        } else {
            let mut w = Window::build(&g, &carry, start, end);
            w.compute_forced();
            if opts.fences {
                w.compute_fences();
            }
            let buckets = candidates(&w, prev_end, &sigs, opts, &mut stats);
            solve_window(
                &w,
                policy,
                opts,
                buckets,
                &facts,
                &cp,
                races,
                &mut sigs,
                &mut unknown,
                &mut stats,
            );
        }
        if let Some(p) = progress {
            let undecided = unknown.iter().filter(|k| !sigs.done.contains(k)).count();
            let mut status = format!("{} queries, {} races", stats.queries, sigs.done.len());
            if undecided > 0 {
                status.push_str(&format!(", {undecided} undecided"));
            }
            p.update(policy.name(), stats.windows, windows_total, &status);
        }
        if debug && stats.windows % 500 == 0 {
            eprintln!(
                "jrace: {policy:?}: {} of {n} events, {stats:?}, {:.1}s",
                end,
                t_start.elapsed().as_secs_f64()
            );
        }
        if end >= n {
            break;
        }
        prev_end = end;
        start += step;
    }
    if debug {
        eprintln!(
            "jrace: {policy:?}: {stats:?}, {:.2}s",
            t_start.elapsed().as_secs_f64()
        );
        let mut per: Vec<(u64, bool)> = sigs
            .queries
            .iter()
            .map(|(k, &q)| (q as u64, sigs.done.contains(k)))
            .collect();
        per.sort_unstable_by(|a, b| b.cmp(a));
        per.truncate(20);
        eprintln!("jrace: {policy:?}: queries per signature, most first (count, race): {per:?}");
    }
    for (k, &q) in &sigs.queries {
        if q >= opts.max_queries_per_signature.max(1) && !sigs.done.contains(k) {
            stats.given_up += 1;
            unknown.insert(*k);
        }
    }
    stats.unknown = unknown.iter().filter(|k| !sigs.done.contains(k)).count() as u64;
    stats
}

/// `JRACE_DEBUG`, read once: 0 when unset, 2 when it is `2` (one line per solver query
/// too), else 1 (progress and per-signature query counts).
fn debug_level() -> u8 {
    static LEVEL: std::sync::OnceLock<u8> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(|| match std::env::var_os("JRACE_DEBUG") {
        None => 0,
        Some(v) if v == "2" => 2,
        Some(_) => 1,
    })
}

/// Whether `window` has a pair [`candidates`] could return: plain accesses of one
/// variable by two threads, one of them a write, the later one at or after `from`
/// (window-local). Most windows of a long trace have none (one thread at work, or
/// threads on their own data); they skip [`Window::build`].
fn may_conflict(window: &[Event], from: usize) -> bool {
    /// Per variable: the first thread that wrote it and whether others did, the same
    /// for any access.
    #[derive(Clone, Copy)]
    struct Seen {
        writer: ThreadId,
        writers: bool,
        accessor: ThreadId,
        accessors: bool,
    }
    const NOBODY: ThreadId = ThreadId::MAX;
    let mut seen: HashMap<VarId, Seen> = HashMap::default();
    for (k, e) in window.iter().enumerate() {
        if !e.kind.is_plain_access() {
            continue;
        }
        let s = seen.entry(e.target).or_insert(Seen {
            writer: NOBODY,
            writers: false,
            accessor: e.thread,
            accessors: false,
        });
        let other = |first: ThreadId, many: bool| many || (first != NOBODY && first != e.thread);
        let write = e.kind.is_write();
        if k >= from
            && ((write && other(s.accessor, s.accessors)) || (!write && other(s.writer, s.writers)))
        {
            return true;
        }
        s.accessors |= s.accessor != e.thread;
        if write {
            if s.writer == NOBODY {
                s.writer = e.thread;
            }
            s.writers |= s.writer != e.thread;
        }
    }
    false
}

/// Quick check (docs/DETECTORS.md#mcm): conflicting plain accesses of different threads, not
/// ≺f-ordered ([`Window::compute_forced`]: ≺ plus the single sources of guarding
/// reads), holding no common lock and no common latch ([`super::latch`]), whose second
/// event is beyond the previous window
/// (so each pair is tried in the first window containing both), grouped by (variable,
/// location pair) not yet reported, nearest pairs first.
fn candidates(
    w: &Window,
    prev_end: usize,
    sigs: &Sigs,
    opts: &Options,
    stats: &mut Stats,
) -> Vec<(Key, Vec<(u32, u32)>)> {
    // Plain accesses grouped by variable, in trace order within each group (one sort
    // instead of a vector per variable).
    let mut by_var: Vec<(VarId, u32)> = (0..w.len as u32)
        .filter(|&k| w.ev(k).kind.is_plain_access())
        .map(|k| (w.ev(k).target, k))
        .collect();
    by_var.sort_unstable();
    let accs: Vec<u32> = by_var.iter().map(|&(_, k)| k).collect();
    let mut buckets: HashMap<Key, Vec<(u32, u32)>> = HashMap::default();
    let mut ordered = vec![false; w.nt];
    for acc in by_var.chunk_by(|a, b| a.0 == b.0).scan(0usize, |at, g| {
        *at += g.len();
        Some(&accs[*at - g.len()..*at])
    }) {
        for (jj, &j) in acc.iter().enumerate() {
            if w.global(j) < prev_end {
                continue;
            }
            let ej = w.ev(j);
            ordered.iter_mut().for_each(|o| *o = false);
            ordered[w.tix[j as usize] as usize] = true;
            for &i in acc[..jj].iter().rev().take(opts.max_scan) {
                let u = w.tix[i as usize] as usize;
                if ordered[u] {
                    continue;
                }
                let ei = w.ev(i);
                if !ei.kind.is_write() && !ej.kind.is_write() {
                    continue;
                }
                if w.forced_prec(i, j) {
                    stats.forced += u64::from(!w.prec(i, j));
                    ordered[u] = true;
                    continue;
                }
                let key = sigs.key(ej.target, ei.loc, ej.loc);
                if sigs.done.contains(&key) || w.common_lock(i, j) {
                    continue;
                }
                let (gi, gj) = (w.global(i) as u32, w.global(j) as u32);
                if w.g.latches.common((ei.thread, gi), (ej.thread, gj)) {
                    stats.latched += 1;
                    continue;
                }
                if w.fenced(i, j) {
                    stats.fenced += 1;
                    continue;
                }
                buckets.entry(key).or_default().push((i, j));
            }
        }
    }
    let mut out: Vec<(Key, Vec<(u32, u32)>)> = buckets.into_iter().collect();
    out.sort_unstable_by_key(|(k, _)| *k);
    for (k, v) in &mut out {
        v.sort_unstable_by_key(|&(i, j)| (j - i, j));
        let spent = sigs.queries.get(k).copied().unwrap_or(0);
        let left = opts.max_queries_per_signature.max(1).saturating_sub(spent);
        v.truncate(opts.max_pairs_per_signature.max(1).min(left));
    }
    out.retain(|(_, v)| !v.is_empty());
    out
}

#[allow(clippy::too_many_arguments)]
fn solve_window(
    w: &Window,
    policy: Policy,
    opts: &Options,
    buckets: Vec<(Key, Vec<(u32, u32)>)>,
    facts: &Facts,
    cp: &Checkpoint,
    races: &mut RaceSink,
    sigs: &mut Sigs,
    unknown: &mut HashSet<Key>,
    stats: &mut Stats,
) {
    if buckets.is_empty() {
        return;
    }
    let (build_ns, solve_ns) = (AtomicU64::new(0), AtomicU64::new(0));
    let delayed = AtomicU64::new(0);
    // said's base for the whole window, built when a query first spans it.
    let whole_base: std::sync::OnceLock<Constraints> = std::sync::OnceLock::new();
    let base_id = NEXT_BASE.fetch_add(1, Ordering::Relaxed);
    let mut round = 0usize;
    let mut open: Vec<bool> = vec![true; buckets.len()];
    loop {
        // Round-robin: the next pair of every open bucket.
        let batch: Vec<(usize, u32, u32)> = buckets
            .iter()
            .enumerate()
            .filter(|(bi, (key, v))| open[*bi] && round < v.len() && !sigs.done.contains(key))
            .map(|(bi, (_, v))| (bi, v[round].0, v[round].1))
            .collect();
        if batch.is_empty() {
            break;
        }
        round += 1;
        for &(bi, _, _) in &batch {
            *sigs.queries.entry(buckets[bi].0).or_default() += 1;
        }
        let first_query = stats.queries;
        stats.queries += batch.len() as u64;
        let answers: Vec<(usize, u32, u32, Verdict, u64)> = batch
            .par_iter()
            .enumerate()
            .map(|(qi, &(bi, a, b))| {
                let every = opts.inject_unknown_every;
                if every > 0 && (first_query + qi as u64 + 1).is_multiple_of(every) {
                    return (bi, a, b, Verdict::Unknown, 0);
                }
                let t0 = std::time::Instant::now();
                // The pair-centered window of this query.
                let (lo, hi) = (w.global(a.min(b)), w.global(a.max(b)));
                // said's model asks more than a valid prefix (the whole window stays
                // consistent): its pairs all go to the solver.
                if opts.delayed && policy != Policy::Said {
                    if let Some(tail) = facts.delayed_race(cp, lo, hi, !w.g.branch_complete) {
                        delayed.fetch_add(1, Ordering::Relaxed);
                        build_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
                        return (bi, a, b, Verdict::Race(tail), 0);
                    }
                }
                let s0 = lo.saturating_sub(opts.margin).max(w.start);
                let e0 = hi.saturating_add(1 + opts.margin).min(w.end);
                let owned;
                let (sw, sa, sb) = if s0 == w.start && e0 == w.end {
                    (w, a, b)
                } else {
                    owned = w.sub(s0, e0);
                    let d = (s0 - w.start) as u32;
                    (&owned, a - d, b - d)
                };
                let (ans, size) = match policy {
                    Policy::Mcm | Policy::Rdit => {
                        let q = mcm_query(sw, sa, sb);
                        build_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
                        match q {
                            None => (Answer::Unsat, 0),
                            Some(q) => {
                                let t0 = std::time::Instant::now();
                                let ans = solve_cut(sw, &q, opts.timeout_ms);
                                solve_ns
                                    .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
                                (ans, q.events.len() as u64)
                            }
                        }
                    }
                    Policy::Said => {
                        if sw.prec(sa, sb) || sw.prec(sb, sa) {
                            (Answer::Unsat, 0)
                        } else {
                            // A query on the whole window shares the window's base; one
                            // on a pair-centered part has its own.
                            let own;
                            let base = if std::ptr::eq(sw, w) {
                                (base_id, whole_base.get_or_init(|| said_base(w)))
                            } else {
                                own = said_base(sw);
                                (NEXT_BASE.fetch_add(1, Ordering::Relaxed), &own)
                            };
                            build_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
                            with_solver(opts.timeout_ms, Some(base), |z| {
                                let t0 = std::time::Instant::now();
                                let members = &base.1.events;
                                z.push();
                                z.assert(&said_pair(sw, sa, sb));
                                let ans = z.check(members);
                                z.pop(members);
                                solve_ns
                                    .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
                                (ans, members.len() as u64)
                            })
                        }
                    }
                };
                let ans = match ans {
                    Answer::Sat { order, cut } => Verdict::Race(
                        (w.start..s0)
                            .chain(schedule(sw, policy, sa, sb, order, cut))
                            .collect(),
                    ),
                    Answer::Unsat => Verdict::NoRace,
                    Answer::Unknown => Verdict::Unknown,
                };
                (bi, a, b, ans, size)
            })
            .collect();
        let verbose = debug_level() == 2;
        for (bi, a, b, ans, size) in answers {
            stats.max_query_events = stats.max_query_events.max(size);
            let key = buckets[bi].0;
            if verbose {
                let (ea, eb) = (w.ev(a), w.ev(b));
                eprintln!(
                    "jrace: {policy:?} query: events {} and {} (variable {}, locations {} / {}), {size} events: {}",
                    w.global(a) + 1,
                    w.global(b) + 1,
                    ea.target,
                    ea.loc,
                    eb.loc,
                    match &ans {
                        Verdict::NoRace => "no race",
                        Verdict::Unknown => "unknown",
                        Verdict::Race(_) => "race",
                    }
                );
            }
            match ans {
                Verdict::NoRace => {}
                Verdict::Unknown => {
                    unknown.insert(key);
                }
                Verdict::Race(tail) => {
                    if sigs.done.contains(&key) {
                        open[bi] = false;
                        continue;
                    }
                    let (x, y) = (w.global(a.min(b)), w.global(a.max(b)));
                    match facts.validate_race_from(cp, x, y, &tail) {
                        Ok(()) => {
                            stats.sat += 1;
                            open[bi] = false;
                            sigs.done.insert(key);
                            let (ex, ey) = (w.ev(a.min(b)), w.ev(a.max(b)));
                            if races.wants_schedules() {
                                let full: Vec<u64> = (0..w.start as u64)
                                    .chain(tail.iter().map(|&i| i as u64))
                                    .collect();
                                races.report_with_schedule(
                                    ex.target,
                                    RaceAccess::of(x as u64, ex),
                                    RaceAccess::of(y as u64, ey),
                                    full,
                                );
                            } else {
                                races.report(
                                    ex.target,
                                    RaceAccess::of(x as u64, ex),
                                    RaceAccess::of(y as u64, ey),
                                );
                            }
                        }
                        Err(e) => {
                            stats.invalid_witnesses += 1;
                            unknown.insert(key);
                            if debug_level() > 0 {
                                eprintln!(
                                    "jrace: internal error: {policy:?} witness for events {} and {} rejected: {e}",
                                    x + 1,
                                    y + 1
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    stats.build_ms += build_ns.into_inner() / 1_000_000;
    stats.solve_ms += solve_ns.into_inner() / 1_000_000;
    let delayed = delayed.into_inner();
    stats.delayed += delayed;
    stats.queries -= delayed;
}

/// mcm's cut query for two events of any kind, outside the race search: whether some
/// schedule of the maximal causal model runs the threads of `a` and `b` exactly up to
/// them (the `deadlock` detector asks it for two lock requests). One window around the
/// pair, `opts.margin` events on each side, as mcm's queries; what comes before it runs
/// as recorded.
pub struct CutQueries<'a> {
    g: Global<'a>,
    opts: Options,
}

/// What [`CutQueries::decide`] says.
#[derive(Debug, PartialEq, Eq)]
pub enum CutVerdict {
    /// A schedule of the events before the cut (global indices, the recorded prefix of
    /// the window included), to be validated in model cf.
    Reached(Vec<usize>),
    /// No schedule reaches it.
    Unreachable,
    /// The solver could not tell in time.
    Unknown,
}

impl<'a> CutQueries<'a> {
    /// `facts` must carry the BarrierPair edges `bp_edges` (every set taken as `*`) when
    /// the trace has calls into excluded code.
    pub fn new(
        trace: &'a Trace,
        facts: &'a Facts<'a>,
        bp_edges: Vec<(u32, u32)>,
        opts: &Options,
    ) -> Self {
        let mut g = Global::new(&trace.events, facts, Some(trace.has_branches));
        g.bp_edges = bp_edges;
        CutQueries {
            g,
            opts: opts.clone(),
        }
    }

    /// Decides the cut at events `a` and `b` (global indices, different threads). Two
    /// events more than a window (`opts.window`) apart are not asked about: `Unknown`, as
    /// mcm never pairs them either (the query would span everything in between).
    pub fn decide(&self, a: usize, b: usize) -> CutVerdict {
        let n = self.g.events.len();
        let (lo, hi) = (a.min(b), a.max(b));
        if hi - lo > self.opts.window.max(2) {
            return CutVerdict::Unknown;
        }
        let start = lo.saturating_sub(self.opts.margin);
        let end = hi.saturating_add(1 + self.opts.margin).min(n);
        let mut carry = Carry::default();
        carry.advance(&self.g, start);
        let w = Window::build(&self.g, &carry, start, end);
        let (sa, sb) = ((a - start) as u32, (b - start) as u32);
        let Some(q) = mcm_query(&w, sa, sb) else {
            return CutVerdict::Unreachable;
        };
        match solve_cut(&w, &q, self.opts.timeout_ms) {
            Answer::Sat { order, cut } => {
                let mut tail = schedule(&w, Policy::Mcm, sa, sb, order, cut);
                tail.truncate(tail.len() - 2); // the pair itself
                CutVerdict::Reached((0..start).chain(tail).collect())
            }
            Answer::Unsat => CutVerdict::Unreachable,
            Answer::Unknown => CutVerdict::Unknown,
        }
    }
}

/// Solves mcm's cut query `q` on window `w` (this thread's solver, `timeout_ms`); a
/// model orders every event of the query, those without a variable placed too.
fn solve_cut(w: &Window, q: &Constraints, timeout_ms: u32) -> Answer {
    with_solver(timeout_ms, None, |z| {
        z.push();
        z.assert_all(q);
        let mut ans = z.check(&q.events);
        z.pop(&[]);
        if let Answer::Sat { order, cut } = &mut ans {
            place_unconstrained(w, q, order, cut);
        }
        ans
    })
}

/// The witness from a model (docs/DETECTORS.md#witnesses): the events before the cut (said: before the
/// earlier of the pair), by (order value, trace index), then the pair; global indices,
/// relative to the window start (the recorded prefix is implied).
fn schedule(
    w: &Window,
    policy: Policy,
    a: u32,
    b: u32,
    order: Vec<(u32, i64)>,
    cut: i64,
) -> Vec<usize> {
    let limit = match policy {
        Policy::Mcm | Policy::Rdit => cut,
        Policy::Said => {
            let of = |x: u32| {
                order
                    .iter()
                    .find(|&&(k, _)| k == x)
                    .map_or(i64::MIN, |p| p.1)
            };
            of(a).min(of(b))
        }
    };
    let mut p: Vec<(i64, u32)> = order
        .into_iter()
        .filter(|&(k, v)| v < limit && k != a && k != b)
        .map(|(k, v)| (v, k))
        .collect();
    p.sort_unstable();
    // said's encoding has no branch events: each runs right after its predecessor.
    let mut next = vec![0u32; w.nt];
    let mut out = Vec::with_capacity(p.len() + 2);
    let catch_up = |next: &mut Vec<u32>, out: &mut Vec<usize>, k: u32| {
        let t = w.tix[k as usize] as usize;
        let p = w.pos[k as usize];
        while next[t] < p {
            let e = w.threads[t][next[t] as usize];
            if w.ev(e).kind == jrace_trace::Kind::Branch {
                out.push(w.global(e));
            }
            next[t] += 1;
        }
        next[t] = next[t].max(p + 1);
    };
    for (_, k) in p {
        let e = w.ev(k);
        if e.kind == jrace_trace::Kind::Join {
            // The joined thread's trailing branches run before the join.
            if let Some(th) = w.threads.iter().find(|th| w.ev(th[0]).thread == e.target) {
                let last = *th.last().unwrap();
                let tl = w.tix[last as usize] as usize;
                if policy == Policy::Said
                    && w.ev(last).kind == jrace_trace::Kind::Branch
                    && next[tl] <= w.pos[last as usize]
                {
                    catch_up(&mut next, &mut out, last);
                    out.push(w.global(last));
                }
            }
        }
        catch_up(&mut next, &mut out, k);
        out.push(w.global(k));
    }
    catch_up(&mut next, &mut out, a);
    catch_up(&mut next, &mut out, b);
    out.push(w.global(a.min(b)));
    out.push(w.global(a.max(b)));
    out
}

/// A [`Trace`] owning `events`, with placeholder names, for the validator (which only
/// uses names in its messages). `branches`: whether the recording carried branches
/// (`None`: a trace with a `br` does).
pub fn synthetic_trace(events: Vec<Event>, branches: Option<bool>) -> Trace {
    let has_branches = branches.unwrap_or_else(|| super::window::has_branches(&events));
    let (mut nt, mut nv, mut nl) = (0u32, 0u32, 0u32);
    for e in &events {
        nt = nt.max(e.thread + 1);
        if e.kind.has_thread() {
            nt = nt.max(e.target + 1);
        }
        if e.kind.is_access() {
            nv = nv.max(e.target + 1);
        }
        if e.kind.has_lock() {
            nl = nl.max(e.target + 1);
        }
    }
    let mut symbols = Symbols::default();
    for i in 0..nt {
        symbols.thread(&format!("thread#{i}"));
    }
    for i in 0..nv {
        symbols.var(&format!("var#{i}"));
    }
    for i in 0..nl {
        symbols.lock(&format!("lock#{i}"));
    }
    Trace {
        symbols,
        events,
        has_branches,
    }
}

#[cfg(test)]
mod tests {
    use super::may_conflict;
    use jrace_trace::{Event, Kind};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// `may_conflict` is exactly "some conflicting pair of two threads' plain accesses
    /// ends at or after `from`", by brute force on random windows.
    #[test]
    fn may_conflict_is_the_pairwise_check() {
        let kinds = [
            Kind::Read,
            Kind::Write,
            Kind::VRead,
            Kind::VWrite,
            Kind::Branch,
        ];
        let (mut yes, mut no) = (0, 0);
        for seed in 0..20_000u64 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let n = rng.gen_range(1..12);
            let w: Vec<Event> = (0..n)
                .map(|_| {
                    Event::new(
                        rng.gen_range(0..3),
                        kinds[rng.gen_range(0..kinds.len())],
                        rng.gen_range(0..3),
                        0,
                    )
                })
                .collect();
            let from = rng.gen_range(0..=n);
            let brute = (0..n).any(|j| {
                j >= from
                    && (0..j).any(|i| {
                        let (a, b) = (&w[i], &w[j]);
                        a.kind.is_plain_access()
                            && b.kind.is_plain_access()
                            && a.target == b.target
                            && a.thread != b.thread
                            && (a.kind.is_write() || b.kind.is_write())
                    })
            });
            assert_eq!(
                may_conflict(&w, from),
                brute,
                "seed {seed}: {w:?} from {from}"
            );
            if brute {
                yes += 1
            } else {
                no += 1
            }
        }
        assert!(yes > 2000 && no > 2000, "{yes} {no}");
    }
}
