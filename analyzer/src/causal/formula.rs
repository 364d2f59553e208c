//! The constraint builder shared by `mcm` and `said` (and meant for `rdit`): formulas over
//! one integer order variable per event and the cut C, in integer difference logic, kept
//! solver-independent so they can be printed, tested and translated ([`super::solve`]).
//!
//! - [`mcm_query`]: the cut encoding (M1–M5, see [`mcm_query`]) for one pair, on the pair's
//!   slice ([`slice()`]).
//! - [`said_base`] and [`said_pair`]: Said et al.'s S1–S4 (docs/DETECTORS.md#said) over the whole window, and ρ.
//!
//! Both go through [`Builder`], which owns the Boolean variables (memoized read
//! definitions `c_r` and per-thread history chains `h`) and the list of assertions.
//! A later detector adds its own constraints with [`Builder::assert`] and
//! [`Builder::edge`] (rdit's BarrierPair edges go there), using the same variables.

// Per-thread frontier vectors read best with an index.
#![allow(clippy::needless_range_loop)]

use super::window::{Window, NONE};
use jrace_trace::Kind;
use rustc_hash::FxHashMap as HashMap;

/// An integer term: an event's order variable (window-local index) or the cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    Ev(u32),
    Cut,
}

/// A formula. Atoms are difference constraints `x < y`, `x ≤ y`, `x = y` and Booleans.
#[derive(Clone, Debug, PartialEq)]
pub enum F {
    True,
    False,
    Lt(Term, Term),
    Le(Term, Term),
    Eq(Term, Term),
    B(u32),
    And(Vec<F>),
    Or(Vec<F>),
    /// `b ⇒ f`: one-directional definitions.
    Implies(u32, Box<F>),
}

pub fn lt(x: u32, y: u32) -> F {
    F::Lt(Term::Ev(x), Term::Ev(y))
}
/// `O_e ≥ C`: e is not in the prefix.
pub fn out(e: u32) -> F {
    F::Le(Term::Cut, Term::Ev(e))
}

/// `and` with constant folding.
pub fn and(v: Vec<F>) -> F {
    let mut out = Vec::with_capacity(v.len());
    for f in v {
        match f {
            F::True => {}
            F::False => return F::False,
            F::And(inner) => out.extend(inner),
            f => out.push(f),
        }
    }
    match out.len() {
        0 => F::True,
        1 => out.pop().unwrap(),
        _ => F::And(out),
    }
}

/// `or` with constant folding.
pub fn or(v: Vec<F>) -> F {
    let mut out = Vec::with_capacity(v.len());
    for f in v {
        match f {
            F::False => {}
            F::True => return F::True,
            F::Or(inner) => out.extend(inner),
            f => out.push(f),
        }
    }
    match out.len() {
        0 => F::False,
        1 => out.pop().unwrap(),
        _ => F::Or(out),
    }
}

/// Which events have order variables, the Booleans, and the assertions of one query.
#[derive(Clone, Debug, Default)]
pub struct Constraints {
    /// Window-local events with an order variable, ascending.
    pub events: Vec<u32>,
    /// The events of the query, ascending: those of `events`, and (mcm) events that
    /// occur in no constraint but program order, left without a variable; a witness
    /// places each right before the next event of its thread that has one
    /// ([`place_unconstrained`]).
    pub members: Vec<u32>,
    pub nbools: u32,
    pub asserts: Vec<F>,
}

/// Builds [`Constraints`] over a set of events of one window.
pub struct Builder<'w, 'g, 'a> {
    pub w: &'w Window<'g, 'a>,
    /// Whether local event k has an order variable.
    member: Vec<bool>,
    pub c: Constraints,
    /// `c_r` per read (memoized).
    read_bool: HashMap<u32, u32>,
    /// `h` chain per (thread, number of reads): a Boolean, or `True`.
    chain: HashMap<(u32, u32), F>,
    /// Reads whose `c_r` still needs its definition.
    pending: Vec<u32>,
    /// Whether the formula uses the cut (mcm) or constrains the whole window (said).
    cut: bool,
    /// Whether source writes need their thread's history (mcm); said does not, and
    /// asserts every read, so it folds nothing.
    histories: bool,
}

impl<'w, 'g, 'a> Builder<'w, 'g, 'a> {
    pub fn new(w: &'w Window<'g, 'a>, members: &[u32], cut: bool) -> Self {
        let mut member = vec![false; w.len];
        for &k in members {
            member[k as usize] = true;
        }
        let mut events = members.to_vec();
        events.sort_unstable();
        Builder {
            w,
            member,
            c: Constraints {
                members: events.clone(),
                events,
                ..Constraints::default()
            },
            read_bool: HashMap::default(),
            chain: HashMap::default(),
            pending: Vec::new(),
            cut,
            histories: cut,
        }
    }

    pub fn has(&self, k: u32) -> bool {
        k != NONE && self.member[k as usize]
    }

    pub fn assert(&mut self, f: F) {
        if f != F::True {
            self.c.asserts.push(f);
        }
    }

    /// An M1 edge `O_x < O_y`, when both have order variables (an event without one is
    /// after the cut).
    pub fn edge(&mut self, x: u32, y: u32) {
        if self.has(x) && self.has(y) {
            self.assert(lt(x, y));
        }
    }

    fn fresh(&mut self) -> u32 {
        self.c.nbools += 1;
        self.c.nbools - 1
    }

    /// Whether read r returns its recorded value in every schedule of the query in
    /// which its own thread's earlier reads do: it reads the initial value and no write
    /// of the query can come before it, or its source is its own thread's latest write
    /// before it and no write of the query can come in between. (Its `c_r` is `True`.)
    fn trivially_ok(&self, r: u32) -> bool {
        let w = self.w;
        let x = w.ev(r).target;
        let writes: Vec<u32> = w
            .writes
            .get(&x)
            .map(|ws| ws.iter().copied().filter(|&k| self.has(k)).collect())
            .unwrap_or_default();
        let tr = w.tix[r as usize];
        let own = writes
            .iter()
            .copied()
            .rfind(|&k| w.tix[k as usize] == tr && k < r);
        match own {
            None => w.init_ok(r) && writes.iter().all(|&k| w.prec(r, k)),
            Some(o) => {
                (w.key(o) == w.key(r) || (w.observed_local(r) == Some(o) && w.explained(r)))
                    && writes
                        .iter()
                        .all(|&k| k == o || w.prec(k, o) || w.prec(r, k))
            }
        }
    }

    /// `c_r`: read r returns its recorded value (defined later by [`Builder::define_reads`]).
    pub fn read_ok(&mut self, r: u32) -> F {
        if let Some(&b) = self.read_bool.get(&r) {
            return if b == NONE { F::True } else { F::B(b) };
        }
        if self.histories && self.trivially_ok(r) {
            self.read_bool.insert(r, NONE);
            return F::True;
        }
        let b = self.fresh();
        self.read_bool.insert(r, b);
        self.pending.push(r);
        F::B(b)
    }

    /// H(e): every window read of e's thread before e returns its recorded value.
    pub fn history(&mut self, e: u32) -> F {
        let t = self.w.tix[e as usize];
        let n = self.w.reads_before[e as usize];
        self.chain_lit(t, n)
    }

    /// H(e) ∧ c_e: every window read of e's thread up to e, e included, returns its
    /// recorded value.
    pub fn history_through(&mut self, e: u32) -> F {
        let t = self.w.tix[e as usize];
        let own = matches!(self.w.ev(e).kind, Kind::Read | Kind::VRead);
        let n = self.w.reads_before[e as usize] + u32::from(own);
        self.chain_lit(t, n)
    }

    fn chain_lit(&mut self, t: u32, n: u32) -> F {
        if n == 0 {
            return F::True;
        }
        if let Some(f) = self.chain.get(&(t, n)) {
            return f.clone();
        }
        // Build the missing links bottom-up: h_n ⇒ h_{n-1} ∧ c_{r_n}.
        let mut j = n;
        while j > 0 && !self.chain.contains_key(&(t, j)) {
            j -= 1;
        }
        for m in j + 1..=n {
            let prev = if m == 1 {
                F::True
            } else {
                self.chain[&(t, m - 1)].clone()
            };
            let r = self.w.reads[t as usize][m as usize - 1];
            let c = self.read_ok(r);
            let link = match and(vec![prev.clone(), c]) {
                F::True => F::True,
                f if f == prev => prev,
                f => {
                    let b = self.fresh();
                    self.assert(F::Implies(b, Box::new(f)));
                    F::B(b)
                }
            };
            self.chain.insert((t, m), link);
        }
        self.chain[&(t, n)].clone()
    }

    /// Writes the definitions (M4 / S4) of every read referenced so far, and of those
    /// they reference in turn. With `histories`, a source write needs H(w) (mcm); said
    /// leaves it out (every read there is concrete anyway).
    pub fn define_reads(&mut self, histories: bool) {
        while let Some(r) = self.pending.pop() {
            let b = self.read_bool[&r];
            debug_assert_ne!(b, NONE);
            let def = self.read_def(r, histories);
            self.assert(F::Implies(b, Box::new(def)));
        }
    }

    /// DEF(r) = INIT(r) ∨ ⋁_{w ∈ Src(r)} (H(w) ∧ O_w < O_r ∧ ⋀_{w' ∈ Int(r,w)} (O_w' < O_w ∨ O_r < O_w')).
    pub fn read_def(&mut self, r: u32, histories: bool) -> F {
        let w = self.w;
        let x = w.ev(r).target;
        let writes: Vec<u32> = w
            .writes
            .get(&x)
            .map(|ws| ws.iter().copied().filter(|&k| self.has(k)).collect())
            .unwrap_or_default();
        let mut alts = Vec::new();
        if w.init_ok(r) {
            alts.push(and(writes
                .iter()
                .filter(|&&w2| !w.prec(r, w2))
                .map(|&w2| lt(r, w2))
                .collect()));
        }
        for src in w.sources(r) {
            if !self.has(src) {
                continue;
            }
            let mut conj = vec![];
            if !w.prec(src, r) {
                conj.push(lt(src, r));
            }
            for &w2 in &writes {
                if w2 == src || w.prec(w2, src) || w.prec(r, w2) {
                    continue;
                }
                let before_src = lt(w2, src);
                let after_r = lt(r, w2);
                conj.push(if w.prec(src, w2) && w.prec(w2, r) {
                    F::False
                } else if w.prec(src, w2) {
                    after_r
                } else if w.prec(w2, r) {
                    before_src
                } else {
                    or(vec![before_src, after_r])
                });
            }
            if histories {
                let h = self.history(src);
                conj.push(h);
            }
            alts.push(and(conj));
        }
        or(alts)
    }

    pub fn finish(self) -> Constraints {
        debug_assert!(self.pending.is_empty());
        let _ = self.cut;
        self.c
    }
}

/// The events that can matter for the pair (a, b) (slicing; see the module docs of
/// [`super`]): the ≺-closed set of events that may come before the cut in some
/// witness, grown from the pair's ≺-predecessors by the sources of the reads guards need
/// and by the releases that lock exclusion may need. Excludes a, b and everything after
/// them. `None` if a ≺ b or b ≺ a.
pub fn slice(w: &Window, a: u32, b: u32) -> Option<Vec<u32>> {
    if w.prec(a, b) || w.prec(b, a) {
        return None;
    }
    let nt = w.nt;
    let (ta, tb) = (w.tix[a as usize] as usize, w.tix[b as usize] as usize);
    let (pa, pb) = (w.pos[a as usize], w.pos[b as usize]);
    let after_pair = |e: u32| w.vc(e, ta) > pa || w.vc(e, tb) > pb;
    let conservative = !w.g.branch_complete;
    // The strict ≺-predecessors of a and of b (a and b are unordered, so neither
    // includes the other).
    let mut front = vec![0u32; nt];
    for u in 0..nt {
        let pred_a = if u == ta { pa } else { w.vc(a, u) };
        let pred_b = if u == tb { pb } else { w.vc(b, u) };
        front[u] = pred_a.max(pred_b);
    }
    let mut need = vec![0u32; nt];
    if conservative {
        need[ta] = need[ta].max(pa);
        need[tb] = need[tb].max(pb);
    }
    let mut scanned = vec![0u32; nt];
    let mut needed_done = vec![0u32; nt];
    // Regions entered so far, per lock, and whether their releases were added.
    let mut entered: HashMap<u32, Vec<u32>> = HashMap::default();
    for (r, reg) in w.regions.iter().enumerate() {
        if reg.acq == NONE {
            entered.entry(reg.lock).or_default().push(r as u32);
        }
    }
    let mut closed_locks: HashMap<u32, usize> = HashMap::default();
    let add = |front: &mut Vec<u32>, e: u32| {
        let row = w.vc_row(e);
        for u in 0..nt {
            front[u] = front[u].max(row[u]);
        }
    };
    loop {
        let mut changed = false;
        for t in 0..nt {
            while scanned[t] < front[t] {
                let e = w.threads[t][scanned[t] as usize];
                let p = w.pos[e as usize];
                if w.is_branch_like(e) || (conservative && w.after_read(e)) {
                    need[t] = need[t].max(p);
                }
                if let Some(l) = w.join_guard(e).filter(|_| conservative) {
                    let tl = w.tix[l as usize] as usize;
                    need[tl] = need[tl].max(w.pos[l as usize] + 1);
                }
                if let Some(&r) = w.region_of_acq.get(&e) {
                    entered
                        .entry(w.regions[r as usize].lock)
                        .or_default()
                        .push(r);
                }
                scanned[t] += 1;
                changed = true;
            }
        }
        for t in 0..nt {
            while needed_done[t] < need[t] {
                let e = w.threads[t][needed_done[t] as usize];
                needed_done[t] += 1;
                changed = true;
                if !matches!(w.ev(e).kind, Kind::Read | Kind::VRead) {
                    continue;
                }
                for src in w.sources(e) {
                    if after_pair(src) {
                        continue;
                    }
                    add(&mut front, src);
                    let ts = w.tix[src as usize] as usize;
                    need[ts] = need[ts].max(w.pos[src as usize]);
                }
            }
        }
        for (&lock, regs) in &entered {
            let done = closed_locks.get(&lock).copied().unwrap_or(0);
            if done == regs.len() {
                continue;
            }
            let t0 = w.regions[regs[0] as usize].thread;
            if regs.iter().all(|&r| w.regions[r as usize].thread == t0) {
                continue;
            }
            closed_locks.insert(lock, regs.len());
            for &r in regs {
                let rel = w.regions[r as usize].rel;
                if rel != NONE && !after_pair(rel) {
                    add(&mut front, rel);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut out = Vec::new();
    for t in 0..nt {
        out.extend_from_slice(&w.threads[t][..front[t] as usize]);
    }
    Some(out)
}

/// The mcm query for (a, b) (M1–M5, with the pair at the cut), on its
/// slice. `None` if the pair is MHB-ordered.
pub fn mcm_query(w: &Window, a: u32, b: u32) -> Option<Constraints> {
    let mut members = slice(w, a, b)?;
    members.push(a);
    members.push(b);
    let mut bld = Builder::new(w, &members, true);
    let events = bld.c.events.clone();
    // M1: the cross edges here; program order at the end, among the events that occur
    // in some other constraint (the others need no variable).
    for &(x, y) in &w.edges {
        bld.edge(x, y);
    }
    // The pair at the cut.
    bld.assert(F::Eq(Term::Ev(a), Term::Cut));
    bld.assert(F::Eq(Term::Ev(b), Term::Cut));
    // M2: lock regions entered before the cut do not overlap.
    for regs in w.by_lock.values() {
        let live: Vec<_> = regs
            .iter()
            .map(|&r| w.regions[r as usize])
            .filter(|g| g.acq == NONE || bld.has(g.acq))
            .collect();
        for (i, r1) in live.iter().enumerate() {
            for r2 in &live[i + 1..] {
                if r1.thread == r2.thread {
                    continue;
                }
                let ordered = |x: u32, y: u32| x != NONE && y != NONE && w.prec(x, y);
                if ordered(r1.rel, r2.acq) || ordered(r2.rel, r1.acq) {
                    continue;
                }
                let mut alts = Vec::new();
                for (x, y) in [(r1, r2), (r2, r1)] {
                    if x.acq != NONE {
                        alts.push(out(x.acq));
                    }
                    if bld.has(x.rel) && y.acq != NONE {
                        alts.push(lt(x.rel, y.acq));
                    }
                }
                bld.assert(or(alts));
            }
        }
    }
    atomicity(w, &mut bld, true);
    // M3 and M5.
    let conservative = !w.g.branch_complete;
    for &k in &events {
        let e = w.ev(k);
        if e.kind == Kind::Wake {
            let gk = w.global(k) as u32;
            let n = w.g.facts.wake_notify(gk);
            let v = w.g.facts.wake_wait(gk);
            if let (Some(n), Some(v)) = (n, v) {
                if n as usize >= w.start && v as usize >= w.start {
                    let (n, v) = ((n as usize - w.start) as u32, (v as usize - w.start) as u32);
                    if bld.has(n) && bld.has(v) {
                        bld.assert(or(vec![out(k), lt(v, n)]));
                    }
                }
            }
        }
        if k == a || k == b {
            if conservative && w.after_read(k) {
                let h = bld.history(k);
                bld.assert(h);
            }
            continue;
        }
        let guarded = if conservative {
            w.after_read(k)
        } else {
            w.is_branch_like(k)
        };
        let mut needs = Vec::new();
        if guarded && w.reads_before[k as usize] > 0 {
            needs.push(bld.history(k));
        }
        // Without recorded branches, the joined thread's last read may decide whether it
        // ends: a join needs it to return its recorded value.
        if let Some(l) = w.join_guard(k).filter(|_| conservative) {
            needs.push(bld.history_through(l));
        }
        let need = and(needs);
        if need != F::True {
            let away = if conservative {
                F::Lt(Term::Cut, Term::Ev(k))
            } else {
                out(k)
            };
            bld.assert(or(vec![away, need]));
        }
    }
    // M4.
    bld.define_reads(true);
    let mut c = bld.finish();
    let mut used = vec![false; w.len];
    for f in &c.asserts {
        mark_terms(f, &mut used);
    }
    for t in 0..w.nt {
        let mut prev = NONE;
        for &k in &w.threads[t] {
            if used[k as usize] {
                if prev != NONE {
                    c.asserts.push(lt(prev, k));
                }
                prev = k;
            }
        }
    }
    c.events.retain(|&k| used[k as usize]);
    Some(c)
}

/// The window's read-modify-writes ([`crate::facts::Facts::rmw_write`]) as window-local
/// (read, write), `NONE` for a half outside the window.
fn rmw_pairs(w: &Window) -> Vec<(u32, u32)> {
    let f = w.g.facts;
    let local = |g: usize| {
        if (w.start..w.end).contains(&g) {
            (g - w.start) as u32
        } else {
            NONE
        }
    };
    let mut out = Vec::new();
    for k in 0..w.len as u32 {
        let g = w.global(k);
        match w.ev(k).kind {
            Kind::VRead => {
                if let Some(wr) = f.rmw_write(g) {
                    out.push((k, local(wr)));
                }
            }
            // One whose read is before the window: the read is fixed as recorded.
            Kind::VWrite => {
                if let Some(r) = f.rmw_read(g) {
                    if r < w.start {
                        out.push((NONE, k));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// M6 (and said's S5): a read-modify-write is atomic: every other thread's write of its
/// variable comes before its read or after its write (or, with a cut, is not in the
/// prefix). A half outside the window: a read before it is done, a write after it is not.
fn atomicity(w: &Window, bld: &mut Builder, cut: bool) {
    for (r, wr) in rmw_pairs(w) {
        let k = if r != NONE { r } else { wr };
        let e = w.ev(k);
        if (r != NONE && !bld.has(r)) || (r == NONE && !bld.has(wr)) {
            continue; // not run: nothing to keep out
        }
        let Some(writes) = w.writes.get(&e.target) else {
            continue;
        };
        for &w2 in writes {
            if w.tix[w2 as usize] == w.tix[k as usize] || !bld.has(w2) {
                continue;
            }
            let mut alts = Vec::new();
            if cut {
                alts.push(out(w2));
            }
            if r != NONE {
                alts.push(lt(w2, r));
            }
            if wr != NONE && bld.has(wr) {
                alts.push(lt(wr, w2));
            }
            bld.assert(or(alts));
        }
    }
}

fn mark_terms(f: &F, used: &mut [bool]) {
    let mut mark = |t: &Term| {
        if let Term::Ev(k) = t {
            used[*k as usize] = true;
        }
    };
    match f {
        F::Lt(x, y) | F::Le(x, y) | F::Eq(x, y) => {
            mark(x);
            mark(y);
        }
        F::And(v) | F::Or(v) => v.iter().for_each(|g| mark_terms(g, used)),
        F::Implies(_, g) => mark_terms(g, used),
        F::True | F::False | F::B(_) => {}
    }
}

/// Order values for a query's events without a variable: every value (and the cut) is
/// doubled, and each such event takes the value just below the next event of its thread
/// that has one (ties broken by trace index); events with no such later event are left
/// out (they follow the cut).
pub fn place_unconstrained(
    w: &Window,
    c: &Constraints,
    order: &mut Vec<(u32, i64)>,
    cut: &mut i64,
) {
    *cut *= 2;
    for p in order.iter_mut() {
        p.1 *= 2;
    }
    let value: HashMap<u32, i64> = order.iter().copied().collect();
    let mut next: Vec<Option<i64>> = vec![None; w.nt];
    for &k in c.members.iter().rev() {
        let t = w.tix[k as usize] as usize;
        match value.get(&k) {
            Some(&v) => next[t] = Some(v),
            None => {
                if let Some(v) = next[t] {
                    order.push((k, v - 1));
                }
            }
        }
    }
}

/// S1–S4 (Said et al., docs/DETECTORS.md#said): the whole window, branches removed, every read keeps its value.
pub fn said_base(w: &Window) -> Constraints {
    let members: Vec<u32> = (0..w.len as u32)
        .filter(|&k| w.ev(k).kind != Kind::Branch)
        .collect();
    let mut bld = Builder::new(w, &members, false);
    for t in 0..w.nt {
        let mut prev = NONE;
        for &k in &w.threads[t] {
            if bld.has(k) {
                if prev != NONE {
                    bld.assert(lt(prev, k));
                }
                prev = k;
            }
        }
    }
    // Edges from or to a branch move to the nearest non-branch event on its side.
    let step = |k: u32, dir: i64| -> u32 {
        let t = w.tix[k as usize] as usize;
        let mut p = w.pos[k as usize] as i64;
        while p >= 0 && (p as usize) < w.threads[t].len() {
            let e = w.threads[t][p as usize];
            if w.ev(e).kind != Kind::Branch {
                return e;
            }
            p += dir;
        }
        NONE
    };
    for &(x, y) in &w.edges {
        bld.edge(step(x, -1), step(y, 1));
    }
    for regs in w.by_lock.values() {
        for (i, &r1) in regs.iter().enumerate() {
            for &r2 in &regs[i + 1..] {
                let (r1, r2) = (w.regions[r1 as usize], w.regions[r2 as usize]);
                if r1.thread == r2.thread {
                    continue;
                }
                let ordered = |x: u32, y: u32| x != NONE && y != NONE && w.prec(x, y);
                if ordered(r1.rel, r2.acq) || ordered(r2.rel, r1.acq) {
                    continue;
                }
                let mut alts = Vec::new();
                for (x, y) in [(r1, r2), (r2, r1)] {
                    // x entirely before y: needs x's release in the window and y's acquire.
                    if x.rel != NONE && y.acq != NONE {
                        alts.push(lt(x.rel, y.acq));
                    }
                }
                bld.assert(or(alts));
            }
        }
    }
    atomicity(w, &mut bld, false);
    for k in 0..w.len as u32 {
        let e = w.ev(k);
        match e.kind {
            Kind::Wake => {
                let gk = w.global(k) as u32;
                if let (Some(n), Some(v)) = (w.g.facts.wake_notify(gk), w.g.facts.wake_wait(gk)) {
                    if n as usize >= w.start && v as usize >= w.start {
                        bld.assert(lt(
                            (v as usize - w.start) as u32,
                            (n as usize - w.start) as u32,
                        ));
                    }
                }
            }
            Kind::Read | Kind::VRead => {
                let c = bld.read_ok(k);
                bld.assert(c);
            }
            _ => {}
        }
    }
    bld.define_reads(false);
    bld.finish()
}

/// ρ(a, b) (Said et al.'s Eq. 3): a and b are enabled together.
pub fn said_pair(w: &Window, a: u32, b: u32) -> F {
    let nb = |k: u32, dir: i64| -> u32 {
        let t = w.tix[k as usize] as usize;
        let mut p = w.pos[k as usize] as i64 + dir;
        while p >= 0 && (p as usize) < w.threads[t].len() {
            let e = w.threads[t][p as usize];
            if w.ev(e).kind != Kind::Branch {
                return e;
            }
            p += dir;
        }
        if dir < 0 {
            // The thread's first window event: its fork, if in the window.
            if let Some(f) = w
                .edges
                .iter()
                .find(|&&(x, y)| y == w.threads[t][0] && w.ev(x).kind == Kind::Fork)
            {
                if w.threads[t]
                    .iter()
                    .take(w.pos[k as usize] as usize)
                    .all(|&e| w.ev(e).kind == Kind::Branch)
                {
                    return f.0;
                }
            }
        }
        NONE
    };
    let mut conj = Vec::new();
    for (x, y) in [(a, b), (b, a)] {
        let prev = nb(x, -1);
        let next = nb(x, 1);
        if prev != NONE {
            conj.push(lt(prev, y));
        }
        if next != NONE {
            conj.push(lt(y, next));
        }
    }
    and(conj)
}
