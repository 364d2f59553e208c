//! Building witnesses: the candidates for a race (the detector's own schedule, the SHB
//! closure, greedy prefix extension with and without retreat), the first one the
//! validator accepts, and the witness step of the pipeline.

use super::*;

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
        let index = crate::facts::barrier::ObjectIndex::new(&trace.symbols);
        let edges = crate::facts::barrier::barrier_edges(&trace.events, &index);
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
