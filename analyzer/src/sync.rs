//! Matching `wake` to the `notify`/`notifyall` that woke it
//! (docs/DETECTORS.md#notify-and-wake): a `wake(L)` is matched with the latest unconsumed
//! `notify(L)`/`notifyall(L)` after that thread's `wait(L)`. A `notify` wakes one waiter
//! and is consumed; a `notifyall` may wake all. Detectors attach their own payload (a
//! clock, an event index) to each notify.

use jrace_trace::{LockId, ThreadId};
use std::collections::HashMap;

struct Pending<P> {
    /// Global index of the notify event.
    idx: u64,
    all: bool,
    consumed: bool,
    payload: P,
}

pub struct NotifyMatcher<P> {
    /// Per lock: notifies that a current waiter could still be woken by.
    notifies: HashMap<LockId, Vec<Pending<P>>>,
    /// Per thread: the lock it waits on and the index of its `wait`.
    waiting: HashMap<ThreadId, (LockId, u64)>,
    waiters: HashMap<LockId, u32>,
}

impl<P> Default for NotifyMatcher<P> {
    fn default() -> Self {
        NotifyMatcher {
            notifies: HashMap::new(),
            waiting: HashMap::new(),
            waiters: HashMap::new(),
        }
    }
}

impl<P: Clone> NotifyMatcher<P> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn wait(&mut self, t: ThreadId, lock: LockId, idx: u64) {
        self.waiting.insert(t, (lock, idx));
        *self.waiters.entry(lock).or_default() += 1;
    }

    /// Records a notify; `payload` is built only if some thread waits on `lock`, since a
    /// notify that finds no waiter can never be matched.
    pub fn notify(&mut self, lock: LockId, idx: u64, all: bool, payload: impl FnOnce() -> P) {
        if self.waiters.get(&lock).copied().unwrap_or(0) == 0 {
            return;
        }
        self.notifies.entry(lock).or_default().push(Pending {
            idx,
            all,
            consumed: false,
            payload: payload(),
        });
    }

    /// The matched notify for thread `t` waking on `lock`: its index and payload.
    pub fn wake(&mut self, t: ThreadId, lock: LockId) -> Option<(u64, P)> {
        let (_, wait_idx) = self.waiting.remove(&t)?;
        let n = self.waiters.entry(lock).or_default();
        *n = n.saturating_sub(1);
        let last_waiter = *n == 0;
        let list = self.notifies.get_mut(&lock)?;
        let found = list
            .iter_mut()
            .rev()
            .take_while(|p| p.idx > wait_idx)
            .find(|p| !p.consumed)
            .map(|p| {
                if !p.all {
                    p.consumed = true;
                }
                (p.idx, p.payload.clone())
            });
        if last_waiter {
            list.clear();
        }
        found
    }
}

/// A notify's payload for the wake it is matched with, completed at the release that
/// ends the notifier's critical section: the wake re-acquires the lock after that
/// release, so whatever the notifier did in the rest of its section comes before the
/// wake too (`cp` and `wcp`, docs/DETECTORS.md#notify-and-wake). Shared (`Arc`) because
/// the matcher hands it on while the notifier's thread still completes it; detectors are
/// `Send`.
pub type NotifySlot<P> = std::sync::Arc<std::sync::Mutex<P>>;

/// Runs `f` on the payload of `slot`.
pub fn with_slot<P, R>(slot: &NotifySlot<P>, f: impl FnOnce(&mut P) -> R) -> R {
    f(&mut slot.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Per thread: the notifies of its critical sections still open.
pub struct OpenNotifies<P>(Vec<(LockId, NotifySlot<P>)>);

impl<P> Default for OpenNotifies<P> {
    fn default() -> Self {
        OpenNotifies(Vec::new())
    }
}

impl<P> OpenNotifies<P> {
    /// A slot for a notify on `lock` made now, starting from `payload`.
    pub fn open(&mut self, lock: LockId, payload: P) -> NotifySlot<P> {
        let slot = NotifySlot::new(std::sync::Mutex::new(payload));
        self.0.push((lock, slot.clone()));
        slot
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The thread's section on `lock` ends: `complete` each of its notifies' payloads
    /// (with the thread's clocks now).
    pub fn close(&mut self, lock: LockId, mut complete: impl FnMut(&mut P)) {
        self.0.retain(|(l, slot)| {
            if *l != lock {
                return true;
            }
            with_slot(slot, &mut complete);
            false
        });
    }
}
