//! `decide(e1, e2, X)` (docs/DETECTORS.md#m2): the weakest order respecting the trace on a
//! compressed `X` (variables and locks used by two threads or more), its observation and
//! lock closure, the trace-order insertions of step 6 (nearest-neighbour enumeration), and
//! the max-min linearization whose witness is replayed before a race is reported.
//!
//! Size: one file for one algorithm (the paper's Algorithm 2): its steps share the chain
//! representation below and its invariants.
//!
//! The partial order lives on `k` chains (the paper's App. A): for every node and chain
//! `c`, `succ[node][c]` is the earliest node of chain `c` the node reaches. Since earlier
//! nodes of a chain reach at least as much, `succ` is monotone along a chain, `pred` is a
//! binary search, and inserting `u → v` walks each chain back from `pred(u)` until nothing
//! changes. Step 6 keeps an undo log instead of copying the order.
//!
//! Closure is incremental: an insertion records which rule instances it can affect —
//! (O1) of the reads whose predecessors grew, (O2) of the readers of writes whose
//! successors shrank, (L) of the acquires whose successors shrank — and only those are
//! re-examined, until nothing changes.
//!
//! Slicing (jrace's own, not in the paper): `decide` first tries `X` cut at its earliest
//! open acquire (moved back until no thread holds a shared lock across the cut). The part
//! of `X` before the cut runs first in trace order; the order is built, closed and
//! linearized on the rest only, with reads of a source before the cut treated as reads of
//! `INIT`. Its witness is replayed ([`Decider::replay_kept`]: the kept events after the
//! cut, from the state the events before it leave; the whole schedule is built and replayed
//! from the start only when a schedule is wanted, and in debug builds), so a success is
//! sound. On a failure, *relaxed* slices (the events before the cut constrain nothing, so
//! the order is contained in the whole order and a closure cycle there is one in the whole)
//! are tried with cuts moving back geometrically; a cycle is `Fail::Closure`, as on the
//! whole of `X`. Otherwise the whole of `X` is decided as before. Debug builds check that a
//! slice success is also a success on the whole of `X` (so m2 stays pure M2; not proven,
//! checked by the property tests), and that a relaxed cycle is a whole-`X` cycle.

use super::model::{is_acq, is_rel, Model, NONE};
use jrace_trace::Kind;

/// Why a decision failed.
pub(super) enum Fail {
    /// A cycle before step 6 (closure or `P_X`): certain unless rule 4 was used.
    Closure,
    /// Every choice of `i` failed in step 6 (or the witness did not replay): uncertain.
    Step6,
    /// `X` exceeded the size budget: uncertain.
    Budget,
}

/// Compressed `X` over at most this many (nodes × threads) entries.
const MAX_ENTRIES: usize = 1 << 25;

struct Cycle;

pub(super) struct Decider<'m, 'a> {
    m: &'m Model<'a>,
    k: usize,
    /// `X` as thread positions (model events).
    frontier: Vec<i32>,
    /// The slice's cut (global index): events of `X` before it are scheduled first, in
    /// trace order, and left out of the order (0: the whole of `X`).
    cut: u32,
    /// The *relaxed* slice (see [`Self::decide`]): the events before the cut constrain
    /// nothing beyond what causal order implies, so the order is a subset of the whole
    /// of `X`'s and a cycle is one there.
    relaxed: bool,
    /// Per chain: `rel_ev` entries before the cut (node `j` is `rel_ev[c][base[c] + j]`).
    base: Vec<u32>,
    len: Vec<u32>,
    off: Vec<usize>,
    succ: Vec<u32>,
    logging: bool,
    undo: Vec<(u32, u32)>,
    dirty_lo: Vec<u32>,
    dirty_hi: Vec<u32>,
    changed: Vec<u32>,
    /// Per chain: local indices of read nodes, of acquire nodes.
    reads: Vec<Vec<u32>>,
    acqs: Vec<Vec<u32>>,
}

impl<'m, 'a> Decider<'m, 'a> {
    pub fn new(m: &'m Model<'a>) -> Self {
        let k = m.k;
        Decider {
            m,
            k,
            frontier: vec![-1; k],
            cut: 0,
            relaxed: false,
            base: vec![0; k],
            len: vec![0; k],
            off: vec![0; k + 1],
            succ: Vec::new(),
            logging: false,
            undo: Vec::new(),
            dirty_lo: vec![NONE; k],
            dirty_hi: vec![0; k],
            changed: Vec::new(),
            reads: vec![Vec::new(); k],
            acqs: vec![Vec::new(); k],
        }
    }

    #[inline]
    fn node_of(&self, g: u32) -> (usize, u32) {
        let c = self.m.thread_of(g);
        (c, self.m.rel_idx[g as usize] - self.base[c])
    }
    /// Global index of node `j` of chain `c`.
    #[inline]
    fn ev(&self, c: usize, j: u32) -> u32 {
        self.m.rel_ev[c][(self.base[c] + j) as usize]
    }
    #[inline]
    fn id(&self, c: usize, j: u32) -> usize {
        self.off[c] + j as usize
    }
    #[inline]
    fn s(&self, c: usize, j: u32, to: usize) -> u32 {
        self.succ[self.id(c, j) * self.k + to]
    }
    #[inline]
    fn reaches(&self, u: (usize, u32), v: (usize, u32)) -> bool {
        if u.0 == v.0 {
            u.1 <= v.1
        } else {
            self.s(u.0, u.1, v.0) <= v.1
        }
    }
    /// The latest node of chain `i` that reaches `u`.
    fn pred(&self, u: (usize, u32), i: usize) -> Option<u32> {
        if i == u.0 {
            return Some(u.1);
        }
        let (mut lo, mut hi) = (0u32, self.len[i]);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.s(i, mid, u.0) <= u.1 {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo.checked_sub(1)
    }
    #[inline]
    fn in_x(&self, g: u32) -> bool {
        let d = self.m.thread_of(g);
        (self.m.pos_of(g) as i32) <= self.frontier[d]
    }
    /// Global index of the last node of chain `c` in `X`, if any.
    fn last_g(&self, c: usize) -> Option<u32> {
        (self.len[c] > 0).then(|| self.ev(c, self.len[c] - 1))
    }

    fn insert(&mut self, ug: u32, vg: u32) -> Result<(), Cycle> {
        let (u, v) = (self.node_of(ug), self.node_of(vg));
        if self.reaches(u, v) {
            return Ok(());
        }
        if self.reaches(v, u) {
            return Err(Cycle);
        }
        let k = self.k;
        let vid = self.id(v.0, v.1);
        let sv: smallvec::SmallVec<[u32; 16]> =
            self.succ[vid * k..(vid + 1) * k].iter().copied().collect();
        for i in 0..k {
            if self.len[i] == 0 {
                continue;
            }
            let Some(mut j) = self.pred(u, i) else {
                continue;
            };
            loop {
                let node = self.id(i, j);
                let mut any = false;
                for (c, &svc) in sv.iter().enumerate() {
                    let idx = node * k + c;
                    let old = self.succ[idx];
                    if svc < old {
                        if c != i {
                            let hi = if old == NONE { self.len[c] } else { old };
                            self.dirty_lo[c] = self.dirty_lo[c].min(svc);
                            self.dirty_hi[c] = self.dirty_hi[c].max(hi);
                        }
                        if self.logging {
                            self.undo.push((idx as u32, old));
                        }
                        self.succ[idx] = svc;
                        any = true;
                    }
                }
                if !any {
                    break;
                }
                self.changed.push(node as u32);
                if j == 0 {
                    break;
                }
                j -= 1;
            }
        }
        Ok(())
    }

    /// (O1) for read `r`: every other write that precedes `r` precedes its source.
    fn o1(&mut self, rg: u32) -> Result<(), Cycle> {
        let w = self.m.rf[rg as usize];
        if w == NONE || w < self.cut {
            return Ok(()); // INIT (or a source before the cut): seeded once
        }
        let x = self.m.events[rg as usize].target;
        let cw = self.m.thread_of(w);
        let r = self.node_of(rg);
        for j in 0..self.k {
            if self.len[j] == 0 {
                continue;
            }
            let Some(p) = self.pred(r, j) else { continue };
            let g = self.ev(j, p);
            let Some(l) = self.m.var_lists.get(&(j as u32, x)) else {
                continue;
            };
            let i = l.writes.partition_point(|&a| a <= g);
            if i == 0 {
                continue;
            }
            let wp = l.writes[i - 1];
            if wp < self.cut {
                continue; // before the cut: precedes every node
            }
            if j == cw {
                if wp != w {
                    return Err(Cycle);
                }
            } else {
                self.insert(wp, w)?;
            }
        }
        Ok(())
    }

    /// (O2) for read `r`: every write after its source comes after `r`.
    fn o2(&mut self, rg: u32) -> Result<(), Cycle> {
        let w = self.m.rf[rg as usize];
        if w == NONE || w < self.cut {
            return Ok(());
        }
        let x = self.m.events[rg as usize].target;
        let wn = self.node_of(w);
        for j in 0..self.k {
            let Some(last) = self.last_g(j) else { continue };
            let Some(l) = self.m.var_lists.get(&(j as u32, x)) else {
                continue;
            };
            let i = if j == wn.0 {
                l.writes.partition_point(|&a| a <= w)
            } else {
                let s = self.s(wn.0, wn.1, j);
                if s == NONE {
                    continue;
                }
                let g = self.ev(j, s);
                l.writes.partition_point(|&a| a < g)
            };
            match l.writes.get(i) {
                Some(&w2) if w2 <= last => self.insert(rg, w2)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// (L) for the section opened by `a1`: if it starts before another section ends, it
    /// ends before that section starts.
    fn lrule(&mut self, a1: u32) -> Result<(), Cycle> {
        let l = self.m.events[a1 as usize].target;
        let an = self.node_of(a1);
        let r1 = self.m.mate[a1 as usize];
        let r1_in = r1 != NONE && self.in_x(r1);
        for j in 0..self.k {
            if j == an.0 {
                continue;
            }
            let Some(last) = self.last_g(j) else { continue };
            let s = self.s(an.0, an.1, j);
            if s == NONE {
                continue;
            }
            let g = self.ev(j, s);
            let Some(ll) = self.m.lock_lists.get(&(j as u32, l)) else {
                continue;
            };
            let i = ll.rels.partition_point(|&a| a < g);
            let Some(&r2) = ll.rels.get(i) else { continue };
            if r2 > last {
                continue;
            }
            if !r1_in {
                return Err(Cycle);
            }
            let a2 = self.m.mate[r2 as usize];
            if a2 < self.cut {
                if self.relaxed {
                    continue;
                }
                // A section across the cut (never chosen so): give up on the slice.
                return Err(Cycle);
            }
            self.insert(r1, a2)?;
        }
        Ok(())
    }

    fn close(&mut self) -> Result<(), Cycle> {
        loop {
            let mut work = false;
            for c in 0..self.k {
                if self.dirty_lo[c] < self.dirty_hi[c] {
                    let (lo, hi) = (self.dirty_lo[c], self.dirty_hi[c]);
                    self.dirty_lo[c] = NONE;
                    self.dirty_hi[c] = 0;
                    work = true;
                    let a = self.reads[c].partition_point(|&j| j < lo);
                    let b = self.reads[c].partition_point(|&j| j < hi);
                    for t in a..b {
                        let j = self.reads[c][t];
                        let g = self.ev(c, j);
                        self.o1(g)?;
                    }
                } else {
                    self.dirty_lo[c] = NONE;
                    self.dirty_hi[c] = 0;
                }
            }
            if !self.changed.is_empty() {
                work = true;
                let mut changed = std::mem::take(&mut self.changed);
                changed.sort_unstable();
                changed.dedup();
                for &node in &changed {
                    let c = self.off.partition_point(|&o| o <= node as usize) - 1;
                    let j = node as usize - self.off[c];
                    let g = self.ev(c, j as u32);
                    let e = &self.m.events[g as usize];
                    if e.kind.is_write() {
                        for &r in self.m.readers_of(g) {
                            if self.in_x(r) {
                                self.o2(r)?;
                            }
                        }
                    } else if is_acq(e) {
                        self.lrule(g)?;
                    }
                }
                changed.clear();
                if self.changed.is_empty() {
                    self.changed = changed;
                }
            }
            if !work {
                return Ok(());
            }
        }
    }

    fn clear_dirty(&mut self) {
        self.dirty_lo.fill(NONE);
        self.dirty_hi.fill(0);
        self.changed.clear();
    }

    /// Builds `X`'s compressed chains and `P_X` (R1, R2, hard edges; R3 from `opens`).
    fn build(&mut self, x: &[i32], opens: &[u32]) -> Result<Result<(), Cycle>, Fail> {
        let k = self.k;
        self.frontier.copy_from_slice(x);
        let mut total = 0usize;
        for c in 0..k {
            let n = if x[c] < 0 {
                0
            } else {
                let at = self.m.chain[c][x[c] as usize];
                self.m.rel_ev[c].partition_point(|&g| g <= at)
            };
            let b = self.m.rel_ev[c].partition_point(|&g| g < self.cut).min(n);
            self.base[c] = b as u32;
            let n = n - b;
            self.len[c] = n as u32;
            self.off[c] = total;
            total += n;
        }
        self.off[k] = total;
        if total.saturating_mul(k) > MAX_ENTRIES {
            return Err(Fail::Budget);
        }
        self.succ.clear();
        self.succ.resize(total * k, NONE);
        self.undo.clear();
        self.logging = false;
        self.clear_dirty();
        for c in 0..k {
            self.reads[c].clear();
            self.acqs[c].clear();
        }
        // Reverse trace order: every base edge (PO, rf, hard) goes forward in the trace.
        let mut cur: Vec<u32> = self.len.clone();
        loop {
            let mut best: Option<(u32, usize)> = None;
            for (c, &n) in cur.iter().enumerate() {
                if n > 0 {
                    let g = self.ev(c, n - 1);
                    if best.is_none_or(|(bg, _)| g > bg) {
                        best = Some((g, c));
                    }
                }
            }
            let Some((g, c)) = best else { break };
            cur[c] -= 1;
            let j = cur[c];
            let id = self.id(c, j);
            if j + 1 < self.len[c] {
                let (a, b) = self.succ.split_at_mut((id + 1) * k);
                a[id * k..].copy_from_slice(&b[..k]);
            }
            self.succ[id * k + c] = j;
            let e = &self.m.events[g as usize];
            let mut targets: smallvec::SmallVec<[u32; 8]> = smallvec::SmallVec::new();
            if e.kind.is_write() {
                for &r in self.m.readers_of(g) {
                    if self.m.thread_of(r) != c && self.in_x(r) {
                        targets.push(r);
                    }
                }
            }
            if let Some(hs) = self.m.hard_succs.get(&g) {
                for &h in hs {
                    if self.in_x(h) {
                        targets.push(h);
                    }
                }
            }
            for t in targets {
                let (ct, jt) = self.node_of(t);
                let tid = self.id(ct, jt);
                for cc in 0..k {
                    let v = self.succ[tid * k + cc];
                    if v < self.succ[id * k + cc] {
                        self.succ[id * k + cc] = v;
                    }
                }
            }
            if matches!(e.kind, Kind::Read | Kind::VRead) {
                self.reads[c].push(j);
            } else if is_acq(e) {
                self.acqs[c].push(j);
            }
        }
        for c in 0..k {
            self.reads[c].reverse();
            self.acqs[c].reverse();
        }
        Ok(self.seed_and_close(opens))
    }

    fn seed_and_close(&mut self, opens: &[u32]) -> Result<(), Cycle> {
        let k = self.k;
        // R3: every release of an open acquire's lock in X precedes it.
        for &a in opens {
            let l = self.m.events[a as usize].target;
            let ca = self.m.thread_of(a);
            for j in 0..k {
                if j == ca {
                    continue;
                }
                let Some(last) = self.last_g(j) else { continue };
                if let Some(ll) = self.m.lock_lists.get(&(j as u32, l)) {
                    let i = ll.rels.partition_point(|&r| r <= last);
                    if i > 0 && ll.rels[i - 1] >= self.cut {
                        self.insert(ll.rels[i - 1], a)?;
                    }
                }
            }
        }
        // INIT reads precede every write of their variable; every instance once.
        for c in 0..k {
            for t in 0..self.reads[c].len() {
                let g = self.ev(c, self.reads[c][t]);
                let src = self.m.rf[g as usize];
                if self.relaxed && src != NONE && src < self.cut {
                    // The relaxed slice: a source `w` before the cut is not a node, but a
                    // later write `w'` that `w` causally precedes (program order,
                    // reads-from, hard edges: `w <P w'` in the whole order) must follow
                    // the read (O2). The first such write per thread suffices.
                    let x = self.m.events[g as usize].target;
                    let (tw, pw) = (self.m.thread_of(src), self.m.pos_of(src) as i32);
                    for j in 0..k {
                        let Some(last) = self.last_g(j) else { continue };
                        let Some(l) = self.m.var_lists.get(&(j as u32, x)) else {
                            continue;
                        };
                        let f = l.writes.partition_point(|&w| w < self.cut);
                        let t = l.writes.len();
                        let i = f + l.writes[f..t]
                            .partition_point(|&w| self.m.c_comp(j, self.m.pos_of(w), tw) < pw);
                        if let Some(&w) = l.writes.get(i) {
                            if w <= last {
                                self.insert(g, w)?;
                            }
                        }
                    }
                } else if src == NONE || src < self.cut {
                    let x = self.m.events[g as usize].target;
                    for j in 0..k {
                        let Some(last) = self.last_g(j) else { continue };
                        if let Some(l) = self.m.var_lists.get(&(j as u32, x)) {
                            let f = l.writes.partition_point(|&w| w < self.cut);
                            if let Some(&w) = l.writes.get(f) {
                                if w <= last {
                                    self.insert(g, w)?;
                                }
                            }
                        }
                    }
                } else {
                    self.o1(g)?;
                    self.o2(g)?;
                }
            }
            for t in 0..self.acqs[c].len() {
                let g = self.ev(c, self.acqs[c][t]);
                self.lrule(g)?;
            }
        }
        self.close()
    }

    /// Step 6 for `i`: order every conflicting pair between the other chains in trace
    /// order (nearest unordered neighbour per chain), closing after each insertion.
    fn step6(&mut self, i: usize) -> Result<(), Cycle> {
        let k = self.k;
        let mut cur = vec![0u32; k];
        loop {
            let mut best: Option<(u32, usize)> = None;
            for c in 0..k {
                if c != i && cur[c] < self.len[c] {
                    let g = self.ev(c, cur[c]);
                    if best.is_none_or(|(bg, _)| g < bg) {
                        best = Some((g, c));
                    }
                }
            }
            let Some((vg, cv)) = best else { return Ok(()) };
            cur[cv] += 1;
            let e = &self.m.events[vg as usize];
            let access = e.kind.is_access();
            if !access && !is_acq(e) && !is_rel(e) {
                continue;
            }
            let v = self.node_of(vg);
            for d in 0..k {
                if d == i || d == cv {
                    continue;
                }
                let Some(last) = self.last_g(d) else { continue };
                let list: &[u32] = if access {
                    match self.m.var_lists.get(&(d as u32, e.target)) {
                        Some(l) if e.kind.is_write() => &l.accesses,
                        Some(l) => &l.writes,
                        None => continue,
                    }
                } else {
                    match self.m.lock_lists.get(&(d as u32, e.target)) {
                        Some(l) => &l.events,
                        None => continue,
                    }
                };
                let mut idx = list.partition_point(|&a| a <= last && a < vg);
                while idx > 0 {
                    let ug = list[idx - 1];
                    if ug < self.cut {
                        break;
                    }
                    let u = self.node_of(ug);
                    if self.reaches(v, u) {
                        idx -= 1;
                        continue;
                    }
                    if !self.reaches(u, v) {
                        self.insert(ug, vg)?;
                        self.close()?;
                    }
                    break;
                }
            }
        }
    }

    fn rollback(&mut self) {
        while let Some((idx, old)) = self.undo.pop() {
            self.succ[idx as usize] = old;
        }
        self.clear_dirty();
    }

    /// Max-min linearization (Alg 1) of the closed order with `X1` = chain `i`: the kept
    /// events after the cut (global indices), in schedule order ([`Self::expand`] makes
    /// it a schedule of the whole of `X`).
    fn max_min(&self, i: usize) -> Option<Vec<u32>> {
        let k = self.k;
        let mut placed: Vec<i64> = vec![-1; k];
        let mut out: Vec<u32> = Vec::with_capacity(self.off[k]);
        let drain = |placed: &mut Vec<i64>, target: &[i64], out: &mut Vec<u32>| -> bool {
            loop {
                let mut progressed = false;
                let mut done = true;
                for c in 0..k {
                    while placed[c] < target[c] {
                        done = false;
                        let y = (c, (placed[c] + 1) as u32);
                        let ok = (0..k).all(|c2| {
                            c2 == c || self.pred(y, c2).is_none_or(|p| p as i64 <= placed[c2])
                        });
                        if !ok {
                            break;
                        }
                        out.push(self.ev(c, y.1));
                        placed[c] += 1;
                        progressed = true;
                    }
                }
                if done || (0..k).all(|c| placed[c] >= target[c]) {
                    return true;
                }
                if !progressed {
                    return false;
                }
            }
        };
        let mut target = vec![-1i64; k];
        for j in 0..self.len[i] {
            let x = (i, j);
            for c in 0..k {
                target[c] = if c == i {
                    placed[i]
                } else {
                    self.pred(x, c).map_or(-1, |p| p as i64)
                };
            }
            if !drain(&mut placed, &target, &mut out) {
                return None;
            }
            out.push(self.ev(i, j));
            placed[i] = j as i64;
        }
        for c in 0..k {
            target[c] = self.len[c] as i64 - 1;
        }
        if !drain(&mut placed, &target, &mut out) {
            return None;
        }
        Some(out)
    }

    /// A linearization of the kept events after the cut ([`Self::max_min`]) expanded to
    /// a schedule of the whole of `X` (global indices): the events of `X` before the cut
    /// first, in trace order, then the dropped events each just before the next kept
    /// event of its thread, or last. `O(|X|)`: built only when a schedule is wanted.
    fn expand(&self, out: &[u32]) -> Vec<u32> {
        let k = self.k;
        let mut done: Vec<i64> = vec![-1; k];
        let mut full = Vec::with_capacity(self.frontier.iter().map(|&f| (f + 1) as usize).sum());
        for g in 0..self.cut {
            let c = self.m.tix[g as usize];
            if c == NONE {
                continue;
            }
            let c = c as usize;
            let p = self.m.pos_of(g) as i64;
            if p <= self.frontier[c] as i64 {
                full.push(g);
                done[c] = p;
            }
        }
        // Dropped events go just before the next kept event of their thread, or last.
        for &g in out {
            let c = self.m.thread_of(g);
            let p = self.m.pos_of(g) as i64;
            for q in done[c] + 1..=p {
                full.push(self.m.chain[c][q as usize]);
            }
            done[c] = p;
        }
        for c in 0..k {
            for q in done[c] + 1..=self.frontier[c] as i64 {
                full.push(self.m.chain[c][q as usize]);
            }
        }
        full
    }

    /// Replays `out`, a linearization of the kept events after the cut, from the state
    /// the events of `X` before the cut leave (they run first, in trace order: a valid
    /// schedule by construction, see `decide`), followed by `e1 e2`. Checks what
    /// [`replay`] checks on the whole schedule, in `O(|out|)`: every kept event in
    /// chain order, every chain complete, hard edges, lock exclusion and reads-from on
    /// the shared locks and variables. The events `decide` drops constrain nothing here:
    /// they touch locks and variables of one thread only (or are no-ops), and run in
    /// program order.
    fn replay_kept(&self, out: &[u32], e1: u32, e2: u32) -> bool {
        let (m, k) = (self.m, self.k);
        let mut next = vec![0u32; k];
        // Lock owners (thread + 1) and last writes, from the events of `X` before the cut.
        let mut owner: rustc_hash::FxHashMap<u32, u32> = Default::default();
        let mut last_w: rustc_hash::FxHashMap<u32, u32> = Default::default();
        if self.cut > 0 {
            for c in 0..k {
                let p = m.chain[c].partition_point(|&g| g < self.cut) as i64 - 1;
                let p = p.min(self.frontier[c] as i64);
                if p < 0 {
                    continue;
                }
                for &l in &m.locksets[m.held[c][p as usize] as usize] {
                    if m.shared_lock[l as usize] {
                        owner.insert(l, c as u32 + 1);
                    }
                }
            }
        }
        // The last write to `x` in `X` before the cut (`NONE`: none).
        let before_cut = |x: u32| -> u32 {
            let mut best = NONE;
            for c in 0..k {
                if self.frontier[c] < 0 {
                    continue;
                }
                let Some(l) = m.var_lists.get(&(c as u32, x)) else {
                    continue;
                };
                let last = m.chain[c][self.frontier[c] as usize].min(self.cut.wrapping_sub(1));
                let i = l.writes.partition_point(|&w| w <= last && w < self.cut);
                if i > 0 && (best == NONE || l.writes[i - 1] > best) {
                    best = l.writes[i - 1];
                }
            }
            best
        };
        let done = |h: u32, next: &[u32]| {
            let c = m.thread_of(h);
            m.rel_idx[h as usize] < self.base[c] + next[c]
        };
        for &g in out {
            let c = m.thread_of(g);
            if m.rel_idx[g as usize] != self.base[c] + next[c] {
                return false;
            }
            if m.has_hard_pred(g) {
                if let Some(hp) = m.hard_preds.get(&g) {
                    if !hp.iter().all(|&h| done(h, &next)) {
                        return false;
                    }
                }
            }
            next[c] += 1;
            let e = &m.events[g as usize];
            if is_acq(e) {
                let o = owner.entry(e.target).or_insert(0);
                if *o != 0 {
                    return false;
                }
                *o = c as u32 + 1;
            } else if is_rel(e) {
                let o = owner.entry(e.target).or_insert(0);
                if *o != c as u32 + 1 {
                    return false;
                }
                *o = 0;
            } else if matches!(e.kind, Kind::Read | Kind::VRead) {
                let w = *last_w
                    .entry(e.target)
                    .or_insert_with(|| before_cut(e.target));
                if w != m.rf[g as usize] {
                    return false;
                }
            } else if e.kind.is_write() {
                last_w.insert(e.target, g);
            }
        }
        (0..k).all(|c| next[c] == self.len[c])
            && [e1, e2].iter().all(|&e| {
                let c = m.thread_of(e);
                m.pos_of(e) as i64 == self.frontier[c] as i64 + 1
                    && m.hard_preds.get(&e).is_none_or(|hp| {
                        hp.iter()
                            .all(|&h| m.pos_of(h) as i64 <= self.frontier[m.thread_of(h)] as i64)
                    })
            })
    }

    /// Whether `decide` on `X` stays within its size budget: the budget is checked on
    /// the slice `decide` tries first (on the whole of `X` when there is no cut). For
    /// [`super::tail`], whose success implies the slice's when the slice is built.
    pub fn within_budget(&self, x: &[i32], opens: &[u32]) -> bool {
        self.nodes(x, self.slice_cut(x, opens))
            .saturating_mul(self.k)
            <= MAX_ENTRIES
    }

    /// The number of kept events of `X` at or after `cut`.
    fn nodes(&self, x: &[i32], cut: u32) -> usize {
        let mut total = 0usize;
        for c in 0..self.k {
            if x[c] < 0 {
                continue;
            }
            let rel = &self.m.rel_ev[c];
            let at = self.m.chain[c][x[c] as usize];
            let n = rel.partition_point(|&g| g <= at);
            total += n - rel.partition_point(|&g| g < cut).min(n);
        }
        total
    }

    /// The slice's cut for `X` (0: none): the earliest open acquire, moved back until no
    /// thread of `X` holds a shared lock across it.
    fn slice_cut(&self, x: &[i32], opens: &[u32]) -> u32 {
        let m = self.m;
        let Some(mut t) = opens.iter().copied().min() else {
            return 0;
        };
        loop {
            let mut nt = t;
            for c in 0..self.k {
                if x[c] < 0 {
                    continue;
                }
                let ch = &m.chain[c];
                let p = (ch.partition_point(|&g| g < t) as i64 - 1).min(x[c] as i64);
                if p < 0 {
                    continue;
                }
                let at = ch[p as usize];
                for &l in &m.locksets[m.held[c][p as usize] as usize] {
                    if !m.shared_lock[l as usize] {
                        continue;
                    }
                    let acqs = &m.lock_lists[&(c as u32, l)].acqs;
                    let i = acqs.partition_point(|&a| a <= at);
                    nt = nt.min(acqs[i - 1]);
                }
            }
            if nt == t {
                return t;
            }
            t = nt;
        }
    }

    /// `decide` for a candidate whose `X` has open sections. `Ok(witness)` on success.
    ///
    /// First tries the *slice*: the events of `X` before [`Self::slice_cut`] run first, in
    /// trace order, and the order is built and closed on the rest only (reads of a
    /// source before the cut are treated as reads of `INIT`). Its witness is replayed on
    /// the whole of `X`, so a success is a race. On failure, the whole of `X` is decided
    /// as before, so no decision is lost.
    pub fn decide(
        &mut self,
        e1: u32,
        e2: u32,
        x: &[i32],
        opens: &[u32],
        schedule: bool,
    ) -> Result<Option<Vec<u32>>, Fail> {
        let cut = self.slice_cut(x, opens);
        if cut > 0 {
            self.cut = cut;
            let r = self.decide_at(e1, e2, x, opens, schedule);
            self.cut = 0;
            if let Ok(w) = r {
                // Pure M2: the slice never finds what the whole of `X` would not.
                debug_assert!(
                    self.decide_at(e1, e2, x, opens, false).is_ok(),
                    "m2: the slice found a race that decide on X misses: x={x:?} e1={e1} e2={e2}"
                );
                return Ok(w);
            }
            // Relaxed slices: the order and closure rules of the whole of `X` restricted
            // to the events after a cut (any cut at or before the earliest open acquire),
            // minus every constraint that involves an event before it. Its closure is
            // contained in the whole closure, so a cycle in it is a cycle there
            // (`Fail::Closure`, unless the whole of `X` is over the budget). The cut
            // moves back geometrically, so a cycle near the racing pair costs about
            // the part of `X` it spans; the last try is the whole of `X`.
            if self.nodes(x, 0).saturating_mul(self.k) <= MAX_ENTRIES {
                let end = (0..self.k)
                    .filter(|&c| x[c] >= 0)
                    .map(|c| self.m.chain[c][x[c] as usize])
                    .max()
                    .unwrap_or(0);
                let mut cut = cut;
                while cut > 0 {
                    self.cut = cut;
                    self.relaxed = true;
                    let b = self.build(x, opens);
                    self.cut = 0;
                    self.relaxed = false;
                    if matches!(b, Ok(Err(Cycle))) {
                        debug_assert!(
                            matches!(
                                self.decide_at(e1, e2, x, opens, false),
                                Err(Fail::Closure)
                            ),
                            "m2: a relaxed slice has a cycle, the whole of X none: x={x:?} e1={e1} e2={e2}"
                        );
                        return Err(Fail::Closure);
                    }
                    cut = cut.saturating_sub(4 * (end - cut).max(256));
                }
            }
        }
        self.decide_at(e1, e2, x, opens, schedule)
    }

    fn decide_at(
        &mut self,
        e1: u32,
        e2: u32,
        x: &[i32],
        opens: &[u32],
        schedule: bool,
    ) -> Result<Option<Vec<u32>>, Fail> {
        match self.build(x, opens)? {
            Ok(()) => {}
            Err(Cycle) => return Err(Fail::Closure),
        }
        let (q1, q2) = (self.m.thread_of(e1), self.m.thread_of(e2));
        let mut order: Vec<usize> = vec![q1, q2];
        order.extend((0..self.k).filter(|&c| c != q1 && c != q2 && self.len[c] > 0));
        for i in order {
            self.logging = true;
            self.undo.clear();
            match self.step6(i) {
                Ok(()) => {
                    if let Some(out) = self.max_min(i) {
                        let ok = self.replay_kept(&out, e1, e2);
                        if schedule || cfg!(debug_assertions) {
                            // The whole schedule, replayed again from the start.
                            let w = self.expand(&out);
                            let full_ok = replay(self.m, &w, x, e1, e2);
                            debug_assert_eq!(ok, full_ok, "m2: replay_kept disagrees with replay");
                            if ok && full_ok {
                                return Ok(schedule.then_some(w));
                            }
                        } else if ok {
                            return Ok(None);
                        }
                    }
                    debug_assert!(
                        false,
                        "m2: max-min witness failed to replay: x={x:?} e1={e1} e2={e2}"
                    );
                    self.rollback();
                }
                Err(Cycle) => self.rollback(),
            }
        }
        Err(Fail::Step6)
    }
}

/// Replays a schedule of `X` followed by `e1 e2` (the max-min linearization): thread
/// prefixes, hard edges, lock exclusion, and reads-from for every read of the schedule.
pub(super) fn replay(m: &Model, w: &[u32], x: &[i32], e1: u32, e2: u32) -> bool {
    let mut next = vec![0u32; m.k];
    // Lock owner (dense thread + 1, 0: free) and last write, indexed by lock / variable.
    let mut owner: Vec<u32> = vec![0; m.shared_lock.len()];
    let mut last_w: Vec<u32> = vec![NONE; m.shared_var.len()];
    let hard_ok = |g: u32, next: &[u32]| {
        !m.has_hard_pred(g)
            || m.hard_preds
                .get(&g)
                .is_none_or(|hp| hp.iter().all(|&h| m.pos_of(h) < next[m.thread_of(h)]))
    };
    for &g in w {
        let c = m.thread_of(g);
        if m.pos_of(g) != next[c] || !hard_ok(g, &next) {
            return false;
        }
        next[c] += 1;
        let e = &m.events[g as usize];
        if is_acq(e) {
            let o = &mut owner[e.target as usize];
            if *o != 0 {
                return false;
            }
            *o = c as u32 + 1;
        } else if is_rel(e) {
            let o = &mut owner[e.target as usize];
            if *o != c as u32 + 1 {
                return false;
            }
            *o = 0;
        } else if matches!(e.kind, Kind::Read | Kind::VRead) {
            if last_w[e.target as usize] != m.rf[g as usize] {
                return false;
            }
        } else if e.kind.is_write() {
            last_w[e.target as usize] = g;
        }
    }
    (0..m.k).all(|c| next[c] as i64 == x[c] as i64 + 1)
        && [e1, e2]
            .iter()
            .all(|&e| m.pos_of(e) == next[m.thread_of(e)] && hard_ok(e, &next))
}
