//! `mcm` and `said` against a brute-force oracle of the maximal causal model on
//! thousands of random tiny traces with values and branches (docs/DETECTORS.md#mcm):
//!
//! - `mcm` reports exactly the oracle's races (sound and maximal);
//! - `said` reports only races the oracle finds, and only races `mcm` finds;
//! - conservative mode (branches ignored: every read guarded) finds a subset;
//! - small overlapping windows find a subset;
//! - every solver model's schedule passes the validator (no invalid witness).
//!
//! The oracle enumerates every feasible prefix of a reordering (local determinism:
//! a read may return another value, which taints its thread; a tainted thread takes no
//! branch, and its writes write unknown values), with the trace's notify pairing
//! (docs/DETECTORS.md#notify-and-wake), and reports every conflicting pair of plain accesses that are the next
//! events of their threads in some such prefix.
//!
//! Size: the maximal causal model's brute-force oracle and every property checked
//! against it, in one place.

use jrace_analyzer::causal::{self, Options, Policy};
use jrace_analyzer::facts;
use jrace_analyzer::sync::NotifyMatcher;
use jrace_analyzer::testing::{random_trace, sig_string, GenConfig};
use jrace_analyzer::witness::{initial_values, value_keys, ValueKey};
use jrace_analyzer::RaceSink;
use jrace_trace::{Event, Kind, Trace};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeSet, HashMap, HashSet};

/// The generator's trace with values and branches: writes get values from {0, 1, 2},
/// reads the value they observe (variables start at 0), and a `br` follows a read with
/// probability `p_branch` (0: no branch at all, conservative mode).
fn valued(seed: u64, cfg: &GenConfig, p_branch: f64) -> (String, Trace) {
    let (text, _) = random_trace(seed, cfg);
    let mut rng = SmallRng::seed_from_u64(jrace_analyzer::testing::prop_seed(seed ^ 0x5eed));
    let mut cur: HashMap<String, i64> = HashMap::new();
    let mut out = String::new();
    for line in text.lines() {
        let mut f = line.split('|');
        let (t, op, loc) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap_or(""));
        let access = ["r(", "w(", "vr(", "vw("]
            .iter()
            .find(|p| op.starts_with(**p))
            .copied();
        match access {
            Some(p) => {
                let var = op[p.len()..op.len() - 1].to_owned();
                let v = if p.contains('w') {
                    let v = rng.gen_range(0..3);
                    cur.insert(var.clone(), v);
                    v
                } else {
                    cur.get(&var).copied().unwrap_or(0)
                };
                out.push_str(&format!("{t}|{}{var},{v})|{loc}\n", p));
                if !p.contains('w') && rng.gen_bool(p_branch) {
                    out.push_str(&format!("{t}|br|b{loc}\n"));
                }
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    let trace = jrace_trace::std_format::parse_str(&out, "gen.std")
        .unwrap_or_else(|e| panic!("{e}\n{out}"));
    (out, trace)
}

/// The brute-force oracle (see the module docs).
struct Oracle<'a> {
    ev: &'a [Event],
    trace: &'a Trace,
    threads: Vec<Vec<usize>>,
    tix: Vec<usize>,
    local: Vec<usize>,
    fork_of: Vec<Option<usize>>,
    silent_fork: HashMap<u32, usize>,
    keys: Vec<ValueKey>,
    init: Vec<Option<ValueKey>>,
    wake_notify: HashMap<usize, usize>,
    wake_wait: HashMap<usize, usize>,
    notify_wakes: HashMap<usize, Vec<usize>>,
    /// Unmatched wakes: the events that must be done before them.
    pins: HashMap<usize, Vec<usize>>,
    /// BarrierPair ordering ([`alg5_edges`]): the events that must be done before each.
    before: HashMap<usize, Vec<usize>>,
    /// The reads of read-modify-writes (a volatile read, then its thread's volatile write
    /// of the same variable, no other write in between in the trace): atomic.
    rmw_read: HashSet<usize>,
    conservative: bool,
    nlocks: usize,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct State {
    pos: Vec<u8>,
    cur: Vec<Option<ValueKey>>,
    taint: Vec<bool>,
    owner: Vec<Option<u8>>,
    lost: u128,
}

impl<'a> Oracle<'a> {
    fn new(trace: &'a Trace, conservative: bool) -> Oracle<'a> {
        let ev = &trace.events[..];
        assert!(ev.len() < 128);
        let mut dense: HashMap<u32, usize> = HashMap::new();
        let mut threads: Vec<Vec<usize>> = Vec::new();
        let (mut tix, mut local) = (Vec::new(), Vec::new());
        for (i, e) in ev.iter().enumerate() {
            let d = *dense.entry(e.thread).or_insert_with(|| {
                threads.push(Vec::new());
                threads.len() - 1
            });
            tix.push(d);
            local.push(threads[d].len());
            threads[d].push(i);
        }
        let mut fork_of = vec![None; threads.len()];
        let mut silent_fork: HashMap<u32, usize> = HashMap::new();
        let mut m: NotifyMatcher<()> = NotifyMatcher::new();
        let mut wait_of: HashMap<u32, usize> = HashMap::new();
        let (mut wake_notify, mut wake_wait) = (HashMap::new(), HashMap::new());
        let mut notify_wakes: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut pins: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut last_seen: Vec<Option<usize>> = vec![None; threads.len()];
        let mut nlocks = 0;
        for (i, e) in ev.iter().enumerate() {
            if e.kind.has_lock() {
                nlocks = nlocks.max(e.target as usize + 1);
            }
            match e.kind {
                Kind::Fork => match dense.get(&e.target) {
                    Some(&d) => fork_of[d] = Some(i),
                    None => {
                        silent_fork.insert(e.target, i);
                    }
                },
                Kind::Wait => {
                    m.wait(e.thread, e.target, i as u64);
                    wait_of.insert(e.thread, i);
                }
                Kind::Notify | Kind::NotifyAll => {
                    m.notify(e.target, i as u64, e.kind == Kind::NotifyAll, || ())
                }
                Kind::Wake => match m.wake(e.thread, e.target) {
                    Some((n, ())) => {
                        wake_notify.insert(i, n as usize);
                        notify_wakes.entry(n as usize).or_default().push(i);
                        wake_wait.insert(i, wait_of[&e.thread]);
                    }
                    None => {
                        let p = last_seen
                            .iter()
                            .enumerate()
                            .filter(|&(u, l)| u != tix[i] && l.is_some())
                            .map(|(_, l)| l.unwrap())
                            .collect();
                        pins.insert(i, p);
                    }
                },
                _ => {}
            }
            if e.kind != Kind::Branch {
                last_seen[tix[i]] = Some(i);
            }
        }
        let mut rmw_read = HashSet::new();
        let mut last_write: HashMap<u32, usize> = HashMap::new();
        for (i, e) in ev.iter().enumerate() {
            if !e.kind.is_write() {
                continue;
            }
            if e.kind == Kind::VWrite && local[i] > 0 {
                let p = threads[tix[i]][local[i] - 1];
                let fresh = last_write.get(&e.target).is_none_or(|&w| w < p);
                if ev[p].kind == Kind::VRead && ev[p].target == e.target && fresh {
                    rmw_read.insert(p);
                }
            }
            last_write.insert(e.target, i);
        }
        let keys = value_keys(ev);
        let nvars = ev
            .iter()
            .filter(|e| e.kind.is_access())
            .map(|e| e.target as usize + 1)
            .max()
            .unwrap_or(0);
        let mut init = vec![None; nvars];
        for (v, k) in initial_values(ev, &keys) {
            init[v as usize] = k;
        }
        Oracle {
            ev,
            trace,
            threads,
            tix,
            local,
            fork_of,
            silent_fork,
            keys,
            init,
            wake_notify,
            wake_wait,
            notify_wakes,
            pins,
            before: HashMap::new(),
            rmw_read,
            conservative,
            nlocks,
        }
    }

    /// The oracle of the BarrierPair model: MCM with [`alg5_edges`] (`top`: every
    /// reachable set taken as `*`).
    fn with_barriers(trace: &'a Trace, conservative: bool, top: bool) -> Oracle<'a> {
        let mut o = Oracle::new(trace, conservative);
        for (x, y) in alg5_edges(trace, top) {
            o.before.entry(y).or_default().push(x);
        }
        o
    }

    fn done(&self, s: &State, i: usize) -> bool {
        s.pos[self.tix[i]] as usize > self.local[i]
    }

    fn next(&self, s: &State, t: usize) -> Option<usize> {
        self.threads[t].get(s.pos[t] as usize).copied()
    }

    /// The guards every event needs: fork done; no changed read before a branch (and,
    /// in conservative mode, before any event that follows a read).
    fn guard_ok(&self, s: &State, i: usize) -> bool {
        let t = self.tix[i];
        if self.local[i] == 0 {
            if let Some(f) = self.fork_of[t] {
                if !self.done(s, f) {
                    return false;
                }
            }
        }
        let e = &self.ev[i];
        if matches!(e.kind, Kind::Branch | Kind::Enter | Kind::Exit) && s.taint[t] {
            return false;
        }
        if self.conservative && self.local[i] > 0 {
            let prev = &self.ev[self.threads[t][self.local[i] - 1]];
            if matches!(prev.kind, Kind::Read | Kind::VRead) && s.taint[t] {
                return false;
            }
        }
        true
    }

    /// Every BarrierPair predecessor of `i` is done.
    fn before_ok(&self, s: &State, i: usize) -> bool {
        self.before
            .get(&i)
            .is_none_or(|xs| xs.iter().all(|&x| self.done(s, x)))
    }

    fn enabled(&self, s: &State, i: usize) -> bool {
        if !self.guard_ok(s, i) {
            return false;
        }
        if !self.before_ok(s, i) {
            return false;
        }
        let e = &self.ev[i];
        // No write, and no second read-modify-write, inside another thread's one.
        if e.kind.is_write() || self.rmw_read.contains(&i) {
            let inside = (0..self.threads.len()).any(|u| {
                let p = s.pos[u] as usize;
                u != self.tix[i]
                    && p > 0
                    && p < self.threads[u].len()
                    && self.rmw_read.contains(&self.threads[u][p - 1])
                    && self.ev[self.threads[u][p - 1]].target == e.target
            });
            if inside {
                return false;
            }
        }
        let free = |l: u32| s.owner[l as usize].is_none();
        match e.kind {
            Kind::Acquire if !e.is_nested() => free(e.target),
            Kind::Wake => {
                free(e.target)
                    && match self.wake_notify.get(&i) {
                        Some(&n) => self.done(s, n) && s.lost & (1u128 << i) == 0,
                        None => self.pins[&i].iter().all(|&p| self.done(s, p)),
                    }
            }
            // Conservative mode: a thread whose (last) read changed may not end. A
            // thread without events has ended once it started.
            Kind::Join => match self
                .threads
                .iter()
                .position(|th| self.ev[th[0]].thread == e.target)
            {
                Some(c) => {
                    self.threads[c].iter().all(|&j| self.done(s, j))
                        && !(self.conservative && s.taint[c])
                }
                None => self
                    .silent_fork
                    .get(&e.target)
                    .is_none_or(|&f| self.done(s, f)),
            },
            _ => true,
        }
    }

    fn apply(&self, s: &mut State, i: usize) {
        let t = self.tix[i];
        let e = &self.ev[i];
        match e.kind {
            Kind::Read | Kind::VRead if s.cur[e.target as usize] != Some(self.keys[i]) => {
                s.taint[t] = true;
            }
            Kind::Write | Kind::VWrite => {
                s.cur[e.target as usize] = if s.taint[t] { None } else { Some(self.keys[i]) };
            }
            Kind::Acquire if !e.is_nested() => s.owner[e.target as usize] = Some(t as u8),
            Kind::Wake => s.owner[e.target as usize] = Some(t as u8),
            Kind::Release if !e.is_nested() => s.owner[e.target as usize] = None,
            Kind::Wait => s.owner[e.target as usize] = None,
            Kind::Notify | Kind::NotifyAll => {
                for &w in self.notify_wakes.get(&i).into_iter().flatten() {
                    if !self.done(s, self.wake_wait[&w]) {
                        s.lost |= 1u128 << w;
                    }
                }
            }
            _ => {}
        }
        s.pos[t] += 1;
    }

    fn races(&self) -> BTreeSet<String> {
        let start = State {
            pos: vec![0; self.threads.len()],
            cur: self.init.clone(),
            taint: vec![false; self.threads.len()],
            owner: vec![None; self.nlocks],
            lost: 0,
        };
        let mut seen: HashSet<State> = HashSet::new();
        let mut stack = vec![start];
        let mut out = BTreeSet::new();
        let sym = &self.trace.symbols;
        while let Some(s) = stack.pop() {
            if !seen.insert(s.clone()) {
                continue;
            }
            let nexts: Vec<usize> = (0..self.threads.len())
                .filter_map(|t| self.next(&s, t))
                .collect();
            for (x, &a) in nexts.iter().enumerate() {
                for &b in &nexts[x + 1..] {
                    let (ea, eb) = (&self.ev[a], &self.ev[b]);
                    if ea.kind.is_plain_access()
                        && eb.kind.is_plain_access()
                        && ea.target == eb.target
                        && (ea.kind == Kind::Write || eb.kind == Kind::Write)
                        && self.guard_ok(&s, a)
                        && self.guard_ok(&s, b)
                        && self.before_ok(&s, a)
                        && self.before_ok(&s, b)
                    {
                        out.insert(sig_string(
                            sym.static_name(ea.target),
                            sym.loc_name(ea.loc),
                            sym.loc_name(eb.loc),
                        ));
                    }
                }
            }
            for &i in &nexts {
                if self.enabled(&s, i) {
                    let mut n = s.clone();
                    self.apply(&mut n, i);
                    stack.push(n);
                }
            }
        }
        out
    }
}

fn run(trace: &Trace, policy: Policy, opts: &Options) -> (BTreeSet<String>, causal::Stats) {
    let mut sink = RaceSink::new();
    let stats = causal::run(&trace.events, policy, opts, None, &mut sink);
    let sym = &trace.symbols;
    let sigs = sink
        .pairs()
        .iter()
        .map(|p| {
            sig_string(
                sym.static_name(p.var),
                sym.loc_name(p.first_loc),
                sym.loc_name(p.second_loc),
            )
        })
        .collect();
    (sigs, stats)
}

fn cases() -> impl Iterator<Item = (u64, GenConfig, f64)> {
    let small = GenConfig::default();
    let large = GenConfig {
        max_stmts: 5,
        max_events: 20,
        ..GenConfig::default()
    };
    (0..2000u64)
        .map(move |s| (s, small.clone(), [0.0, 0.3, 0.6][s as usize % 3]))
        .chain(
            (1_000_000..1_001_000u64).map(move |s| (s, large.clone(), [0.0, 0.4][s as usize % 2])),
        )
}

#[test]
fn mcm_equals_the_oracle_and_said_is_below_it() {
    let opts = Options::default();
    // Every pair to the solver: the delayed-order shortcut changes no answer.
    let solver_only = Options {
        delayed: false,
        ..Options::default()
    };
    let (mut traces, mut oracle_races, mut said_races, mut said_less) = (0, 0, 0, 0);
    let (mut forced, mut delayed) = (0, 0);
    let mut failures = Vec::new();
    for (seed, cfg, pb) in cases() {
        let (text, trace) = valued(seed, &cfg, pb);
        traces += 1;
        let want = Oracle::new(&trace, !trace.has_branches).races();
        let (mcm, ms) = run(&trace, Policy::Mcm, &opts);
        let (said, ss) = run(&trace, Policy::Said, &opts);
        delayed += ms.delayed + ss.delayed;
        for (policy, got) in [(Policy::Mcm, &mcm)] {
            let (plain, _) = run(&trace, policy, &solver_only);
            if &plain != got {
                failures.push(format!(
                    "seed {seed}: {policy:?} {got:?}, with the solver only {plain:?}\n{text}"
                ));
            }
        }
        oracle_races += want.len();
        said_races += said.len();
        forced += ms.forced;
        said_less += usize::from(said.len() < want.len());
        if mcm != want {
            failures.push(format!("seed {seed}: mcm {mcm:?}, oracle {want:?}\n{text}"));
        }
        if !said.is_subset(&want) || !said.is_subset(&mcm) {
            failures.push(format!(
                "seed {seed}: said {said:?} not within oracle {want:?} / mcm {mcm:?}\n{text}"
            ));
        }
        for (name, s) in [("mcm", &ms), ("said", &ss)] {
            if s.invalid_witnesses > 0 || s.unknown > 0 {
                failures.push(format!("seed {seed}: {name} {s:?}\n{text}"));
            }
        }
        if failures.len() > 5 {
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(oracle_races > 2000, "weak test: only {oracle_races} races");
    assert!(
        forced > 100,
        "weak test: only {forced} pairs refuted by forced sources"
    );
    assert!(
        said_less > 100,
        "weak test: said below mcm on only {said_less} traces"
    );
    assert!(
        delayed > 1000,
        "weak test: only {delayed} races found by a delayed order"
    );
    eprintln!("{traces} traces, {oracle_races} oracle races, said {said_races}, {forced} pairs refuted by forced sources, {delayed} races found by a delayed order");
}

/// Conservative mode (every read guarded) and small windows only lose races.
#[test]
fn conservative_mode_and_windows_find_subsets() {
    let mut windowed_less = 0;
    let mut cons_less = 0;
    for seed in 0..600u64 {
        let (text, trace) = valued(seed, &GenConfig::default(), 0.4);
        let full = run(&trace, Policy::Mcm, &Options::default()).0;
        let cons = run(
            &trace,
            Policy::Mcm,
            &Options {
                branches: Some(false),
                ..Options::default()
            },
        )
        .0;
        assert!(
            cons.is_subset(&full),
            "seed {seed}: {cons:?} vs {full:?}\n{text}"
        );
        cons_less += usize::from(cons.len() < full.len());
        // Windowed said needs only each window to complete, so it is compared with the
        // oracle (= unwindowed mcm), not with unwindowed said.
        for policy in [Policy::Mcm, Policy::Said] {
            let whole = &full;
            // Small windows, and small pair-centered query windows (their own past
            // fixed: held locks and values carried in by `Window::sub`).
            for (window, margin) in [(6, 10_000), (10_000, 1), (10_000, 3), (7, 2)] {
                let (win, st) = run(
                    &trace,
                    policy,
                    &Options {
                        window,
                        margin,
                        ..Options::default()
                    },
                );
                assert_eq!(
                    st.invalid_witnesses, 0,
                    "seed {seed} {window} {margin}\n{text}"
                );
                assert!(
                    win.is_subset(whole),
                    "seed {seed} {policy:?} {window} {margin}: {win:?} vs {whole:?}\n{text}"
                );
                windowed_less += usize::from(win.len() < whole.len());
            }
        }
    }
    assert!(
        cons_less > 10 && windowed_less > 10,
        "{cons_less} {windowed_less}"
    );
}

// ---------------------------------------------------------------------------------------
// BarrierPairs (rdit, and mcm's conservative reading of them).

/// Alg 5 of the RDIT thesis, with the "events on an object" of
/// `facts/barrier.rs`, written independently of `causal::barrier` (pairwise, quadratic): for
/// every two BarrierPairs whose sets meet, their events (enter, the events in between,
/// exit) are chained in trace order; for every BarrierPair, object x of its set and
/// event e on x, the BarrierPair's events and e are chained. `top`: every set is `*`.
fn alg5_edges(trace: &Trace, top: bool) -> Vec<(usize, usize)> {
    use jrace_trace::ObjSet;
    let ev = &trace.events;
    let sym = &trace.symbols;
    let mut by_thread: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, e) in ev.iter().enumerate() {
        by_thread.entry(e.thread).or_default().push(i);
    }
    // (events of the BarrierPair, its set: None = `*`).
    let mut bps: Vec<(Vec<usize>, Option<Vec<String>>)> = Vec::new();
    let mut open: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (i, e) in ev.iter().enumerate() {
        match e.kind {
            Kind::Enter => open.entry(e.thread).or_default().push(i),
            Kind::Exit => spans.push((open.get_mut(&e.thread).unwrap().pop().unwrap(), i)),
            _ => {}
        }
    }
    for (t, st) in open {
        for en in st {
            spans.push((en, *by_thread[&t].last().unwrap()));
        }
    }
    for (en, ex) in spans {
        let t = ev[en].thread;
        let events: Vec<usize> = by_thread[&t]
            .iter()
            .copied()
            .filter(|&i| i >= en && i <= ex)
            .collect();
        let set = match &sym.objsets[ev[en].value as usize] {
            _ if top => None,
            ObjSet::All => None,
            ObjSet::Objects(os) => {
                Some(os.iter().map(|&o| sym.objects.name(o).to_owned()).collect())
            }
        };
        bps.push((events, set));
    }
    // The objects an event is on ("*" stands for "some object").
    let first_last = |t: u32| -> (usize, usize) {
        let v = &by_thread[&t];
        (v[0], *v.last().unwrap())
    };
    let on = |i: usize, o: Option<&str>| -> bool {
        let e = &ev[i];
        let named = |name: &str| match o {
            None => true,
            Some(o) => name == o,
        };
        let var_on = |v: &str| match o {
            None => true,
            Some(o) => v == o || v.starts_with(&format!("{o}.")) || v.starts_with(&format!("{o}[")),
        };
        let lock_on = |l: &str| match o {
            None => true,
            Some(o) => l == o || l.ends_with(&format!("@{o}")),
        };
        let as_thread = sym.threads.names().iter().enumerate().any(|(t, name)| {
            by_thread.contains_key(&(t as u32)) && named(name) && {
                let (f, l) = first_last(t as u32);
                i == f || i == l
            }
        });
        as_thread
            || (e.kind.is_access() && var_on(sym.var_name(e.target)))
            || (e.kind.has_lock() && lock_on(sym.lock_name(e.target)))
            || (e.kind.has_thread() && named(sym.thread_name(e.target)))
    };
    let meets = |a: &Option<Vec<String>>, b: &Option<Vec<String>>| match (a, b) {
        (None, None) => true,
        (None, Some(s)) | (Some(s), None) => !s.is_empty(),
        (Some(x), Some(y)) => x.iter().any(|o| y.contains(o)),
    };
    let mut edges = Vec::new();
    let mut chain = |mut v: Vec<usize>| {
        v.sort_unstable();
        v.dedup();
        for w in v.windows(2) {
            edges.push((w[0], w[1]));
        }
    };
    for (a, (ea, sa)) in bps.iter().enumerate() {
        for (eb, sb) in &bps[a + 1..] {
            if meets(sa, sb) {
                chain(ea.iter().chain(eb).copied().collect());
            }
        }
        let objs: Vec<Option<&str>> = match sa {
            None => vec![None],
            Some(s) => s.iter().map(|o| Some(o.as_str())).collect(),
        };
        for o in objs {
            for i in 0..ev.len() {
                if on(i, o) {
                    chain(ea.iter().copied().chain([i]).collect());
                }
            }
        }
    }
    edges
}

type Span<'a> = (&'a str, usize, usize, String);

/// Inserts random BarrierPairs into a trace text: per thread at most one span over a
/// random stretch of its events (possibly empty) and sometimes one nested inside it, each
/// with a set drawn from the trace's variables, locks and threads, empty, or `*`.
fn with_barrier_pairs(seed: u64, text: &str) -> (String, Trace) {
    let mut rng = SmallRng::seed_from_u64(jrace_analyzer::testing::prop_seed(seed ^ 0xba77));
    let lines: Vec<&str> = text.lines().collect();
    let mut per_thread: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, l) in lines.iter().enumerate() {
        per_thread
            .entry(l.split('|').next().unwrap())
            .or_default()
            .push(k);
    }
    let op = |k: usize| lines[k].split('|').nth(1).unwrap_or("");
    let mut names: Vec<String> = Vec::new();
    for l in &lines {
        let o = l.split('|').nth(1).unwrap_or("");
        if let (Some(a), Some(b)) = (o.find('('), o.find([',', ')'])) {
            let n = &o[a + 1..b];
            if !n.is_empty() && !names.iter().any(|x| x == n) {
                names.push(n.to_owned());
            }
        }
    }
    for t in per_thread.keys() {
        names.push((*t).to_owned());
    }
    names.sort();
    // Spans (thread, i, j, `M;set`): the thread's events i..j are inside.
    let mut spans: Vec<Span> = Vec::new();
    let mut threads: Vec<&str> = per_thread.keys().copied().collect();
    threads.sort();
    let mut m = 0;
    for t in threads {
        let len = per_thread[t].len();
        let ok = |i: usize, j: usize| {
            let ks = &per_thread[t];
            let wake_at = |k: usize| k < len && op(ks[k]).starts_with("wake");
            let wait_before = |k: usize| k > 0 && op(ks[k - 1]).starts_with("wait");
            // Not between a wait and its wake.
            !(wake_at(i) || wait_before(j) || (i == j && wait_before(i)))
        };
        let set = |rng: &mut SmallRng| -> String {
            if rng.gen_bool(0.1) {
                return "*".to_owned();
            }
            let n = rng.gen_range(0..=2);
            let mut v: Vec<&str> = (0..n)
                .map(|_| names[rng.gen_range(0..names.len())].as_str())
                .collect();
            v.sort();
            v.dedup();
            v.join(",")
        };
        if !rng.gen_bool(0.7) {
            continue;
        }
        let i = rng.gen_range(0..=len);
        let j = rng.gen_range(i..=len);
        if !ok(i, j) {
            continue;
        }
        m += 1;
        spans.push((t, i, j, format!("M{m};{}", set(&mut rng))));
        if rng.gen_bool(0.3) {
            let i2 = rng.gen_range(i..=j);
            let j2 = rng.gen_range(i2..=j);
            if ok(i2, j2) {
                m += 1;
                spans.push((t, i2, j2, format!("M{m};{}", set(&mut rng))));
            }
        }
    }
    let method = |d: &str| d.split(';').next().unwrap().to_owned();
    let mut out = String::new();
    let mut count: HashMap<&str, usize> = HashMap::new();
    let emit_before = |out: &mut String, t: &str, c: usize| {
        // Outer first; an empty span closes at once.
        // (Spans are pushed outer first: the index breaks ties.)
        let mut here: Vec<(usize, &Span)> = spans
            .iter()
            .enumerate()
            .filter(|(_, s)| s.0 == t && s.1 == c)
            .collect();
        here.sort_by_key(|&(k, s)| (std::cmp::Reverse(s.2), k));
        let here: Vec<&Span> = here.into_iter().map(|p| p.1).collect();
        let mut empties = Vec::new();
        for s in here {
            out.push_str(&format!("{t}|enter({})|\n", s.3));
            if s.2 == s.1 {
                empties.push(s);
            }
        }
        for s in empties.iter().rev() {
            out.push_str(&format!("{t}|exit({})|\n", method(&s.3)));
        }
    };
    let emit_after = |out: &mut String, t: &str, c: usize| {
        // Inner first.
        let mut here: Vec<(usize, &Span)> = spans
            .iter()
            .enumerate()
            .filter(|(_, s)| s.0 == t && s.2 == c && s.2 > s.1)
            .collect();
        here.sort_by_key(|&(k, s)| std::cmp::Reverse((s.1, k)));
        for (_, s) in here {
            out.push_str(&format!("{t}|exit({})|\n", method(&s.3)));
        }
    };
    for l in &lines {
        let t = l.split('|').next().unwrap();
        let c = *count.get(t).unwrap_or(&0);
        emit_before(&mut out, t, c);
        out.push_str(l);
        out.push('\n');
        count.insert(t, c + 1);
        emit_after(&mut out, t, c + 1);
        if c + 1 == per_thread[t].len() {
            emit_before(&mut out, t, c + 1);
        }
    }
    let trace = jrace_trace::std_format::parse_str(&out, "gen-bp.std")
        .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{out}"));
    (out, trace)
}

fn run_rdit(trace: &Trace, opts: &Options) -> (BTreeSet<String>, causal::Stats) {
    let mut sink = RaceSink::new();
    let index = facts::barrier::ObjectIndex::new(&trace.symbols);
    let stats = causal::run_with_objects(
        &trace.events,
        Policy::Rdit,
        opts,
        None,
        Some(&index),
        &mut sink,
    );
    let sym = &trace.symbols;
    let sigs = sink
        .pairs()
        .iter()
        .map(|p| {
            sig_string(
                sym.static_name(p.var),
                sym.loc_name(p.first_loc),
                sym.loc_name(p.second_loc),
            )
        })
        .collect();
    (sigs, stats)
}

/// On random traces with BarrierPairs: `rdit` reports exactly the races of the
/// BarrierPair-extended maximal causal model (Alg 5's pairwise chains over the trace's
/// sets), `mcm` exactly those with every set taken as `*`, and mcm ⊆ rdit ⊆ plain MCM.
#[test]
fn rdit_and_mcm_equal_the_barrier_pair_oracle() {
    let opts = Options::default();
    let (mut traces, mut with_bp, mut rdit_more, mut rdit_less) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for seed in 0..1500u64 {
        let cfg = GenConfig::default();
        let (base, _) = valued(seed, &cfg, [0.0, 0.4][seed as usize % 2]);
        let (text, trace) = with_barrier_pairs(seed, &base);
        traces += 1;
        if !trace.events.iter().any(|e| e.kind == Kind::Enter) {
            continue;
        }
        with_bp += 1;
        let cons = !trace.has_branches;
        let want_rdit = Oracle::with_barriers(&trace, cons, false).races();
        let want_mcm = Oracle::with_barriers(&trace, cons, true).races();
        let plain = Oracle::new(&trace, cons).races();
        let (rdit, rs) = run_rdit(&trace, &opts);
        let (mcm, ms) = run(&trace, Policy::Mcm, &opts);
        if rdit != want_rdit {
            failures.push(format!(
                "seed {seed}: rdit {rdit:?}, oracle {want_rdit:?}\n{text}"
            ));
        }
        if mcm != want_mcm {
            failures.push(format!(
                "seed {seed}: mcm {mcm:?}, oracle(*) {want_mcm:?}\n{text}"
            ));
        }
        if !want_mcm.is_subset(&want_rdit) || !want_rdit.is_subset(&plain) {
            failures.push(format!(
                "seed {seed}: oracles not nested: {want_mcm:?} {want_rdit:?} {plain:?}\n{text}"
            ));
        }
        for (name, s) in [("rdit", &rs), ("mcm", &ms)] {
            if s.invalid_witnesses > 0 || s.unknown > 0 {
                failures.push(format!("seed {seed}: {name} {s:?}\n{text}"));
            }
        }
        // Small windows and query windows only lose races, and never give a bad witness.
        if seed % 5 == 0 {
            for (window, margin) in [(6, 10_000), (10_000, 2)] {
                let o = Options {
                    window,
                    margin,
                    ..Options::default()
                };
                let (win, st) = run_rdit(&trace, &o);
                if !win.is_subset(&rdit) || st.invalid_witnesses > 0 {
                    failures.push(format!(
                        "seed {seed} window {window} margin {margin}: {win:?} vs {rdit:?}, {st:?}\n{text}"
                    ));
                }
            }
        }
        rdit_more += usize::from(want_rdit.len() > want_mcm.len());
        rdit_less += usize::from(want_rdit.len() < plain.len());
        if failures.len() > 5 {
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        with_bp > 700 && rdit_more > 50 && rdit_less > 50,
        "weak test: {with_bp} traces with BarrierPairs, rdit above mcm on {rdit_more}, below plain MCM on {rdit_less}"
    );
    eprintln!("{traces} traces, {with_bp} with BarrierPairs, rdit > mcm on {rdit_more}, rdit < MCM on {rdit_less}");
}

/// rdit's and mcm's witnesses, as the report shows them (canonical, and minimized for
/// `jrace witness --minimize`), keep the BarrierPair order: they validate with the
/// BarrierPair edges required, in the cf model, also when hb and shb report the same
/// race (whose own witnesses would not keep it); no race of theirs lacks a witness.
#[test]
fn rdit_witnesses_keep_the_barrier_pair_order() {
    use jrace_analyzer::facts::barrier::{barrier_edges, ObjectIndex};
    use jrace_analyzer::witness::{witness_races, Facts, Model};
    use jrace_trace::MemSource;
    let mut checked = 0;
    for seed in 0..800u64 {
        let cfg = GenConfig::default();
        let (base, _) = valued(seed, &cfg, [0.0, 0.4][seed as usize % 2]);
        let (text, trace) = with_barrier_pairs(seed, &base);
        if !trace.events.iter().any(|e| e.kind == Kind::Enter) {
            continue;
        }
        let mut facts = Facts::new(&trace);
        facts.set_order_edges(&barrier_edges(
            &trace.events,
            &ObjectIndex::new(&trace.symbols),
        ));
        for minimize in [false, true] {
            let ds = ["rdit", "mcm", "hb", "shb"]
                .iter()
                .map(|d| jrace_analyzer::make_detector(d).unwrap())
                .collect();
            let mut a = jrace_analyzer::engine::run_with_schedules(
                &mut MemSource::new(&trace),
                ds,
                &mut |_| {},
                true,
            )
            .unwrap();
            let ws = witness_races(&trace, &mut a, None, minimize);
            assert!(ws.missing.is_empty(), "seed {seed}\n{text}");
            for (r, w) in a.races.iter().zip(&ws.witnesses) {
                let aware = r
                    .detectors
                    .iter()
                    .any(|&d| ["rdit", "mcm"].contains(&a.runs[d].name));
                if !aware {
                    continue; // hb's and shb's own witnesses need not keep it
                }
                let w = w.as_ref().expect("rdit and mcm races carry witnesses");
                let (x, y) = (r.pair.first as usize, r.pair.second as usize);
                facts
                    .validate_race_model(Model::Cf, x, y, &w.schedule)
                    .unwrap_or_else(|e| {
                        panic!(
                            "seed {seed} (minimize {minimize}): {:?}: {e}\n{text}",
                            w.schedule
                        )
                    });
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "weak test: {checked} witnesses checked");
}

/// The JDK's own synchronization keeps its writers (`FLAG_JDK`, `value_keys`): on every
/// random trace, mcm with the events of a random half of the variables marked as the JDK's
/// reports exactly what the oracle finds on the same trace with those variables' writes
/// given values no other write has (so that a read can only read its recorded writer),
/// and said stays within it. The oracle never sees the flag: what it checks is that the
/// flag means "the recorded writer", whatever the values.
#[test]
fn jdk_reads_keep_their_writers() {
    let opts = Options::default();
    let (mut traces, mut differ, mut failures) = (0, 0, Vec::new());
    for (seed, cfg, pb) in cases().step_by(3) {
        let (text, trace) = valued(seed, &cfg, pb);
        let mut rng = SmallRng::seed_from_u64(jrace_analyzer::testing::prop_seed(seed ^ 0x1d4));
        let sym = &trace.symbols;
        let jdk: HashSet<u32> = (0..sym.vars.len() as u32)
            .filter(|_| rng.gen_bool(0.5))
            .collect();
        if jdk.is_empty() {
            continue;
        }
        let mut flagged = trace.clone();
        for e in flagged.events.iter_mut() {
            if e.kind.is_access() && jdk.contains(&e.target) {
                e.flags |= jrace_trace::FLAG_JDK;
            }
        }
        // The same trace, the JDK variables' writes with values of their own.
        let names: HashSet<&str> = jdk.iter().map(|&v| sym.vars.name(v)).collect();
        let mut fresh = 1000;
        let mut cur: HashMap<String, i64> = HashMap::new();
        let mut out = String::new();
        for line in text.lines() {
            let mut f = line.split('|');
            let (t, op, loc) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap_or(""));
            let access = ["r(", "w(", "vr(", "vw("]
                .iter()
                .find(|p| op.starts_with(**p))
                .copied();
            let Some(p) = access else {
                out.push_str(line);
                out.push('\n');
                continue;
            };
            let (var, _) = op[p.len()..op.len() - 1].rsplit_once(',').unwrap();
            if !names.contains(var) {
                out.push_str(line);
                out.push('\n');
                continue;
            }
            let v = if p.contains('w') {
                fresh += 1;
                cur.insert(var.to_owned(), fresh);
                fresh
            } else {
                cur.get(var).copied().unwrap_or(0)
            };
            out.push_str(&format!("{t}|{p}{var},{v})|{loc}\n"));
        }
        let unique = jrace_trace::std_format::parse_str(&out, "unique.std")
            .unwrap_or_else(|e| panic!("{e}\n{out}"));
        traces += 1;
        let want = Oracle::new(&unique, !unique.has_branches).races();
        let (mcm, ms) = run(&flagged, Policy::Mcm, &opts);
        let (said, _) = run(&flagged, Policy::Said, &opts);
        let (plain_mcm, _) = run(&trace, Policy::Mcm, &opts);
        differ += usize::from(plain_mcm != mcm);
        if mcm != want {
            failures.push(format!(
                "seed {seed}: mcm with {jdk:?} the JDK's {mcm:?}, oracle on unique values {want:?}\n{text}"
            ));
        }
        if !said.is_subset(&want) {
            failures.push(format!(
                "seed {seed}: said {said:?} not within {want:?}\n{text}"
            ));
        }
        if ms.invalid_witnesses > 0 || ms.unknown > 0 {
            failures.push(format!("seed {seed}: mcm {ms:?}\n{text}"));
        }
        if failures.len() > 5 {
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        differ >= 8,
        "weak test: the flag changed mcm's races on only {differ} of {traces} traces"
    );
    eprintln!("{traces} traces; the flag changed mcm's races on {differ}");
}

/// A random execution of 2–3 threads that take a latch by value: under lock `l`, a guard
/// read of the owner field `o` (0: free), a branch, a set `o = thread`; then work on `x`,
/// `y` (and reads of `o`) without `l`; then `o = 0`, sometimes under `l`. Threads also
/// touch `x`, `y` outside the latch. A guard that finds `o` taken gives up that round.
/// `broken` breaks the shape in one of the ways that must not be taken for a latch (no
/// branch after the guard, the set outside `l`, the guard and the set in two regions of
/// `l`, a write of `o` by a thread that does not hold it): the detector must then leave
/// the pairs to the solver, and the oracle comparison checks that it does. The flag says
/// whether the broken part ran (`t1`'s set, or the stray write).
fn latch_trace(seed: u64, broken: Option<u8>) -> (String, Trace, bool) {
    #[derive(Clone, Copy, PartialEq)]
    enum Op {
        Acq,
        Rel,
        Guard,
        Br,
        Set,
        Clear,
        Stray,
        ReadO,
        Peek,
        Close,
        Access(usize, bool),
    }
    let mut rng = SmallRng::seed_from_u64(jrace_analyzer::testing::prop_seed(seed));
    let nt = rng.gen_range(2..=3);
    let mut progs: Vec<Vec<Op>> = Vec::new();
    for t in 0..nt {
        let mut rounds: Vec<Vec<Op>> = Vec::new();
        for _ in 0..rng.gen_range(1..=2) {
            let mut p = Vec::new();
            if rng.gen_bool(0.75) {
                let (lock, br, split) = match broken {
                    Some(0) if t == 0 => (true, false, false),
                    Some(1) if t == 0 => (false, true, false),
                    Some(2) if t == 0 => (true, true, true),
                    _ => (true, true, false),
                };
                if lock {
                    p.push(Op::Acq);
                }
                p.push(Op::Guard);
                if br {
                    p.push(Op::Br);
                }
                if split {
                    p.extend([Op::Rel, Op::Acq]);
                }
                p.push(Op::Set);
                if lock {
                    p.push(Op::Rel);
                }
                for _ in 0..rng.gen_range(1..=2) {
                    if rng.gen_bool(0.2) {
                        p.push(Op::ReadO);
                    } else {
                        p.push(Op::Access(rng.gen_range(0..2), rng.gen_bool(0.5)));
                    }
                }
                let locked_clear = rng.gen_bool(0.6);
                if locked_clear {
                    p.push(Op::Acq);
                }
                p.push(Op::Clear);
                if locked_clear {
                    p.push(Op::Rel);
                }
                if rng.gen_bool(0.5) {
                    p.push(Op::Close);
                }
            } else {
                p.push(Op::Access(rng.gen_range(0..2), rng.gen_bool(0.5)));
            }
            rounds.push(p);
        }
        if broken == Some(3) && t == nt - 1 {
            rounds.insert(rng.gen_range(0..=rounds.len()), vec![Op::Stray]);
        }
        let p: Vec<Op> = rounds.concat();
        progs.push(p);
    }
    // Run it: `pc` per thread; a guard that reads a taken latch ends its round.
    let mut pc = vec![0usize; nt];
    let mut owner_lock: Option<usize> = None;
    let mut cur = [0i64; 3]; // x, y, o
    let mut out = String::new();
    let mut n = 0;
    let mut ran = false;
    let mut peek_of = vec![0i64; nt];
    let mut handles: HashMap<String, i64> = HashMap::new();
    loop {
        let ready: Vec<usize> = (0..nt)
            .filter(|&t| {
                pc[t] < progs[t].len() && (progs[t][pc[t]] != Op::Acq || owner_lock.is_none())
            })
            .collect();
        if ready.is_empty() || n >= 34 {
            break;
        }
        let t = ready[rng.gen_range(0..ready.len())];
        let op = progs[t][pc[t]];
        pc[t] += 1;
        n += 1;
        let name = format!("t{}", t + 1);
        let line = match op {
            Op::Acq => {
                owner_lock = Some(t);
                "acq(l)".to_owned()
            }
            Op::Rel => {
                owner_lock = None;
                "rel(l)".to_owned()
            }
            Op::Guard => {
                if cur[2] != 0 {
                    // Taken: the rest of the round is its branch and the end of the
                    // region it is in.
                    let mut end = pc[t];
                    while progs[t][end] != Op::Clear {
                        end += 1;
                    }
                    if progs[t].get(end + 1) == Some(&Op::Rel) {
                        end += 1;
                    }
                    let mut rest = Vec::new();
                    if progs[t][pc[t]] == Op::Br {
                        rest.push(Op::Br);
                    }
                    peek_of[t] = cur[2];
                    if owner_lock == Some(t) {
                        // A look at the holder's state while waiting (Derby's waiter
                        // calling a method on the owner).
                        if rng.gen_bool(0.6) {
                            rest.push(Op::Peek);
                        }
                        rest.push(Op::Rel);
                    }
                    progs[t].splice(pc[t]..=end, rest);
                }
                format!("r(o,{})", cur[2])
            }
            Op::Br => "br".to_owned(),
            Op::Set => {
                ran |= t == 0 && matches!(broken, Some(0..=2));
                cur[2] = t as i64 + 1;
                format!("w(o,{})", cur[2])
            }
            Op::Clear | Op::Stray => {
                ran |= op == Op::Stray;
                cur[2] = 0;
                "w(o,0)".to_owned()
            }
            Op::ReadO => format!("r(o,{})", cur[2]),
            Op::Peek => {
                let h = format!("h{}", peek_of[t]);
                format!("r({h},{})", handles.get(&h).copied().unwrap_or(0))
            }
            Op::Close => {
                let h = format!("h{}", t + 1);
                let v = handles.get(&h).copied().unwrap_or(0) + 1;
                handles.insert(h.clone(), v);
                format!("w({h},{v})")
            }
            Op::Access(v, write) => {
                let var = ["x", "y"][v];
                if write {
                    cur[v] = rng.gen_range(1..3);
                    format!("w({var},{})", cur[v])
                } else {
                    let s = format!("r({var},{})", cur[v]);
                    if rng.gen_bool(0.5) {
                        out.push_str(&format!("{name}|{s}|{n}\n"));
                        n += 1;
                        "br".to_owned()
                    } else {
                        s
                    }
                }
            }
        };
        out.push_str(&format!("{name}|{line}|{n}\n"));
    }
    let trace = jrace_trace::std_format::parse_str(&out, "latch.std")
        .unwrap_or_else(|e| panic!("{e}\n{out}"));
    // Without any branch, every read guards (conservative mode): no branch is needed.
    let ran = ran && (broken != Some(0) || trace.has_branches);
    (out, trace, ran)
}

/// The latch and fence shortcuts ([`causal::latch`], `Window::compute_fences`) refute
/// pairs without the solver and change nothing: on random latch executions, intact and
/// broken, mcm (whole trace and small windows) and said report what they report without
/// them, mcm exactly the oracle's races.
#[test]
fn latches_refute_only_what_the_model_refutes() {
    let with = Options::default();
    let without = Options {
        latches: false,
        fences: false,
        ..Options::default()
    };
    let no_fences = Options {
        fences: false,
        ..Options::default()
    };
    let (mut traces, mut latched, mut fenced, mut races, mut failures) =
        (0, 0u64, 0u64, 0, Vec::new());
    let mut windowed_fenced = 0u64;
    let mut found = [0u64; 5];
    for seed in 0..1500u64 {
        let broken = [None, None, Some(0), Some(1), Some(2), Some(3)][seed as usize % 6];
        let (text, trace, ran) = latch_trace(seed, broken);
        traces += 1;
        let want = Oracle::new(&trace, !trace.has_branches).races();
        races += want.len();
        let (mcm, ms) = run(&trace, Policy::Mcm, &with);
        let (mcm0, _) = run(&trace, Policy::Mcm, &without);
        let (mcm1, _) = run(&trace, Policy::Mcm, &no_fences);
        latched += ms.latched;
        fenced += ms.fenced;
        if mcm1 != want {
            failures.push(format!(
                "seed {seed}: mcm without fences {mcm1:?}, oracle {want:?}"
            ));
        }
        // In small windows (a fixed past, reads of the value at the window start), the
        // shortcuts change nothing either.
        let small = |latches, fences| Options {
            window: 12,
            latches,
            fences,
            ..Options::default()
        };
        let (win, wst) = run(&trace, Policy::Mcm, &small(true, true));
        let (win0, _) = run(&trace, Policy::Mcm, &small(false, false));
        windowed_fenced += wst.fenced;
        if win != win0 {
            failures.push(format!(
                "seed {seed}: windowed mcm {win:?}, without shortcuts {win0:?}, {wst:?}\n{text}"
            ));
        }
        if broken.is_none() || ran {
            found[broken.map_or(4, usize::from)] += ms.latch_vars;
        }
        if mcm != want || mcm0 != want {
            failures.push(format!(
                "seed {seed} ({broken:?}): mcm {mcm:?} (without latches and fences {mcm0:?}), oracle {want:?}, {ms:?}\n{text}"
            ));
        }
        let (said, _) = run(&trace, Policy::Said, &with);
        let (said0, _) = run(&trace, Policy::Said, &without);
        if said != said0 {
            failures.push(format!(
                "seed {seed} ({broken:?}): said {said:?}, without latches and fences {said0:?}\n{text}"
            ));
        }
        if ms.invalid_witnesses > 0 || ms.unknown > 0 {
            failures.push(format!("seed {seed}: mcm {ms:?}\n{text}"));
        }
        if failures.len() > 5 {
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{traces} traces, {races} oracle races, {latched} pairs latched, {fenced} fenced ({windowed_fenced} in small windows), latches found per shape (broken and ran 0..3, intact): {found:?}");
    assert!(
        latched > 300,
        "weak test: only {latched} pairs refuted by latches"
    );
    assert!(races > 1000, "weak test: only {races} races");
    assert!(
        fenced > 100,
        "weak test: only {fenced} pairs refuted by fences"
    );
    assert!(
        windowed_fenced > 50,
        "weak test: only {windowed_fenced} pairs refuted by fences in small windows"
    );
    // A broken shape that ran is never a latch.
    assert_eq!(found[..4].iter().sum::<u64>(), 0, "{found:?}");
    assert!(found[4] > 150, "weak test: {found:?}");
}

/// A race one delayed access away from the recorded run, behind hundreds of sections of
/// one lock whose counter reads fix their order (H5 of a hunting session: four threads
/// run `inc()` a hundred times under a lock, then `racy++`): the solver spent its whole
/// timeout on each such pair (91 s, `unknown`); the delayed recorded order finds the race
/// at once, with a schedule the validator accepts.
#[test]
fn a_race_behind_many_lock_sections_is_found_without_the_solver() {
    let mut text = String::new();
    let mut counter = 0;
    let mut line = 0;
    let mut ev = |text: &mut String, t: usize, op: String| {
        line += 1;
        text.push_str(&format!("t{t}|{op}|{line}\n"));
    };
    for t in 1..=4 {
        for _ in 0..100 {
            ev(&mut text, t, "acq(l)".into());
            ev(&mut text, t, format!("r(counter,{counter})"));
            ev(&mut text, t, "br".into());
            counter += 1;
            ev(&mut text, t, format!("w(counter,{counter})"));
            ev(&mut text, t, "rel(l)".into());
        }
        ev(&mut text, t, format!("r(racy,{})", t - 1));
        ev(&mut text, t, format!("w(racy,{t})"));
    }
    let trace = jrace_trace::std_format::parse_str(&text, "sections.std").unwrap();
    let opts = Options {
        timeout_ms: 2_000,
        ..Options::default()
    };
    let (races, stats) = run(&trace, Policy::Mcm, &opts);
    assert!(
        races.iter().any(|r| r.starts_with("racy:")),
        "{races:?} {stats:?}"
    );
    assert!(stats.delayed >= 1, "{stats:?}");
    assert_eq!(
        (stats.unknown, stats.invalid_witnesses),
        (0, 0),
        "{stats:?}"
    );
}

/// Random executions of a compare-and-set spin lock (`vr(s,0) vw(s,1)` taken as one
/// atomic operation, `vw(s,0)` to release): the sections it guards never race, in mcm and
/// in the oracle, while accesses outside it do; mcm equals the oracle, and its witnesses
/// keep every read-modify-write atomic (W-ATOMIC). Without atomicity two threads'
/// compare-and-sets could both read 0 and both enter (a false race on what the lock
/// guards, as seen with `sun.misc.Unsafe.compareAndSwapInt` spin locks).
#[test]
fn spin_lock_sections_never_race() {
    let (mut traces, mut outside) = (0, 0);
    let mut failures = Vec::new();
    for seed in 0..400u64 {
        let mut rng = SmallRng::seed_from_u64(jrace_analyzer::testing::prop_seed(seed));
        let nt = rng.gen_range(2..4usize);
        // Per thread: how far it is (0 before the section, 1 in it, 2 after), and
        // whether it touches `y` outside the section.
        let mut stage = vec![0u8; nt];
        let outside_y: Vec<bool> = (0..nt).map(|_| rng.gen_bool(0.5)).collect();
        let (mut text, mut line, mut x, mut held) = (String::new(), 0, 0, false);
        let mut emit = |t: usize, op: String, text: &mut String| {
            line += 1;
            text.push_str(&format!("t{}|{op}|{line}\n", t + 1));
        };
        while stage.iter().any(|&s| s < 2) {
            let t = rng.gen_range(0..nt);
            match stage[t] {
                0 if !held => {
                    if outside_y[t] {
                        emit(t, format!("w(y,{})", t + 1), &mut text);
                    }
                    emit(t, "vr(s,0)".into(), &mut text);
                    emit(t, "vw(s,1)".into(), &mut text);
                    emit(t, "br".into(), &mut text);
                    held = true;
                    stage[t] = 1;
                }
                0 => {
                    // A failed compare-and-set: it read 1 and spins.
                    emit(t, "vr(s,1)".into(), &mut text);
                    emit(t, "br".into(), &mut text);
                }
                1 => {
                    emit(t, format!("r(x,{x})"), &mut text);
                    x += 1;
                    emit(t, format!("w(x,{x})"), &mut text);
                    emit(t, "vw(s,0)".into(), &mut text);
                    held = false;
                    stage[t] = 2;
                }
                _ => {}
            }
            if text.len() > 1_000 {
                break;
            }
        }
        let trace = jrace_trace::std_format::parse_str(&text, "spin.std").unwrap();
        traces += 1;
        let want = Oracle::new(&trace, false).races();
        let (mcm, st) = run(&trace, Policy::Mcm, &Options::default());
        outside += want.iter().filter(|r| r.starts_with("y:")).count();
        if mcm != want || want.iter().any(|r| r.starts_with("x:")) || st.invalid_witnesses > 0 {
            failures.push(format!(
                "seed {seed}: mcm {mcm:?}, oracle {want:?}, {st:?}\n{text}"
            ));
        }
        if failures.len() > 3 {
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        outside > 20,
        "weak test: only {outside} races outside the sections"
    );
    eprintln!("{traces} traces, {outside} races outside the sections");
}
