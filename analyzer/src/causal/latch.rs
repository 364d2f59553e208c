//! Latches: variables a program uses as a lock by value, found in the trace so that the
//! solver detectors can refute pairs they protect without a query.
//!
//! **Why.** Database pages, buffers and connection slots are often guarded by an owner
//! field rather than a monitor held across the work:
//!
//! ```text
//! synchronized (page) { while (owner != null) page.wait(); owner = me; }   // set
//! ... work on the page, no lock held ...
//! synchronized (page) { owner = null; page.notifyAll(); }                    // release
//! ```
//!
//! Two threads' accesses inside their own `set .. release` spans never meet, but no lock
//! and no single source of a read says so (many releases write the same `null`), so only
//! the solver saw it, one pair at a time: on a Derby run almost every mcm query was such
//! a pair (benchmarks/RESULTS.md).
//!
//! **The shape** (checked over the whole trace, per variable x; any deviation and x is no
//! latch). There is a value f (the free value, a recorded value) such that:
//! 1. every write of x has a recorded value, and each thread's writes of x alternate
//!    *set* (a value other than f), *release* (f), starting with a set;
//! 2. every set s by thread T has a *guard*: the last read of x by T before s, with no
//!    write of x by T in between, read f; the guard and s lie in one region of a lock
//!    L (no `wait` between them), and L is the same lock for every set of x;
//! 3. in branch-complete mode, a branch-like event (`br`, `enter`, `exit`) of T lies
//!    between the guard and s (conservative mode guards every read anyway).
//!
//! T *holds* x at each of its events from a set s to the matching release r, both
//! included (through the end of T when there is none).
//!
//! **Why it is sound for mcm, said and rdit** (they share this model). Take any feasible
//! prefix. Call T a *valid holder* at a moment if T's set of x ran, T's release after it
//! did not, and T's guard of that set returned its recorded value. Claim: there is never
//! more than one valid holder. Only a set with a valid guard adds one. Such a guard of U
//! read f, so (values being compared as recorded) it read the initial value, with no write
//! of x before it, or a write w of f with the history of its thread intact (M4): a
//! release whose own set was valid, so w's thread was the valid holder until w. Suppose
//! X is another valid holder when U's set runs. If X's set ran before U's guard, the last
//! write before the guard is X's set or later; it is w, a release of f: by X, which then
//! no longer holds, or by another thread that validly held together with X before w,
//! which the claim excludes by induction. If X's set ran between U's guard and U's set,
//! it lies inside U's region of L while X's own set lies in a region of L of X: lock
//! exclusion (M2) forbids it. So at most one valid holder, always.
//!
//! Now let (a, b) be accesses of two threads T and U that both hold x. At the cut of a
//! query for (a, b), T's set and U's set (or a, b themselves) ran and neither release
//! did, and each set's guard returned its recorded value: it precedes a branch-like
//! event that precedes the access (rule 3), and guards before the cut are feasible (M5).
//! Two valid holders: no feasible prefix makes a and b adjacent, so the pair is no race
//! of the model, and skipping its query loses nothing.

use crate::facts::values::ValueKey;
use crate::wcp::slot;
use jrace_trace::{Event, Kind, LockId, ThreadId, VarId};
use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;

type Held = SmallVec<[VarId; 2]>;

/// The latches of a trace and, per thread, the spans in which it holds each.
#[derive(Default)]
pub struct Latches {
    /// Per thread: from each listed event on (global index, ascending), the latches it
    /// holds, until the next entry.
    changes: HashMap<ThreadId, Vec<(u32, Held)>>,
    /// Number of variables found to be latches.
    pub count: usize,
}

/// A guard candidate: the read's value key, its thread's branch count then, and the lock
/// regions it was in.
type Guard = (ValueKey, u64, SmallVec<[(LockId, u64); 4]>);

/// Per (thread, variable) state of the second pass.
#[derive(Default)]
struct Local {
    /// Writes of the variable by the thread so far.
    writes: u32,
    /// The last read since the thread's last write of the variable: its value key, the
    /// thread's branch count then, and the lock regions it was in.
    guard: Option<Guard>,
    /// The open set (global index).
    open: Option<u32>,
}

impl Latches {
    /// Finds the latches of `events` (value keys `keys`, see [`crate::witness::value_keys`]).
    /// `branch_complete`: whether the trace records branches (else every read is guarded).
    pub fn find(events: &[Event], keys: &[ValueKey], branch_complete: bool) -> Latches {
        // The candidates' free values; `None` once a variable is found not to be a latch.
        let mut free = free_values(events, keys);
        if free.iter().all(Option::is_none) {
            return Latches::default();
        }
        let is_candidate =
            |free: &[Option<ValueKey>], x: VarId| free.get(x as usize).copied().flatten();
        let mut lock_of: HashMap<VarId, SmallVec<[LockId; 2]>> = HashMap::default();
        let mut local: HashMap<(ThreadId, VarId), Local> = HashMap::default();
        let mut regions: Vec<SmallVec<[(LockId, u64); 4]>> = Vec::new();
        let mut branches: Vec<u64> = Vec::new();
        let mut next_region = 0u64;
        // (thread, variable, set, release or u32::MAX)
        let mut spans: Vec<(ThreadId, VarId, u32, u32)> = Vec::new();
        for (i, e) in events.iter().enumerate() {
            let t = e.thread;
            match e.kind {
                Kind::Acquire | Kind::Wake if e.kind == Kind::Wake || !e.is_nested() => {
                    next_region += 1;
                    slot(&mut regions, t).push((e.target, next_region));
                }
                Kind::Release | Kind::Wait if e.kind == Kind::Wait || !e.is_nested() => {
                    let h = slot(&mut regions, t);
                    if let Some(p) = h.iter().rposition(|&(l, _)| l == e.target) {
                        h.remove(p);
                    }
                }
                Kind::Branch | Kind::Enter | Kind::Exit => {
                    *slot(&mut branches, t) += 1;
                }
                Kind::Read | Kind::VRead if is_candidate(&free, e.target).is_some() => {
                    let bc = *slot(&mut branches, t);
                    let regs = slot(&mut regions, t).clone();
                    local.entry((t, e.target)).or_default().guard = Some((keys[i], bc, regs));
                }
                Kind::Write | Kind::VWrite => {
                    let x = e.target;
                    let Some(f) = is_candidate(&free, x) else {
                        continue;
                    };
                    let st = local.entry((t, x)).or_default();
                    let guard = st.guard.take();
                    st.writes += 1;
                    if st.writes.is_multiple_of(2) {
                        // A release (its value is f: checked by `free_values`).
                        if let Some(s) = st.open.take() {
                            spans.push((t, x, s, i as u32));
                        }
                        continue;
                    }
                    // A set: a value other than f, after a guard that read f, with a
                    // branch in between, both in one region of the variable's lock.
                    let now = slot(&mut regions, t).clone();
                    let branched = *slot(&mut branches, t);
                    let ok = keys[i] != f
                        && guard.is_some_and(|(k, bc, regs)| {
                            let passed = !branch_complete || branched > bc;
                            let common: SmallVec<[LockId; 2]> = regs
                                .iter()
                                .filter(|r| now.contains(r))
                                .map(|&(l, _)| l)
                                .collect();
                            let locks = lock_of.entry(x).or_insert_with(|| common.clone());
                            locks.retain(|l| common.contains(l));
                            k == f && passed && !locks.is_empty()
                        });
                    if ok {
                        st.open = Some(i as u32);
                    } else {
                        free[x as usize] = None;
                    }
                }
                _ => {}
            }
        }
        for (&(t, x), st) in &local {
            if let Some(s) = st.open {
                spans.push((t, x, s, u32::MAX));
            }
        }
        spans.retain(|&(_, x, _, _)| is_candidate(&free, x).is_some());
        let mut latches = Latches::default();
        let mut vars: Vec<VarId> = spans.iter().map(|s| s.1).collect();
        vars.sort_unstable();
        vars.dedup();
        latches.count = vars.len();
        // Per thread: +x at the set, -x after the release.
        let mut points: HashMap<ThreadId, Vec<(u32, bool, VarId)>> = HashMap::default();
        for &(t, x, s, r) in &spans {
            let p = points.entry(t).or_default();
            p.push((s, true, x));
            if r != u32::MAX {
                p.push((r + 1, false, x));
            }
        }
        for (t, mut p) in points {
            p.sort_unstable_by_key(|&(i, add, _)| (i, add));
            let mut held = Held::new();
            let mut out: Vec<(u32, Held)> = Vec::new();
            for (i, add, x) in p {
                if add {
                    held.push(x);
                } else if let Some(q) = held.iter().position(|&y| y == x) {
                    held.remove(q);
                }
                match out.last_mut() {
                    Some((j, h)) if *j == i => *h = held.clone(),
                    _ => out.push((i, held.clone())),
                }
            }
            latches.changes.insert(t, out);
        }
        latches
    }

    /// The latches thread `t` holds at its event `i` (global index).
    pub fn held(&self, t: ThreadId, i: u32) -> &[VarId] {
        let Some(c) = self.changes.get(&t) else {
            return &[];
        };
        match c.partition_point(|&(j, _)| j <= i) {
            0 => &[],
            p => &c[p - 1].1,
        }
    }

    /// Whether the events `i` of thread `t` and `j` of thread `u` (global indices) hold a
    /// common latch: then no feasible prefix makes them adjacent.
    pub fn common(&self, (t, i): (ThreadId, u32), (u, j): (ThreadId, u32)) -> bool {
        if self.count == 0 || t == u {
            return false;
        }
        let a = self.held(t, i);
        !a.is_empty() && self.held(u, j).iter().any(|x| a.contains(x))
    }
}

/// First pass, over writes only: the variables whose writes all have recorded values and
/// alternate set / release per thread, with one value f for every release and at least
/// two threads that set them; each with its f (indexed by variable, `None` for the rest).
fn free_values(events: &[Event], keys: &[ValueKey]) -> Vec<Option<ValueKey>> {
    #[derive(Clone, Default)]
    struct Var {
        free: Option<ValueKey>,
        /// Writes per thread.
        writes: SmallVec<[(ThreadId, u32); 2]>,
        bad: bool,
    }
    let mut vars: Vec<Var> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if !e.kind.is_write() {
            continue;
        }
        let v = slot(&mut vars, e.target);
        if v.bad {
            continue;
        }
        let k = keys[i];
        if k.0 != 0 {
            v.bad = true;
            continue;
        }
        let n = match v.writes.iter_mut().find(|(t, _)| *t == e.thread) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                v.writes.push((e.thread, 1));
                1
            }
        };
        if n.is_multiple_of(2) {
            match v.free {
                None => v.free = Some(k),
                Some(f) if f != k => v.bad = true,
                _ => {}
            }
        }
    }
    vars.into_iter()
        .map(|v| match v {
            Var {
                free: Some(f),
                bad: false,
                ref writes,
            } if writes.len() >= 2 => Some(f),
            _ => None,
        })
        .collect()
}
