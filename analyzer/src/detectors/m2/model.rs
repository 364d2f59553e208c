//! M2's view of a buffered trace: threads as chains of *model* events, reads-from, critical
//! sections, hard edges, causal timestamps, rule-4 extensions, and the per-(thread,
//! variable) and per-(thread, lock) lists the closure queries.
//!
//! Model events are every event except `branch`, `begin`/`end`, `enter`/`exit` and
//! re-entrant inner acquires/releases ([`jrace_trace::FLAG_NESTED`]). A thread position
//! (`pos`) counts model events of that thread only. `wait` is a release and `wake` an
//! acquire of their lock; `fork`, `join`, `notify`, `notifyall` carry hard edges only.

use crate::sync::NotifyMatcher;
use jrace_trace::{Event, Kind};
use rustc_hash::FxHashMap as HashMap;

pub(super) const NONE: u32 = u32::MAX;

/// Whether `e` is part of M2's model.
pub(super) fn is_model(e: &Event) -> bool {
    match e.kind {
        Kind::Branch | Kind::Begin | Kind::End | Kind::Enter | Kind::Exit => false,
        Kind::Acquire | Kind::Release => !e.is_nested(),
        _ => true,
    }
}

/// Acquire-like: opens a critical section (`acq`, `wake`).
pub(super) fn is_acq(e: &Event) -> bool {
    matches!(e.kind, Kind::Acquire | Kind::Wake) && !e.is_nested()
}
/// Release-like: closes a critical section (`rel`, `wait`).
pub(super) fn is_rel(e: &Event) -> bool {
    matches!(e.kind, Kind::Release | Kind::Wait) && !e.is_nested()
}

#[derive(Default)]
pub(super) struct VarLists {
    /// Global indices of writes (plain and volatile), in program order.
    pub writes: Vec<u32>,
    /// Global indices of all accesses, in program order.
    pub accesses: Vec<u32>,
}

#[derive(Default)]
pub(super) struct LockLists {
    /// Acquire- and release-like events, in program order.
    pub events: Vec<u32>,
    /// Release-like events, in program order.
    pub rels: Vec<u32>,
    /// Acquire-like events, in program order.
    pub acqs: Vec<u32>,
}

pub(super) struct Model<'a> {
    pub events: &'a [Event],
    /// Number of (dense) threads.
    pub k: usize,
    /// Per thread id: its dense thread plus one (0 for ids never seen).
    pub dense: Vec<u32>,
    /// Per global event: dense thread, or `NONE` for non-model events.
    pub tix: Vec<u32>,
    /// Per global event: position in its thread's chain (model events only).
    pub pos: Vec<u32>,
    /// Per dense thread: global indices of its model events.
    pub chain: Vec<Vec<u32>>,
    /// Per global read (plain or volatile): the observed write, or `NONE` (`INIT`).
    pub rf: Vec<u32>,
    /// Per global event: the matching release of an acquire, the acquire of a release
    /// (`NONE` if unmatched or not a lock event).
    pub mate: Vec<u32>,
    /// Hard predecessors and successors (fork, join, wait → notify → wake).
    pub hard_preds: HashMap<u32, Vec<u32>>,
    pub hard_succs: HashMap<u32, Vec<u32>>,
    /// Bitsets over global events: those with hard predecessors, successors.
    hard_pred_bits: Vec<u64>,
    hard_succ_bits: Vec<u64>,
    /// Causal timestamps at change points, per thread: flat vectors, and per position
    /// the index of the change point in effect there.
    cp_at: Vec<Vec<u32>>,
    cp_vec: Vec<Vec<i32>>,
    /// Per thread, per position: rule 4's extension (the latest release of a released
    /// section open at that position, or the position itself).
    pub ext: Vec<Vec<u32>>,
    /// Per thread: positions of acquire- and release-like events.
    lock_pos: Vec<Vec<u32>>,
    /// Per thread, per position: interned set of locks held after that event.
    pub held: Vec<Vec<u32>>,
    pub locksets: Vec<Vec<u32>>,
    /// Variables accessed by two or more threads; locks used by two or more threads.
    pub shared_var: Vec<bool>,
    pub shared_lock: Vec<bool>,
    /// Per thread: global indices of the events `decide` keeps (those on variables and
    /// locks used by two threads or more).
    pub rel_ev: Vec<Vec<u32>>,
    /// Per global event: its index in `rel_ev` of its thread, or `NONE`.
    pub rel_idx: Vec<u32>,
    pub var_lists: HashMap<(u32, u32), VarLists>,
    pub lock_lists: HashMap<(u32, u32), LockLists>,
    /// Readers (CSR over global writes): every read, any thread, of each write.
    readers_off: Vec<u32>,
    readers: Vec<u32>,
}

/// Readers as CSR over `n` global events, from `(write, read)` pairs in trace order (a
/// counting sort: each write's readers stay in trace order).
fn readers_csr(n: usize, readers_pairs: Vec<(u32, u32)>) -> (Vec<u32>, Vec<u32>) {
    let mut readers_off = vec![0u32; n + 1];
    for &(w, _) in &readers_pairs {
        readers_off[w as usize + 1] += 1;
    }
    for i in 0..n {
        readers_off[i + 1] += readers_off[i];
    }
    let mut readers = vec![0u32; readers_pairs.len()];
    for &(w, r) in &readers_pairs {
        let o = &mut readers_off[w as usize];
        readers[*o as usize] = r;
        *o += 1;
    }
    // Each cursor now holds its end, which is the next write's start.
    for i in (1..=n).rev() {
        readers_off[i] = readers_off[i - 1];
    }
    readers_off[0] = 0;
    (readers_off, readers)
}

fn slot_or<T: Clone>(v: &mut Vec<T>, i: usize, fill: T) -> &mut T {
    if i >= v.len() {
        v.resize(i + 1, fill);
    }
    &mut v[i]
}

fn slot<T: Default + Clone>(v: &mut Vec<T>, i: usize) -> &mut T {
    if i >= v.len() {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}

impl<'a> Model<'a> {
    pub fn build(events: &'a [Event]) -> Model<'a> {
        let mut lap = super::Lap::new();
        let n = events.len();
        assert!(
            n < NONE as usize,
            "m2: trace too long for 32-bit event indices"
        );
        // Dense threads and chains.
        let mut dense: Vec<u32> = Vec::new();
        let mut chain: Vec<Vec<u32>> = Vec::new();
        let mut tix = vec![NONE; n];
        let mut pos = vec![NONE; n];
        let dense_of = |t: u32, dense: &mut Vec<u32>, chain: &mut Vec<Vec<u32>>| -> u32 {
            let d = slot(dense, t as usize);
            if *d == 0 {
                chain.push(Vec::new());
                *d = chain.len() as u32;
            }
            *d - 1
        };
        for (g, e) in events.iter().enumerate() {
            let d = dense_of(e.thread, &mut dense, &mut chain);
            if e.kind.has_thread() {
                dense_of(e.target, &mut dense, &mut chain);
            }
            if !is_model(e) {
                continue;
            }
            tix[g] = d;
            pos[g] = chain[d as usize].len() as u32;
            chain[d as usize].push(g as u32);
        }
        let k = chain.len();

        lap.lap("model: chains");
        // Reads-from, sections, hard edges, sharing.
        let mut rf = vec![NONE; n];
        let mut mate = vec![NONE; n];
        // Indexed by variable, by lock, by lock · k + thread.
        let mut last_write: Vec<u32> = Vec::new();
        let mut open_acq: Vec<u32> = Vec::new();
        let mut hard: Vec<(u32, u32)> = Vec::new();
        let mut matcher: NotifyMatcher<()> = NotifyMatcher::new();
        let mut wait_of: HashMap<u32, u32> = HashMap::default();
        let mut fork_of: HashMap<u32, u32> = HashMap::default();
        // First thread seen (`NONE`: none yet), and shared by two threads or more.
        let mut var_first: Vec<u32> = Vec::new();
        let mut shared_var: Vec<bool> = Vec::new();
        let mut lock_first: Vec<u32> = Vec::new();
        let mut shared_lock: Vec<bool> = Vec::new();
        let first = |first: &mut Vec<u32>, shared: &mut Vec<bool>, x: u32, d: u32| {
            let x = x as usize;
            if x >= first.len() {
                first.resize(x + 1, NONE);
                shared.resize(x + 1, false);
            }
            if first[x] == NONE {
                first[x] = d;
            } else if first[x] != d {
                shared[x] = true;
            }
        };
        let mut readers_pairs: Vec<(u32, u32)> = Vec::new();
        let mut lock_pos: Vec<Vec<u32>> = vec![Vec::new(); k];
        for (g, e) in events.iter().enumerate() {
            let g32 = g as u32;
            if tix[g] == NONE {
                continue;
            }
            let d = tix[g];
            if pos[g] == 0 {
                if let Some(&f) = fork_of.get(&d) {
                    hard.push((f, g32));
                }
            }
            match e.kind {
                Kind::Read | Kind::VRead | Kind::Write | Kind::VWrite => {
                    first(&mut var_first, &mut shared_var, e.target, d);
                    let lw = slot_or(&mut last_write, e.target as usize, NONE);
                    if e.kind.is_write() {
                        *lw = g32;
                    } else if *lw != NONE {
                        rf[g] = *lw;
                        readers_pairs.push((*lw, g32));
                    }
                }
                _ => {}
            }
            if is_acq(e) || is_rel(e) {
                lock_pos[d as usize].push(pos[g]);
                first(&mut lock_first, &mut shared_lock, e.target, d);
                let oa = slot_or(&mut open_acq, e.target as usize * k + d as usize, NONE);
                if is_acq(e) {
                    *oa = g32;
                } else if *oa != NONE {
                    let a = std::mem::replace(oa, NONE);
                    mate[a as usize] = g32;
                    mate[g] = a;
                }
            }
            match e.kind {
                Kind::Fork => {
                    let c = dense[e.target as usize] - 1;
                    fork_of.insert(c, g32);
                }
                Kind::Join => {
                    let c = (dense[e.target as usize] - 1) as usize;
                    // The joined thread's last event, or its fork when it has none.
                    if let Some(&last) = chain[c].iter().rev().find(|&&x| (x as usize) < g) {
                        hard.push((last, g32));
                    } else if let Some(&f) = fork_of.get(&(c as u32)) {
                        hard.push((f, g32));
                    }
                }
                Kind::Wait => {
                    matcher.wait(e.thread, e.target, g as u64);
                    wait_of.insert(e.thread, g32);
                }
                Kind::Notify | Kind::NotifyAll => {
                    matcher.notify(e.target, g as u64, e.kind == Kind::NotifyAll, || ());
                }
                Kind::Wake => {
                    if let Some((nt, ())) = matcher.wake(e.thread, e.target) {
                        let nt = nt as u32;
                        hard.push((nt, g32));
                        if let Some(&w) = wait_of.get(&e.thread) {
                            hard.push((w, nt));
                        }
                    }
                }
                _ => {}
            }
        }
        hard.sort_unstable();
        hard.dedup();
        let mut hard_preds: HashMap<u32, Vec<u32>> = HashMap::default();
        let mut hard_succs: HashMap<u32, Vec<u32>> = HashMap::default();
        let mut hard_pred_bits = vec![0u64; n / 64 + 1];
        let mut hard_succ_bits = vec![0u64; n / 64 + 1];
        for &(a, b) in &hard {
            hard_pred_bits[b as usize / 64] |= 1 << (b % 64);
            hard_succ_bits[a as usize / 64] |= 1 << (a % 64);
            hard_preds.entry(b).or_default().push(a);
            hard_succs.entry(a).or_default().push(b);
        }

        lap.lap("model: rf, sections, hard edges");

        let mut m = Model {
            events,
            k,
            dense,
            tix,
            pos,
            chain,
            rf,
            mate,
            hard_preds,
            hard_succs,
            hard_pred_bits,
            hard_succ_bits,
            cp_at: Vec::new(),
            cp_vec: vec![Vec::new(); k],
            ext: Vec::new(),
            lock_pos,
            held: Vec::new(),
            locksets: Vec::new(),
            shared_var,
            shared_lock,
            rel_ev: vec![Vec::new(); k],
            rel_idx: vec![NONE; n],
            var_lists: HashMap::default(),
            lock_lists: HashMap::default(),
            readers_off: Vec::new(),
            readers: Vec::new(),
        };
        // Three independent passes (on two cores when there are).
        let (((cp_at, cp_vec), (readers_off, readers)), ((ext, held, locksets), relevant)) =
            rayon::join(
                || rayon::join(|| m.build_timestamps(), || readers_csr(n, readers_pairs)),
                || rayon::join(|| m.build_sections(), || m.build_relevant()),
            );
        (m.readers_off, m.readers) = (readers_off, readers);
        (m.cp_at, m.cp_vec) = (cp_at, cp_vec);
        (m.ext, m.held, m.locksets) = (ext, held, locksets);
        (m.rel_ev, m.rel_idx, m.var_lists, m.lock_lists) = relevant;
        lap.lap("model: timestamps, readers, sections, relevant lists");
        m
    }

    /// Causal timestamps: `C(e)[m]` is the last position of thread `m` under `(PO ∪ rf ∪
    /// hard)*` up to `e`, stored where a foreign component grows.
    #[allow(clippy::type_complexity)]
    fn build_timestamps(&self) -> (Vec<Vec<u32>>, Vec<Vec<i32>>) {
        let k = self.k;
        let mut cur: Vec<Vec<i32>> = vec![vec![-1; k]; k];
        let mut cp_at: Vec<Vec<u32>> = self.chain.iter().map(|ch| vec![0u32; ch.len()]).collect();
        let mut cp_vec: Vec<Vec<i32>> = vec![Vec::new(); k];
        for g in 0..self.events.len() {
            let d = self.tix[g];
            if d == NONE {
                continue;
            }
            let d = d as usize;
            let p = self.pos[g];
            let mut changed = p == 0;
            let mut sources: smallvec::SmallVec<[u32; 4]> = smallvec::SmallVec::new();
            if self.has_hard_pred(g as u32) {
                if let Some(hp) = self.hard_preds.get(&(g as u32)) {
                    sources.extend(hp.iter().copied());
                }
            }
            let r = self.rf[g];
            if r != NONE && self.tix[r as usize] as usize != d {
                sources.push(r);
            }
            for s in sources {
                // `C(s)`: `s` is earlier, so its change point is recorded.
                let (ds, ps) = (self.tix[s as usize] as usize, self.pos[s as usize]);
                let i = cp_at[ds][ps as usize] as usize;
                let (row, own) = if ds == d {
                    (&cur[d][..], None)
                } else {
                    (&cp_vec[ds][i * k..(i + 1) * k], Some(ps as i32))
                };
                let mut grow: smallvec::SmallVec<[(usize, i32); 8]> = smallvec::SmallVec::new();
                for (c, (&t, &now)) in row.iter().zip(&cur[d]).enumerate() {
                    let t = if c == ds { own.unwrap_or(t) } else { t };
                    if t > now {
                        grow.push((c, t));
                    }
                }
                for (c, t) in grow {
                    cur[d][c] = t;
                    changed = true;
                }
            }
            cur[d][d] = p as i32;
            if changed {
                cp_vec[d].extend_from_slice(&cur[d]);
            }
            cp_at[d][p as usize] = (cp_vec[d].len() / k) as u32 - 1;
        }
        (cp_at, cp_vec)
    }

    /// `C` of the event at position `p` of thread `d` into `out`.
    pub fn c_at(&self, d: usize, p: u32, out: &mut [i32]) {
        let k = self.k;
        let i = self.cp_at[d][p as usize] as usize;
        out.copy_from_slice(&self.cp_vec[d][i * k..(i + 1) * k]);
        out[d] = p as i32;
    }

    /// One component of `C`.
    pub fn c_comp(&self, d: usize, p: u32, m: usize) -> i32 {
        if m == d {
            return p as i32;
        }
        let i = self.cp_at[d][p as usize] as usize;
        self.cp_vec[d][i * self.k + m]
    }

    /// `F ⊔= C(d, p)`; true if `F` grew.
    pub fn join_c(&self, d: usize, p: u32, f: &mut [i32]) -> bool {
        let k = self.k;
        let i = self.cp_at[d][p as usize] as usize;
        let v = &self.cp_vec[d][i * k..(i + 1) * k];
        let mut grew = false;
        for (m, (a, &b)) in f.iter_mut().zip(v).enumerate() {
            let b = if m == d { p as i32 } else { b };
            if b > *a {
                *a = b;
                grew = true;
            }
        }
        grew
    }

    /// Sections: rule 4's `ext` and the held locksets.
    #[allow(clippy::type_complexity)]
    fn build_sections(&self) -> (Vec<Vec<u32>>, Vec<Vec<u32>>, Vec<Vec<u32>>) {
        let mut intern: HashMap<Vec<u32>, u32> = HashMap::default();
        let mut locksets: Vec<Vec<u32>> = vec![Vec::new()];
        intern.insert(Vec::new(), 0);
        let mut all_ext = Vec::with_capacity(self.k);
        let mut all_held = Vec::with_capacity(self.k);
        for d in 0..self.k {
            let ch = &self.chain[d];
            let mut ext = vec![0u32; ch.len()];
            let mut held = vec![0u32; ch.len()];
            // Active sections: (lock, release position or NONE).
            let mut active: Vec<(u32, u32)> = Vec::new();
            let mut cur_set: Vec<u32> = Vec::new();
            let mut cur_id = 0u32;
            // The latest release of a released active section (0: none).
            let mut cur_ext = 0u32;
            // Positions of lock events; between two, `held` and `ext` follow the last.
            let lock_pos = &self.lock_pos[d];
            let mut from = 0usize;
            for (idx, &p) in lock_pos
                .iter()
                .chain(std::iter::once(&(ch.len() as u32)))
                .enumerate()
            {
                let p = p as usize;
                held[from..p].fill(cur_id);
                for (q, x) in ext[from..p].iter_mut().enumerate() {
                    *x = cur_ext.max((from + q) as u32);
                }
                if idx == lock_pos.len() {
                    break;
                }
                from = p;
                let g = ch[p];
                let e = &self.events[g as usize];
                let mut dirty = false;
                if is_acq(e) {
                    let m = self.mate[g as usize];
                    let rp = if m == NONE {
                        NONE
                    } else {
                        self.pos[m as usize]
                    };
                    active.push((e.target, rp));
                    dirty = true;
                } else if is_rel(e) {
                    if let Some(i) = active.iter().rposition(|&(l, _)| l == e.target) {
                        active.remove(i);
                    }
                    dirty = true;
                }
                if dirty {
                    cur_set.clear();
                    cur_set.extend(active.iter().map(|&(l, _)| l));
                    cur_set.sort_unstable();
                    cur_set.dedup();
                    cur_id = match intern.get(cur_set.as_slice()) {
                        Some(&id) => id,
                        None => {
                            let id = locksets.len() as u32;
                            intern.insert(cur_set.clone(), id);
                            locksets.push(cur_set.clone());
                            id
                        }
                    };
                    cur_ext = active
                        .iter()
                        .filter(|&&(_, r)| r != NONE)
                        .map(|&(_, r)| r)
                        .max()
                        .unwrap_or(0);
                }
            }
            all_ext.push(ext);
            all_held.push(held);
        }
        (all_ext, all_held, locksets)
    }

    /// The events `decide` keeps, and the per-(thread, var/lock) lists.
    #[allow(clippy::type_complexity)]
    fn build_relevant(
        &self,
    ) -> (
        Vec<Vec<u32>>,
        Vec<u32>,
        HashMap<(u32, u32), VarLists>,
        HashMap<(u32, u32), LockLists>,
    ) {
        let mut rel_ev: Vec<Vec<u32>> = vec![Vec::new(); self.k];
        let mut rel_idx = vec![NONE; self.events.len()];
        let mut var_lists: HashMap<(u32, u32), VarLists> = HashMap::default();
        let mut lock_lists: HashMap<(u32, u32), LockLists> = HashMap::default();
        // Per thread: each variable's lists in a vector (`slot_of`: variable → index), moved
        // into the map once per (thread, variable).
        let mut slot_of: Vec<u32> = vec![NONE; self.shared_var.len()];
        let mut lists: Vec<(u32, VarLists)> = Vec::new();
        for d in 0..self.k {
            for &g in &self.chain[d] {
                let e = &self.events[g as usize];
                let gu = g as usize;
                let mut keep = self.has_hard_pred(g) && self.hard_preds.contains_key(&g)
                    || self.hard_succ_bits[gu / 64] >> (gu % 64) & 1 != 0;
                if e.kind.is_access() && self.shared_var[e.target as usize] {
                    keep = true;
                    let si = &mut slot_of[e.target as usize];
                    if *si == NONE {
                        *si = lists.len() as u32;
                        lists.push((e.target, VarLists::default()));
                    }
                    let l = &mut lists[*si as usize].1;
                    l.accesses.push(g);
                    if e.kind.is_write() {
                        l.writes.push(g);
                    }
                }
                if (is_acq(e) || is_rel(e)) && self.shared_lock[e.target as usize] {
                    keep = true;
                    let l = lock_lists.entry((d as u32, e.target)).or_default();
                    l.events.push(g);
                    if is_rel(e) {
                        l.rels.push(g);
                    } else {
                        l.acqs.push(g);
                    }
                }
                if keep {
                    rel_idx[gu] = rel_ev[d].len() as u32;
                    rel_ev[d].push(g);
                }
            }
            for (x, l) in lists.drain(..) {
                slot_of[x as usize] = NONE;
                var_lists.insert((d as u32, x), l);
            }
        }
        (rel_ev, rel_idx, var_lists, lock_lists)
    }

    /// Whether `g` may have hard predecessors (a cheap filter before `hard_preds`).
    #[inline]
    pub fn has_hard_pred(&self, g: u32) -> bool {
        let g = g as usize;
        self.hard_pred_bits[g / 64] >> (g % 64) & 1 != 0
    }

    /// Every read of write `w`.
    pub fn readers_of(&self, w: u32) -> &[u32] {
        let w = w as usize;
        &self.readers[self.readers_off[w] as usize..self.readers_off[w + 1] as usize]
    }

    pub fn thread_of(&self, g: u32) -> usize {
        self.tix[g as usize] as usize
    }
    pub fn pos_of(&self, g: u32) -> u32 {
        self.pos[g as usize]
    }

    /// The strict cone of `e` (the cone without rule 4): the join of `C` over its
    /// program-order predecessor and its hard predecessors.
    pub fn scone(&self, g: u32, out: &mut [i32]) {
        out.fill(-1);
        let d = self.thread_of(g);
        let p = self.pos_of(g);
        if p > 0 {
            self.c_at(d, p - 1, out);
        }
        if self.has_hard_pred(g) {
            if let Some(hp) = self.hard_preds.get(&g) {
                for &h in hp {
                    self.join_c(self.thread_of(h), self.pos_of(h), out);
                }
            }
        }
    }

    /// Closes `f` under rule 4 for every thread except `a` and `b`.
    /// Returns whether rule 4 grew it.
    pub fn rule4(&self, f: &mut [i32], a: usize, b: usize) -> bool {
        let mut any = false;
        loop {
            let mut grown = false;
            for m in 0..self.k {
                if m == a || m == b || f[m] < 0 {
                    continue;
                }
                let gx = self.ext[m][f[m] as usize];
                if gx as i32 > f[m] && self.join_c(m, gx, f) {
                    grown = true;
                }
            }
            if !grown {
                return any;
            }
            any = true;
        }
    }

    /// Open sections of `x` (acquire global indices): acquire at or before the frontier,
    /// release after it or never.
    pub fn open_acqs(&self, x: &[i32], out: &mut Vec<u32>) {
        out.clear();
        for (m, &f) in x.iter().enumerate() {
            if f < 0 {
                continue;
            }
            let ls = &self.locksets[self.held[m][f as usize] as usize];
            let at = self.chain[m][f as usize];
            for &l in ls {
                // Locks used by one thread only constrain nothing.
                if !self.shared_lock[l as usize] {
                    continue;
                }
                let acqs = &self.lock_lists[&(m as u32, l)].acqs;
                let i = acqs.partition_point(|&a| a <= at);
                out.push(acqs[i - 1]);
            }
        }
    }
}
