//! `wcp`: weak-causally-precedes (Kini, Mathur, Viswanathan, PLDI 2017), the paper's
//! linear-time vector-clock algorithm, extended with Java's hard edges.
//!
//! **Relation.** `≺WCP` is the smallest relation such that
//! - (a) `rel(C1) ≺ e2` when `C1` and a later `C2` are critical sections of different
//!   threads on the same lock, `e2 ∈ C2`, and `C1` contains an access conflicting with
//!   `e2` (same variable, at least one a write; volatile accesses count as accesses here);
//! - (b) `rel(C1) ≺ rel(C2)` for sections of different threads on the same lock when
//!   `acq(C1) ≺ rel(C2)` (equivalently some event of `C1` `≺` some event of `C2`);
//! - (c) `≤HB ∘ ≺ ∘ ≤HB ⊆ ≺`, with HB as in [`crate::hb`].
//!
//! Critical sections include their `acq`/`rel`; `wait` ends a section and `wake` begins
//! one; re-entrant inner acquires/releases are ignored. A section still open at the end
//! of the trace counts as the second section of rule (a). Two conflicting plain accesses
//! of different threads race when neither is ordered before the other by `≺WCP ∪ TO`,
//! where TO is the transitive closure of program order, fork/join, `vwrite` → later
//! `vread` of the same variable, `notify` → the `wake` it matched and the release that
//! ends the notifier's section → that `wake` (the waker re-acquires the lock after it; a
//! swap of the two sections is no schedule). TO edges order
//! pairs but are not WCP edges: they do not trigger rule (b), except that
//! - (d) `e ≺ r` for every `e ≤HB s` when a TO edge `s → r` of different threads leaves a
//!   critical section (`s` inside it).
//!
//! Why (d): the paper's proof of weak soundness may find its witness race on the edge
//! itself (a fork or a volatile is a racy variable there), which is no race in Java. A
//! handoff from inside a section C2 whose later part conflicts with an earlier section
//! C1 (the flusher of a batch submits it, then clears the field the adder read, all
//! under one lock) reaches the receiver without `rel(C1)`, which rule (a) orders before
//! the conflicting event only, after the handoff; the receiver would race with C1's
//! writes, although no schedule lets it (C2 runs before C1, and C1 reads another value,
//! or after it, with C1's writes done). With (d) the receiver is after whatever the
//! sender is HB-after. A handoff outside every section needs no rule: a section of its
//! thread that conflicts with an earlier one has its conflicting event before it.
//! Both rules relate sections of *different* threads only: two sections of one thread are
//! already in program order, and ordering after an own earlier section whatever is
//! HB-before its release would order events a reordering of other locks can separate.
//!
//! **Promise**: weakly sound. If it reports a race, the trace has a predictable race or
//! a predictable deadlock, and the *first* reported race (by its second event) is the
//! witness of that; later reports can be false alarms (their order can be forced by
//! values read). It finds races HB misses, because it lets critical sections on the same
//! lock be reordered when they do not conflict (and orders only the conflicting event,
//! not the whole later section, so it also finds races CP misses: `wcpcp`). Every race
//! of the paper's WCP that rule (d) leaves is reported; every CP race is one of the
//! paper's WCP races. Not complete: conflicting sections are never swapped.
//!
//! **Algorithm** (per event O(T) for T threads, plus O(held locks) hash lookups per
//! access). Per thread: `h` (HB clock), `k` (the events `≺WCP` the current one: the
//! paper's `P_t`, without own-thread stamping) and `p = k ⊔ TO` (used for race checks;
//! its own component is the thread's epoch). `k` flows along every HB edge, `p` along TO
//! edges and takes every `k` join. Epochs advance after each event that can start a
//! cross-thread edge (release, wait, fork, notify, vwrite), so one epoch is exact.
//! - Rule (a): all sections on one lock are totally ordered by HB, so the join of
//!   `H(rel(C1))` over every earlier conflicting section of another thread is just the
//!   clock of the *latest* such section. Per (lock, variable, read/write) we keep the
//!   latest two sections of distinct threads, and per (thread, lock) the latest section
//!   already absorbed, so a repeated access costs one hash lookup and no join.
//! - Rule (b): per lock, the list of its sections (thread, acquire epoch, release
//!   clock); per (thread, lock) a cursor into it. At a release the thread absorbs, in
//!   order, every section of another thread whose acquire is `≺WCP` the release; the
//!   first one that is not stops the scan, since an earlier acquire HB-precedes a later
//!   one (the paper's queues, shared between threads).
//!
//! **Every signature, not only the last access**: accesses are kept per (thread,
//! location, kind) as in [`crate::hb`]; no clock joins after a race (relation semantics).
//!
//! Memory: per critical section its release clock, kept for rule (b): O(T) when the
//! thread's clock changed in another thread's component since its previous release, else
//! shared with that release ([`Rel`]); plus
//! O(1) per (lock, variable) pair and the access history.

use crate::detector::{Detector, Outcome, RaceSink};
use crate::hb::AccessHistory;
use crate::sync::{with_slot, NotifyMatcher, NotifySlot, OpenNotifies};
use crate::vc::VectorClock;
use jrace_trace::{Event, Kind, LockId, ThreadId};
use smallvec::SmallVec;
use std::sync::Arc;

/// The latest two sections (index in the lock's list, thread) of distinct threads that
/// made some kind of access to one variable under one lock. Section indices only grow.
/// A slot whose thread is [`Latest::NONE`] is empty (8 bytes a slot instead of an
/// `Option`'s 12: a large trace has a million variables accessed under locks).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Latest {
    a: (u32, ThreadId),
    b: (u32, ThreadId),
}

impl Default for Latest {
    fn default() -> Self {
        Latest {
            a: (0, Latest::NONE),
            b: (0, Latest::NONE),
        }
    }
}

impl Latest {
    const NONE: ThreadId = ThreadId::MAX;

    #[inline]
    pub fn record(&mut self, sec: u32, t: ThreadId) {
        debug_assert_ne!(t, Latest::NONE);
        if self.a.1 != t {
            self.b = self.a;
        }
        self.a = (sec, t);
    }
    /// The latest recorded section of a thread other than `t`.
    #[inline]
    pub fn other_than(&self, t: ThreadId) -> Option<u32> {
        let (s, u) = if self.a.1 != t { self.a } else { self.b };
        (u != Latest::NONE).then_some(s)
    }
}

/// For an access of kind `write` by `t`: the latest earlier section of another thread
/// holding a conflicting access, given the (reads, writes) records of the variable.
#[inline]
pub(crate) fn conflicting(rec: &[Latest; 2], t: ThreadId, write: bool) -> Option<u32> {
    let w = rec[1].other_than(t);
    if write {
        w.max(rec[0].other_than(t))
    } else {
        w
    }
}

/// `v[i]`, growing `v` with defaults as needed (state indexed by a dense id).
pub(crate) fn slot<T: Default>(v: &mut Vec<T>, i: u32) -> &mut T {
    let i = i as usize;
    if i >= v.len() {
        v.resize_with(i + 1, T::default);
    }
    &mut v[i]
}

#[derive(Default)]
struct ThreadState {
    h: VectorClock,
    p: VectorClock,
    k: VectorClock,
    epoch: u32,
    /// Open sections: (lock, index in the lock's list).
    held: Vec<(LockId, u32)>,
    /// The `h` of the thread's latest release, shared by its later releases while `h`
    /// changes only in the thread's own component ([`Rel`]).
    rel_snapshot: Option<Arc<VectorClock>>,
    /// Notifies of sections still open, completed at their release.
    open_notifies: OpenNotifies<Payload>,
}

impl ThreadState {
    fn join_k(&mut self, c: &VectorClock) {
        self.k.join(c);
        self.p.join(c);
    }

    /// What a TO edge from the thread's current event carries: `(h, p, k)`, with `h` in
    /// `p` and `k` too when the event is inside a critical section (rule (d)).
    fn payload(&self) -> Payload {
        let (mut p, mut k) = (self.p.clone(), self.k.clone());
        if !self.held.is_empty() {
            p.join(&self.h);
            k.join(&self.h);
        }
        (self.h.clone(), p, k)
    }
}

struct Section {
    thread: ThreadId,
    acq_epoch: u32,
    /// HB clock of the release; `None` while open.
    rel: Option<Rel>,
}

/// A release's HB clock: `snapshot` with the releasing thread's own component raised to
/// `own`. Why: a trace has millions of critical sections, and a thread that runs many
/// in a row (taking each lock back from its own last release) changes only its own
/// component in between, so they share one clock instead of one each.
struct Rel {
    snapshot: Arc<VectorClock>,
    own: u32,
}

impl Rel {
    /// `c ⊔= self`.
    #[inline]
    fn join_into(&self, c: &mut VectorClock, thread: ThreadId) {
        c.join(&self.snapshot);
        if c.get(thread) < self.own {
            c.set(thread, self.own);
        }
    }
}

/// Whether `a` and `b` agree on every component but `t`'s.
fn same_except(a: &VectorClock, b: &VectorClock, t: ThreadId) -> bool {
    let others = |c: &VectorClock| {
        c.entries()
            .filter(move |&(u, _)| u != t)
            .collect::<SmallVec<[(ThreadId, u32); 16]>>()
    };
    others(a) == others(b)
}

#[derive(Clone, Copy, Default)]
struct ThreadLock {
    /// Rule (b): sections before this index are absorbed or the thread's own.
    cursor: u32,
    /// 1 + the latest section whose release clock is in the thread's `k` (0: none).
    absorbed: u32,
}

#[derive(Default)]
struct LockState {
    sections: Vec<Section>,
    /// HB and WCP clocks of the last release.
    h: VectorClock,
    k: VectorClock,
    per_thread: Vec<ThreadLock>,
}

#[derive(Default)]
struct VolState {
    h: VectorClock,
    p: VectorClock,
    k: VectorClock,
    /// Rule (d): per writer thread, the join of its `h` at its writes inside critical
    /// sections (for the reads of other threads only).
    d: SmallVec<[(ThreadId, VectorClock); 1]>,
}

type Payload = (VectorClock, VectorClock, VectorClock);

/// One variable's rule (a) entries: per lock it was accessed under, [reads, writes].
type LockEntries = SmallVec<[(LockId, [Latest; 2]); 2]>;

#[derive(Default)]
pub struct WcpDetector {
    threads: Vec<ThreadState>,
    locks: Vec<LockState>,
    /// By variable id (few variables are volatile).
    vols: rustc_hash::FxHashMap<u32, VolState>,
    /// Rule (a)'s table, (lock, variable) -> [reads, writes], kept per variable: `slot`
    /// holds 1 + the variable's index in `under_locks` (0: never accessed under a lock),
    /// so that an access finds its entries with two loads that [`Detector::on_batch`]
    /// prefetches, instead of probing one large hash table.
    slot: Vec<u32>,
    under_locks: Vec<LockEntries>,
    notifies: NotifyMatcher<NotifySlot<Payload>>,
    history: AccessHistory,
}

impl WcpDetector {
    fn thread(&mut self, t: ThreadId) -> &mut ThreadState {
        let s = slot(&mut self.threads, t);
        if s.epoch == 0 {
            s.epoch = 1;
            s.h.set(t, 1);
            s.p.set(t, 1);
        }
        s
    }

    fn tick(&mut self, t: ThreadId) {
        let s = self.thread(t);
        s.epoch += 1;
        let ep = s.epoch;
        s.h.set(t, ep);
        s.p.set(t, ep);
    }

    /// Rule (a) for an access (plain or volatile) by `e.thread` to `e.target`.
    fn access(&mut self, e: &Event) {
        let t = e.thread;
        self.thread(t);
        let write = e.kind.is_write();
        let ts = &mut self.threads[t as usize];
        if ts.held.is_empty() {
            return;
        }
        let at = slot(&mut self.slot, e.target);
        if *at == 0 {
            self.under_locks.push(SmallVec::new());
            *at = self.under_locks.len() as u32;
        }
        let entries = &mut self.under_locks[*at as usize - 1];
        for &(l, s) in &ts.held {
            let at = match entries.iter().position(|&(m, _)| m == l) {
                Some(at) => at,
                None => {
                    entries.push((l, [Latest::default(); 2]));
                    entries.len() - 1
                }
            };
            let rec = &mut entries[at].1;
            let m = conflicting(rec, t, write);
            rec[write as usize].record(s, t);
            if let Some(m) = m {
                let ls = &mut self.locks[l as usize];
                let tl = slot(&mut ls.per_thread, t);
                if tl.absorbed <= m {
                    tl.absorbed = m + 1;
                    let sec = &ls.sections[m as usize];
                    if let Some(r) = &sec.rel {
                        r.join_into(&mut ts.k, sec.thread);
                        r.join_into(&mut ts.p, sec.thread);
                    }
                }
            }
        }
    }

    fn acquire(&mut self, t: ThreadId, l: LockId) {
        self.thread(t);
        let ls = slot(&mut self.locks, l);
        let ts = &mut self.threads[t as usize];
        ts.h.join(&ls.h);
        ts.join_k(&ls.k);
        let s = ls.sections.len() as u32;
        ls.sections.push(Section {
            thread: t,
            acq_epoch: ts.epoch,
            rel: None,
        });
        ts.held.push((l, s));
    }

    fn release(&mut self, t: ThreadId, l: LockId) {
        self.thread(t);
        let ls = slot(&mut self.locks, l);
        let ts = &mut self.threads[t as usize];
        let Some(pos) = ts.held.iter().rposition(|&(x, _)| x == l) else {
            // Not possible in a checked trace; nothing to close.
            return;
        };
        let (_, s) = ts.held.remove(pos);
        // Rule (b): absorb every earlier section of another thread whose acquire is
        // WCP-before this release, in order, stopping at the first that is not.
        let mut tl = *slot(&mut ls.per_thread, t);
        while (tl.cursor as usize) < ls.sections.len() {
            let sec = &ls.sections[tl.cursor as usize];
            if sec.thread != t {
                if ts.k.get(sec.thread) < sec.acq_epoch {
                    break;
                }
                if tl.absorbed <= tl.cursor {
                    if let Some(r) = &sec.rel {
                        r.join_into(&mut ts.k, sec.thread);
                        r.join_into(&mut ts.p, sec.thread);
                    }
                    tl.absorbed = tl.cursor + 1;
                }
            }
            tl.cursor += 1;
        }
        ls.per_thread[t as usize] = tl;
        let snapshot = match &ts.rel_snapshot {
            Some(a) if same_except(a, &ts.h, t) => a.clone(),
            _ => {
                let a = Arc::new(ts.h.clone());
                ts.rel_snapshot = Some(a.clone());
                a
            }
        };
        ls.sections[s as usize].rel = Some(Rel {
            snapshot,
            own: ts.h.get(t),
        });
        ls.h.assign(&ts.h);
        ls.k.assign(&ts.k);
    }
}

impl Detector for WcpDetector {
    fn name(&self) -> &'static str {
        "wcp"
    }

    fn on_event(&mut self, idx: u64, e: &Event, races: &mut RaceSink) {
        let t = e.thread;
        match e.kind {
            Kind::Read | Kind::Write => {
                self.access(e);
                let ts = &self.threads[t as usize];
                self.history
                    .check_and_record(idx, e, &ts.p, ts.epoch, races);
            }
            Kind::VRead => {
                self.access(e);
                if let Some(v) = self.vols.get(&e.target) {
                    let ts = &mut self.threads[t as usize];
                    ts.h.join(&v.h);
                    ts.p.join(&v.p);
                    ts.k.join(&v.k);
                    for (u, h) in &v.d {
                        if *u != t {
                            ts.join_k(h);
                        }
                    }
                }
            }
            Kind::VWrite => {
                self.access(e);
                let v = self.vols.entry(e.target).or_default();
                let ts = &self.threads[t as usize];
                v.h.join(&ts.h);
                v.p.join(&ts.p);
                v.k.join(&ts.k);
                if !ts.held.is_empty() {
                    // Rule (d).
                    match v.d.iter_mut().find(|(u, _)| *u == t) {
                        Some((_, h)) => h.join(&ts.h),
                        None => v.d.push((t, ts.h.clone())),
                    }
                }
                self.tick(t);
            }
            Kind::Acquire if !e.is_nested() => self.acquire(t, e.target),
            Kind::Wake => {
                self.acquire(t, e.target);
                if let Some((_, slot)) = self.notifies.wake(t, e.target) {
                    let ts = &mut self.threads[t as usize];
                    with_slot(&slot, |(h, p, k)| {
                        ts.h.join(h);
                        ts.p.join(p);
                        ts.k.join(k);
                    });
                }
            }
            Kind::Release | Kind::Wait if !e.is_nested() => {
                self.release(t, e.target);
                let ts = &mut self.threads[t as usize];
                if !ts.open_notifies.is_empty() {
                    let now = ts.payload();
                    ts.open_notifies.close(e.target, |(h, p, k)| {
                        h.join(&now.0);
                        p.join(&now.1);
                        k.join(&now.2);
                    });
                }
                self.tick(t);
                if e.kind == Kind::Wait {
                    self.notifies.wait(t, e.target, idx);
                }
            }
            Kind::Notify | Kind::NotifyAll => {
                let ts = self.thread(t);
                let payload = ts.payload();
                let slot = ts.open_notifies.open(e.target, payload);
                self.notifies
                    .notify(e.target, idx, e.kind == Kind::NotifyAll, || slot);
                self.tick(t);
            }
            Kind::Fork => {
                let ts = self.thread(t);
                let (h, p, k) = ts.payload();
                let c = self.thread(e.target);
                c.h.join(&h);
                c.p.join(&p);
                c.k.join(&k);
                self.tick(t);
            }
            Kind::Join => {
                let c = self.thread(e.target);
                let (h, p, k) = c.payload();
                let ts = self.thread(t);
                ts.h.join(&h);
                ts.p.join(&p);
                ts.k.join(&k);
            }
            _ => {}
        }
    }

    fn on_batch(&mut self, first_idx: u64, events: &[Event], races: &mut RaceSink) {
        // Besides the histories, prefetch rule (a)'s entries: the slot a few events
        // ahead, the entries it points to a little later.
        const FAR: usize = 24;
        const NEAR: usize = 12;
        for (k, e) in events.iter().enumerate() {
            self.history.prefetch_ahead(events, k);
            if let Some(f) = events.get(k + FAR) {
                if f.kind.is_access() {
                    if let Some(s) = self.slot.get(f.target as usize) {
                        crate::history::prefetch((s as *const u32).cast());
                    }
                }
            }
            if let Some(f) = events.get(k + NEAR) {
                if f.kind.is_access() {
                    if let Some(&s) = self.slot.get(f.target as usize) {
                        if let Some(v) = self.under_locks.get((s as usize).wrapping_sub(1)) {
                            crate::history::prefetch((v as *const LockEntries).cast());
                        }
                    }
                }
            }
            self.on_event(first_idx + k as u64, e, races);
        }
    }

    fn finish(&mut self, _races: &mut RaceSink) -> Outcome {
        Outcome::default()
    }
}
