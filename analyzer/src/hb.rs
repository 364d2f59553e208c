//! `hb`: Java happens-before with vector clocks and FastTrack-style epochs.
//!
//! Happens-before is program order, fork → child, child → join, release (and `wait`) →
//! every later acquire (and `wake`) of the same lock, `vwrite` → every later `vread` of
//! the same variable (the JMM's synchronization order), and `notify` → the `wake` it
//! matched. Two conflicting plain accesses of different threads race when neither
//! happens before the other.
//!
//! **Promise**: sound for the *first* race only. Every pair it reports is unordered by HB,
//! but after the first race a later pair may be infeasible in every reordering (its order
//! can be forced by values read), so later reports can be false alarms. Not complete for
//! predictable races: it never reorders critical sections.
//!
//! **Every signature, not only the last access**: for each variable the detector keeps one
//! epoch per (thread, location, read/write), the latest such access. If an earlier access
//! at the same (thread, location, kind) is unordered with the current one, so is the
//! latest (it comes later in that thread), so checking the latest finds every unordered
//! location pair. Memory grows with the number of distinct access sites per variable.

use crate::detector::{Detector, Outcome, RaceSink};
use crate::sync::NotifyMatcher;
use crate::vc::VectorClock;
use jrace_trace::{Event, Kind, LocId, ThreadId};
use smallvec::SmallVec;

/// The latest access of one (thread, location, kind) to a variable, packed into 20
/// bytes so that two fit inline in a variable's slot: the history of 100 K variables is
/// far larger than the caches, and each access should cost one cache miss, not two.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AccessEntry {
    /// Thread id << 1 | 1 for a write.
    thread_write: u32,
    loc: LocId,
    /// The thread's own clock component at the access.
    epoch: u32,
    idx_lo: u32,
    idx_hi: u32,
}

impl AccessEntry {
    #[inline]
    fn thread(&self) -> ThreadId {
        self.thread_write >> 1
    }
    #[inline]
    fn idx(&self) -> u64 {
        (self.idx_hi as u64) << 32 | self.idx_lo as u64
    }
}

/// Per-variable access histories shared by the epoch-based detectors.
#[derive(Default)]
pub(crate) struct AccessHistory {
    vars: Vec<SmallVec<[AccessEntry; 2]>>,
}

impl AccessHistory {
    /// Hints the cache that `var`'s slot is needed soon.
    #[inline]
    pub fn prefetch_slot(&self, var: u32) {
        if let Some(h) = self.vars.get(var as usize) {
            prefetch((h as *const SmallVec<[AccessEntry; 2]>).cast());
        }
    }

    /// Hints the cache that `var`'s entries are needed soon, when they live on the heap
    /// (more than two). Call it after [`AccessHistory::prefetch_slot`] had time to land.
    #[inline]
    pub fn prefetch_entries(&self, var: u32) {
        if let Some(h) = self.vars.get(var as usize) {
            if h.spilled() {
                let p: *const u8 = h.as_ptr().cast();
                let bytes = h.len() * std::mem::size_of::<AccessEntry>();
                for off in (0..bytes.min(MAX_PREFETCH_LINES * 64)).step_by(64) {
                    prefetch(p.wrapping_add(off));
                }
            }
        }
    }

    /// Reports every recorded access of `var` that conflicts with this one, belongs to
    /// another thread and is not ordered before it by `clock`; then records this access.
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
            self.vars.resize_with(var + 1, SmallVec::new);
        }
        let write = e.kind == Kind::Write;
        let hist = &mut self.vars[var];
        let thread_write = e.thread << 1 | write as u32;
        // Same-epoch fast path (as in FastTrack): the thread's latest access of this
        // (location, kind) has the current epoch, so the thread released nothing since.
        // Every entry unordered with this access was then unordered with that one too
        // (clocks only grow), and any entry added since was checked against it, so every
        // signature this access could report is already reported. The most recently
        // updated entry is kept first so that this check is one comparison.
        if let Some(a) = hist.first() {
            if a.thread_write == thread_write && a.loc == e.loc && a.epoch == epoch {
                return;
            }
        }
        // Branch-light scan: whether an entry races depends on data, so the loop computes
        // it with non-short-circuit `&` and branches only on the rare race.
        let mut slot = usize::MAX;
        for (i, a) in hist.iter().enumerate() {
            let other = a.thread() != e.thread;
            let conflict = (a.thread_write | write as u32) & 1 != 0;
            let unordered = a.epoch > clock.get(a.thread());
            if other & conflict & unordered {
                races.report(e.target, a.idx(), a.loc, idx, e.loc);
            }
            if (a.thread_write == thread_write) & (a.loc == e.loc) {
                slot = i;
            }
        }
        let slot = (slot != usize::MAX).then_some(slot);
        let entry = AccessEntry {
            thread_write,
            loc: e.loc,
            epoch,
            idx_lo: idx as u32,
            idx_hi: (idx >> 32) as u32,
        };
        match slot {
            Some(i) => {
                hist[i] = entry;
                hist.swap(0, i);
            }
            None => {
                hist.push(entry);
                let last = hist.len() - 1;
                hist.swap(0, last);
            }
        }
    }
}

const MAX_PREFETCH_LINES: usize = 4;

#[inline]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; any address is allowed.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The happens-before clocks themselves, shared by hb and shb: threads, locks,
/// volatile variables, fork/join and notify/wake.
#[derive(Default)]
pub(crate) struct HbClocks {
    pub threads: Vec<VectorClock>,
    locks: Vec<VectorClock>,
    volatiles: Vec<VectorClock>,
    notifies: NotifyMatcher<VectorClock>,
}

fn slot<T: Default>(v: &mut Vec<T>, i: u32) -> &mut T {
    let i = i as usize;
    if i >= v.len() {
        v.resize_with(i + 1, T::default);
    }
    &mut v[i]
}

/// The clock of thread `t`, created on first use with its own component at 1.
#[inline]
fn thread_clock(threads: &mut Vec<VectorClock>, t: ThreadId) -> &mut VectorClock {
    let c = slot(threads, t);
    if c.get(t) == 0 {
        c.set(t, 1);
    }
    c
}

impl HbClocks {
    /// The clock of thread `t`, created on first use with its own component at 1.
    #[inline]
    pub fn thread(&mut self, t: ThreadId) -> &mut VectorClock {
        thread_clock(&mut self.threads, t)
    }

    /// Applies the synchronization effect of a non-access event. Returns nothing: the
    /// caller reads the thread's clock afterwards.
    pub fn sync(&mut self, idx: u64, e: &Event) {
        let t = e.thread;
        match e.kind {
            Kind::Acquire if !e.is_nested() => {
                let l = slot(&mut self.locks, e.target);
                thread_clock(&mut self.threads, t).join(l);
            }
            Kind::Release | Kind::Wait if !e.is_nested() => {
                let c = thread_clock(&mut self.threads, t);
                slot(&mut self.locks, e.target).assign(c);
                c.inc(t);
                if e.kind == Kind::Wait {
                    self.notifies.wait(t, e.target, idx);
                }
            }
            Kind::Wake => {
                let l = slot(&mut self.locks, e.target);
                thread_clock(&mut self.threads, t).join(l);
                if let Some((_, n)) = self.notifies.wake(t, e.target) {
                    self.thread(t).join(&n);
                }
            }
            Kind::Notify | Kind::NotifyAll => {
                let c = self.thread(t).clone();
                self.notifies
                    .notify(e.target, idx, e.kind == Kind::NotifyAll, || c);
                self.thread(t).inc(t);
            }
            Kind::Fork => {
                let c = self.thread(t).clone();
                self.thread(e.target).join(&c);
                self.thread(t).inc(t);
            }
            Kind::Join => {
                let c = self.thread(e.target).clone();
                self.thread(t).join(&c);
            }
            Kind::VWrite => {
                let c = thread_clock(&mut self.threads, t);
                slot(&mut self.volatiles, e.target).join(c);
                c.inc(t);
            }
            Kind::VRead => {
                let v = slot(&mut self.volatiles, e.target);
                thread_clock(&mut self.threads, t).join(v);
            }
            _ => {}
        }
    }
}

#[derive(Default)]
pub struct HbDetector {
    clocks: HbClocks,
    history: AccessHistory,
}

impl Detector for HbDetector {
    fn name(&self) -> &'static str {
        "hb"
    }

    fn on_event(&mut self, idx: u64, e: &Event, races: &mut RaceSink) {
        match e.kind {
            Kind::Read | Kind::Write => {
                let c = self.clocks.thread(e.thread);
                let epoch = c.get(e.thread);
                self.history.check_and_record(idx, e, c, epoch, races);
            }
            _ => self.clocks.sync(idx, e),
        }
    }

    fn on_batch(&mut self, first_idx: u64, events: &[Event], races: &mut RaceSink) {
        // The histories of a large trace do not fit in the caches. Prefetch a variable's
        // slot well ahead and, once it has arrived, its heap entries: this hides most of
        // the two dependent misses an access would otherwise wait for.
        const FAR: usize = 12;
        const NEAR: usize = 6;
        for (k, e) in events.iter().enumerate() {
            if let Some(f) = events.get(k + FAR) {
                if f.kind.is_plain_access() {
                    self.history.prefetch_slot(f.target);
                }
            }
            if let Some(f) = events.get(k + NEAR) {
                if f.kind.is_plain_access() {
                    self.history.prefetch_entries(f.target);
                }
            }
            self.on_event(first_idx + k as u64, e, races);
        }
    }

    fn finish(&mut self, _races: &mut RaceSink) -> Outcome {
        Outcome::default()
    }
}
