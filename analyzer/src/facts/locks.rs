//! What a report says about a racing access beyond what the detector reported: the
//! locks its thread held and where that thread was started.
//!
//! Detectors report each access of a race by index, location, thread and kind
//! ([`crate::RaceAccess`]); the locks held are recovered here. A [`JournaledSource`] wraps
//! the trace during the detectors' pass and keeps a [`LockJournal`]: each thread's
//! outermost lock acquisitions and releases with their positions, and each thread's
//! `fork` location. That is a small part of a real trace (Derby: 1.5% of its events), so
//! the report needs no second pass over the trace, which used to cost as much as reading
//! it for the detectors. A journal that would grow past its cap is dropped and
//! [`annotate`], the second pass, is used instead.

use crate::detector::RacePair;
use jrace_trace::{Event, EventSource, Kind, LocId, ThreadId, TraceError};
use rustc_hash::FxHashMap;
use std::collections::{BTreeSet, HashMap};

/// Facts about a racing access.
#[derive(Clone, Debug)]
pub struct EventFacts {
    pub thread: ThreadId,
    pub kind: Kind,
    pub loc: LocId,
    /// Locks held by the event's thread at the event (outermost acquisitions).
    pub locks: Vec<u32>,
    /// Location of the `fork` that started the event's thread.
    pub created_at: Option<u32>,
}

/// Updates the locks each thread holds (outermost acquisitions, in acquisition order)
/// after event `e`: re-entrant inner acquires and releases change nothing, `wait` gives
/// its lock up and `wake` takes it back.
pub(crate) fn track_held_locks(held: &mut HashMap<ThreadId, Vec<u32>>, e: &Event) {
    if let Some((lock, taken)) = lock_change(e) {
        apply(held.entry(e.thread).or_default(), lock, taken);
    }
}

/// The outermost lock `e` takes (`true`) or gives up (`false`), if any.
#[inline]
fn lock_change(e: &Event) -> Option<(u32, bool)> {
    if e.is_nested() {
        return None;
    }
    match e.kind {
        Kind::Acquire | Kind::Wake => Some((e.target, true)),
        Kind::Release | Kind::Wait => Some((e.target, false)),
        _ => None,
    }
}

fn apply(held: &mut Vec<u32>, lock: u32, taken: bool) {
    if taken {
        held.push(lock);
    } else if let Some(p) = held.iter().rposition(|&l| l == lock) {
        held.remove(p);
    }
}

/// The second pass: facts for each event index in `needed`, read from `src` (which
/// must start at the trace's first event).
pub fn annotate(
    src: &mut dyn EventSource,
    needed: &BTreeSet<u64>,
) -> Result<HashMap<u64, EventFacts>, TraceError> {
    let mut out = HashMap::with_capacity(needed.len());
    let Some(&last) = needed.iter().next_back() else {
        return Ok(out);
    };
    let mut held: HashMap<ThreadId, Vec<u32>> = HashMap::new();
    let mut forked_at: HashMap<ThreadId, u32> = HashMap::new();
    let mut idx = 0u64;
    while let Some(e) = src.next_event()? {
        if e.kind == Kind::Fork {
            forked_at.insert(e.target, e.loc);
        }
        if needed.contains(&idx) {
            out.insert(
                idx,
                EventFacts {
                    thread: e.thread,
                    kind: e.kind,
                    loc: e.loc,
                    locks: held.get(&e.thread).cloned().unwrap_or_default(),
                    created_at: forked_at.get(&e.thread).copied(),
                },
            );
        }
        track_held_locks(&mut held, &e);
        if idx == last {
            break;
        }
        idx += 1;
    }
    Ok(out)
}

/// Entries a [`LockJournal`] keeps before it gives up (16 bytes each: 128 MB).
pub const JOURNAL_CAP: usize = 1 << 23;

/// Each thread's outermost lock changes, with their event indices, and each thread's
/// `fork` location: enough to say which locks a thread held at any event.
#[derive(Debug)]
pub struct LockJournal {
    /// Per thread, `(index << 1 | taken, lock)` in index order.
    changes: Vec<Vec<(u64, u32)>>,
    forked_at: FxHashMap<ThreadId, u32>,
    entries: usize,
    cap: usize,
    overflowed: bool,
}

impl Default for LockJournal {
    fn default() -> Self {
        LockJournal::with_cap(JOURNAL_CAP)
    }
}

impl LockJournal {
    /// A journal that gives up after `cap` lock changes.
    pub fn with_cap(cap: usize) -> LockJournal {
        LockJournal {
            changes: Vec::new(),
            forked_at: FxHashMap::default(),
            entries: 0,
            cap,
            overflowed: false,
        }
    }

    /// Notes event `e` at index `idx` (indices must grow).
    #[inline]
    pub fn observe(&mut self, idx: u64, e: &Event) {
        if e.kind == Kind::Fork {
            self.forked_at.insert(e.target, e.loc);
            return;
        }
        let Some((lock, taken)) = lock_change(e) else {
            return;
        };
        if self.overflowed {
            return;
        }
        if self.entries == self.cap {
            self.overflowed = true;
            self.changes = Vec::new();
            return;
        }
        self.entries += 1;
        let t = e.thread as usize;
        if t >= self.changes.len() {
            self.changes.resize_with(t + 1, Vec::new);
        }
        self.changes[t].push((idx << 1 | taken as u64, lock));
    }

    /// Whether the journal gave up (more lock changes than its cap).
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Facts for both accesses of every pair, or `None` if the journal overflowed.
    pub fn facts<'a>(
        &self,
        pairs: impl IntoIterator<Item = &'a RacePair>,
    ) -> Option<HashMap<u64, EventFacts>> {
        if self.overflowed {
            return None;
        }
        // Per thread, the indices asked about, answered in one walk of its changes.
        let mut asked: FxHashMap<ThreadId, Vec<(u64, Kind, LocId)>> = FxHashMap::default();
        for p in pairs {
            for a in [p.first_access(), p.second_access()] {
                let kind = if a.write { Kind::Write } else { Kind::Read };
                asked
                    .entry(a.thread)
                    .or_default()
                    .push((a.idx, kind, a.loc));
            }
        }
        let mut out = HashMap::new();
        let none = Vec::new();
        for (thread, mut at) in asked {
            at.sort_unstable_by_key(|&(idx, _, _)| idx);
            let changes = self.changes.get(thread as usize).unwrap_or(&none);
            let mut held = Vec::new();
            let mut next = 0;
            for (idx, kind, loc) in at {
                while let Some(&(key, lock)) = changes.get(next) {
                    if key >> 1 >= idx {
                        break;
                    }
                    apply(&mut held, lock, key & 1 == 1);
                    next += 1;
                }
                out.insert(
                    idx,
                    EventFacts {
                        thread,
                        kind,
                        loc,
                        locks: held.clone(),
                        created_at: self.forked_at.get(&thread).copied(),
                    },
                );
            }
        }
        Some(out)
    }
}

/// An [`EventSource`] that keeps a [`LockJournal`] of the events it passes on, numbered
/// from 0.
pub struct JournaledSource<'a> {
    inner: &'a mut dyn EventSource,
    journal: LockJournal,
    next: u64,
}

impl<'a> JournaledSource<'a> {
    pub fn new(inner: &'a mut dyn EventSource, journal: LockJournal) -> Self {
        JournaledSource {
            inner,
            journal,
            next: 0,
        }
    }

    /// The journal of the events passed on so far.
    pub fn into_journal(self) -> LockJournal {
        self.journal
    }
}

impl EventSource for JournaledSource<'_> {
    #[inline]
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        let e = self.inner.next_event()?;
        if let Some(e) = &e {
            self.journal.observe(self.next, e);
            self.next += 1;
        }
        Ok(e)
    }

    fn next_batch(&mut self, out: &mut Vec<Event>, max: usize) -> Result<(), TraceError> {
        let from = out.len();
        let r = self.inner.next_batch(out, max);
        for e in &out[from..] {
            self.journal.observe(self.next, e);
            self.next += 1;
        }
        r
    }
    jrace_trace::forward_source_methods!(inner);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::{RaceAccess, RaceSink};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// The journal's facts against the second pass, on random traces of nested,
    /// re-entrant and waiting lock use, for every access.
    #[test]
    fn journal_agrees_with_the_second_pass() {
        for seed in 0..100u64 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let mut events = Vec::new();
            let mut held: Vec<Vec<u32>> = vec![Vec::new(); 4];
            for t in 1..4u32 {
                events.push(Event::new(0, Kind::Fork, t, 100 + t));
            }
            for _ in 0..300 {
                let t = rng.gen_range(0..4u32);
                let h = &mut held[t as usize];
                let e = match rng.gen_range(0..6) {
                    0 => {
                        let l = rng.gen_range(0..3u32);
                        h.push(l);
                        Event::new(t, Kind::Acquire, l, 1)
                    }
                    1 if !h.is_empty() => {
                        let i = rng.gen_range(0..h.len());
                        Event::new(t, Kind::Release, h.remove(i), 2)
                    }
                    2 if !h.is_empty() => {
                        let l = h[rng.gen_range(0..h.len())];
                        Event::new(t, Kind::Wait, l, 3)
                    }
                    _ => Event::new(t, Kind::Write, 0, rng.gen_range(10..20)),
                };
                // Re-entrant acquires and releases are marked nested, as the reader does.
                let mut e = e;
                if matches!(e.kind, Kind::Acquire | Kind::Release)
                    && h.iter().filter(|&&l| l == e.target).count()
                        > (e.kind == Kind::Acquire) as usize
                {
                    e.flags |= jrace_trace::FLAG_NESTED;
                }
                events.push(e);
                if e.kind == Kind::Wait {
                    events.push(Event::new(t, Kind::Wake, e.target, 4));
                }
            }
            let mut journal = LockJournal::default();
            for (i, e) in events.iter().enumerate() {
                journal.observe(i as u64, e);
            }
            // Every consecutive pair of writes, each under a variable of its own so that
            // the sink keeps them all.
            let mut sink = RaceSink::new();
            let writes: Vec<usize> = (0..events.len())
                .filter(|&i| events[i].kind == Kind::Write)
                .collect();
            for (v, w) in writes.windows(2).enumerate() {
                let a = RaceAccess::of(w[0] as u64, &events[w[0]]);
                sink.report(v as u32, a, RaceAccess::of(w[1] as u64, &events[w[1]]));
            }
            let pairs = sink.pairs();
            let got = journal.facts(&pairs).expect("under the cap");
            let needed: BTreeSet<u64> = pairs.iter().flat_map(|p| [p.first, p.second]).collect();
            let trace = jrace_trace::Trace {
                events,
                ..Default::default()
            };
            let want = annotate(&mut jrace_trace::MemSource::new(&trace), &needed).unwrap();
            assert_eq!(got.len(), want.len());
            for i in &needed {
                let (g, w) = (&got[i], &want[i]);
                assert_eq!(
                    (g.thread, g.kind, g.loc, &g.locks, g.created_at),
                    (w.thread, w.kind, w.loc, &w.locks, w.created_at),
                    "seed {seed}, event {i}"
                );
            }
        }
    }

    #[test]
    fn a_journal_over_its_cap_gives_up() {
        let mut j = LockJournal::with_cap(2);
        j.observe(0, &Event::new(0, Kind::Acquire, 0, 0));
        j.observe(1, &Event::new(0, Kind::Release, 0, 0));
        assert!(!j.overflowed());
        j.observe(2, &Event::new(0, Kind::Acquire, 0, 0));
        assert!(j.overflowed());
        assert!(j.facts(&[]).is_none());
    }
}
