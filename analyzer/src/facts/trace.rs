//! The facts about a trace that the solver detectors, the deadlock detector and the
//! witness validator all read, computed once: each event's thread and place in it, forks,
//! the write each read observed, notify/wake matching, value keys and initial values.

use super::values::*;
use super::NONE;
use crate::sync::NotifyMatcher;
use jrace_trace::{Event, Kind, ThreadId, Trace};
use std::collections::HashMap;

/// Facts about a trace that the validator and the constructions need, computed once.
pub struct Facts<'a> {
    pub(crate) trace: &'a Trace,
    /// Dense thread index of each event.
    pub(crate) tix: Vec<u32>,
    /// Position of each event within its thread.
    pub(crate) local: Vec<u32>,
    /// Events of each dense thread, in program order.
    pub(crate) threads: Vec<Vec<u32>>,
    pub(crate) dense: HashMap<ThreadId, u32>,
    /// Per dense thread: its `fork` event, or `NONE`.
    pub(crate) fork_of: Vec<u32>,
    /// The `fork` events of threads without events ([`Facts::join_after`]).
    pub(crate) silent_fork: HashMap<ThreadId, u32>,
    /// Per read (plain or volatile): the write it observed in the trace, or `NONE`.
    pub(crate) observed: Vec<u32>,
    /// Per wake: the notify it was matched with, or `NONE`.
    pub(crate) wake_notify: Vec<u32>,
    /// Per notify: the waits of the wakes matched with it.
    pub(crate) notify_waits: HashMap<u32, Vec<u32>>,
    /// Per wake with a matched notify: the `wait` it returns from.
    pub(crate) wake_wait: HashMap<u32, u32>,
    /// Value key of every access ([`value_keys`]).
    pub(crate) keys: Vec<ValueKey>,
    /// Per variable: its known initial value ([`initial_values`]).
    pub(crate) init: Vec<Option<ValueKey>>,
    pub(crate) nvars: usize,
    pub(crate) nlocks: usize,
    /// [`unexplained_reads`].
    pub(crate) unexplained: std::collections::HashSet<u32>,
    /// The reads of read-modify-writes, in trace order ([`Facts::rmw_write`]).
    pub(crate) rmw_reads: Vec<u32>,
    /// Extra must-happen-before edges a schedule must respect (`rdit`'s BarrierPair
    /// edges, [`Facts::set_order_edges`]): per event, the events that must run first.
    pub(crate) before: HashMap<u32, Vec<u32>>,
    /// Edges that canonical form and minimization keep where a schedule has them, but
    /// validation does not require ([`Facts::set_kept_edges`]).
    pub(crate) kept: HashMap<u32, Vec<u32>>,
}

impl<'a> Facts<'a> {
    pub fn new(trace: &'a Trace) -> Facts<'a> {
        let events = &trace.events;
        let n = events.len();
        let mut dense: HashMap<ThreadId, u32> = HashMap::new();
        let mut dense_of: Dense<u32> = Dense::default(); // dense index + 1, 0: none yet
        let mut threads: Vec<Vec<u32>> = Vec::new();
        let mut tix = Vec::with_capacity(n);
        let mut local = Vec::with_capacity(n);
        for (i, e) in events.iter().enumerate() {
            let slot = dense_of.get_mut(e.thread);
            if *slot == 0 {
                threads.push(Vec::new());
                *slot = threads.len() as u32;
                dense.insert(e.thread, *slot - 1);
            }
            let d = *slot - 1;
            tix.push(d);
            local.push(threads[d as usize].len() as u32);
            threads[d as usize].push(i as u32);
        }
        let mut fork_of = vec![NONE; threads.len()];
        let mut silent_fork = HashMap::new();
        let mut observed = vec![NONE; n];
        let mut wake_notify = vec![NONE; n];
        let mut notify_waits: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut wake_wait: HashMap<u32, u32> = HashMap::new();
        let mut last_write: Dense<u32> = Dense::default(); // index + 1, 0: none
        let mut matcher: NotifyMatcher<()> = NotifyMatcher::new();
        let mut wait_of: HashMap<ThreadId, u32> = HashMap::new();
        let (mut nvars, mut nlocks) = (0usize, 0usize);
        let mut rmw_reads = Vec::new();
        for (i, e) in events.iter().enumerate() {
            let i32_ = i as u32;
            match e.kind {
                Kind::Read | Kind::VRead => {
                    observed[i] = last_write.get(e.target).wrapping_sub(1);
                    nvars = nvars.max(e.target as usize + 1);
                }
                Kind::Write | Kind::VWrite => {
                    // A read-modify-write: this thread's previous event read the variable,
                    // and no other write of it came in between.
                    let l = local[i] as usize;
                    if e.kind == Kind::VWrite && l > 0 {
                        let p = threads[tix[i] as usize][l - 1];
                        let r = &events[p as usize];
                        if r.kind == Kind::VRead
                            && r.target == e.target
                            && last_write.get(e.target) <= p
                        {
                            rmw_reads.push(p);
                        }
                    }
                    *last_write.get_mut(e.target) = i32_ + 1;
                    nvars = nvars.max(e.target as usize + 1);
                }
                Kind::Fork => match dense.get(&e.target) {
                    Some(&d) => fork_of[d as usize] = i32_,
                    None => {
                        silent_fork.insert(e.target, i32_);
                    }
                },
                Kind::Wait => {
                    matcher.wait(e.thread, e.target, i as u64);
                    wait_of.insert(e.thread, i32_);
                }
                Kind::Notify | Kind::NotifyAll => {
                    matcher.notify(e.target, i as u64, e.kind == Kind::NotifyAll, || ());
                }
                Kind::Wake => {
                    if let Some((nt, ())) = matcher.wake(e.thread, e.target) {
                        wake_notify[i] = nt as u32;
                        if let Some(&w) = wait_of.get(&e.thread) {
                            notify_waits.entry(nt as u32).or_default().push(w);
                            wake_wait.insert(i32_, w);
                        }
                    }
                }
                _ => {}
            }
            if e.kind.has_lock() {
                nlocks = nlocks.max(e.target as usize + 1);
            }
        }
        rmw_reads.sort_unstable();
        let keys = value_keys(events);
        let mut init: Vec<Option<ValueKey>> = initial_values_dense(events, &keys)
            .into_iter()
            .map(Option::flatten)
            .collect();
        init.resize(nvars, None);
        let unexplained = unexplained_reads(events);
        Facts {
            rmw_reads,
            unexplained,
            wake_wait,
            keys,
            init,
            trace,
            tix,
            local,
            threads,
            dense,
            fork_of,
            silent_fork,
            observed,
            wake_notify,
            notify_waits,
            nvars,
            nlocks,
            before: HashMap::new(),
            kept: HashMap::new(),
        }
    }

    /// Value key of every event ([`value_keys`]).
    pub fn keys(&self) -> &[ValueKey] {
        &self.keys
    }

    /// Per event: for a read, the write it observed in the trace, else [`NONE`].
    pub fn observed(&self) -> &[u32] {
        &self.observed
    }

    /// The known initial value of variable `v` ([`initial_values`]).
    pub fn initial(&self, v: u32) -> Option<ValueKey> {
        self.init.get(v as usize).copied().flatten()
    }

    /// The notify a `wake` (event `i`) was matched with.
    pub fn wake_notify(&self, i: u32) -> Option<u32> {
        self.wake_notify
            .get(i as usize)
            .copied()
            .filter(|&n| n != NONE)
    }

    /// The `wait` a matched `wake` (event `i`) returns from.
    pub fn wake_wait(&self, i: u32) -> Option<u32> {
        self.wake_wait.get(&i).copied()
    }

    /// The write of the read-modify-write whose read is event `i`: a volatile read
    /// followed in its thread by a volatile write of the same variable, with no other
    /// thread's write of it in between in the trace. A compare-and-set, `getAndAdd` and
    /// the like are recorded so, as one atomic operation: no other thread's write to the
    /// variable comes between the two in any reordering either (else two threads'
    /// compare-and-sets on a spin lock would both succeed). A `volatile++` recorded the
    /// same way is taken as atomic too: that orders more (a race can be missed), never
    /// less.
    pub fn rmw_write(&self, i: usize) -> Option<usize> {
        self.rmw_reads.binary_search(&(i as u32)).ok()?;
        let t = &self.threads[self.tix[i] as usize];
        Some(t[self.local[i] as usize + 1] as usize)
    }

    /// The read of the read-modify-write whose write is event `i` ([`Facts::rmw_write`]).
    pub fn rmw_read(&self, i: usize) -> Option<usize> {
        let e = self.trace.events.get(i)?;
        let l = self.local[i] as usize;
        if e.kind != Kind::VWrite || l == 0 {
            return None;
        }
        let prev = self.threads[self.tix[i] as usize][l - 1] as usize;
        (self.rmw_write(prev) == Some(i)).then_some(prev)
    }

    /// The dense index of event `i`'s thread and its position in that thread.
    pub fn place(&self, i: u32) -> (u32, u32) {
        (self.tix[i as usize], self.local[i as usize])
    }

    /// The events of dense thread `d`, in program order.
    pub fn thread_events(&self, d: u32) -> &[u32] {
        &self.threads[d as usize]
    }

    /// How many threads have events (dense indices `0..n`).
    pub fn thread_count(&self) -> usize {
        self.threads.len()
    }

    /// The `fork` event of dense thread `d`, if the trace has one.
    pub fn fork_event(&self, d: u32) -> Option<u32> {
        Some(self.fork_of[d as usize]).filter(|&f| f != NONE)
    }

    /// The dense index of thread `t`, if it has events.
    pub fn dense_thread(&self, t: ThreadId) -> Option<u32> {
        self.dense.get(&t).copied()
    }

    /// The `wait`s of the wakes matched with notify `i`.
    pub fn notify_waits(&self, i: u32) -> &[u32] {
        self.notify_waits.get(&i).map_or(&[], |v| v.as_slice())
    }

    /// Whether read `i` is one no traced write explains ([`unexplained_reads`]).
    pub fn is_unexplained(&self, i: u32) -> bool {
        self.unexplained.contains(&i)
    }

    /// The first and last event of thread `t`, if it has any.
    pub fn thread_span(&self, t: ThreadId) -> Option<(u32, u32)> {
        let th = &self.threads[*self.dense.get(&t)? as usize];
        Some((*th.first()?, *th.last()?))
    }

    /// The event a `join` of thread `t` must follow, besides its own thread's: `t`'s last
    /// event, or, when `t` recorded none, its `fork`. A join returns once its thread has
    /// ended, so it follows the start even of a thread that ran no recorded code.
    pub fn join_after(&self, t: ThreadId) -> Option<u32> {
        match self.dense.get(&t) {
            Some(&d) => self.threads[d as usize].last().copied(),
            None => self.silent_fork.get(&t).copied(),
        }
    }

    /// Adds must-happen-before edges `(from, to)` (event indices) to the rules every
    /// schedule is checked against (`W-BARRIER`): `rdit`'s BarrierPair ordering.
    pub fn set_order_edges(&mut self, edges: &[(u32, u32)]) {
        for &(x, y) in edges {
            self.before.entry(y).or_default().push(x);
        }
    }

    /// Adds edges `(from, to)` that [`Facts::canonical`] and [`Facts::minimize`] keep
    /// when a schedule runs `from` before `to`, without making validation require them:
    /// the BarrierPair order of a trace with calls into excluded code, which rdit's
    /// witnesses respect and other detectors' need not.
    pub fn set_kept_edges(&mut self, edges: &[(u32, u32)]) {
        for &(x, y) in edges {
            self.kept.entry(y).or_default().push(x);
        }
    }

    /// The must-happen-before and kept edges into event `i`.
    pub(crate) fn preds(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        let k = i as u32;
        let a = self.before.get(&k).into_iter().flatten();
        let b = self.kept.get(&k).into_iter().flatten();
        a.chain(b).copied()
    }

    pub fn trace(&self) -> &'a Trace {
        self.trace
    }

    pub(crate) fn ev(&self, i: usize) -> &Event {
        &self.trace.events[i]
    }

    /// `thread op(target)` of event `i`, for messages.
    pub(crate) fn describe(&self, i: usize) -> String {
        let e = self.ev(i);
        let sym = &self.trace.symbols;
        let target = if e.kind.is_access() {
            // By name when the trace has its variables' names (a detector may validate
            // with threads' and locks' names only).
            let v = sym.vars.names().get(e.target as usize);
            format!("({})", v.unwrap_or("?"))
        } else if e.kind.has_lock() {
            format!("({})", sym.lock_name(e.target))
        } else if e.kind.has_thread() {
            format!("({})", sym.thread_name(e.target))
        } else {
            String::new()
        };
        format!(
            "{} {}{} (event {})",
            sym.thread_name(e.thread),
            e.kind.name(),
            target,
            i + 1
        )
    }

    pub(crate) fn thread_name_dense(&self, d: u32) -> &str {
        let first = self.threads[d as usize][0] as usize;
        self.trace.symbols.thread_name(self.ev(first).thread)
    }
}
