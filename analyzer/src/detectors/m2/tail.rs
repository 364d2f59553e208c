//! A cheap sufficient test that `decide` succeeds: the *postponed-tails* witness (jrace's
//! own, not in the paper).
//!
//! When every open section of `X` belongs to the racing threads (the common case: the
//! racing accesses hold locks, and no third thread is stuck in a section), try the
//! schedule
//!
//! ```text
//! W = Y in trace order · tail(j) · tail(i) · e1 e2        Y = X ∖ tails
//! ```
//!
//! where `tail(c)` is thread `c`'s events of `X` from its earliest open acquire on (moved
//! back until `c` holds no shared lock just before it), `i` is a racing thread with open
//! sections and `j` the other one if it has open sections too (else `W` has one tail).
//! Both orders of two tails are tried. The checks run on the tails alone, in
//! `O(|tails| · k · log n)`:
//!
//! 1. no event of `Y` reads from a write of a tail or has a hard predecessor in one, and
//!    no event of `tail(j)` depends so on `tail(i)`. Then `Y` is an ideal closed under
//!    reads-from and hard edges with no shared section open at its end (every open
//!    section of `X` is in a tail, and a tail starts outside every shared section), so
//!    its trace-order projection is a valid schedule (the argument of Lemma 5.1);
//! 2. the tails replay from the state `Y` leaves: each read of a shared variable reads
//!    its own source, each acquire of a shared lock finds it free (the other thread's
//!    open sections stay held);
//! 3. for step 6 (below): no event of `tail(j)` conflicts with a later (in the trace)
//!    event of `Y` in a third thread.
//!
//! Hard predecessors of tail events are in `X` (cone closure) and run before them.
//!
//! **Pure M2: `decide` succeeds whenever some `W` passes**, so this changes no verdict.
//! `W` is a total order on `X` that respects the trace (program order, reads-from, hard
//! edges; every release in `X` of an open acquire's lock runs before that acquire, or
//! the replay fails) and is closed (a valid schedule satisfies (O1), (O2), INIT and (L)),
//! so it contains the closure of `P_X`, which therefore exists. Step 6 with this `i`
//! inserts only edges `u → v` between conflicting events of the other threads with
//! `u <t v`; `W` orders `Y` in trace order, puts `tail(j)` after `Y`, and by check 3 no
//! such `u` in `tail(j)` has its `v` in `Y`, so `W` contains every inserted edge, every
//! closure stays inside `W`, and no cycle arises; the max-min linearization then exists
//! (Thm 3.1). The same holds on `decide`'s slice: `W` runs the events of `X` before the
//! cut first, in trace order (a tail never starts before the cut: both move back over
//! the same held sections), and a read with a source before the cut precedes every
//! later write of its variable. The one other way `decide` fails, its size budget, is
//! checked by the caller ([`super::decide::Decider::within_budget`]). Debug builds run
//! `decide` as well and assert that it agrees (the property tests do so on thousands of
//! random traces).

use super::model::{is_acq, is_rel, Model, NONE};
use jrace_trace::Kind;
use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;

/// The postponed tails of a valid `W`, in schedule order: thread `c`'s positions
/// `start..=x[c]` for each `(c, start)`.
pub(super) struct Tails(SmallVec<[(usize, u32); 2]>);

/// A valid `W` (module doc) for `(e1, e2)` over `X` = `x`, whose open acquires are
/// `opens` (non-empty, no two on one lock), if one of the orders passes.
pub(super) fn tail_witness(m: &Model, x: &[i32], opens: &[u32], e1: u32, e2: u32) -> Option<Tails> {
    let (q1, q2) = (m.thread_of(e1), m.thread_of(e2));
    let mut has = [false; 2];
    for &a in opens {
        match m.thread_of(a) {
            c if c == q1 => has[0] = true,
            c if c == q2 => has[1] = true,
            _ => return None, // a third thread's section stays open
        }
    }
    let start = |c: usize| tail_start(m, c, opens);
    let orders: SmallVec<[Tails; 2]> = match has {
        [true, true] => {
            let (s1, s2) = (start(q1), start(q2));
            [
                Tails([(q1, s1), (q2, s2)].into_iter().collect()),
                Tails([(q2, s2), (q1, s1)].into_iter().collect()),
            ]
            .into_iter()
            .collect()
        }
        [true, false] => [Tails([(q1, start(q1))].into_iter().collect())]
            .into_iter()
            .collect(),
        [false, true] => [Tails([(q2, start(q2))].into_iter().collect())]
            .into_iter()
            .collect(),
        [false, false] => return None,
    };
    orders.into_iter().find(|w| valid(m, x, w))
}

/// Thread `c`'s earliest open acquire (position), moved back while `c` holds a shared
/// lock just before it.
fn tail_start(m: &Model, c: usize, opens: &[u32]) -> u32 {
    let ch = &m.chain[c];
    let mut start = opens
        .iter()
        .filter(|&&a| m.thread_of(a) == c)
        .map(|&a| m.pos_of(a))
        .min()
        .expect("a thread with open sections");
    'back: while start > 0 {
        for &l in &m.locksets[m.held[c][start as usize - 1] as usize] {
            if m.shared_lock[l as usize] {
                let acqs = &m.lock_lists[&(c as u32, l)].acqs;
                let i = acqs.partition_point(|&a| a < ch[start as usize]);
                start = m.pos_of(acqs[i - 1]);
                continue 'back;
            }
        }
        break;
    }
    start
}

/// Checks 1–3 of the module doc for `W` with tails `w`.
fn valid(m: &Model, x: &[i32], w: &Tails) -> bool {
    let w = &w.0;
    // Per thread: index of its tail in `w`, or `NONE`; and the tail's start.
    let tail_of = |c: usize| -> Option<(usize, u32)> {
        w.iter().position(|&(t, _)| t == c).map(|k| (k, w[k].1))
    };
    // Where `g` (an event of `X`) runs: `None` in `Y`, `Some(k)` in the k-th tail.
    let place = |g: u32| -> Option<usize> {
        let c = m.thread_of(g);
        tail_of(c).and_then(|(k, s)| (m.pos_of(g) >= s).then_some(k))
    };
    let in_x = |g: u32| m.pos_of(g) as i64 <= x[m.thread_of(g)] as i64;
    // The last write to `v` in `Y` (`NONE`: none).
    let last_in_y = |v: u32| -> u32 {
        let mut best = NONE;
        for c in 0..m.k {
            if x[c] < 0 {
                continue;
            }
            let Some(l) = m.var_lists.get(&(c as u32, v)) else {
                continue;
            };
            let i = match tail_of(c) {
                Some((_, s)) => {
                    let first = m.chain[c][s as usize];
                    l.writes.partition_point(|&g| g < first)
                }
                None => {
                    let last = m.chain[c][x[c] as usize];
                    l.writes.partition_point(|&g| g <= last)
                }
            };
            if i > 0 && (best == NONE || l.writes[i - 1] > best) {
                best = l.writes[i - 1];
            }
        }
        best
    };
    let last_tail = w.len() - 1;
    let mut last_w: HashMap<u32, u32> = HashMap::default();
    let mut owner: HashMap<u32, usize> = HashMap::default();
    for (k, &(c, s)) in w.iter().enumerate() {
        for &g in &m.chain[c][s as usize..=x[c] as usize] {
            let e = &m.events[g as usize];
            // (1) Nothing that runs earlier depends on the tail.
            let later = |h: u32| !in_x(h) || place(h).is_some_and(|kh| kh > k);
            if let Some(hs) = m.hard_succs.get(&g) {
                if !hs.iter().all(|&h| m.thread_of(h) == c || later(h)) {
                    return false;
                }
            }
            let shared = if e.kind.is_access() {
                m.shared_var[e.target as usize]
            } else if is_acq(e) || is_rel(e) {
                m.shared_lock[e.target as usize]
            } else {
                false
            };
            if !shared {
                continue; // one thread's variable or lock: program order suffices
            }
            // (3) Step 6 keeps the non-last tails' conflicts in trace order.
            if k != last_tail && conflicts_later_in_y(m, x, w, g) {
                return false;
            }
            match e.kind {
                Kind::Write | Kind::VWrite => {
                    if !m
                        .readers_of(g)
                        .iter()
                        .all(|&r| m.thread_of(r) == c || later(r))
                    {
                        return false;
                    }
                    last_w.insert(e.target, g);
                }
                // (2) The tails replay.
                Kind::Read | Kind::VRead => {
                    let src = *last_w
                        .entry(e.target)
                        .or_insert_with(|| last_in_y(e.target));
                    if src != m.rf[g as usize] {
                        return false;
                    }
                }
                _ if is_acq(e) && owner.insert(e.target, c).is_some() => return false,
                _ if is_rel(e) && owner.remove(&e.target) != Some(c) => return false,
                _ => {}
            }
        }
    }
    true
}

/// Whether a third thread's event in `Y` conflicts with `g` (an access of a shared
/// variable or an event of a shared lock, in a tail) and comes after it in the trace.
fn conflicts_later_in_y(m: &Model, x: &[i32], w: &[(usize, u32)], g: u32) -> bool {
    let e = &m.events[g as usize];
    for d in 0..m.k {
        if x[d] < 0 || w.iter().any(|&(t, _)| t == d) {
            continue;
        }
        let last = m.chain[d][x[d] as usize];
        let list: &[u32] = if e.kind.is_access() {
            match m.var_lists.get(&(d as u32, e.target)) {
                Some(l) if e.kind.is_write() => &l.accesses,
                Some(l) => &l.writes,
                None => continue,
            }
        } else {
            match m.lock_lists.get(&(d as u32, e.target)) {
                Some(l) => &l.events,
                None => continue,
            }
        };
        let i = list.partition_point(|&a| a <= g);
        if list.get(i).is_some_and(|&a| a <= last) {
            return true;
        }
    }
    false
}

/// `W` as a schedule of `X`'s model events (before expansion, like Lemma 5.1's).
pub(super) fn schedule(m: &Model, x: &[i32], tails: &Tails) -> Vec<u32> {
    let ends: Vec<u32> = (0..x.len())
        .map(|c| match tails.0.iter().find(|&&(t, _)| t == c) {
            Some(&(_, s)) => s,
            None => (x[c] + 1) as u32,
        })
        .collect();
    let mut w = super::schedule::prefixes_in_trace_order(m, &ends);
    for &(c, s) in &tails.0 {
        w.extend_from_slice(&m.chain[c][s as usize..=x[c] as usize]);
    }
    w
}
