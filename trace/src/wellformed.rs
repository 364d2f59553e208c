//! Well-formedness of a trace (docs/STD_FORMAT.md#well-formedness), checked event by event
//! while reading.
//!
//! Every reader runs its events through a [`Checker`], so detectors may rely on these
//! rules: locks are held by one thread at a time and released only by their holder,
//! a joined or ended thread has no later events, a forked thread has no events before
//! its fork, a `wake` follows the same thread's `wait` on that lock, and `notify` is
//! called by the lock's holder (as Java requires), and an `exit(M)` closes its thread's
//! innermost open `enter(M;…)` (BarrierPairs nest; an `enter` may stay open when the
//! trace is cut). The checker also
//! marks re-entrant inner acquires and their releases with [`FLAG_NESTED`], because
//! only the outermost acquisition synchronizes.

use crate::model::*;

#[derive(Clone, Debug, Default)]
struct ThreadState {
    seen: bool,
    forked: bool,
    ended: bool,
    /// Another thread has joined this one.
    joined: bool,
    /// Lock this thread is waiting on (between `wait` and `wake`) and its saved depth.
    waiting: Option<(LockId, u32)>,
}

#[derive(Clone, Copy, Debug, Default)]
struct LockState {
    holder: Option<ThreadId>,
    depth: u32,
}

/// Streaming well-formedness checker. Feed events in trace order to [`Checker::check`].
#[derive(Clone, Debug, Default)]
pub struct Checker {
    threads: Vec<ThreadState>,
    locks: Vec<LockState>,
    /// Locks each thread currently holds (outermost acquisitions), for reports.
    held: Vec<Vec<LockId>>,
    /// Each thread's open `enter` events (their methods), innermost last.
    calls: Vec<Vec<MethodId>>,
}

/// What went wrong, phrased for a user: "release of lock l that t1 does not hold".
pub type Violation = String;

impl Checker {
    pub fn new() -> Checker {
        Checker::default()
    }

    fn thread(&mut self, t: ThreadId) -> &mut ThreadState {
        let i = t as usize;
        if i >= self.threads.len() {
            self.threads.resize(i + 1, ThreadState::default());
        }
        &mut self.threads[i]
    }

    fn lock(&mut self, l: LockId) -> &mut LockState {
        let i = l as usize;
        if i >= self.locks.len() {
            self.locks.resize(i + 1, LockState::default());
        }
        &mut self.locks[i]
    }

    /// Threads with an event so far that have not ended.
    pub fn running(&self) -> Vec<ThreadId> {
        (0..self.threads.len())
            .filter(|&t| self.threads[t].seen && !self.threads[t].ended)
            .map(|t| t as ThreadId)
            .collect()
    }

    /// Locks held by `t` right now, outermost acquisitions in acquisition order.
    pub fn held_by(&self, t: ThreadId) -> &[LockId] {
        self.held
            .get(t as usize)
            .map(|v| v.as_slice())
            .unwrap_or(&[])
    }

    /// Checks one event, updating state and setting [`FLAG_NESTED`] on re-entrant
    /// acquires and releases. `sym` is used only to phrase violations.
    #[inline]
    pub fn check(&mut self, e: &mut Event, sym: &Symbols) -> Result<(), Violation> {
        // Fast path, most events: an access, branch, enter or exit of a thread that is
        // neither ended, joined nor waiting. The full check below would only mark the
        // thread as seen.
        if matches!(
            e.kind,
            Kind::Read | Kind::Write | Kind::VRead | Kind::VWrite | Kind::Branch
        ) {
            if let Some(st) = self.threads.get_mut(e.thread as usize) {
                if !st.ended && !st.joined && st.waiting.is_none() {
                    st.seen = true;
                    return Ok(());
                }
            }
        }
        self.check_full(e, sym)
    }

    #[inline(never)]
    fn check_full(&mut self, e: &mut Event, sym: &Symbols) -> Result<(), Violation> {
        let t = e.thread;
        let tname = || sym.thread_name(t).to_owned();
        {
            let st = self.thread(t);
            if st.ended {
                return Err(format!("thread {} has an event after its end", tname()));
            }
            if st.joined {
                return Err(format!(
                    "thread {} has an event after it was joined",
                    tname()
                ));
            }
            if let Some((l, _)) = st.waiting {
                if !(e.kind == Kind::Wake && e.target == l) {
                    return Err(format!(
                        "thread {} has an event while it waits on {} (expected wake({}))",
                        tname(),
                        sym.lock_name(l),
                        sym.lock_name(l)
                    ));
                }
            }
            if e.kind == Kind::Begin && st.seen {
                return Err(format!(
                    "begin of thread {} is not its first event",
                    tname()
                ));
            }
            st.seen = true;
        }
        match e.kind {
            Kind::Acquire => {
                let l = e.target;
                let ls = *self.lock(l);
                match ls.holder {
                    Some(h) if h != t => {
                        return Err(format!(
                            "acquire of lock {} that thread {} holds",
                            sym.lock_name(l),
                            sym.thread_name(h)
                        ))
                    }
                    Some(_) => {
                        self.lock(l).depth += 1;
                        e.flags |= FLAG_NESTED;
                    }
                    None => {
                        *self.lock(l) = LockState {
                            holder: Some(t),
                            depth: 1,
                        };
                        self.held_mut(t).push(l);
                    }
                }
            }
            Kind::Release => {
                let l = e.target;
                let ls = *self.lock(l);
                if ls.holder != Some(t) {
                    return Err(format!(
                        "release of lock {} that thread {} does not hold",
                        sym.lock_name(l),
                        tname()
                    ));
                }
                if ls.depth > 1 {
                    self.lock(l).depth -= 1;
                    e.flags |= FLAG_NESTED;
                } else {
                    *self.lock(l) = LockState::default();
                    self.unhold(t, l);
                }
            }
            Kind::Wait => {
                let l = e.target;
                let ls = *self.lock(l);
                if ls.holder != Some(t) {
                    return Err(format!(
                        "wait on {} that thread {} does not hold",
                        sym.lock_name(l),
                        tname()
                    ));
                }
                *self.lock(l) = LockState::default();
                self.unhold(t, l);
                self.thread(t).waiting = Some((l, ls.depth));
            }
            Kind::Wake => {
                let l = e.target;
                let Some((wl, depth)) = self.thread(t).waiting else {
                    return Err(format!(
                        "wake({}) without an earlier wait({}) by thread {}",
                        sym.lock_name(l),
                        sym.lock_name(l),
                        tname()
                    ));
                };
                debug_assert_eq!(wl, l);
                if let Some(h) = self.lock(l).holder {
                    return Err(format!(
                        "wake re-acquires lock {} that thread {} holds",
                        sym.lock_name(l),
                        sym.thread_name(h)
                    ));
                }
                *self.lock(l) = LockState {
                    holder: Some(t),
                    depth,
                };
                self.held_mut(t).push(l);
                self.thread(t).waiting = None;
            }
            Kind::Notify | Kind::NotifyAll => {
                // Java throws IllegalMonitorStateException otherwise; detectors rely on
                // the monitor ordering a notify after the wait it may wake.
                let l = e.target;
                if self.lock(l).holder != Some(t) {
                    return Err(format!(
                        "{}({}) by thread {} that does not hold {}",
                        e.kind.name(),
                        sym.lock_name(l),
                        tname(),
                        sym.lock_name(l)
                    ));
                }
            }
            Kind::Fork => {
                let c = e.target;
                if c == t {
                    return Err(format!("thread {} forks itself", tname()));
                }
                let cs = self.thread(c);
                if cs.forked {
                    return Err(format!("thread {} is forked twice", sym.thread_name(c)));
                }
                if cs.seen {
                    return Err(format!(
                        "fork({}) after thread {} already has events",
                        sym.thread_name(c),
                        sym.thread_name(c)
                    ));
                }
                cs.forked = true;
            }
            Kind::Join => {
                let c = e.target;
                if c == t {
                    return Err(format!("thread {} joins itself", tname()));
                }
                let cs = self.thread(c);
                if cs.waiting.is_some() {
                    return Err(format!(
                        "join({}) while thread {} is still waiting",
                        sym.thread_name(c),
                        sym.thread_name(c)
                    ));
                }
                cs.joined = true;
            }
            Kind::Enter => {
                let i = t as usize;
                if i >= self.calls.len() {
                    self.calls.resize_with(i + 1, Vec::new);
                }
                self.calls[i].push(e.target);
            }
            Kind::Exit => {
                let top = self.calls.get_mut(t as usize).and_then(|c| c.pop());
                match top {
                    Some(m) if m == e.target => {}
                    Some(m) => {
                        return Err(format!(
                            "exit({}) by thread {} while its innermost open call is enter({};..) (expected exit({}))",
                            sym.methods.name(e.target),
                            tname(),
                            sym.methods.name(m),
                            sym.methods.name(m)
                        ))
                    }
                    None => {
                        return Err(format!(
                            "exit({}) by thread {} without an open enter({};..)",
                            sym.methods.name(e.target),
                            tname(),
                            sym.methods.name(e.target)
                        ))
                    }
                }
            }
            Kind::End => {
                // A thread may end holding a lock: a `java.util.concurrent` lock is not
                // released by structure, and a program may drop one still locked. The lock
                // stays held for the rest of the trace (no other thread can acquire it).
                self.thread(t).ended = true;
            }
            _ => {}
        }
        Ok(())
    }

    fn held_mut(&mut self, t: ThreadId) -> &mut Vec<LockId> {
        let i = t as usize;
        if i >= self.held.len() {
            self.held.resize_with(i + 1, Vec::new);
        }
        &mut self.held[i]
    }

    fn unhold(&mut self, t: ThreadId, l: LockId) {
        if let Some(v) = self.held.get_mut(t as usize) {
            if let Some(p) = v.iter().rposition(|&x| x == l) {
                v.remove(p);
            }
        }
    }
}
