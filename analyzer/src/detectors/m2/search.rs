//! Which candidates are checked, and how.
//!
//! Candidates are grouped by (variable, thread, location, read/write, held lockset). A pair
//! of groups is skipped when the signature is already reported, when neither side writes,
//! or when the locksets intersect (a certain rejection: two sections on one lock cannot
//! both be open). Inside a group pair, for each `e1`, only the `e2` outside both strict
//! cones are candidates (the strict-cone window, two pointers); the rest are certain
//! rejections. Each candidate gets the full check: full cones (rule 4), then Lemma 5.1's
//! fast path, then `decide`. The first race ends the group pair.

use super::decide::{Decider, Fail};
use super::model::{Model, NONE};
use super::schedule::{trace_order, Expander};
use super::tail::{self, tail_witness};
use crate::detector::{RaceAccess, RaceSink};
use jrace_trace::Kind;
use rayon::prelude::*;
use rustc_hash::FxHashSet as HashSet;

/// Full checks per group pair before the rest of it counts as undecided.
const CHECK_BUDGET: usize = 4096;
/// `decide` calls per group pair before the rest counts as undecided.
const DECIDE_BUDGET: usize = 16;

pub(super) enum Verdict {
    /// A race, with its witness: a schedule of `X`'s model events (`None` when the sink
    /// does not want schedules and building it would cost extra).
    Race(Option<Vec<u32>>),
    NoRace {
        certain: bool,
    },
}

/// What a group pair found.
enum Found {
    /// A race `(e1, e2)` and its witness over `X`'s model events, if built.
    Race(u32, u32, Option<Vec<u32>>),
    /// No race, and some rejection was uncertain.
    Uncertain,
}

/// What the search found beyond the reported races.
pub(super) struct Summary {
    /// Signatures (variable, low location, high location) with an uncertain rejection
    /// and no report.
    pub unknown: u64,
    pub decides: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct GroupKey {
    var: u32,
    thread: u32,
    loc: u32,
    write: bool,
    lockset: u32,
}

/// Counters for `JRACE_DEBUG`.
#[derive(Default, Debug)]
struct Stats {
    group_pairs: u64,
    checks: u64,
    fast_races: u64,
    decide_races: u64,
    tail_races: u64,
    decide_secs: f64,
    witness_secs: f64,
    expand_secs: f64,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.group_pairs += o.group_pairs;
        self.checks += o.checks;
        self.fast_races += o.fast_races;
        self.decide_races += o.decide_races;
        self.tail_races += o.tail_races;
        self.decide_secs += o.decide_secs;
        self.witness_secs += o.witness_secs;
        self.expand_secs += o.expand_secs;
    }
}

/// What the search found on one variable, in the order it found it.
#[derive(Default)]
struct VarResult {
    /// `(e1, e2, schedule)` per reported location pair.
    races: Vec<(u32, u32, Option<Vec<u64>>)>,
    /// Location pairs `(low, high)` with an uncertain rejection and no race.
    uncertain: Vec<(u32, u32)>,
    decides: u64,
    stats: Stats,
}

pub(super) fn run(m: &Model, sink: &mut RaceSink) -> Summary {
    let mut lap = super::Lap::new();
    // Plain accesses of shared variables, bucketed by variable (trace order inside).
    let nv = m.shared_var.len();
    let mut off = vec![0u32; nv + 1];
    let plain = |g: usize, e: &jrace_trace::Event| {
        e.kind.is_plain_access() && m.tix[g] != NONE && m.shared_var[e.target as usize]
    };
    for (g, e) in m.events.iter().enumerate() {
        if plain(g, e) {
            off[e.target as usize + 1] += 1;
        }
    }
    for v in 0..nv {
        off[v + 1] += off[v];
    }
    let mut accesses = vec![0u32; off[nv] as usize];
    let mut cursor = off.clone();
    for (g, e) in m.events.iter().enumerate() {
        if plain(g, e) {
            let c = &mut cursor[e.target as usize];
            accesses[*c as usize] = g as u32;
            *c += 1;
        }
    }
    drop(cursor);
    let vars: Vec<u32> = (0..nv as u32)
        .filter(|&v| off[v as usize] < off[v as usize + 1])
        .collect();
    lap.lap("search: groups");
    // Variables are independent: searched in parallel, reported in order.
    let schedules = sink.wants_schedules();
    let expander = schedules.then(|| Expander::new(m));
    let results: Vec<VarResult> = vars
        .par_iter()
        .map_init(
            || Search::new(m, schedules),
            |s, &v| {
                let range = off[v as usize] as usize..off[v as usize + 1] as usize;
                s.variable(&accesses[range], expander.as_ref())
            },
        )
        .collect();
    let mut stats = Stats::default();
    let mut decides = 0;
    let mut uncertain: HashSet<(u32, u32, u32)> = HashSet::default();
    for (&var, r) in vars.iter().zip(results) {
        for (e1, e2, sched) in r.races {
            let a = RaceAccess::of(e1 as u64, &m.events[e1 as usize]);
            let b = RaceAccess::of(e2 as u64, &m.events[e2 as usize]);
            match sched {
                Some(sched) => sink.report_with_schedule(var, a, b, sched),
                None => {
                    sink.report(var, a, b);
                }
            }
        }
        uncertain.extend(r.uncertain.iter().map(|&(l1, l2)| (var, l1, l2)));
        decides += r.decides;
        stats.add(&r.stats);
    }
    lap.lap("search: group pairs");
    if super::debug() {
        eprintln!("m2: {stats:?}");
    }
    let unknown = uncertain
        .iter()
        .filter(|&&(v, a, b)| !sink.contains(v, a, b))
        .count() as u64;
    Summary { unknown, decides }
}

fn intersects(a: &[u32], b: &[u32]) -> bool {
    a.iter().any(|l| b.contains(l))
}

struct Search<'m, 'a> {
    m: &'m Model<'a>,
    decider: Decider<'m, 'a>,
    s1: Vec<i32>,
    f1: Vec<i32>,
    s2: Vec<i32>,
    f2: Vec<i32>,
    x: Vec<i32>,
    opens: Vec<u32>,
    decides: u64,
    /// Whether the sink keeps schedules (else Lemma 5.1 witnesses are not built).
    schedules: bool,
    stats: Stats,
    /// Buffers of [`Search::variable`].
    cones: Vec<i32>,
    keyed: Vec<(GroupKey, u32)>,
    sorted: Vec<u32>,
}

impl<'m, 'a> Search<'m, 'a> {
    fn new(m: &'m Model<'a>, schedules: bool) -> Self {
        Search {
            m,
            decider: Decider::new(m),
            s1: vec![0; m.k],
            f1: vec![0; m.k],
            s2: vec![0; m.k],
            f2: vec![0; m.k],
            x: vec![0; m.k],
            opens: Vec::new(),
            decides: 0,
            schedules,
            stats: Stats::default(),
            cones: Vec::new(),
            keyed: Vec::new(),
            sorted: Vec::new(),
        }
    }

    /// Every group pair of one variable (`gs`: its groups, sorted by key). A pair is
    /// skipped when it cannot race (same thread, two reads, a common lock) or when its
    /// location pair is already reported.
    fn variable(&mut self, accesses: &[u32], ex: Option<&Expander>) -> VarResult {
        let m = self.m;
        // Groups: runs of equal keys, each in trace order.
        let mut keyed = std::mem::take(&mut self.keyed);
        keyed.clear();
        keyed.extend(accesses.iter().map(|&g| {
            let e = &m.events[g as usize];
            let d = m.tix[g as usize];
            let key = GroupKey {
                var: e.target,
                thread: d,
                loc: e.loc,
                write: e.kind == Kind::Write,
                lockset: m.held[d as usize][m.pos[g as usize] as usize],
            };
            (key, g)
        }));
        keyed.sort_unstable();
        let mut sorted = std::mem::take(&mut self.sorted);
        sorted.clear();
        sorted.extend(keyed.iter().map(|&(_, g)| g));
        let mut gs: Vec<(GroupKey, std::ops::Range<usize>)> = Vec::new();
        let mut i = 0;
        while i < keyed.len() {
            let k = keyed[i].0;
            let j = i + keyed[i..].partition_point(|&(k2, _)| k2 == k);
            gs.push((k, i..j));
            i = j;
        }
        // Strict cones, once per access (one row of the causal timestamps each).
        let k = m.k;
        let mut cones = std::mem::take(&mut self.cones);
        cones.clear();
        cones.resize(sorted.len() * k, 0);
        for (i, &g) in sorted.iter().enumerate() {
            m.scone(g, &mut cones[i * k..(i + 1) * k]);
        }
        let r = self.group_pairs(&gs, &sorted, &cones, ex);
        self.keyed = keyed;
        self.sorted = sorted;
        self.cones = cones;
        r
    }

    fn group_pairs(
        &mut self,
        gs: &[(GroupKey, std::ops::Range<usize>)],
        sorted: &[u32],
        cones: &[i32],
        ex: Option<&Expander>,
    ) -> VarResult {
        let m = self.m;
        let k = m.k;
        let mut r = VarResult::default();
        let mut reported: smallvec::SmallVec<[(u32, u32); 8]> = smallvec::SmallVec::new();
        for a in 0..gs.len() {
            for b in a + 1..gs.len() {
                let (ka, kb) = (gs[a].0, gs[b].0);
                if ka.thread == kb.thread || !(ka.write || kb.write) {
                    continue;
                }
                if intersects(
                    &m.locksets[ka.lockset as usize],
                    &m.locksets[kb.lockset as usize],
                ) {
                    continue;
                }
                let sig = (ka.loc.min(kb.loc), ka.loc.max(kb.loc));
                if reported.contains(&sig) {
                    continue;
                }
                self.stats.group_pairs += 1;
                let (ra, rb) = (gs[a].1.clone(), gs[b].1.clone());
                let (ca, cb) = (
                    &cones[ra.start * k..ra.end * k],
                    &cones[rb.start * k..rb.end * k],
                );
                match self.group_pair(&sorted[ra], &sorted[rb], ca, cb) {
                    Some(Found::Race(e1, e2, w)) => {
                        let sched = match (w, ex) {
                            (Some(w), Some(ex)) if self.schedules => {
                                let t0 = std::time::Instant::now();
                                let sched = ex.expand(m, &w, e1, e2);
                                self.stats.expand_secs += t0.elapsed().as_secs_f64();
                                Some(sched)
                            }
                            _ => None,
                        };
                        r.races.push((e1, e2, sched));
                        reported.push(sig);
                    }
                    Some(Found::Uncertain) => r.uncertain.push(sig),
                    None => {}
                }
            }
        }
        r.decides = std::mem::take(&mut self.decides);
        r.stats = std::mem::take(&mut self.stats);
        r
    }

    /// Looks for a race between the accesses of two groups. `None`: every candidate was
    /// rejected with certainty.
    /// `c1`, `c2`: the strict cones of `g1`'s and `g2`'s accesses, `k` entries each.
    fn group_pair(&mut self, g1: &[u32], g2: &[u32], c1: &[i32], c2: &[i32]) -> Option<Found> {
        let m = self.m;
        let k = m.k;
        let q1 = m.thread_of(g1[0]);
        let q2 = m.thread_of(g2[0]);
        let (mut lo, mut hi) = (0usize, 0usize);
        let mut checks = 0usize;
        let mut decides = 0usize;
        let mut uncertain = false;
        for (i1, &e1) in g1.iter().enumerate() {
            let p1 = m.pos_of(e1) as i32;
            let lo_pos = c1[i1 * k + q2] + 1;
            while lo < g2.len() && (m.pos_of(g2[lo]) as i32) < lo_pos {
                lo += 1;
            }
            if lo == g2.len() {
                break; // both bounds only grow: no later `e1` has candidates
            }
            while hi < g2.len() && c2[hi * k + q1] < p1 {
                hi += 1;
            }
            if lo >= hi {
                continue;
            }
            self.s1.copy_from_slice(&c1[i1 * k..(i1 + 1) * k]);
            self.f1.copy_from_slice(&self.s1);
            m.rule4(&mut self.f1, q1, q2);
            for (i2, &e2) in g2.iter().enumerate().take(hi).skip(lo) {
                if checks >= CHECK_BUDGET {
                    return Some(Found::Uncertain);
                }
                checks += 1;
                self.stats.checks += 1;
                self.s2.copy_from_slice(&c2[i2 * k..(i2 + 1) * k]);
                match self.check(e1, e2, q1, q2, &mut decides) {
                    Verdict::Race(w) => return Some(Found::Race(e1, e2, w)),
                    Verdict::NoRace { certain: false } => uncertain = true,
                    Verdict::NoRace { certain: true } => {}
                }
            }
        }
        uncertain.then_some(Found::Uncertain)
    }

    /// The per-candidate check, for a pair outside both strict cones.
    /// Expects `s1`/`f1` to hold `e1`'s strict and full cones, `s2` `e2`'s strict cone.
    fn check(&mut self, e1: u32, e2: u32, q1: usize, q2: usize, decides: &mut usize) -> Verdict {
        let m = self.m;
        self.f2.copy_from_slice(&self.s2);
        m.rule4(&mut self.f2, q1, q2);
        let mut item4 = false;
        for c in 0..m.k {
            self.x[c] = self.f1[c].max(self.f2[c]);
            item4 |= self.x[c] != self.s1[c].max(self.s2[c]);
        }
        if self.x[q1] >= m.pos_of(e1) as i32 || self.x[q2] >= m.pos_of(e2) as i32 {
            // The strict cones passed, so rule 4 put a racing event in X.
            return Verdict::NoRace { certain: false };
        }
        m.open_acqs(&self.x, &mut self.opens);
        if self.opens.is_empty() {
            // Lemma 5.1: t|X · e1 · e2 is a witness.
            if !self.schedules && !cfg!(debug_assertions) {
                return Verdict::Race(None);
            }
            let t0 = std::time::Instant::now();
            let w = trace_order(m, &self.x);
            debug_assert!(
                super::decide::replay(m, &w, &self.x, e1, e2),
                "m2: Lemma 5.1 witness failed to replay for ({e1},{e2})"
            );
            self.stats.fast_races += 1;
            self.stats.witness_secs += t0.elapsed().as_secs_f64();
            return Verdict::Race(Some(w));
        }
        let mut locks: Vec<u32> = self
            .opens
            .iter()
            .map(|&a| m.events[a as usize].target)
            .collect();
        locks.sort_unstable();
        if locks.windows(2).any(|w| w[0] == w[1]) {
            return Verdict::NoRace { certain: !item4 };
        }
        if *decides >= DECIDE_BUDGET {
            return Verdict::NoRace { certain: false };
        }
        *decides += 1;
        self.decides += 1;
        // The postponed-tail witness: when it is valid, `decide` succeeds (tail.rs).
        if let Some(tail) = tail_witness(m, &self.x, &self.opens, e1, e2) {
            if self.decider.within_budget(&self.x, &self.opens) {
                self.stats.tail_races += 1;
                debug_assert!(
                    self.decider
                        .decide(e1, e2, &self.x, &self.opens, false)
                        .is_ok(),
                    "m2: a valid tail witness, but decide fails: x={:?} e1={e1} e2={e2}",
                    self.x
                );
                if !self.schedules && !cfg!(debug_assertions) {
                    return Verdict::Race(None);
                }
                let w = tail::schedule(m, &self.x, &tail);
                debug_assert!(
                    super::decide::replay(m, &w, &self.x, e1, e2),
                    "m2: tail witness failed to replay for ({e1},{e2})"
                );
                return Verdict::Race(Some(w));
            }
        }
        let opens = std::mem::take(&mut self.opens);
        let t0 = std::time::Instant::now();
        let r = self.decider.decide(e1, e2, &self.x, &opens, self.schedules);
        self.stats.decide_secs += t0.elapsed().as_secs_f64();
        self.stats.decide_races += u64::from(r.is_ok());
        self.opens = opens;
        match r {
            Ok(witness) => Verdict::Race(witness),
            Err(Fail::Closure) => Verdict::NoRace { certain: !item4 },
            Err(Fail::Step6) | Err(Fail::Budget) => Verdict::NoRace { certain: false },
        }
    }
}
