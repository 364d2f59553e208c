//! `cp`: causally-precedes (Smaragdakis, Evans, Sadowski, Yi, Flanagan, POPL 2012).
//!
//! **Relation.** `≺CP` is the smallest relation such that
//! - (a) `rel(C1) ≺ acq(C2)` when `C1` and a later `C2` are critical sections of
//!   different threads on the same lock that contain conflicting accesses (same variable,
//!   at least one a write; volatile accesses count as accesses here);
//! - (b) `rel(C1) ≺ acq(C2)` for such sections when some event of `C1` `≺` some event of
//!   `C2` (equivalently `acq(C1) ≺` the last event of `C2`);
//! - (c) `≤HB ∘ ≺ ∘ ≤HB ⊆ ≺`, with HB as in [`crate::hb`].
//!
//! Critical sections include their `acq`/`rel`; `wait` ends a section and `wake` begins
//! one; re-entrant inner acquires/releases are ignored; a section still open at the end
//! of the trace counts as the second section of a rule. Two conflicting plain accesses
//! of different threads race when neither is ordered before the other by `≺CP ∪ TO`,
//! where TO (program order, fork/join, `vwrite` → later `vread`, `notify` → matched
//! `wake`, and the release ending the notifier's section → that `wake`) orders pairs but
//! is not a CP edge.
//! Both rules relate sections of *different* threads only: two sections of one thread are
//! already in program order, and ordering after an own earlier section whatever is
//! HB-before its release would order events a reordering of other locks can separate.
//!
//! **Promise**: weakly sound, like [`crate::wcp`]: if it reports a race, the trace has a
//! predictable race or a predictable deadlock (the first report); later reports can be
//! false alarms. It finds races HB misses by reordering critical sections that do not
//! conflict. It orders the whole later section (`rel(C1) ≺ acq(C2)`), so it finds a
//! subset of WCP's races and a superset of HB's.
//!
//! **Algorithm.** CP has no known linear-time algorithm: a conflict discovered late in
//! `C2` orders `acq(C2)`, i.e. events already processed. Events are buffered and each
//! window is decided by a fixed point:
//! 1. One pass computes HB, the critical sections of each lock (a lock's sections are
//!    totally ordered by HB, so "every section up to index q precedes `acq(C2)`" is
//!    one number `q(C2)` and one clock, the release clock of section `q`), and rule (a):
//!    `q(C2)` starts at the latest earlier conflicting section of another thread.
//! 2. Passes then recompute, along every HB edge, the clock `k` of the events `≺CP` each
//!    event (joining the release clock of `q(C2)` at `acq(C2)`), and at the end of each
//!    section apply rule (b), raising `q(C2)` to the latest section of another thread
//!    whose acquire is `≺CP` that end (a per-(thread, lock) cursor keeps this linear per
//!    pass). Race checks use `k ⊔ TO` against per-(thread, location, kind) latest
//!    accesses (every signature, as in [`crate::hb`]). A pass in which no `q` changed
//!    is the fixed point, and its races are reported.
//!
//! Cost per pass O(N·T) for N events and T threads, plus the access history; the number
//! of passes is the length of the longest chain of rule-(b) discoveries that feed back
//! into earlier events, usually 1–3. After [`MAX_PASSES`] (by default) a window falls
//! back to ordering every section after all earlier sections of its lock (HB on that
//! lock): more order, so races can be missed, never invented. Memory: the window's
//! events plus O(T) per critical section.
//!
//! **Windows.** To stay usable on traces of tens of millions of events, the trace is cut
//! into windows of [`DEFAULT_WINDOW`] events (as Smaragdakis et al. did), each analysed
//! on its own. Races whose two accesses fall in different windows are missed. Within a
//! window no race is invented: a section that straddles the window's start or end may
//! have conflicts outside the window, so it is treated as conflicting with every other
//! section of its lock in the window (more order than the whole trace would give).

use crate::detector::{Detector, Outcome, RaceSink};
use crate::hb::{AccessHistory, HbClocks};
use crate::sync::{with_slot, NotifyMatcher, NotifySlot, OpenNotifies};
use crate::vc::VectorClock;
use crate::wcp::{conflicting, slot, Latest};
use jrace_trace::{Event, Kind, LockId, ThreadId, VarId};
use rustc_hash::FxHashMap as HashMap;

/// Events per window.
pub const DEFAULT_WINDOW: usize = 1 << 20;
/// Fixed-point passes per window before falling back to HB order on locks.
pub const MAX_PASSES: u32 = 64;

pub struct CpDetector {
    window: usize,
    max_passes: u32,
    /// Global index of `events[0]`.
    base: u64,
    events: Vec<Event>,
    passes: u64,
    fallbacks: u64,
}

impl Default for CpDetector {
    fn default() -> Self {
        CpDetector::with_window(DEFAULT_WINDOW)
    }
}

impl CpDetector {
    /// A detector deciding windows of `window` events (at least 1).
    pub fn with_window(window: usize) -> CpDetector {
        CpDetector::with_limits(window, MAX_PASSES)
    }

    /// Windows of `window` events, and at most `max_passes` fixed-point passes per window
    /// before the fallback (at least 1).
    pub fn with_limits(window: usize, max_passes: u32) -> CpDetector {
        CpDetector {
            window: window.max(1),
            max_passes: max_passes.max(1),
            base: 0,
            events: Vec::new(),
            passes: 0,
            fallbacks: 0,
        }
    }

    /// Fixed-point passes run so far, over all windows.
    pub fn passes(&self) -> u64 {
        self.passes
    }

    /// Windows that hit the pass limit and fell back to HB order on locks.
    pub fn fallbacks(&self) -> u64 {
        self.fallbacks
    }

    fn flush(&mut self, last: bool, races: &mut RaceSink) {
        if self.events.is_empty() {
            return;
        }
        let mut w = Window::build(&self.events, last);
        let mut pass: u32 = 0;
        let sink = loop {
            pass += 1;
            if pass > self.max_passes {
                w.fallback();
                self.fallbacks += 1;
            }
            let mut sink = RaceSink::new();
            let changed = w.pass(&self.events, self.base, &mut sink);
            if !changed || pass > self.max_passes {
                break sink;
            }
        };
        self.passes += pass as u64;
        for p in sink.pairs() {
            races.report(p.var, p.first_access(), p.second_access());
        }
        self.events.clear();
    }
}

struct Section {
    thread: ThreadId,
    /// Epoch of the acquire (0 for a section open at the window's start).
    acq_epoch: u32,
    /// HB clock of the release; empty while open.
    rel: VectorClock,
    /// Every section of this lock up to index `q` is `≺CP` this section's acquire.
    q: Option<u32>,
    /// The latest earlier section of another thread on this lock.
    prev_other: Option<u32>,
    /// Open at the window's start (always index 0 of its lock).
    straddle: bool,
}

#[derive(Default)]
struct LockSections {
    sections: Vec<Section>,
}

struct Window {
    locks: Vec<LockSections>,
    last: bool,
}

impl Window {
    /// The HB pass: sections, release clocks, rule (a).
    fn build(events: &[Event], last: bool) -> Window {
        let mut locks: Vec<LockSections> = Vec::new();
        let mut latest_sec: Vec<Latest> = Vec::new();
        let mut table: HashMap<(LockId, VarId), [Latest; 2]> = HashMap::default();
        let mut held: Vec<Vec<(LockId, u32)>> = Vec::new();
        let mut hb = HbClocks::default();
        for (i, e) in events.iter().enumerate() {
            let t = e.thread;
            match e.kind {
                Kind::Read | Kind::Write | Kind::VRead | Kind::VWrite => {
                    let write = e.kind.is_write();
                    for &(l, s) in slot(&mut held, t).iter() {
                        let rec = table.entry((l, e.target)).or_default();
                        let m = conflicting(rec, t, write);
                        rec[write as usize].record(s, t);
                        let sec = &mut locks[l as usize].sections[s as usize];
                        if m > sec.q {
                            sec.q = m;
                        }
                    }
                }
                Kind::Acquire | Kind::Wake if !e.is_nested() => {
                    let l = e.target;
                    let ls = slot(&mut locks, l);
                    let s = ls.sections.len() as u32;
                    let lat = slot(&mut latest_sec, l);
                    let prev_other = lat.other_than(t);
                    lat.record(s, t);
                    let q = match ls.sections.first() {
                        Some(f) if f.straddle && f.thread != t => Some(0),
                        _ => None,
                    };
                    let acq_epoch = hb.thread(t).get(t);
                    ls.sections.push(Section {
                        thread: t,
                        acq_epoch,
                        rel: VectorClock::new(),
                        q,
                        prev_other,
                        straddle: false,
                    });
                    slot(&mut held, t).push((l, s));
                }
                Kind::Release | Kind::Wait if !e.is_nested() => {
                    let l = e.target;
                    let ls = slot(&mut locks, l);
                    let h = slot(&mut held, t);
                    let s = match h.iter().rposition(|&(x, _)| x == l) {
                        Some(p) => h.remove(p).1,
                        None => {
                            // Acquired before the window: no other section of this lock
                            // can precede it in the window.
                            let s = ls.sections.len() as u32;
                            let lat = slot(&mut latest_sec, l);
                            let prev_other = lat.other_than(t);
                            lat.record(s, t);
                            ls.sections.push(Section {
                                thread: t,
                                acq_epoch: 0,
                                rel: VectorClock::new(),
                                q: None,
                                prev_other,
                                straddle: true,
                            });
                            s
                        }
                    };
                    ls.sections[s as usize].rel.assign(hb.thread(t));
                }
                _ => {}
            }
            hb.sync(i as u64, e);
        }
        if !last {
            // Sections open at the window's end may conflict after it.
            for h in &held {
                for &(l, s) in h {
                    let sec = &mut locks[l as usize].sections[s as usize];
                    sec.q = sec.q.max(sec.prev_other);
                }
            }
        }
        Window { locks, last }
    }

    /// Orders every section after all earlier sections of its lock.
    fn fallback(&mut self) {
        for ls in &mut self.locks {
            for sec in &mut ls.sections {
                sec.q = sec.q.max(sec.prev_other);
            }
        }
    }

    /// One propagation pass; reports races into `races`. True if some `q` rose.
    fn pass(&mut self, events: &[Event], base: u64, races: &mut RaceSink) -> bool {
        let mut threads: Vec<PassThread> = Vec::new();
        let mut lock_k: Vec<VectorClock> = Vec::new();
        let mut next_sec: Vec<u32> = self
            .locks
            .iter()
            .map(|ls| ls.sections.first().map_or(0, |f| f.straddle as u32))
            .collect();
        let mut cursors: HashMap<(ThreadId, LockId), u32> = HashMap::default();
        let mut vols: Vec<(VectorClock, VectorClock)> = Vec::new();
        let mut notifies: NotifyMatcher<NotifySlot<(VectorClock, VectorClock)>> =
            NotifyMatcher::new();
        let mut history = AccessHistory::default();
        let mut changed = false;
        fn th(v: &mut Vec<PassThread>, t: ThreadId) -> &mut PassThread {
            let s = slot(v, t);
            if s.epoch == 0 {
                s.epoch = 1;
                s.p.set(t, 1);
            }
            s
        }
        for (i, e) in events.iter().enumerate() {
            let t = e.thread;
            let idx = base + i as u64;
            match e.kind {
                Kind::Read | Kind::Write => {
                    let ts = th(&mut threads, t);
                    history.check_and_record(idx, e, &ts.p, ts.epoch, races);
                }
                Kind::VRead => {
                    let v = slot(&mut vols, e.target);
                    let ts = th(&mut threads, t);
                    ts.p.join(&v.0);
                    ts.k.join(&v.1);
                }
                Kind::VWrite => {
                    let v = slot(&mut vols, e.target);
                    let ts = th(&mut threads, t);
                    v.0.join(&ts.p);
                    v.1.join(&ts.k);
                    ts.tick(t);
                }
                Kind::Acquire | Kind::Wake if !e.is_nested() => {
                    let l = e.target;
                    let s = next_sec[l as usize];
                    next_sec[l as usize] += 1;
                    let ts = th(&mut threads, t);
                    let lk = slot(&mut lock_k, l);
                    ts.k.join(lk);
                    ts.p.join(lk);
                    let ls = &self.locks[l as usize];
                    if let Some(q) = ls.sections[s as usize].q {
                        let c = &ls.sections[q as usize].rel;
                        ts.k.join(c);
                        ts.p.join(c);
                    }
                    if e.kind == Kind::Wake {
                        if let Some((_, slot)) = notifies.wake(t, l) {
                            with_slot(&slot, |(p, k)| {
                                ts.p.join(p);
                                ts.k.join(k);
                            });
                        }
                    }
                    ts.held.push((l, s));
                }
                Kind::Release | Kind::Wait if !e.is_nested() => {
                    let l = e.target;
                    let ts = th(&mut threads, t);
                    if let Some(p) = ts.held.iter().rposition(|&(x, _)| x == l) {
                        let (_, s) = ts.held.remove(p);
                        changed |= self.rule_b(ts, t, l, s, &mut cursors);
                    }
                    slot(&mut lock_k, l).assign(&ts.k);
                    let (p, k) = (&ts.p, &ts.k);
                    ts.open_notifies.close(l, |(np, nk)| {
                        np.join(p);
                        nk.join(k);
                    });
                    ts.tick(t);
                    if e.kind == Kind::Wait {
                        notifies.wait(t, l, idx);
                    }
                }
                Kind::Notify | Kind::NotifyAll => {
                    let ts = th(&mut threads, t);
                    let payload = (ts.p.clone(), ts.k.clone());
                    let n = ts.open_notifies.open(e.target, payload);
                    notifies.notify(e.target, idx, e.kind == Kind::NotifyAll, || n);
                    ts.tick(t);
                }
                Kind::Fork => {
                    let ts = th(&mut threads, t);
                    let (p, k) = (ts.p.clone(), ts.k.clone());
                    ts.tick(t);
                    let c = th(&mut threads, e.target);
                    c.p.join(&p);
                    c.k.join(&k);
                }
                Kind::Join => {
                    let c = th(&mut threads, e.target);
                    let (p, k) = (c.p.clone(), c.k.clone());
                    let ts = th(&mut threads, t);
                    ts.p.join(&p);
                    ts.k.join(&k);
                }
                _ => {}
            }
        }
        if self.last {
            // Sections open at the end of the trace: rule (b) at their last event.
            for (t, ts) in threads.iter_mut().enumerate() {
                for (l, s) in std::mem::take(&mut ts.held) {
                    changed |= self.rule_b(ts, t as ThreadId, l, s, &mut cursors);
                }
            }
        }
        changed
    }

    /// Rule (b) at the end of section `s` of lock `l` by thread `t`: every earlier section
    /// of another thread whose acquire is `≺CP` this point precedes `acq(s)`.
    fn rule_b(
        &mut self,
        ts: &mut PassThread,
        t: ThreadId,
        l: LockId,
        s: u32,
        cursors: &mut HashMap<(ThreadId, LockId), u32>,
    ) -> bool {
        let secs = &mut self.locks[l as usize].sections;
        let cur = cursors.entry((t, l)).or_insert(0);
        let mut best: Option<u32> = None;
        while *cur < s {
            let j = *cur as usize;
            let sec = &secs[j];
            if sec.thread != t {
                if ts.k.get(sec.thread) < sec.acq_epoch {
                    break;
                }
                ts.k.join(&sec.rel);
                ts.p.join(&sec.rel);
                best = Some(*cur);
            }
            *cur += 1;
        }
        // Sections passed at an earlier release of this thread are already in the clock
        // at `acq(s)`, through program order: raising `q(s)` for them adds nothing.
        match best {
            Some(b) if Some(b) > secs[s as usize].q => {
                secs[s as usize].q = Some(b);
                true
            }
            _ => false,
        }
    }
}

#[derive(Default)]
struct PassThread {
    /// Events `≺CP` the current one (no own-thread stamping).
    k: VectorClock,
    /// `k ⊔ TO`; own component is the epoch.
    p: VectorClock,
    epoch: u32,
    held: Vec<(LockId, u32)>,
    /// Notifies of sections still open: their `(p, k)`, completed at the release.
    open_notifies: OpenNotifies<(VectorClock, VectorClock)>,
}

impl PassThread {
    fn tick(&mut self, t: ThreadId) {
        self.epoch += 1;
        self.p.set(t, self.epoch);
    }
}

impl Detector for CpDetector {
    fn name(&self) -> &'static str {
        "cp"
    }

    fn on_event(&mut self, idx: u64, e: &Event, races: &mut RaceSink) {
        if self.events.is_empty() {
            self.base = idx;
        }
        self.events.push(*e);
        if self.events.len() >= self.window {
            self.flush(false, races);
        }
    }

    fn finish(&mut self, races: &mut RaceSink) -> Outcome {
        self.flush(true, races);
        Outcome::default()
    }
}
