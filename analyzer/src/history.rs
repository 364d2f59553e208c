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
use smallvec::SmallVec;

/// One thread's part of a variable's history.
#[derive(Clone, Copy, Debug)]
struct ThreadPart {
    thread: ThreadId,
    /// Epoch of the thread's latest write of the variable (0: none; epochs start at 1).
    last_write: u32,
    /// Epoch of the thread's latest access of the variable.
    last_access: u32,
    /// One past this thread's last entry in [`VarHistory::entries`]; parts are contiguous
    /// and in order, so a part starts where the previous one ends.
    end: u32,
}

/// The latest access of one (thread, location, kind), in 16 bytes.
#[derive(Clone, Copy, Debug)]
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

/// A variable's slot: one cache line holding one thread part and two entries inline, so
/// a variable one thread reads and writes at one site each never touches the heap. A
/// real trace has millions of variables, most of them used so (Derby 4x300: 1.6 M of
/// 1.76 M variables have one thread, 1.33 M at most two entries). Against a two-line
/// slot with six entries this is 10% faster on that trace and 85 MB smaller per
/// detector, and 10-15% slower on `jrace-bench gen`'s synthetic traces.
#[derive(Default)]
#[repr(align(64))]
struct VarHistory {
    parts: SmallVec<[ThreadPart; 1]>,
    entries: SmallVec<[Entry; 2]>,
}

#[derive(Default)]
pub(crate) struct AccessHistory {
    vars: Vec<VarHistory>,
}

impl AccessHistory {
    /// Call before handling `events[k]`: prefetches, for the accesses a few events
    /// ahead, the variable's slot, then (once it has arrived) its heap-allocated thread
    /// parts, then the accessing thread's own entries. The histories of a large trace do
    /// not fit in the caches, and this hides most of the dependent misses an access would
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
            let p: *const u8 = (h as *const VarHistory).cast();
            prefetch(p);
            prefetch(p.wrapping_add(64));
        }
    }

    /// Hints the cache that `var`'s heap-allocated parts are needed soon. Call it after
    /// [`AccessHistory::prefetch_slot`] had time to land.
    #[inline]
    fn prefetch_parts(&self, var: u32) {
        if let Some(h) = self.vars.get(var as usize) {
            if h.parts.spilled() {
                let p: *const u8 = h.parts.as_ptr().cast();
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
            if h.entries.spilled() {
                let mut start = 0;
                for p in &h.parts {
                    if p.thread == thread {
                        let first: *const u8 = h.entries.as_ptr().wrapping_add(start).cast();
                        prefetch(first);
                        prefetch(first.wrapping_add(64));
                        return;
                    }
                    start = p.end as usize;
                }
            }
        }
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
        let h = &mut self.vars[var];
        let mut own = usize::MAX;
        let mut own_start = 0usize;
        let mut start = 0usize;
        for (pi, p) in h.parts.iter().enumerate() {
            if p.thread == e.thread {
                own = pi;
                own_start = start;
            } else {
                let seen = clock.get(p.thread);
                let latest = if write { p.last_access } else { p.last_write };
                if latest > seen {
                    for a in &h.entries[start..p.end as usize] {
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
        if own == usize::MAX {
            h.entries.push(entry);
            h.parts.push(ThreadPart {
                thread: e.thread,
                last_write: if write { epoch } else { 0 },
                last_access: epoch,
                end: h.entries.len() as u32,
            });
            return;
        }
        let p = &mut h.parts[own];
        p.last_access = epoch;
        if write {
            p.last_write = epoch;
        }
        let end = p.end as usize;
        // A linear search, even for a variable touched from hundreds of sites: an index
        // (a map from (variable, thread, location/kind) to the entry) was measured 20%
        // slower on such a trace, its lookups missing the cache where the search streams
        // through one contiguous part.
        let found = h.entries[own_start..end]
            .iter()
            .position(|a| a.loc_write == loc_write);
        match found {
            Some(i) => h.entries[own_start + i] = entry,
            None => {
                h.entries.insert(end, entry);
                for q in &mut h.parts[own..] {
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
