//! Per-variable access histories for the clock-based detectors (hb, shb, wcp, cp), built
//! so that *every* race signature is found, not only races with the last access.
//!
//! For each variable the history keeps the latest access per (thread, location, kind).
//! If an earlier access at the same (thread, location, kind) is unordered with a new
//! access, so is the latest one (it comes later in that thread), so checking the latest
//! finds every unordered location pair.
//!
//! Why the layout: on a large trace the histories are far bigger than the caches, and a
//! shared field is touched by many threads at several sites, so a plain list of entries
//! costs a dozen cache misses per access. Entries are therefore grouped by thread, and
//! each thread's group carries the epochs of its latest write and latest access. An
//! access compares its clock with those summaries (a thread whose latest write is ordered
//! before the access has no write that races with it, since epochs grow along a thread)
//! and reads the entries of a thread only when a race with it is possible, plus its own
//! group to record itself.

use crate::detector::{RaceAccess, RaceSink};
use crate::vc::VectorClock;
use jrace_trace::{Event, Kind, LocId, ThreadId};

/// One thread's part of a variable's history.
#[derive(Clone, Copy, Debug, Default)]
struct ThreadPart {
    thread: ThreadId,
    /// Epoch of the thread's latest write of the variable (0: none; epochs start at 1).
    last_write: u32,
    /// Epoch of the thread's latest access of the variable.
    last_access: u32,
    /// One past this thread's last entry in the variable's entries; parts are
    /// contiguous and in order, so a part starts where the previous one ends.
    end: u32,
}

/// The latest access of one (thread, location, kind), in 16 bytes.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    /// Location id << 1 | 1 for a write. Location ids are dense interned ids, so they
    /// never reach 2^31 (that many location names would not fit in memory).
    loc_write: u32,
    /// The thread's own clock component at the access.
    epoch: u32,
    idx_lo: u32,
    idx_hi: u32,
}

impl Entry {
    #[inline]
    fn idx(&self) -> u64 {
        (self.idx_hi as u64) << 32 | self.idx_lo as u64
    }
    #[inline]
    fn loc(&self) -> LocId {
        self.loc_write >> 1
    }
    #[inline]
    fn write(&self) -> bool {
        self.loc_write & 1 != 0
    }
}

/// Where `N` or fewer records of a variable are kept: in its slot, else in a [`Pool`]
/// block of `2^class` records.
#[derive(Clone, Copy)]
enum Store<T, const N: usize> {
    Inline([T; N]),
    Pooled { block: Block, class: u8 },
}

impl<T: Copy + Default, const N: usize> Store<T, N> {
    #[inline(always)]
    fn get<'a>(&'a self, pool: &'a Pool<T>, len: usize) -> &'a [T] {
        match self {
            Store::Inline(v) => &v[..len],
            Store::Pooled { block, .. } => pool.get(*block, len),
        }
    }

    #[inline(always)]
    fn get_mut<'a>(&'a mut self, pool: &'a mut Pool<T>, len: usize) -> &'a mut [T] {
        match self {
            Store::Inline(v) => &mut v[..len],
            Store::Pooled { block, .. } => pool.get_mut(*block, len),
        }
    }

    /// Where the records start when pooled (for prefetching).
    #[inline(always)]
    fn pooled_ptr(&self, pool: &Pool<T>) -> Option<*const T> {
        match self {
            Store::Inline(_) => None,
            Store::Pooled { block, .. } => Some(pool.get(*block, 0).as_ptr()),
        }
    }

    /// Makes room for `need` records, `len` of which are in use.
    #[inline]
    fn reserve(&mut self, pool: &mut Pool<T>, len: usize, need: usize) {
        match self {
            Store::Inline(_) if need <= N => {}
            Store::Inline(v) => {
                let class = class_for(need.max(2 * N));
                let block = pool.alloc(class);
                pool.get_mut(block, len).copy_from_slice(&v[..len]);
                *self = Store::Pooled { block, class };
            }
            Store::Pooled { block, class } => {
                if need > 1 << *class {
                    *block = pool.grow(*block, *class, len);
                    *class += 1;
                }
            }
        }
    }
}

/// A variable's slot, one cache line: a variable one thread reads and writes at one site
/// each never leaves it. A real trace has millions of variables, most of them used so
/// (Derby 4x300: 1.6 M of 1.76 M variables have one thread, 1.33 M at most two entries).
/// Against a two-line slot with six entries this is 10% faster on that trace and 85 MB
/// smaller per detector, and 10-15% slower on `jrace-bench gen`'s synthetic traces.
#[repr(align(64))]
struct VarHistory {
    parts: Store<ThreadPart, 1>,
    entries: Store<Entry, 2>,
    nparts: u32,
    nentries: u32,
}

impl Default for VarHistory {
    fn default() -> Self {
        VarHistory {
            parts: Store::Inline([ThreadPart::default()]),
            entries: Store::Inline([Entry::default(); 2]),
            nparts: 0,
            nentries: 0,
        }
    }
}

/// A block of a [`Pool`]: slab and offset in it.
#[derive(Clone, Copy, Debug)]
struct Block {
    slab: u32,
    off: u32,
}

/// Records per regular slab; a block this large or larger gets a slab of its own.
const SLAB: usize = 1 << 15;

/// Blocks of `2^class` records carved from large slabs, with a free list per class,
/// for the parts and entries of variables that outgrow their slot. Why not the global
/// allocator: a trace touching each variable from hundreds of sites grows millions of
/// small blocks, and malloc, free and freeing each block when the detector is dropped
/// were a sixth of hb's time on such a trace.
struct Pool<T> {
    /// Regular slabs are allocated whole but filled as blocks are carved (pages are
    /// touched only when used).
    slabs: Vec<Vec<T>>,
    /// The regular slab blocks are carved from, and how much of it is used.
    current: usize,
    top: usize,
    free: Vec<Vec<Block>>,
}

impl<T: Copy + Default> Default for Pool<T> {
    fn default() -> Self {
        Pool {
            slabs: Vec::new(),
            current: usize::MAX,
            top: SLAB,
            free: Vec::new(),
        }
    }
}

impl<T: Copy + Default> Pool<T> {
    fn alloc(&mut self, class: u8) -> Block {
        let c = class as usize;
        if let Some(b) = self.free.get_mut(c).and_then(Vec::pop) {
            return b;
        }
        let n = 1usize << c;
        if n >= SLAB {
            self.slabs.push(vec![T::default(); n]);
            return Block {
                slab: (self.slabs.len() - 1) as u32,
                off: 0,
            };
        }
        if self.top + n > SLAB {
            // A new slab; what is left of the current one goes to the free lists, in
            // power-of-two pieces.
            let mut left = SLAB - self.top;
            while left > 0 && self.current != usize::MAX {
                let k = left.ilog2() as u8;
                let b = Block {
                    slab: self.current as u32,
                    off: self.top as u32,
                };
                self.release(b, k);
                self.top += 1 << k;
                left -= 1 << k;
            }
            if let Some(slab) = self.slabs.get_mut(self.current) {
                slab.resize(SLAB, T::default());
            }
            self.slabs.push(Vec::with_capacity(SLAB));
            self.current = self.slabs.len() - 1;
            self.top = 0;
        }
        let b = Block {
            slab: self.current as u32,
            off: self.top as u32,
        };
        self.top += n;
        self.slabs[self.current].resize(self.top, T::default());
        b
    }

    fn release(&mut self, b: Block, class: u8) {
        let c = class as usize;
        if self.free.len() <= c {
            self.free.resize_with(c + 1, Vec::new);
        }
        self.free[c].push(b);
    }

    #[inline(always)]
    fn get(&self, b: Block, len: usize) -> &[T] {
        &self.slabs[b.slab as usize][b.off as usize..][..len]
    }

    #[inline(always)]
    fn get_mut(&mut self, b: Block, len: usize) -> &mut [T] {
        &mut self.slabs[b.slab as usize][b.off as usize..][..len]
    }

    /// A block of class `class + 1` holding the first `len` records of `b` (class
    /// `class`), which is released.
    fn grow(&mut self, b: Block, class: u8, len: usize) -> Block {
        let nb = self.alloc(class + 1);
        let (src, dst) = (b.slab as usize, nb.slab as usize);
        let (so, d) = (b.off as usize, nb.off as usize);
        if src == dst {
            self.slabs[src].copy_within(so..so + len, d);
        } else {
            let (a, z) = if src < dst {
                let (l, r) = self.slabs.split_at_mut(dst);
                (&l[src], &mut r[0])
            } else {
                let (l, r) = self.slabs.split_at_mut(src);
                (&r[0], &mut l[dst])
            };
            z[d..d + len].copy_from_slice(&a[so..so + len]);
        }
        self.release(b, class);
        nb
    }
}

/// The smallest class whose blocks hold `n` records.
fn class_for(n: usize) -> u8 {
    n.next_power_of_two().trailing_zeros() as u8
}

#[derive(Default)]
pub(crate) struct AccessHistory {
    vars: Vec<VarHistory>,
    part_pool: Pool<ThreadPart>,
    entry_pool: Pool<Entry>,
}

impl AccessHistory {
    /// Call before handling `events[k]`: prefetches, for the accesses a few events
    /// ahead, the variable's slot, then (once it has arrived) its pooled thread parts,
    /// then the accessing thread's own entries. The histories of a large trace do not
    /// fit in the caches, and this hides most of the dependent misses an access would
    /// otherwise wait for.
    #[inline]
    pub fn prefetch_ahead(&self, events: &[Event], k: usize) {
        const FAR: usize = 32;
        const MID: usize = 20;
        const NEAR: usize = 10;
        if let Some(f) = events.get(k + FAR) {
            if f.kind.is_plain_access() {
                self.prefetch_slot(f.target);
            }
        }
        if let Some(f) = events.get(k + MID) {
            if f.kind.is_plain_access() {
                self.prefetch_parts(f.target);
            }
        }
        if let Some(f) = events.get(k + NEAR) {
            if f.kind.is_plain_access() {
                self.prefetch_own(f.target, f.thread);
            }
        }
    }

    /// Hints the cache that `var`'s slot is needed soon.
    #[inline]
    fn prefetch_slot(&self, var: u32) {
        if let Some(h) = self.vars.get(var as usize) {
            prefetch((h as *const VarHistory).cast());
        }
    }

    /// Hints the cache that `var`'s pooled parts are needed soon. Call it after
    /// [`AccessHistory::prefetch_slot`] had time to land.
    #[inline]
    fn prefetch_parts(&self, var: u32) {
        if let Some(h) = self.vars.get(var as usize) {
            if let Some(p) = h.parts.pooled_ptr(&self.part_pool) {
                let p: *const u8 = p.cast();
                prefetch(p);
                prefetch(p.wrapping_add(64));
            }
        }
    }

    /// Hints the cache that `thread`'s own entries for `var` are needed soon: they are
    /// what an access reads to record itself. Call it after
    /// [`AccessHistory::prefetch_parts`] had time to land.
    #[inline]
    fn prefetch_own(&self, var: u32, thread: ThreadId) {
        if let Some(h) = self.vars.get(var as usize) {
            if let Some(e) = h.entries.pooled_ptr(&self.entry_pool) {
                let mut start = 0;
                for p in h.parts.get(&self.part_pool, h.nparts as usize) {
                    if p.thread == thread {
                        let first: *const u8 = e.wrapping_add(start).cast();
                        prefetch(first);
                        prefetch(first.wrapping_add(64));
                        return;
                    }
                    start = p.end as usize;
                }
            }
        }
    }

    /// Makes room in `var`'s history for `parts` thread parts and `entries` entries.
    #[inline]
    fn reserve(&mut self, var: usize, parts: usize, entries: usize) {
        let h = &mut self.vars[var];
        h.parts
            .reserve(&mut self.part_pool, h.nparts as usize, parts);
        h.entries
            .reserve(&mut self.entry_pool, h.nentries as usize, entries);
    }

    /// `var`'s thread parts and entries.
    #[inline(always)]
    fn view(&self, var: usize) -> (&[ThreadPart], &[Entry]) {
        let h = &self.vars[var];
        (
            h.parts.get(&self.part_pool, h.nparts as usize),
            h.entries.get(&self.entry_pool, h.nentries as usize),
        )
    }

    /// `var`'s thread parts and entries, to change.
    #[inline(always)]
    fn view_mut(&mut self, var: usize) -> (&mut [ThreadPart], &mut [Entry]) {
        let h = &mut self.vars[var];
        let (np, ne) = (h.nparts as usize, h.nentries as usize);
        (
            h.parts.get_mut(&mut self.part_pool, np),
            h.entries.get_mut(&mut self.entry_pool, ne),
        )
    }

    /// Reports every recorded access of `e`'s variable that conflicts with `e`, belongs
    /// to another thread and is not ordered before `e` by `clock` (the clock of `e`'s
    /// thread at `e`); then records `e` with `epoch`, its thread's own clock component.
    #[inline]
    pub fn check_and_record(
        &mut self,
        idx: u64,
        e: &Event,
        clock: &VectorClock,
        epoch: u32,
        races: &mut RaceSink,
    ) {
        let var = e.target as usize;
        if var >= self.vars.len() {
            self.vars.resize_with(var + 1, VarHistory::default);
        }
        let write = e.kind == Kind::Write;
        let (parts, entries) = self.view(var);
        let mut own = usize::MAX;
        let mut own_start = 0usize;
        let mut start = 0usize;
        for (pi, p) in parts.iter().enumerate() {
            if p.thread == e.thread {
                own = pi;
                own_start = start;
            } else {
                let seen = clock.get(p.thread);
                let latest = if write { p.last_access } else { p.last_write };
                if latest > seen {
                    for a in &entries[start..p.end as usize] {
                        if (a.write() || write) && a.epoch > seen {
                            let was = RaceAccess {
                                idx: a.idx(),
                                loc: a.loc(),
                                thread: p.thread,
                                write: a.write(),
                            };
                            races.report(e.target, was, RaceAccess::of(idx, e));
                        }
                    }
                }
            }
            start = p.end as usize;
        }
        debug_assert!(e.loc < 1 << 31);
        let loc_write = e.loc << 1 | write as u32;
        let entry = Entry {
            loc_write,
            epoch,
            idx_lo: idx as u32,
            idx_hi: (idx >> 32) as u32,
        };
        let (np, ne) = (parts.len(), entries.len());
        if own == usize::MAX {
            self.reserve(var, np + 1, ne + 1);
            let h = &mut self.vars[var];
            h.nparts += 1;
            h.nentries += 1;
            let (parts, entries) = self.view_mut(var);
            entries[ne] = entry;
            parts[np] = ThreadPart {
                thread: e.thread,
                last_write: if write { epoch } else { 0 },
                last_access: epoch,
                end: ne as u32 + 1,
            };
            return;
        }
        let end = parts[own].end as usize;
        // A linear search, even for a variable touched from hundreds of sites: an index
        // (a map from (variable, thread, location/kind) to the entry) was measured 20%
        // slower on such a trace, its lookups missing the cache where the search streams
        // through one contiguous part.
        let found = entries[own_start..end]
            .iter()
            .position(|a| a.loc_write == loc_write);
        if found.is_none() {
            self.reserve(var, np, ne + 1);
            self.vars[var].nentries += 1;
        }
        let (parts, entries) = self.view_mut(var);
        let p = &mut parts[own];
        p.last_access = epoch;
        if write {
            p.last_write = epoch;
        }
        match found {
            Some(i) => entries[own_start + i] = entry,
            None => {
                entries.copy_within(end..ne, end + 1);
                entries[end] = entry;
                for q in &mut parts[own..] {
                    q.end += 1;
                }
            }
        }
    }
}

/// [`crate::Detector::on_batch`] for detectors built on an [`AccessHistory`]: each
/// event is handled after prefetching the histories the next ones will need.
#[inline]
pub(crate) fn on_batch_prefetching<D: crate::Detector>(
    d: &mut D,
    history: fn(&D) -> &AccessHistory,
    first_idx: u64,
    events: &[Event],
    races: &mut RaceSink,
) {
    for (k, e) in events.iter().enumerate() {
        history(d).prefetch_ahead(events, k);
        d.on_event(first_idx + k as u64, e, races);
    }
}

/// Hints the cache that the line at `p` is needed soon (a no-op off x86-64).
#[inline]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is only a hint; any address is allowed.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

const _: () = assert!(std::mem::size_of::<VarHistory>() == 64);

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeSet;

    /// The history against keeping every access and testing every pair, on random
    /// streams with 8 threads, many sites and clocks that grow by random joins.
    #[test]
    fn matches_all_pairs_reference() {
        // Few sites, then many (long thread parts).
        for (seeds, events, vars, locs) in [(200u64, 400u64, 3u32, 6u32), (12, 2500, 2, 90)] {
            check_against_reference(seeds, events, vars, locs);
        }
    }

    /// Blocks of every size, grown and released in random order, never overlap and
    /// keep what was written to them (also across slabs and in slabs of their own).
    #[test]
    fn pool_blocks_keep_their_records() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut pool = Pool::<u64>::default();
        // (block, class, len, tag): block `i` holds tag * 1_000_000 + k at k.
        let mut live: Vec<(Block, u8, usize, u64)> = Vec::new();
        for tag in 0..3000u64 {
            match rng.gen_range(0..4) {
                0 if !live.is_empty() => {
                    let (b, c, _, _) = live.swap_remove(rng.gen_range(0..live.len()));
                    pool.release(b, c);
                }
                1 if !live.is_empty() => {
                    let i = rng.gen_range(0..live.len());
                    let (b, c, len, t) = live[i];
                    let nb = pool.grow(b, c, len);
                    live[i] = (nb, c + 1, len, t);
                }
                _ => {
                    let c = if rng.gen_ratio(1, 200) {
                        16
                    } else {
                        rng.gen_range(0..9)
                    };
                    let b = pool.alloc(c);
                    let len = rng.gen_range(0..=1usize << c);
                    for (k, x) in pool.get_mut(b, len).iter_mut().enumerate() {
                        *x = tag * 1_000_000 + k as u64;
                    }
                    live.push((b, c, len, tag));
                }
            }
            for &(b, _, len, t) in &live {
                let got = pool.get(b, len);
                assert!(got
                    .iter()
                    .enumerate()
                    .all(|(k, &x)| x == t * 1_000_000 + k as u64));
            }
        }
        let mut spans: Vec<(u32, u32, u32)> = live
            .iter()
            .map(|&(b, c, _, _)| (b.slab, b.off, b.off + (1u32 << c)))
            .collect();
        spans.sort();
        assert!(spans
            .windows(2)
            .all(|w| w[0].0 != w[1].0 || w[0].2 <= w[1].1));
    }

    fn check_against_reference(seeds: u64, events: u64, vars: u32, locs: u32) {
        for seed in 0..seeds {
            let mut rng = SmallRng::seed_from_u64(seed);
            let threads = rng.gen_range(2..9u32);
            let mut clocks: Vec<VectorClock> = (0..threads)
                .map(|t| {
                    let mut c = VectorClock::new();
                    c.set(t, 1);
                    c
                })
                .collect();
            let mut hist = AccessHistory::default();
            let mut sink = RaceSink::new();
            // (var, thread, loc, write, clock snapshot)
            let mut all: Vec<(u32, u32, u32, bool, VectorClock)> = Vec::new();
            let mut want = BTreeSet::new();
            for idx in 0..events {
                let t = rng.gen_range(0..threads);
                if rng.gen_ratio(1, 6) {
                    // A synchronization: t publishes and ticks, another thread joins.
                    let u = rng.gen_range(0..threads);
                    let c = clocks[t as usize].clone();
                    clocks[u as usize].join(&c);
                    clocks[t as usize].inc(t);
                    continue;
                }
                let var = rng.gen_range(0..vars);
                let loc = rng.gen_range(0..locs);
                let write = rng.gen_ratio(1, 3);
                let kind = if write { Kind::Write } else { Kind::Read };
                let e = Event::new(t, kind, var, loc);
                let c = clocks[t as usize].clone();
                for (v, u, l, w, cu) in &all {
                    if *v == var && *u != t && (*w || write) && cu.get(*u) > c.get(*u) {
                        want.insert((var, (*l).min(loc), (*l).max(loc)));
                    }
                }
                hist.check_and_record(idx, &e, &c, c.get(t), &mut sink);
                all.push((var, t, loc, write, c));
            }
            let got: BTreeSet<_> = sink
                .pairs()
                .iter()
                .map(|p| {
                    (
                        p.var,
                        p.first_loc.min(p.second_loc),
                        p.first_loc.max(p.second_loc),
                    )
                })
                .collect();
            assert_eq!(got, want, "seed {seed}");
        }
    }
}
