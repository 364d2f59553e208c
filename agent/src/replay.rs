//! Replay mode (`replay=FILE[,replay_timeout=SECS]`): the agent records as usual *and*
//! holds threads at instrumented events so that a race's witness schedule happens in a
//! real run, then writes what happened to `DIR/replay.result` (`jrace replay` writes the
//! schedule, runs the program and prints the result).
//!
//! Size: the schedule, the gate and the result are one state machine over one shared
//! state ([`Replay`]).
//!
//! # The schedule
//! A list of steps (thread, k, kind, location), in the order the witness runs them; k is
//! the 1-based number of the event among the events the recorder writes for that thread
//! (`begin` is 1), so an event is identified by the per-thread count of [`emitted`] calls,
//! which sit exactly where the recorder appends to a thread's log. Events at locations in
//! the JDK (its own synchronization, see jdksync.rs) are neither steps nor counted, and
//! the hooks of JDK code never hold a thread: what the JDK does inside varies from run to
//! run (a CAS retried under contention), and a thread held there could hold what the
//! others need. Each thread's steps are
//! its events 1..m (a witness runs a prefix of every thread); the last two steps are the
//! racing pair. File format: [`jrace_trace::schedule`].
//!
//! # Which thread is which
//! Threads are matched by Java name and rank: the n-th thread (0-based, in the order the
//! recorder first sees threads, which is the order of trace thread ids) whose name is N
//! stands for the schedule's thread with name N and occurrence n. (The trace shows a
//! repeated name as `N#<java id>`; Java ids change between runs, so the CLI strips the
//! suffix and writes the rank instead.) Threads of the trace with no step are listed too.
//! A thread that matches no schedule thread (a JVM thread, a thread the recorded run did
//! not have) runs freely and is never held.
//!
//! # The gate rule
//! Hooks call [`gate`] at their entry (no lock of the recorder held) and at their exit
//! (after the thread's state lock is released). With `n` events emitted so far by a
//! matched thread, its next event is `k = n + 1`; the thread's *target* is its first step
//! at or after `k` that is not a `branch` (branches are invisible to other threads, and
//! access hooks emit their implicit branch together with the access) nor a class-init
//! check (a step marked `init`: the hook of a field access emits it just before the
//! access, after a read has already happened, so the access is what must be gated; nor
//! does it count as an event between the racing accesses):
//!
//! * If there is a target step `j`, the thread waits until every step before `j` of the
//!   other threads (branches aside) has run. It waits at the *entry* of the next hook, and
//!   already at the *exit* of the current one when `j`'s hook runs after its operation
//!   (read, volatile read, acquire, join, wake), so that it is held before the operation.
//!   Exception: when the event just emitted is one whose operation follows its hook
//!   (write, volatile write, release, fork, wait, notify), that operation must happen
//!   first (a held `fork` would never start the child), so the thread is held only at
//!   the next hook's entry, after a read there has already happened; unless the step is
//!   marked `hold` (the CLI marks the steps no other thread's intervening step depends
//!   on: another variable, another lock, not the forked thread).
//! * If there is none (its part of the schedule is exhausted, including threads with no
//!   step at all, held right after their lazily emitted `begin`), the thread waits until
//!   the replay is decided (reproduced, diverged, timed out), at the entry and exit of
//!   its hooks, with the same exception.
//! * A `wake` step's hook runs once the monitor is held again, so a thread whose wake
//!   (or end of schedule) is next is not held there as usual, which would keep the
//!   monitor from threads whose steps come first: it waits on the monitor instead, 1 ms
//!   at a time, until its turn (the JVMTI MonitorWaited callback, which replay mode
//!   enables, notes the object; [`monitor_waited`]). The same for `Condition.await`
//!   and its lock, with `awaitNanos` ([`awaiting`]).
//! * A hook that emits several events is held once, for the first: when a later one is a
//!   step whose turn has not come, the thread is held at the hook's exit (before the
//!   operation of a write or release).
//! * A step "has run" when its thread emits it, except that a step whose operation
//!   follows its hook counts only once its thread reaches its next hook or ends, or 20 ms
//!   after the emission (a `wait` never reaches its next hook before the notify): so a racing
//!   read placed right after a racing write reads what it wrote.
//! * Waiting is a spin, then a sleep loop (50 µs, then 500 µs slices); no lock of the
//!   agent is held and the thread is in native code, so the garbage collector runs. Every
//!   wait checks the global stop flag and the deadline.
//!
//! When a matched thread emits a step's event whose kind or location differs from the
//! step's, the run took another path: `diverged`, and every gate opens. When the second
//! racing step is emitted, the result is `reproduced` if no event of a matched thread
//! other than `begin`, `end` and `branch` was emitted between the two racing accesses
//! (`separated` otherwise), with the value each access carried. A watchdog thread ends
//! gating at the deadline (`timeout`), and VMDeath ends it too (`exited` when nothing
//! else was decided): no thread is ever left held.
//!
//! # Limits
//! * Reads are recorded after they happen, so a read can be held only at an earlier hook
//!   of its thread: a thread's first read (no hook before it), a read right after the
//!   thread's own write, release or fork not marked `hold`, or a read emitted by a
//!   multi-event hook runs as soon
//!   as the thread gets there. When that is a racing read, the result says so (the
//!   second access ran before the first, or the accesses ran apart), or adds a `note`
//!   when the read's thread could be held only at the read's own hook.
//! * Threads are held only at instrumented code: locks taken inside excluded code
//!   (the JDK) can deadlock against a held thread until the deadline. Values, time,
//!   input and class initialization order are not controlled; a different path shows as
//!   a divergence. `notify` may wake another waiter than the witness's.
//! * The replayed run must be recorded with the recording's settings (the CLI reuses
//!   them) and the same agent build: event numbers count what the recorder writes.

use crate::jni;
use crate::jvmti::{jobject, JNIEnv};
use jrace_trace::model::Kind;
use jrace_trace::schedule::{RanAccess, ReplayResult, Schedule, Status, StepRef, RESULT_FILE};
use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How long a step whose operation follows its hook may take to count as run when its
/// thread does not reach another hook.
const SETTLE: Duration = Duration::from_millis(20);
const NONE: u32 = u32::MAX;
const FREE: usize = usize::MAX;

const PENDING: u8 = 0;
/// Emitted; its operation may still be to come.
const EMITTED: u8 = 1;
const DONE: u8 = 2;

/// Where a hook calls [`gate`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Point {
    Entry,
    Exit,
}

/// What replay asks of the recorder, handed over at [`start`] (replay does not reach into
/// the recorder's state; the recorder calls replay's hooks).
#[derive(Clone, Copy)]
pub struct Host {
    /// A line for the agent's log.
    pub log: fn(&str),
    /// Recording stopped (the JVM is going away): stop holding threads.
    pub stopped: fn() -> bool,
    /// A wait of 1 ms on `obj`, whose monitor (or, with `condition`, whose lock) the
    /// calling thread holds; false if it threw (the recorder's `replay_wait`).
    pub wait: unsafe fn(*mut JNIEnv, jobject, bool) -> bool,
}

struct Replay {
    host: Host,
    s: Schedule,
    /// Per schedule thread: its steps (indices into `s.steps`), event k at k - 1.
    by_thread: Vec<Vec<usize>>,
    /// Per step: the id the agent gave its location (NONE until interned).
    loc_ids: Vec<AtomicU32>,
    loc_steps: HashMap<String, Vec<usize>>,
    state: Vec<AtomicU8>,
    emitted_at: Vec<AtomicU64>,
    /// Every step before this index has been emitted.
    frontier: AtomicUsize,
    advance: Mutex<()>,
    /// Steps in state EMITTED.
    unsettled: Mutex<Vec<usize>>,
    unsettled_n: AtomicUsize,
    stop: AtomicBool,
    decided: Mutex<bool>,
    start: Instant,
    deadline: Instant,
    dir: PathBuf,
    naming: Mutex<Naming>,
    /// Events of matched threads other than begin, end and branch.
    seq: AtomicU64,
    first: Mutex<Option<(u64, RanAccess)>>,
    /// Location id -> token, for messages.
    locs: Mutex<HashMap<u32, String>>,
    /// Locations in JDK classes: their events are not counted ([`emitted`]).
    jdk_locs: Mutex<std::collections::HashSet<u32>>,
    /// `JRACE_REPLAY_DEBUG` set: log every hold to agent.log.
    debug: bool,
    /// A deadlock's schedule: its requests were let go (`released` written).
    released: AtomicBool,
}

#[derive(Default)]
struct Naming {
    seen: HashMap<String, u32>,
    tids: HashMap<u32, usize>,
}

static REPLAY: OnceLock<Replay> = OnceLock::new();
static ACTIVE: AtomicBool = AtomicBool::new(false);

struct Me {
    tid: Cell<u32>,
    thread: Cell<usize>,
    count: Cell<u32>,
    unsettled: Cell<bool>,
    /// The last event emitted is one whose operation follows its hook.
    last_before_op: Cell<bool>,
    /// ... and a step marked `hold`.
    last_hold: Cell<bool>,
    /// 1 + the step this hook was held for at its entry although the step's operation
    /// (a read) precedes the hook: it may have run before its turn. 0 for none.
    maybe_early: Cell<usize>,
    /// 1 + a step this thread emitted before its turn (a hook that emits several events
    /// was held for the first only); 0 for none.
    early: Cell<usize>,
    /// A global reference to the object whose `wait` just ended (or the `Condition` the
    /// thread is about to await) while the thread's next step is the `wake` (or it has
    /// none left): its next hook, which runs with the monitor (lock) held again, holds it
    /// in further waits on the object ([`Replay::wait_on`]). Null for none.
    waited: Cell<jobject>,
    /// `waited` is a `Condition`.
    waited_condition: Cell<bool>,
    /// The thread is in one of those waits (its MonitorWaited events are its own).
    own_wait: Cell<bool>,
}

thread_local! {
    static ME: Me = const {
        Me {
            tid: Cell::new(NONE),
            thread: Cell::new(FREE),
            count: Cell::new(0),
            unsettled: Cell::new(false),
            last_before_op: Cell::new(false),
            last_hold: Cell::new(false),
            early: Cell::new(0),
            maybe_early: Cell::new(0),
            waited: Cell::new(std::ptr::null_mut()),
            waited_condition: Cell::new(false),
            own_wait: Cell::new(false),
        }
    };
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Kinds whose hook runs before the operation (the publishing hooks, see
/// `agent/src/runtime.rs`); the others'
/// hooks run after it.
fn hook_before_op(k: Kind) -> bool {
    matches!(
        k,
        Kind::Write
            | Kind::VWrite
            | Kind::Release
            | Kind::Fork
            | Kind::Wait
            | Kind::Notify
            | Kind::NotifyAll
            | Kind::Branch
            | Kind::Enter
            | Kind::Exit
    )
}

/// Loads the schedule and turns replay mode on (called from Agent_OnLoad, after the
/// recorder is installed). `Err` names the file and what is wrong with it.
pub fn start(file: &Path, dir: &Path, timeout_secs: f64, host: Host) -> Result<(), String> {
    let text =
        std::fs::read_to_string(file).map_err(|e| format!("replay={}: {e}", file.display()))?;
    let s = Schedule::parse(&text).map_err(|e| format!("replay={}: {e}", file.display()))?;
    let n = s.steps.len();
    let mut by_thread = vec![Vec::new(); s.threads.len()];
    let mut loc_steps: HashMap<String, Vec<usize>> = HashMap::new();
    for (j, st) in s.steps.iter().enumerate() {
        by_thread[st.thread as usize].push(j);
        loc_steps.entry(st.loc.clone()).or_default().push(j);
    }
    // Location 0 is "no location" (begin, end), interned before any hook runs.
    let loc_ids: Vec<AtomicU32> = s
        .steps
        .iter()
        .map(|st| AtomicU32::new(if st.loc.is_empty() { 0 } else { NONE }))
        .collect();
    let start = Instant::now();
    let r = Replay {
        host,
        by_thread,
        loc_ids,
        loc_steps,
        state: (0..n).map(|_| AtomicU8::new(PENDING)).collect(),
        emitted_at: (0..n).map(|_| AtomicU64::new(0)).collect(),
        frontier: AtomicUsize::new(0),
        advance: Mutex::new(()),
        unsettled: Mutex::new(Vec::new()),
        unsettled_n: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        decided: Mutex::new(false),
        start,
        deadline: start + Duration::from_secs_f64(timeout_secs),
        dir: dir.to_path_buf(),
        naming: Mutex::new(Naming::default()),
        seq: AtomicU64::new(0),
        first: Mutex::new(None),
        locs: Mutex::new(HashMap::from([(0, String::new())])),
        jdk_locs: Mutex::new(Default::default()),
        debug: std::env::var_os("JRACE_REPLAY_DEBUG").is_some(),
        released: AtomicBool::new(false),
        s,
    };
    if REPLAY.set(r).is_err() {
        return Err("replay mode started twice".into());
    }
    ACTIVE.store(true, Ordering::SeqCst);
    let _ = std::fs::remove_file(dir.join(RESULT_FILE));
    let spawned = std::thread::Builder::new()
        .name("jrace-replay-watchdog".into())
        .spawn(|| {
            let Some(r) = REPLAY.get() else { return };
            while !r.stop.load(Ordering::Acquire) {
                let now = Instant::now();
                if now >= r.deadline {
                    r.finish(Status::Timeout);
                    return;
                }
                std::thread::sleep((r.deadline - now).min(Duration::from_millis(20)));
            }
        });
    if let Err(e) = spawned {
        return Err(format!("replay: cannot start the watchdog thread: {e}"));
    }
    Ok(())
}

/// The recorder named a new thread (trace id `tid`, Java name `name`); called in
/// first-seen order.
pub fn thread_named(tid: u32, name: &str) {
    if !ACTIVE.load(Ordering::Relaxed) {
        return;
    }
    let Some(r) = REPLAY.get() else { return };
    let mut n = lock(&r.naming);
    let c = n.seen.entry(name.to_string()).or_insert(0);
    let occ = *c;
    *c += 1;
    if let Some(i) =
        r.s.threads
            .iter()
            .position(|t| t.name == name && t.occurrence == occ)
    {
        n.tids.insert(tid, i);
    }
}

/// The recorder interned a location token under `id`.
pub fn loc_named(id: u32, token: &str, jdk: bool) {
    if !ACTIVE.load(Ordering::Relaxed) {
        return;
    }
    let Some(r) = REPLAY.get() else { return };
    if jdk {
        lock(&r.jdk_locs).insert(id);
    }
    lock(&r.locs).insert(id, token.to_string());
    if let Some(steps) = r.loc_steps.get(token) {
        for &j in steps {
            r.loc_ids[j].store(id, Ordering::Release);
        }
    }
}

/// The recorder appended an event to thread `tid`'s log (called on that thread).
#[inline]
pub fn emitted(tid: u32, kind: Kind, loc: u32, value: Option<i64>) {
    if !ACTIVE.load(Ordering::Relaxed) {
        return;
    }
    let Some(r) = REPLAY.get() else { return };
    // The JDK's own events are neither scheduled nor counted.
    if lock(&r.jdk_locs).contains(&loc) {
        return;
    }
    let _ = ME.try_with(|me| {
        if me.tid.get() != tid {
            me.tid.set(tid);
            me.count.set(0);
            me.unsettled.set(false);
            me.thread
                .set(lock(&r.naming).tids.get(&tid).copied().unwrap_or(FREE));
        }
        let k = me.count.get() + 1;
        me.count.set(k);
        me.last_before_op
            .set(hook_before_op(kind) && kind != Kind::Branch);
        me.last_hold.set(false);
        let t = me.thread.get();
        if t == FREE || r.stop.load(Ordering::Acquire) {
            return;
        }
        if kind == Kind::End && me.unsettled.replace(false) {
            r.settle(t);
        }
        r.on_event(me, t, k, kind, loc, value);
    });
}

/// A hook's entry or exit on this thread (`env` its JNI environment): hold it while its
/// next event must wait. Whether a replay is on (so the thread may have been held).
#[inline]
pub fn gate(p: Point, env: *mut JNIEnv) -> bool {
    if !ACTIVE.load(Ordering::Relaxed) {
        return false;
    }
    let Some(r) = REPLAY.get() else { return false };
    // Exit gates run outside the hook's own panic guard.
    let _ = std::panic::catch_unwind(|| gate_in(r, p, env));
    true
}

fn gate_in(r: &Replay, p: Point, env: *mut JNIEnv) {
    let _ = ME.try_with(|me| {
        // The object of a `wait` that just ended, when this is the first hook after it.
        let waited = if p == Point::Entry && !env.is_null() {
            WaitedRef(me.waited.replace(std::ptr::null_mut()), env)
        } else {
            WaitedRef(std::ptr::null_mut(), env)
        };
        let t = me.thread.get();
        if t == FREE || me.tid.get() == NONE {
            return;
        }
        if p == Point::Entry && me.unsettled.replace(false) {
            r.settle(t);
        }
        if r.stop.load(Ordering::Acquire) {
            return;
        }
        if p == Point::Exit {
            me.maybe_early.set(0);
            if let Some(j) = me.early.replace(0).checked_sub(1) {
                // Hold the operation of a write (release, ...) emitted before its turn.
                r.debug(|| format!("thread {t} emitted step {j} early, holds"));
                r.wait(|| r.ready(j, t));
            }
            // The operation of the event just emitted (a write, release, fork, ...)
            // follows this hook and must happen, unless the schedule says no other
            // thread needs it first: otherwise hold at the next hook's entry instead.
            if me.last_before_op.get() && !me.last_hold.get() {
                return;
            }
        }
        // The next event is k = count + 1. Branches are invisible to other threads and
        // access hooks emit their implicit branch together with the access, so the gate
        // is for the next step that is not a branch.
        let steps = &r.by_thread[t];
        let next = me.count.get() as usize;
        let target = steps
            .get(next..)
            .unwrap_or(&[])
            .iter()
            .copied()
            .find(|&j| !r.invisible(j));
        if !waited.0.is_null() && target.is_none_or(|j| r.s.steps[j].kind == Kind::Wake) {
            // The first hook since `wait` ended: the monitor is held again. Until the
            // wake's turn, wait on it (releasing it) instead of holding it.
            let condition = me.waited_condition.get();
            // SAFETY: env is this thread's; `waited` a live global reference.
            unsafe {
                r.wait_on(me, env, waited.0, condition, || {
                    target.is_some_and(|j| r.ready(j, t))
                });
            }
        }
        match target {
            Some(j) => {
                if p == Point::Exit && hook_before_op(r.s.steps[j].kind) {
                    return;
                }
                r.debug(|| format!("{p:?}: thread {t} holds for step {j}"));
                let blocked = !r.ready(j, t);
                r.wait(|| r.ready(j, t));
                if p == Point::Entry && blocked && !hook_before_op(r.s.steps[j].kind) {
                    me.maybe_early.set(j + 1);
                }
                r.debug(|| format!("{p:?}: thread {t} runs step {j}"));
            }
            None => {
                // Past its part of the schedule: held until the replay is decided.
                r.debug(|| format!("{p:?}: thread {t} done, held"));
                r.wait(|| false);
            }
        }
    });
}

/// A global reference [`gate_in`] took from [`Me::waited`], deleted when it is done.
struct WaitedRef(jobject, *mut JNIEnv);

impl Drop for WaitedRef {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: a global reference of this thread's JNI environment, not used again.
            unsafe { jni!(self.1, DeleteGlobalRef, self.0) };
        }
    }
}

/// JVMTI MonitorWaited: the thread's `Object.wait(object)` is over; it re-enters the
/// monitor next. When its next step is the `wake` (or it has no step left), its next hook
/// must not hold it as usual: it would hold the monitor, which the threads whose steps
/// come first may need. Nor can it be held here, before it re-enters: HotSpot wakes one
/// waiter (its "successor") per monitor exit and lets the others sleep until the next
/// exit, so holding the successor could keep a thread whose turn it is asleep. So the
/// object is noted, and the next hook waits on it ([`Replay::wait_on`]).
///
/// # Safety
/// `env` is the calling thread's JNI environment and `object` a live reference.
pub unsafe fn monitor_waited(env: *mut JNIEnv, object: jobject) {
    note_wait(env, object, false);
}

/// `Condition.await` on `cond`, its `wait` just emitted: the same as [`monitor_waited`]
/// for the lock, which the thread holds again when `await` returns (no JVMTI event says
/// when that is, so the object is noted before it awaits).
///
/// # Safety
/// `env` is the calling thread's JNI environment and `cond` a live reference.
pub unsafe fn awaiting(env: *mut JNIEnv, cond: jobject) {
    note_wait(env, cond, true);
}

/// Notes `object` in [`Me::waited`] when the calling thread, matched and gated, has the
/// `wake` as its next step (or no step left), unless the wait is one of its own
/// ([`Replay::wait_on`]).
///
/// # Safety
/// `env` is the calling thread's JNI environment and `object` a live reference.
unsafe fn note_wait(env: *mut JNIEnv, object: jobject, condition: bool) {
    if !ACTIVE.load(Ordering::Relaxed) || env.is_null() || object.is_null() {
        return;
    }
    let Some(r) = REPLAY.get() else { return };
    let _ = ME.try_with(|me| {
        let t = me.thread.get();
        if me.own_wait.get() || t == FREE || me.tid.get() == NONE {
            return;
        }
        if r.stop.load(Ordering::Acquire) {
            return;
        }
        let next = me.count.get() as usize;
        let wake_next = r.by_thread[t]
            .get(next)
            .is_none_or(|&j| r.s.steps[j].kind == Kind::Wake);
        if wake_next {
            let g = jni!(env, NewGlobalRef, object);
            let old = me.waited.replace(g);
            me.waited_condition.set(condition);
            if !old.is_null() {
                jni!(env, DeleteGlobalRef, old);
            }
        }
    });
}

/// VMDeath: stop gating; the result says `exited` unless something was decided.
pub fn vm_death() {
    if !ACTIVE.load(Ordering::Relaxed) {
        return;
    }
    if let Some(r) = REPLAY.get() {
        let status = if Instant::now() >= r.deadline {
            Status::Timeout
        } else {
            Status::Exited
        };
        r.finish(status);
    }
}

impl Replay {
    fn debug(&self, msg: impl FnOnce() -> String) {
        if self.debug {
            (self.host.log)(&format!("replay: {}", msg()));
        }
    }

    fn nanos(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    fn step_ref(&self, j: usize) -> StepRef {
        let st = &self.s.steps[j];
        StepRef {
            thread: self.s.threads[st.thread as usize].trace_name.clone(),
            k: st.k,
            kind: st.kind,
            loc: st.loc.clone(),
        }
    }

    fn on_event(&self, me: &Me, t: usize, k: u32, kind: Kind, loc: u32, value: Option<i64>) {
        let steps = &self.by_thread[t];
        let step = steps.get(k as usize - 1).copied();
        // Events another thread could observe (not begin, end, branch or a class-init
        // check): they count between the racing accesses and are the ones gated.
        let countable = !matches!(kind, Kind::Begin | Kind::End | Kind::Branch)
            && !step.is_some_and(|j| self.s.steps[j].init);
        let seq = if countable {
            self.seq.fetch_add(1, Ordering::AcqRel) + 1
        } else {
            self.seq.load(Ordering::Acquire)
        };
        let Some(j) = step else {
            return;
        };
        let st = &self.s.steps[j];
        let n = self.s.steps.len();
        let requests = n - self.s.deadlock;
        me.last_hold.set(st.hold);
        if st.kind != kind || self.loc_ids[j].load(Ordering::Acquire) != loc {
            let found_loc = lock(&self.locs).get(&loc).cloned().unwrap_or_default();
            self.finish(Status::Diverged {
                at: self.step_ref(j),
                found_kind: kind,
                found_loc,
            });
            return;
        }
        if countable && !self.ready(j, t) {
            me.early.set(j + 1);
        }
        self.emitted_at[j].store(self.nanos(), Ordering::Release);
        if hook_before_op(kind) && kind != Kind::Branch {
            lock(&self.unsettled).push(j);
            self.unsettled_n.fetch_add(1, Ordering::AcqRel);
            self.state[j].store(EMITTED, Ordering::Release);
            me.unsettled.set(true);
        } else {
            self.state[j].store(DONE, Ordering::Release);
        }
        let frontier = {
            let _g = lock(&self.advance);
            let mut f = self.frontier.load(Ordering::Acquire);
            while f < self.state.len() && self.state[f].load(Ordering::Acquire) != PENDING {
                f += 1;
            }
            self.frontier.store(f, Ordering::Release);
            f
        };
        let ran = || RanAccess {
            thread: self.s.threads[t].trace_name.clone(),
            k,
            kind,
            loc: st.loc.clone(),
            value,
        };
        if self.s.deadlock > 0 {
            if j >= requests {
                // A request got its lock: this run does not deadlock there.
                self.finish_with(Status::NoDeadlock, Some(ran()), None, None);
            } else if frontier >= requests {
                self.release();
            }
        } else if j == n - 2 {
            *lock(&self.first) = Some((seq, ran()));
        } else if j == n - 1 {
            let first = lock(&self.first).take();
            let second = Some(ran());
            let note = (me.maybe_early.get() == j + 1).then(|| {
                format!(
                    "{}'s {} happened before replay could hold its thread (no hook before it), so it may have run before the first access",
                    self.s.threads[t].trace_name,
                    kind.name()
                )
            });
            let (status, first) = match first {
                Some((s1, a)) if seq == s1 + 1 => (Status::Reproduced, Some(a)),
                Some((s1, a)) => (Status::Separated(Some(seq - s1 - 1)), Some(a)),
                None => (Status::Separated(None), None),
            };
            self.finish_with(status, first, second, note);
        }
    }

    /// Steps other threads cannot observe and a thread is not gated for: branches, and
    /// class-initialization checks (`init`), which the hook of the access after them
    /// emits, so that the access is gated instead.
    fn invisible(&self, j: usize) -> bool {
        let st = &self.s.steps[j];
        st.kind == Kind::Branch || st.init
    }

    /// This thread reached a new hook: its emitted steps' operations have happened.
    fn settle(&self, t: usize) {
        let mut u = lock(&self.unsettled);
        u.retain(|&j| {
            if self.s.steps[j].thread as usize == t {
                self.state[j].store(DONE, Ordering::Release);
                self.unsettled_n.fetch_sub(1, Ordering::AcqRel);
                false
            } else {
                true
            }
        });
    }

    /// Whether thread `t` may run step `j`: every step before it has run, except its own
    /// (branches) that it emits on the way and other threads' branches (which nothing
    /// else can observe).
    fn ready(&self, j: usize, t: usize) -> bool {
        // A deadlock's requests wait only for the steps before all of them.
        let n = self.s.steps.len();
        let j = if self.s.deadlock > 0 && j >= n - self.s.deadlock {
            n - self.s.deadlock
        } else {
            j
        };
        let mut f = self.frontier.load(Ordering::Acquire);
        while f < j {
            let st = &self.s.steps[f];
            if st.thread as usize != t
                && !self.invisible(f)
                && self.state[f].load(Ordering::Acquire) == PENDING
            {
                return false;
            }
            f += 1;
        }
        if self.unsettled_n.load(Ordering::Acquire) == 0 {
            return true;
        }
        let now = self.nanos();
        let u = lock(&self.unsettled);
        !u.iter().any(|&i| {
            i < j
                && self.s.steps[i].thread as usize != t
                && now.saturating_sub(self.emitted_at[i].load(Ordering::Acquire))
                    < SETTLE.as_nanos() as u64
        })
    }

    /// Holds the calling thread, which holds the monitor of `obj` again after its `wait`
    /// ended, until `ready`, the end of gating, or the deadline, in timed waits on `obj`
    /// (1 ms each) that leave the monitor to the other threads meanwhile: to the program,
    /// a wait that lasted longer. An exception from those waits (the thread does not
    /// hold the monitor after all, or it was interrupted: its interrupt is set again)
    /// ends them; the caller then holds the thread as usual.
    ///
    /// # Safety
    /// `env` is the calling thread's JNI environment, `obj` a live reference.
    unsafe fn wait_on(
        &self,
        me: &Me,
        env: *mut JNIEnv,
        obj: jobject,
        condition: bool,
        ready: impl FnMut() -> bool,
    ) {
        self.wait_with(ready, |_| {
            me.own_wait.set(true);
            let waited = (self.host.wait)(env, obj, condition);
            me.own_wait.set(false);
            if !waited {
                self.debug(|| "wait on the monitor failed; held as usual".to_string());
            }
            waited
        });
    }

    /// Holds the calling thread until `ready`, the end of gating, or the deadline.
    fn wait(&self, ready: impl FnMut() -> bool) {
        self.wait_with(ready, |i| {
            if i < 64 {
                std::hint::spin_loop();
            } else if i < 128 {
                std::thread::yield_now();
            } else if i < 1000 {
                std::thread::sleep(Duration::from_micros(50));
            } else {
                std::thread::sleep(Duration::from_micros(500));
            }
            true
        });
    }

    /// Until `ready`, the end of gating, or the deadline, calls `pause` with the number
    /// of pauses so far; stops early when `pause` returns false.
    fn wait_with(&self, mut ready: impl FnMut() -> bool, mut pause: impl FnMut(u32) -> bool) {
        let mut i = 0u32;
        loop {
            if self.stop.load(Ordering::Acquire) || (self.host.stopped)() {
                return;
            }
            if ready() {
                return;
            }
            if Instant::now() >= self.deadline {
                self.finish(Status::Timeout);
                return;
            }
            if !pause(i) {
                return;
            }
            i = i.saturating_add(1);
        }
    }

    /// Every step before a deadlock's requests has run: the requesting threads are let go.
    /// Says so in the result file (not a decision: gating goes on for the other threads).
    fn release(&self) {
        if self.released.swap(true, Ordering::AcqRel) || *lock(&self.decided) {
            return;
        }
        let total = self.s.steps.len();
        self.write_result(&ReplayResult {
            status: Status::Released,
            first: None,
            second: None,
            waiting: None,
            done: (total - self.s.deadlock) as u64,
            total: total as u64,
            note: None,
            pid: Some(std::process::id()),
        });
    }

    fn finish(&self, status: Status) {
        let first = lock(&self.first).as_ref().map(|(_, a)| a.clone());
        self.finish_with(status, first, None, None);
    }

    /// Decides the outcome (the first decision wins), writes the result, opens all gates.
    fn finish_with(
        &self,
        status: Status,
        first: Option<RanAccess>,
        second: Option<RanAccess>,
        note: Option<String>,
    ) {
        let mut decided = lock(&self.decided);
        if *decided {
            return;
        }
        *decided = true;
        self.stop.store(true, Ordering::SeqCst);
        let done = self.frontier.load(Ordering::Acquire);
        let total = self.s.steps.len();
        let result = ReplayResult {
            waiting: (done < total && !matches!(status, Status::Reproduced))
                .then(|| self.step_ref(done)),
            status,
            first,
            second,
            done: done as u64,
            total: total as u64,
            note,
            pid: Some(std::process::id()),
        };
        self.write_result(&result);
    }

    /// Writes `result` to the result file (replacing it at once).
    fn write_result(&self, result: &ReplayResult) {
        let text = result.to_text();
        let tmp = self.dir.join(format!("{RESULT_FILE}.tmp"));
        let path = self.dir.join(RESULT_FILE);
        let written = std::fs::write(&tmp, &text).and_then(|_| std::fs::rename(&tmp, &path));
        match written {
            Ok(()) => (self.host.log)(&format!("replay: {}", text.lines().nth(1).unwrap_or(""))),
            Err(e) => (self.host.log)(&format!("replay: cannot write {}: {e}", path.display())),
        }
    }
}
