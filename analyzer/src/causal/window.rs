//! Trace facts for the solver encodings: what is computed once per trace ([`Global`]),
//! what is carried from the recorded past into a window ([`Carry`]), and the
//! per-window tables the constraint builder reads ([`Window`]): dense threads, the
//! must-happen-before relation ≺ as one vector clock per event, lock
//! regions, writes per variable, locksets, and initial values.

use super::latch::Latches;
use crate::facts::{values::ValueKey, Facts};
use jrace_trace::{Event, Kind, LockId, ThreadId, VarId};
use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;

pub const NONE: u32 = u32::MAX;

/// Whole-trace facts, computed once: mostly the validator's own ([`Facts`]), shared so
/// that a long trace is scanned once for them.
pub struct Global<'a> {
    pub events: &'a [Event],
    /// The trace's facts (value keys, observed writes, initial values, notify pairing,
    /// unexplained reads), which the witnesses are validated against.
    pub facts: &'a Facts<'a>,
    /// Value key of every access ([`crate::witness::value_keys`]).
    pub keys: &'a [ValueKey],
    /// Per read: the write it observed in the trace (global index), or [`NONE`].
    pub observed: &'a [u32],
    /// Branch-complete mode (docs/DETECTORS.md#branches-and-conservative-mode): the trace carries branch events.
    pub branch_complete: bool,
    /// Whether the trace has `enter` events (BarrierPairs then order events).
    pub has_barriers: bool,
    /// The BarrierPair edges ([`crate::facts::barrier::barrier_edges`], sorted by target):
    /// `rdit`'s from the reachable sets, mcm's and said's with every set taken as `*`.
    pub bp_edges: Vec<(u32, u32)>,
    /// Variables used as locks by value, and who holds them where ([`Latches::find`];
    /// empty until the driver computes them).
    pub latches: Latches,
}

impl<'a> Global<'a> {
    /// `branches`: whether the recording carried branches; `None` infers it from the
    /// events (a trace without any `br` is analyzed in conservative mode,
    /// docs/DETECTORS.md#branches-and-conservative-mode).
    pub fn new(events: &'a [Event], facts: &'a Facts<'a>, branches: Option<bool>) -> Global<'a> {
        Global {
            events,
            facts,
            keys: facts.keys(),
            observed: facts.observed(),
            branch_complete: branches.unwrap_or_else(|| has_branches(events)),
            has_barriers: has_barriers(events),
            bp_edges: Vec::new(),
            latches: Latches::default(),
        }
    }

    /// The first and last event (global indices) of thread `t`.
    pub fn thread_span(&self, t: ThreadId) -> Option<(u32, u32)> {
        self.facts.thread_span(t)
    }
}

/// Whether any event is a `br` (the trace was recorded with branches).
pub fn has_branches(events: &[Event]) -> bool {
    events.iter().any(|e| e.kind == Kind::Branch)
}

/// Whether any event is an `enter` (calls into excluded code: BarrierPairs).
pub fn has_barriers(events: &[Event]) -> bool {
    events.iter().any(|e| e.kind == Kind::Enter)
}

/// A read's fence ([`Window::compute_fences`]): events of its region after position
/// `from` of its thread are never at the cut with events of dense thread `thread` after
/// position `acq` (that thread's acquire of the other region; `None`: held since before
/// the window).
#[derive(Clone, Copy, Debug)]
pub struct Fence {
    from: u32,
    thread: u32,
    acq: Option<u32>,
}

/// The window writes of each variable, in trace order: one sorted vector and an index
/// (a vector per variable costs an allocation per variable per window).
pub struct Writes {
    index: HashMap<VarId, (u32, u32)>,
    list: Vec<u32>,
}

impl Writes {
    fn new(mut writes: Vec<(VarId, u32)>) -> Writes {
        writes.sort_unstable();
        let mut index = HashMap::default();
        let mut at = 0u32;
        for g in writes.chunk_by(|a, b| a.0 == b.0) {
            index.insert(g[0].0, (at, g.len() as u32));
            at += g.len() as u32;
        }
        Writes {
            index,
            list: writes.into_iter().map(|(_, k)| k).collect(),
        }
    }

    /// The window writes of `x` (plain and volatile), in trace order.
    pub fn get(&self, x: &VarId) -> Option<&[u32]> {
        let &(at, n) = self.index.get(x)?;
        Some(&self.list[at as usize..(at + n) as usize])
    }
}

/// The state of the recorded past at a window start (docs/DETECTORS.md#windows-and-solver-limits): the last value written
/// to each variable, and the locks each thread holds (outermost regions, including the
/// monitor re-acquired by a `wake`).
#[derive(Default)]
pub struct Carry {
    pub len: usize,
    last_write: HashMap<VarId, ValueKey>,
    held: HashMap<ThreadId, SmallVec<[LockId; 4]>>,
}

impl Carry {
    /// Runs the recorded events up to (not including) `to`.
    pub fn advance(&mut self, g: &Global, to: usize) {
        while self.len < to {
            let e = &g.events[self.len];
            match e.kind {
                Kind::Write | Kind::VWrite => {
                    self.last_write.insert(e.target, g.keys[self.len]);
                }
                Kind::Acquire if !e.is_nested() => {
                    self.held.entry(e.thread).or_default().push(e.target)
                }
                Kind::Wake => self.held.entry(e.thread).or_default().push(e.target),
                Kind::Release | Kind::Wait if !e.is_nested() => {
                    if let Some(h) = self.held.get_mut(&e.thread) {
                        if let Some(p) = h.iter().rposition(|&l| l == e.target) {
                            h.remove(p);
                        }
                    }
                }
                _ => {}
            }
            self.len += 1;
        }
    }
}

/// A lock region: an acquire-like event (`acq`, `wake`) and its release-like
/// event (`rel`, `wait`) in one thread; window-local indices, [`NONE`] for an acquire
/// before the window (⊥) or a release after it (⊤).
#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub lock: LockId,
    pub thread: u32,
    pub acq: u32,
    pub rel: u32,
}

/// One window `[start, start + len)` of the trace; events are numbered `0..len` inside
/// it ("local" indices; global index = `start + k`).
pub struct Window<'g, 'a> {
    pub g: &'g Global<'a>,
    pub start: usize,
    pub len: usize,
    pub end: usize,
    /// Dense thread of each event, and its position among its thread's window events.
    pub tix: Vec<u32>,
    pub pos: Vec<u32>,
    /// Window events of each dense thread, in program order.
    pub threads: Vec<Vec<u32>>,
    pub nt: usize,
    /// `vc[k * nt + u]`: how many of thread u's window events are ≼ k (inclusive).
    vc: Vec<u32>,
    /// ≺ plus forced sources ([`Window::compute_forced`]), laid out like `vc`; empty
    /// until computed.
    fvc: Vec<u32>,
    /// Outermost regions open at each plain access (empty for other events).
    regions_at: Vec<SmallVec<[u32; 2]>>,
    /// Per region: the fences of reads inside it ([`Window::compute_fences`]).
    fences: HashMap<u32, Vec<Fence>>,
    /// Cross-thread ≺ generating edges (M1 without program order), `(from, to)`.
    pub edges: Vec<(u32, u32)>,
    pub regions: Vec<Region>,
    pub by_lock: HashMap<LockId, Vec<u32>>,
    /// Region id of each acquire-like event.
    pub region_of_acq: HashMap<u32, u32>,
    /// Window writes (plain and volatile) of each variable, in trace order.
    pub writes: Writes,
    /// Value of each variable at the window start, when known.
    pub v0: HashMap<VarId, Option<ValueKey>>,
    /// Lockset id of each plain access ([`Window::lockset`]).
    lockset_of: Vec<u32>,
    locksets: Vec<SmallVec<[LockId; 4]>>,
    /// Per event: how many reads of its thread in the window come before it.
    pub reads_before: Vec<u32>,
    /// Window reads (plain and volatile) of each dense thread, in program order.
    pub reads: Vec<Vec<u32>>,
}

impl<'g, 'a> Window<'g, 'a> {
    pub fn build(g: &'g Global<'a>, carry: &Carry, start: usize, end: usize) -> Self {
        debug_assert_eq!(carry.len, start);
        Window::build_with(
            g,
            start,
            end,
            |t| carry.held.get(&t).cloned().unwrap_or_default(),
            |x| {
                carry
                    .last_write
                    .get(&x)
                    .copied()
                    .or_else(|| g.facts.initial(x))
            },
        )
    }

    /// The window `[start, end)` inside this one (a pair-centered window, docs/DETECTORS.md#windows-and-solver-limits):
    /// its past is this window's past plus this window's events before `start`.
    pub fn sub(&self, start: usize, end: usize) -> Window<'g, 'a> {
        let cut = (start - self.start) as u32;
        Window::build_with(
            self.g,
            start,
            end,
            |t| {
                self.regions
                    .iter()
                    .filter(|r| {
                        self.ev(self.threads[r.thread as usize][0]).thread == t
                            && (r.acq == NONE || r.acq < cut)
                            && (r.rel == NONE || r.rel >= cut)
                    })
                    .map(|r| r.lock)
                    .collect()
            },
            |x| match self
                .writes
                .get(&x)
                .and_then(|ws| ws.iter().rev().find(|&&k| k < cut))
            {
                Some(&k) => Some(self.key(k)),
                None => self.v0.get(&x).copied().flatten(),
            },
        )
    }

    fn build_with(
        g: &'g Global<'a>,
        start: usize,
        end: usize,
        held: impl Fn(ThreadId) -> SmallVec<[LockId; 4]>,
        v0_of: impl Fn(VarId) -> Option<ValueKey>,
    ) -> Self {
        let ev = &g.events[start..end];
        let len = ev.len();
        let mut dense: HashMap<ThreadId, u32> = HashMap::default();
        let mut threads: Vec<Vec<u32>> = Vec::new();
        let mut tix = Vec::with_capacity(len);
        let mut pos = Vec::with_capacity(len);
        for (k, e) in ev.iter().enumerate() {
            let d = *dense.entry(e.thread).or_insert_with(|| {
                threads.push(Vec::new());
                (threads.len() - 1) as u32
            });
            tix.push(d);
            pos.push(threads[d as usize].len() as u32);
            threads[d as usize].push(k as u32);
        }
        let nt = threads.len();
        let local = |gi: u32| -> Option<u32> {
            let gi = gi as usize;
            (gi >= start && gi < end).then(|| (gi - start) as u32)
        };
        // Cross edges (all go forward in trace order).
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut last_seen: Vec<u32> = vec![NONE; nt];
        for (k, e) in ev.iter().enumerate() {
            let k32 = k as u32;
            match e.kind {
                Kind::Fork => {
                    if let Some(f) = g.thread_span(e.target).and_then(|(f, _)| local(f)) {
                        if f > k32 {
                            edges.push((k32, f));
                        }
                    }
                }
                Kind::Join => {
                    if let Some(l) = g.facts.join_after(e.target).and_then(local) {
                        if l < k32 {
                            edges.push((l, k32));
                        }
                    }
                }
                Kind::Wake => match g.facts.wake_notify((start + k) as u32) {
                    Some(n) => {
                        if let Some(n) = local(n) {
                            edges.push((n, k32));
                        }
                    }
                    // A wait that timed out needed no notify.
                    None if e.is_timed_out_wake() => {}
                    None => {
                        // Unmatched wake: whatever woke it stays before it (docs/DETECTORS.md#notify-and-wake).
                        for (u, &l) in last_seen.iter().enumerate() {
                            if u as u32 != tix[k] && l != NONE {
                                edges.push((l, k32));
                            }
                        }
                    }
                },
                _ => {}
            }
            if e.kind != Kind::Branch {
                last_seen[tix[k] as usize] = k32;
            }
        }
        // The window's part of the trace-wide BarrierPair edges: both ends inside.
        let bp = &g.bp_edges;
        let lo = bp.partition_point(|&(_, y)| (y as usize) < start);
        let hi = bp.partition_point(|&(_, y)| (y as usize) < end);
        for &(x, y) in &bp[lo..hi] {
            if x as usize >= start {
                edges.push(((x as usize - start) as u32, (y as usize - start) as u32));
            }
        }
        edges.sort_unstable_by_key(|&(x, y)| (y, x));
        edges.dedup();
        // Vector clocks over program order and the cross edges.
        let mut vc = vec![0u32; len * nt];
        let mut cur: Vec<Vec<u32>> = vec![vec![0; nt]; nt];
        let mut ei = 0;
        for k in 0..len {
            let t = tix[k] as usize;
            let mut v = std::mem::take(&mut cur[t]);
            while ei < edges.len() && edges[ei].1 as usize == k {
                let src = edges[ei].0 as usize;
                for u in 0..nt {
                    v[u] = v[u].max(vc[src * nt + u]);
                }
                ei += 1;
            }
            v[t] = pos[k] + 1;
            vc[k * nt..(k + 1) * nt].copy_from_slice(&v);
            cur[t] = v;
        }
        // Regions, locksets, writes, reads.
        let mut regions: Vec<Region> = Vec::new();
        let mut open: Vec<SmallVec<[(LockId, u32); 4]>> = vec![SmallVec::new(); nt];
        let mut dense_sorted: Vec<(ThreadId, u32)> = dense.iter().map(|(&t, &d)| (t, d)).collect();
        dense_sorted.sort_unstable_by_key(|&(_, d)| d);
        for &(tid, d) in &dense_sorted {
            {
                for l in held(tid) {
                    regions.push(Region {
                        lock: l,
                        thread: d,
                        acq: NONE,
                        rel: NONE,
                    });
                    open[d as usize].push((l, (regions.len() - 1) as u32));
                }
            }
        }
        let mut region_of_acq = HashMap::default();
        let mut lockset_ids: HashMap<SmallVec<[LockId; 4]>, u32> = HashMap::default();
        let mut locksets = Vec::new();
        let mut lockset_of = vec![NONE; len];
        let mut regions_at: Vec<SmallVec<[u32; 2]>> = vec![SmallVec::new(); len];
        let mut writes: Vec<(VarId, u32)> = Vec::new();
        let mut v0: HashMap<VarId, Option<ValueKey>> = HashMap::default();
        let mut reads_before = vec![0u32; len];
        let mut reads: Vec<Vec<u32>> = vec![Vec::new(); nt];
        for (k, e) in ev.iter().enumerate() {
            let k32 = k as u32;
            let t = tix[k] as usize;
            reads_before[k] = reads[t].len() as u32;
            match e.kind {
                Kind::Acquire | Kind::Wake if e.kind == Kind::Wake || !e.is_nested() => {
                    regions.push(Region {
                        lock: e.target,
                        thread: t as u32,
                        acq: k32,
                        rel: NONE,
                    });
                    let r = (regions.len() - 1) as u32;
                    region_of_acq.insert(k32, r);
                    open[t].push((e.target, r));
                }
                Kind::Release | Kind::Wait if e.kind == Kind::Wait || !e.is_nested() => {
                    if let Some(p) = open[t].iter().rposition(|&(l, _)| l == e.target) {
                        let (_, r) = open[t].remove(p);
                        regions[r as usize].rel = k32;
                    }
                }
                _ => {}
            }
            if e.kind.is_access() {
                v0.entry(e.target).or_insert_with(|| v0_of(e.target));
                if e.kind.is_write() {
                    writes.push((e.target, k32));
                } else {
                    reads[t].push(k32);
                }
                if e.kind.is_plain_access() {
                    let mut ls: SmallVec<[LockId; 4]> = open[t].iter().map(|&(l, _)| l).collect();
                    ls.sort_unstable();
                    ls.dedup();
                    let n = lockset_ids.len() as u32;
                    let id = *lockset_ids.entry(ls.clone()).or_insert_with(|| {
                        locksets.push(ls);
                        n
                    });
                    lockset_of[k] = id;
                    regions_at[k] = open[t].iter().map(|&(_, r)| r).collect();
                }
            }
        }
        let mut by_lock: HashMap<LockId, Vec<u32>> = HashMap::default();
        for (r, reg) in regions.iter().enumerate() {
            by_lock.entry(reg.lock).or_default().push(r as u32);
        }
        Window {
            g,
            start,
            len,
            end,
            tix,
            pos,
            threads,
            nt,
            vc,
            edges,
            regions,
            by_lock,
            region_of_acq,
            writes: Writes::new(writes),
            v0,
            lockset_of,
            locksets,
            reads_before,
            reads,
            fvc: Vec::new(),
            regions_at,
            fences: HashMap::default(),
        }
    }

    /// Computes ≺f, a sound strengthening of ≺ for refuting pairs without a solver:
    /// before an event e can run, the reads of its thread that guard it (those before
    /// its last branch-like event; conservative mode: before e) return their recorded
    /// values, so a guarded read with no initial-value case and a single possible
    /// source w, earlier in the trace, forces w (and what w needs) before e. A pair
    /// ordered by ≺f cannot be the next two events of any feasible prefix. Reads of
    /// variables with more than `MAX_WRITES` window writes are not examined (cost).
    pub fn compute_forced(&mut self) {
        const MAX_WRITES: usize = 64;
        let (len, nt) = (self.len, self.nt);
        let mut fvc = vec![0u32; len * nt];
        let mut cur: Vec<Vec<u32>> = vec![vec![0; nt]; nt];
        let mut pending: Vec<Vec<u32>> = vec![Vec::new(); nt];
        let mut ei = 0;
        let conservative = !self.g.branch_complete;
        for k in 0..len {
            let k32 = k as u32;
            let t = self.tix[k] as usize;
            let mut v = std::mem::take(&mut cur[t]);
            while ei < self.edges.len() && self.edges[ei].1 as usize == k {
                let src = self.edges[ei].0 as usize;
                for u in 0..nt {
                    v[u] = v[u].max(fvc[src * nt + u]);
                }
                ei += 1;
            }
            let guard = if conservative {
                self.after_read(k32)
            } else {
                self.is_branch_like(k32)
            };
            if guard {
                for r in std::mem::take(&mut pending[t]) {
                    let w = match self.own_writer(r) {
                        Some(w) => w,
                        None => {
                            let x = self.ev(r).target;
                            if self.writes.get(&x).is_none_or(|ws| ws.len() > MAX_WRITES)
                                || self.init_ok(r)
                            {
                                continue;
                            }
                            match self.sources(r)[..] {
                                [w] => w,
                                _ => continue,
                            }
                        }
                    };
                    if w < r {
                        for u in 0..nt {
                            v[u] = v[u].max(fvc[w as usize * nt + u]);
                        }
                    }
                }
            }
            v[t] = self.pos[k] + 1;
            fvc[k * nt..(k + 1) * nt].copy_from_slice(&v);
            cur[t] = v;
            if matches!(self.ev(k32).kind, Kind::Read | Kind::VRead) {
                pending[t].push(k32);
            }
        }
        self.fvc = fvc;
    }

    /// The one write read `r` can read from when its value is its window writer's own
    /// token ([`ValueKey`] `(1, i)`: a write without a value, or the JDK's), whatever the
    /// number of writes of its variable: no other write has that key and the value at the
    /// window start cannot either, so [`Window::sources`] is that writer or nothing (then
    /// no schedule runs `r`'s guard at all, and forcing the writer is vacuously sound).
    /// A lock model's `$readers`/`$writer` variables have hundreds of valueless writes per
    /// window, which [`Window::compute_forced`]'s scan cap would otherwise skip.
    fn own_writer(&self, r: u32) -> Option<u32> {
        if self.key(r).0 != 1 {
            return None;
        }
        self.observed_local(r)
            .filter(|&w| self.key(w) == self.key(r))
    }

    /// Fences: a read r inside a region R of lock L reads from one of its possible writers
    /// w (or the value at the window start, which every window write then follows), so it
    /// runs before every write w2 with w ≺ w2 (w2 between w and r would hide w). If w2 lies in another thread's region R2 of L, R
    /// must end before R2 begins; when every possible writer has such a w2 in thread u,
    /// R ends before the latest of those regions (one per writer, the earliest) begins. So once a guard after r has run (r then returns its value), no
    /// event of R after that guard is at the cut together with an event of R2's thread
    /// after R2's acquire: R would still be open while R2 was entered, or R2, with w2,
    /// would be over before R began. (Derby: a thread waiting for a page latch reads the
    /// owner field, set by the holder, inside the page's monitor, and calls a method on
    /// the owner; the holder clears the field inside the same monitor and later closes
    /// what the waiter read.) [`Window::fenced`] checks a pair against them.
    pub fn compute_fences(&mut self) {
        let conservative = !self.g.branch_complete;
        let mut fences: HashMap<u32, Vec<Fence>> = HashMap::default();
        for (rid, reg) in self.regions.iter().enumerate() {
            let others = self.by_lock[&reg.lock]
                .iter()
                .any(|&r2| self.regions[r2 as usize].thread != reg.thread);
            if !others {
                continue;
            }
            let t = reg.thread as usize;
            let th = &self.threads[t];
            let first = if reg.acq == NONE {
                0
            } else {
                self.pos[reg.acq as usize] as usize + 1
            };
            let last = if reg.rel == NONE {
                th.len()
            } else {
                self.pos[reg.rel as usize] as usize
            };
            for (p, &r) in th.iter().enumerate().take(last).skip(first) {
                let e = self.ev(r);
                if e.kind != Kind::Read || !self.regions_at[r as usize].contains(&(rid as u32)) {
                    continue;
                }
                let Some(ws) = self.writes.get(&e.target) else {
                    continue;
                };
                let in_other_region = |w2: u32| {
                    self.tix[w2 as usize] as usize != t
                        && self.regions_at[w2 as usize]
                            .iter()
                            .any(|&r2| self.regions[r2 as usize].lock == reg.lock)
                };
                if !ws.iter().any(|&w2| in_other_region(w2)) {
                    continue;
                }
                // Where r's value may come from: a window write, or (`None`) the value
                // at the window start, which every window write of x then follows.
                let mut sources: Vec<Option<u32>> = self.sources(r).into_iter().map(Some).collect();
                if self.init_ok(r) {
                    sources.push(None);
                }
                if sources.is_empty() {
                    continue;
                }
                // The guard after r that makes r return its value.
                let from = if conservative {
                    p as u32
                } else {
                    match th[p + 1..last].iter().find(|&&g| self.is_branch_like(g)) {
                        Some(&g) => self.pos[g as usize],
                        None => continue,
                    }
                };
                // Per other thread u: r reads from one of `sources`, so for each source w
                // some write w2 of u after it (w ≺ w2), in a region of the lock, comes
                // after r; the fence holds from the latest of the earliest such regions'
                // acquires (`None`: a region held since before the window).
                for u in 0..self.nt as u32 {
                    if u as usize == t {
                        continue;
                    }
                    let mut acq: Option<Option<u32>> = None; // None: no fence yet
                    let mut every_source = true;
                    for &w in &sources {
                        let earliest = ws
                            .iter()
                            .filter(|&&w2| {
                                self.tix[w2 as usize] == u
                                    && in_other_region(w2)
                                    && w.is_none_or(|w| self.prec(w, w2))
                            })
                            .map(|&w2| {
                                let r2 = self.regions_at[w2 as usize]
                                    .iter()
                                    .map(|&r2| self.regions[r2 as usize])
                                    .find(|g| g.lock == reg.lock)
                                    .expect("w2 is in a region of the lock");
                                (r2.acq != NONE).then(|| self.pos[r2.acq as usize])
                            })
                            .min();
                        match earliest {
                            None => {
                                every_source = false;
                                break;
                            }
                            Some(e) => acq = Some(acq.map_or(e, |a| a.max(e))),
                        }
                    }
                    if let (true, Some(acq)) = (every_source, acq) {
                        fences.entry(rid as u32).or_default().push(Fence {
                            from,
                            thread: u,
                            acq,
                        });
                    }
                }
            }
        }
        self.fences = fences;
    }

    /// Whether a fence ([`Window::compute_fences`]) keeps plain accesses `a` and `b` from
    /// being adjacent.
    pub fn fenced(&self, a: u32, b: u32) -> bool {
        if self.fences.is_empty() {
            return false;
        }
        let one_way = |a: u32, b: u32| {
            let (pa, tb, pb) = (
                self.pos[a as usize],
                self.tix[b as usize],
                self.pos[b as usize],
            );
            self.regions_at[a as usize].iter().any(|rid| {
                self.fences.get(rid).is_some_and(|fs| {
                    fs.iter()
                        .any(|f| f.thread == tb && pa > f.from && f.acq.is_none_or(|acq| pb > acq))
                })
            })
        };
        one_way(a, b) || one_way(b, a)
    }

    /// x ≺f y ([`Window::compute_forced`]; ≺ until it is computed).
    pub fn forced_prec(&self, x: u32, y: u32) -> bool {
        if self.fvc.is_empty() {
            return self.prec(x, y);
        }
        x != y
            && self.fvc[y as usize * self.nt + self.tix[x as usize] as usize] > self.pos[x as usize]
    }

    pub fn ev(&self, k: u32) -> &Event {
        &self.g.events[self.start + k as usize]
    }

    /// Global index of local event `k`.
    pub fn global(&self, k: u32) -> usize {
        self.start + k as usize
    }

    /// `vc[k][u]`: how many of thread u's window events are ≼ k.
    pub fn vc(&self, k: u32, u: usize) -> u32 {
        self.vc[k as usize * self.nt + u]
    }

    pub fn vc_row(&self, k: u32) -> &[u32] {
        &self.vc[k as usize * self.nt..(k as usize + 1) * self.nt]
    }

    /// x ≺ y (must happen before), strict.
    pub fn prec(&self, x: u32, y: u32) -> bool {
        x != y && self.vc(y, self.tix[x as usize] as usize) > self.pos[x as usize]
    }

    /// The locks held at plain access `k` (outermost regions, including ⊥ ones).
    pub fn lockset(&self, k: u32) -> &[LockId] {
        &self.locksets[self.lockset_of[k as usize] as usize]
    }

    /// Whether two plain accesses hold a common lock.
    pub fn common_lock(&self, a: u32, b: u32) -> bool {
        let (x, y) = (self.lockset_of[a as usize], self.lockset_of[b as usize]);
        if x == NONE || y == NONE {
            return false;
        }
        let (la, lb) = (&self.locksets[x as usize], &self.locksets[y as usize]);
        la.iter().any(|l| lb.contains(l))
    }

    /// The next event of `k`'s thread in the window.
    pub fn po_next(&self, k: u32) -> Option<u32> {
        self.threads[self.tix[k as usize] as usize]
            .get(self.pos[k as usize] as usize + 1)
            .copied()
    }

    /// The value key of access `k`.
    pub fn key(&self, k: u32) -> ValueKey {
        self.g.keys[self.global(k)]
    }

    /// Whether read `k`'s recorded writer (or the initial value, when it observed none)
    /// explains its value ([`Global::unexplained`]).
    pub fn explained(&self, k: u32) -> bool {
        !self.g.facts.is_unexplained(self.global(k) as u32)
    }

    /// The observed write of read `k`, as a local index, or `None` when it lies before
    /// the window (or is the initial value).
    pub fn observed_local(&self, k: u32) -> Option<u32> {
        let o = self.g.observed[self.global(k)];
        (o != NONE && o as usize >= self.start).then(|| (o as usize - self.start) as u32)
    }

    /// Src(r) (M4): the writes read `r` may take its value from (same value key, or its
    /// recorded writer), pruned: no write ≺-after `r`, and of the writes ≺-before `r` only
    /// those no other such write follows in ≺.
    pub fn sources(&self, r: u32) -> Vec<u32> {
        let e = self.ev(r);
        let Some(ws) = self.writes.get(&e.target) else {
            return Vec::new();
        };
        let key = self.key(r);
        let obs = self.observed_local(r);
        let mut before: Vec<u32> = Vec::new();
        let mut out = Vec::new();
        for &w in ws {
            if self.prec(r, w) {
                continue;
            }
            if self.prec(w, r) {
                before.push(w);
            } else if self.key(w) == key || (Some(w) == obs && self.explained(r)) {
                out.push(w);
            }
        }
        for &w in &before {
            let dominated = before.iter().any(|&w2| w2 != w && self.prec(w, w2));
            if !dominated && (self.key(w) == key || (Some(w) == obs && self.explained(r))) {
                out.push(w);
            }
        }
        out
    }

    /// Whether INIT(r) is available (with the recorded-writer case of the value models,
    /// docs/DETECTORS.md#witnesses): the value at the window start is r's value (or r read it in the
    /// trace), and no window write to its variable must precede r.
    pub fn init_ok(&self, r: u32) -> bool {
        let e = self.ev(r);
        let v0_ok = self.v0.get(&e.target).copied().flatten() == Some(self.key(r));
        (v0_ok || (self.observed_local(r).is_none() && self.explained(r)))
            && !self
                .writes
                .get(&e.target)
                .is_some_and(|ws| ws.iter().any(|&w| self.prec(w, r)))
    }

    /// Whether event `k` is guarded in branch-complete mode (M5): a branch, or an
    /// `enter`/`exit` (conservatively a branch, docs/DETECTORS.md#branches-and-conservative-mode).
    pub fn is_branch_like(&self, k: u32) -> bool {
        matches!(self.ev(k).kind, Kind::Branch | Kind::Enter | Kind::Exit)
    }

    /// For a `join` event `k`: the event it must follow, when it is in the window (before
    /// `k`): the joined thread's last event, or its fork if it has no events.
    pub fn joined_end(&self, k: u32) -> Option<u32> {
        let e = self.ev(k);
        if e.kind != Kind::Join {
            return None;
        }
        let l = self.g.facts.join_after(e.target)? as usize;
        (l >= self.start && l < self.start + self.len)
            .then(|| (l - self.start) as u32)
            .filter(|&l| l < k)
    }

    /// Conservative mode: the read a `join` event `k` needs to return its recorded value
    /// besides its own thread's, the joined thread's last event when it is a read (that
    /// read may decide whether the thread ends).
    pub fn join_guard(&self, k: u32) -> Option<u32> {
        self.joined_end(k)
            .filter(|&l| matches!(self.ev(l).kind, Kind::Read | Kind::VRead))
    }

    /// Whether the po-predecessor of `k` in the window is a read (conservative M5).
    pub fn after_read(&self, k: u32) -> bool {
        let p = self.pos[k as usize];
        p > 0 && {
            let prev = self.threads[self.tix[k as usize] as usize][p as usize - 1];
            matches!(self.ev(prev).kind, Kind::Read | Kind::VRead)
        }
    }
}
