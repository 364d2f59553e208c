//! The recorder behind `jrace.rt.R`: one native per hook, writing events into the calling
//! thread's own log.
//!
//! # The hot path touches only per-thread state
//! A hook finds its thread's [`ThreadState`] through a thread-local, locks that state's own
//! mutex (uncontended: only `VMDeath` ever takes it from another thread, to seal the logs
//! of threads still running at exit), looks its site up in an append-only table (no lock),
//! and appends to the thread's memory-mapped log. Names (variables, locks, threads) are
//! interned through a per-thread cache in front of one global table; only a name's first
//! use takes the global lock and writes its metadata record, before the event that uses it.
//!
//! # Stamps: how the global order is recovered
//! Every event carries a stamp (the TSC divided by 32 when the kernel's clocksource is the
//! TSC, else nanoseconds on `CLOCK_MONOTONIC`; both consistent across CPUs), never
//! decreasing within a thread; the reader merges threads by `(stamp, thread)`. Hooks that
//! *publish* (writes, releases, fork, notify, wait, volatile writes) run before the
//! operation and take their stamp first; hooks that *observe* (reads, acquires, join,
//! wake, volatile reads) run after it. So whenever one thread's operation is seen by
//! another's, the first stamp was taken before the second: a read sorts after the write it
//! saw, an acquire after the release it follows. A field or array read keeps the time its
//! hook *began* (and so does the `begin` a thread's first hook writes when it sets up the
//! thread's log): the hook's slow work (that set-up, a first stack trace, a new name) must
//! not let a write the read did not see sort before it. Synchronization events
//! additionally pass through one global `fetch_max` (a shared word touched only by
//! synchronization, never by plain accesses), which breaks the ties a coarse clock could
//! leave between a release and the acquire after it. Two plain accesses of different
//! threads closer in time than the clock's resolution may sort either way; only their
//! recorded values can then disagree with the order, and only for a racy pair.
//!
//! # Object identity
//! Object ids are JVMTI tags handed out from a never-reused 63-bit counter (per-thread
//! blocks of ids, so the counter is touched once per 1024 new objects). A tag lives and
//! dies with its object, so two live objects never share an id (unlike identity hashes).
//! Tagging a fresh object takes a global lock, so two threads cannot give it two ids.
//!
//! # Layout
//! This file holds the state: the site table, the clock, the name tables, the [`Agent`]
//! and each thread's [`ThreadState`], and the context a hook works with (`Cx`). What is
//! done with it is split by concern: `agent` (installing, metadata, cut, shutdown), `hooks`
//! (running a hook on its thread's state, a thread's end), `emit` (stamping and appending
//! an event), `identity` (object ids, variables, locks), `access` (fields, statics,
//! arrays), `sync` (locks, monitors, wait/notify, calls, fork/join), `models` (the JDK's
//! collections and locks), `ordered` (the JDK's own synchronization in call order),
//! `barrier` (BarrierPairs), `resolve` (what a site is) and `natives` (the JNI entry
//! points of `jrace.rt.R`).

use crate::jvmti::*;
use crate::options::AgentOptions;
use crate::sites::{ClassInfo, Location, Site, SiteKind};
use crate::{jni, jvmti};
use jrace_trace::binlog::{Table, ThreadLog, TraceWriter};
use jrace_trace::model::{Event, Kind, LocDetail};
use jrace_trace::tree::{ThreadFilter, VarOwners};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_void, CStr, CString};
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

mod access;
mod agent;
mod barrier;
mod defs;
pub(crate) use defs::NO_DEF;
mod emit;
mod hooks;
mod identity;
mod models;
mod natives;
mod net;
mod ordered;
mod resolve;
mod sync;
pub use barrier::BpStats;
use hooks::*;
pub use hooks::{thread_end, thread_start, vthread_ended, vthread_mounted, vthread_unmounting};
use models::{ClassModel, Ret, When};
pub use natives::register_natives;
use natives::*;
use resolve::*;
pub use resolve::{class_signature, describe_class, field_flags};

const ACC_FINAL: u16 = 0x0010;
const ACC_VOLATILE: u16 = 0x0040;

// ---------------------------------------------------------------------------------------
// Sites

const SEG_BITS: u32 = 12;
const SEG: usize = 1 << SEG_BITS;
const MAX_SEGS: usize = 1 << 16;

/// A registered site with its location id and, once first executed, its resolution.
pub struct SiteEntry {
    pub site: Site,
    pub loc: u32,
    resolved: OnceLock<Resolved>,
    /// Bit t: thread t (< 64) has recorded this site's call stack.
    stack_seen: AtomicU64,
    /// Bit t: thread t (< 64) is past the class-initialization edge of this site's field
    /// ([`Cx::class_init_edge`]): a bit test instead of a look-up per access.
    init_seen: AtomicU64,
    /// The definition of the class the site is in ([`defs`]; `NO_DEF` for the JDK's).
    def: u32,
    /// A site of a JDK class whose monitors are locks only
    /// ([`crate::jdksync::locks_only_class`]).
    locks_only: bool,
}

/// What a site records, decided at its first execution (when the classes it names are
/// loaded and described).
#[derive(Clone, Copy, Debug)]
enum Resolved {
    /// Record nothing (final fields).
    Skip,
    /// A field: its static name, whether volatile, and the class-initialization marker
    /// (static name) of the declaring class when that class has an instrumented `<clinit>`.
    Field {
        static_id: u32,
        volatile: bool,
        init: Option<u32>,
        /// False for final static fields: only the class-initialization edge matters.
        record: bool,
    },
    /// An array element whose static name is the array type.
    Array {
        static_id: u32,
        /// The instruction tells the array type (`iaload`: `int[]`). `baload`/`bastore`
        /// serve `byte[]` and `boolean[]` alike, and `aaload`/`aastore` every array of
        /// references: their array's class tells ([`Cx::element_static`]).
        exact: bool,
    },
    Call(CallOp),
    /// A use of a class that initialized it ([`SiteKind::ClassUse`]): the initialization
    /// markers of the class and its superclasses with an instrumented `<clinit>`, nearest
    /// first ([`NO_MARKER`] in the slots left).
    ClassUse {
        markers: [u32; 4],
    },
    /// A BarrierPair call site: the callee's method id.
    Barrier {
        method: u32,
    },
    Other,
}

/// An empty slot of [`Resolved::ClassUse`].
const NO_MARKER: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CallOp {
    Start,
    Join,
    Wait,
    Notify,
    NotifyAll,
    /// `Thread.interrupt` (before) and `isInterrupted` returning true (after).
    Interrupt,
    Interrupted,
    /// `Thread.interrupted()` (static, from the JDK hooks): whatever it returns, a read of
    /// the current thread's `$interrupt`.
    InterruptedNow,
    /// `isLocked()`/`isWriteLocked()` returned (from the JDK hooks): [`Cx::lock_probe`].
    LockProbe,
    /// `Thread.join(long)` returning (from the JDK hooks): a join if the thread ended.
    JoinNow,
    /// An exception handler that may have caught an InterruptedException.
    Caught,
    /// Executor hand-off, from the JDK hooks (jdkhooks.rs).
    TaskSubmit,
    TaskStart,
    TaskEnd,
    /// The JVM's shutdown after the last non-daemon thread ended (`Shutdown.shutdown`,
    /// from the JDK hooks): the thread that runs it joins every ended non-daemon thread.
    VmShutdown,
    /// A TCP socket about to send (or close), and one that received (jdkhooks.rs).
    StreamSend,
    StreamReceive,
    /// The finalizer thread is about to finalize an object (jdkhooks.rs).
    Finalizing,
    /// Anything else: what it means depends on the receiver's class ([`models`]).
    Library,
}

/// Append-only: segments are allocated once and never move, so readers index without a
/// lock.
struct SiteTable {
    segs: Box<[AtomicPtr<OnceLock<SiteEntry>>]>,
    len: Mutex<u32>,
}

impl SiteTable {
    fn new() -> SiteTable {
        SiteTable {
            segs: (0..MAX_SEGS)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            len: Mutex::new(0),
        }
    }

    #[inline]
    fn get(&self, id: i32) -> Option<&SiteEntry> {
        let id = u32::try_from(id).ok()? as usize;
        let seg = self.segs.get(id >> SEG_BITS)?.load(Ordering::Acquire);
        if seg.is_null() {
            return None;
        }
        // SAFETY: a non-null segment pointer came from a leaked boxed slice of SEG cells.
        unsafe { (*seg.add(id & (SEG - 1))).get() }
    }

    /// Adds an entry; `None` when the table is full.
    fn push(&self, e: SiteEntry) -> Option<i32> {
        let mut len = lock(&self.len);
        let id = *len as usize;
        let s = id >> SEG_BITS;
        if s >= MAX_SEGS || id > i32::MAX as usize {
            return None;
        }
        let mut seg = self.segs[s].load(Ordering::Acquire);
        if seg.is_null() {
            let cells: Box<[OnceLock<SiteEntry>]> = (0..SEG).map(|_| OnceLock::new()).collect();
            seg = Box::leak(cells).as_mut_ptr();
            self.segs[s].store(seg, Ordering::Release);
        }
        // SAFETY: as in `get`; the cell is fresh (ids are handed out once, under the lock).
        let _ = unsafe { (*seg.add(id & (SEG - 1))).set(e) };
        *len += 1;
        Some(id as i32)
    }
}

// ---------------------------------------------------------------------------------------
// Clock and GC epochs

/// Stamps: the TSC (in units of 32 cycles, ≈ 12 ns at 2.6 GHz) when the kernel itself
/// uses it as its clock source, which means it found it synchronized across CPUs;
/// otherwise `CLOCK_MONOTONIC` in nanoseconds (≈ 3× slower to read).
mod clock {
    use std::sync::OnceLock;
    use std::time::Instant;

    static TSC: OnceLock<Option<u64>> = OnceLock::new();

    fn tsc_base() -> Option<u64> {
        *TSC.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            {
                let src = std::fs::read_to_string(
                    "/sys/devices/system/clocksource/clocksource0/current_clocksource",
                )
                .unwrap_or_default();
                if src.trim() == "tsc" {
                    // SAFETY: rdtsc exists on every x86_64 CPU.
                    return Some(unsafe { core::arch::x86_64::_rdtsc() });
                }
            }
            None
        })
    }

    pub fn init() {
        tsc_base();
    }

    #[inline]
    pub fn now(start: Instant) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if let Some(Some(base)) = TSC.get() {
            // SAFETY: as above.
            return unsafe { core::arch::x86_64::_rdtsc() }.wrapping_sub(*base) >> 5;
        }
        start.elapsed().as_nanos() as u64
    }
}

/// Incremented when a stop-the-world garbage collection starts and when it finishes (odd
/// while one runs). Objects move only then (for the collectors with which
/// [`Agent::address_cache`] is on), so an object's address identifies it within one even
/// epoch.
static GC_EPOCH: AtomicU64 = AtomicU64::new(0);

pub fn gc_start() {
    GC_EPOCH.fetch_add(1, Ordering::AcqRel);
}
pub fn gc_finish() {
    GC_EPOCH.fetch_add(1, Ordering::AcqRel);
}

/// Whether the JVM's collector moves objects only in pauses: not ZGC or Shenandoah, whose
/// concurrent relocation would make an address cache unsafe.
fn collector_moves_only_in_pauses() -> bool {
    let mut text = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    for v in ["JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"] {
        if let Ok(s) = std::env::var(v) {
            text.extend_from_slice(s.as_bytes());
        }
    }
    let text = String::from_utf8_lossy(&text);
    !(text.contains("UseZGC") || text.contains("UseShenandoahGC") || text.contains('@'))
}

const ADDR_CACHE: usize = 4096;
/// Entries of a thread's [`ThreadState::var_cache`] (16 bytes each).
const VAR_CACHE_BITS: u32 = 12;
const VAR_CACHE: usize = 1 << VAR_CACHE_BITS;
/// Entries of [`Identity::array_statics`].
const ARRAY_CACHE_BITS: u32 = 6;
const ARRAY_CACHE: usize = 1 << ARRAY_CACHE_BITS;

/// Elements of one `System.arraycopy` recorded at most (the rest of a longer copy is not).
const ARRAYCOPY_MAX: i32 = 256;

/// Locks that make a modelled read-modify-write (vread then vwrite) atomic per variable.
const RMW_STRIPES: usize = 64;

/// Each thread adds its log's growth to the global byte count every this many events.
const SIZE_CHECK_EVERY: u32 = 4096;

// ---------------------------------------------------------------------------------------
// Global state

/// Global names: each is interned once and its metadata record written before first use.
#[derive(Default)]
struct Names {
    statics: FxHashMap<String, u32>,
    static_names: Vec<String>,
    locks: FxHashMap<u64, u32>,
    locs: FxHashMap<String, u32>,
    /// Java thread id (`Thread.getId`) -> dense trace thread id.
    threads: FxHashMap<i64, u32>,
    thread_names: FxHashSet<String>,
    forked: FxHashSet<u32>,
    /// Non-daemon threads whose end is recorded (joined by [`CallOp::VmShutdown`]).
    ended: Vec<u32>,
    /// Every thread whose end is recorded: only those can have been joined.
    finished: FxHashSet<u32>,
    /// Classes (static id of their marker) with an instrumented `<clinit>`.
    clinit_classes: FxHashSet<u32>,
    /// ... whose `<clinit>` has completed.
    init_done: FxHashSet<u32>,
    /// BarrierPair names: methods, objects, reachable sets.
    bp: barrier::NamesBp,
}

/// Marks an array element's key in [`VarTable`]: (array object id | `ARRAY_VAR`, index).
const ARRAY_VAR: u64 = 1 << 63;

/// Variable ids: key (object id, static id of the field; 0 for a static field) or (array
/// id | [`ARRAY_VAR`], index) -> dense id from one counter. A database run meets millions
/// of variables from every thread: the table is sharded by key so that those threads rarely
/// wait for each other (one lock for all of them was the recorder's most contended lock).
/// A new variable's record is written under its shard's lock, so no thread can use the id
/// before it is named.
struct VarTable {
    shards: Box<[Mutex<VarShard>]>,
    next: AtomicU32,
}

/// A variable key's hash: its top bits pick a [`VarTable`] shard and a slot of a thread's
/// [`ThreadState::var_cache`].
#[inline]
fn var_hash(key: (u64, u32)) -> u64 {
    (key.0 ^ ((key.1 as u64) << 40)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// One shard of [`VarTable`]: key -> id.
type VarShard = FxHashMap<(u64, u32), u32>;

impl VarTable {
    const SHARDS: usize = 64;

    fn new() -> VarTable {
        VarTable {
            shards: (0..Self::SHARDS).map(|_| Mutex::default()).collect(),
            next: AtomicU32::new(0),
        }
    }

    fn shard(&self, key: (u64, u32)) -> &Mutex<VarShard> {
        &self.shards[(var_hash(key) >> 58) as usize % Self::SHARDS]
    }

    /// The id of `key`; a new one is named by `name(id)` before any thread can see it.
    fn intern(&self, key: (u64, u32), name: impl FnOnce(u32)) -> u32 {
        let mut m = lock(self.shard(key));
        if let Some(&v) = m.get(&key) {
            return v;
        }
        let v = self.next.fetch_add(1, Ordering::Relaxed);
        name(v);
        m.insert(key, v);
        v
    }

    fn get(&self, key: (u64, u32)) -> Option<u32> {
        lock(self.shard(key)).get(&key).copied()
    }
}

/// JNI handles looked up once in VMInit.
struct Java {
    thread_class: jclass,
    get_id: jmethodID,
    get_name: jmethodID,
    is_alive: jmethodID,
    is_daemon: jmethodID,
    current_thread: jmethodID,
    reentrant_lock: jclass,
    rl_sync: jfieldID,
    read_lock: jclass,
    read_lock_sync: jfieldID,
    write_lock: jclass,
    write_lock_sync: jfieldID,
    /// `ReentrantReadWriteLock` and its `sync` (the lock its read and write locks share).
    rw_lock: jclass,
    rw_lock_sync: jfieldID,
    condition: jclass,
    condition_owner: jfieldID,
    /// `java.lang.ref.Reference.referent` (null if missing: finalizers not modelled).
    referent: jfieldID,
    interrupted_exception: jclass,
    /// `Object.wait(long)`, `ConditionObject.awaitNanos(long)` and `Thread.interrupt()`,
    /// for replay's waits ([`replay_wait`]).
    object_wait: jmethodID,
    condition_await_nanos: jmethodID,
    thread_interrupt: jmethodID,
    /// `java.lang.Class`, and `jrace.rt.R` with what the recorder asks of it.
    class_class: jclass,
    r_class: jclass,
    flags_field: jfieldID,
    field_offset: jmethodID,
    /// `jdk.internal.misc.Unsafe`: the instance, `arrayBaseOffset` (whose result is an
    /// `int` in some JDKs, a `long` in later ones: `array_base_long`) and
    /// `arrayIndexScale`.
    unsafe_obj: jobject,
    array_base: jmethodID,
    array_base_long: bool,
    array_scale: jmethodID,
    /// List iterators whose element at each step the recorder names ([`models`]):
    /// `ArrayList$Itr` (also its `ListItr`) with its `lastRet` and list, `LinkedList$ListItr`
    /// with its `nextIndex`, `lastReturned`, `next` and list. Null when missing (such an
    /// iterator then reads its list's `$state` only).
    array_itr: jclass,
    array_itr_last: jfieldID,
    array_itr_list: jfieldID,
    linked_itr: jclass,
    linked_itr_index: jfieldID,
    linked_itr_last: jfieldID,
    linked_itr_next: jfieldID,
    linked_itr_list: jfieldID,
    /// Sublists whose `get(int)`/`set(int, E)` the recorder maps to their list's element:
    /// `ArrayList$SubList` and `AbstractList$SubList` (a `LinkedList`'s), with their
    /// `root`, `offset` (from the root's start, also for a sublist of a sublist) and
    /// `size`. Null when missing.
    array_sub: jclass,
    array_sub_fields: [jfieldID; 3],
    abstract_sub: jclass,
    abstract_sub_fields: [jfieldID; 3],
}

pub struct Agent {
    jvmti: *mut jvmtiEnv,
    pub opts: AgentOptions,
    pub writer: TraceWriter,
    start: Instant,
    sync_clock: AtomicU64,
    sites: SiteTable,
    names: Mutex<Names>,
    vars: VarTable,
    classes: Mutex<FxHashMap<String, ClassInfo>>,
    /// Classes defined by more than one loader ([`defs`]).
    defs: Mutex<defs::ClassDefs>,
    threads: Mutex<Vec<Arc<Mutex<ThreadState>>>>,
    tag_lock: Mutex<()>,
    next_ids: AtomicU64,
    rmw: [Mutex<()>; RMW_STRIPES],
    pub stopped: AtomicBool,
    /// Why the trace ends early was recorded ([`Agent::note_cut`]).
    cut_noted: AtomicBool,
    /// Stack frame (method, bci) -> location id.
    frames: Mutex<FxHashMap<(usize, i64), u32>>,
    /// Bytes of all logs, as last reported by their threads (for `max_mb`).
    bytes: AtomicU64,
    java: OnceLock<Java>,
    net: net::NetIds,
    /// Per-thread caches from object address to id are used (see [`GC_EPOCH`]).
    pub address_cache: AtomicBool,
    /// The JVM sends garbage-collection start/finish events (a prerequisite of the cache).
    pub gc_events: bool,
    errors: Mutex<Option<std::fs::File>>,
    pub stats: Stats,
    /// With `tree=MODE`: the variables' switch counts the threads' filters share.
    tree: Option<VarOwners>,
    /// Site flags shared with `R.FLAGS` ([`ordered`]).
    flags: Mutex<ordered::SiteFlags>,
    /// Class (or class object) id -> its `Unsafe` offsets ([`ordered`]).
    offsets: Mutex<FxHashMap<u64, Arc<ordered::Offsets>>>,
    /// `JRACE_DEBUG_JDKSTACK` set: record a call stack for the JDK's own accesses too (to
    /// find which JDK code orders threads: `jrace stats`/the trace's stacks show them).
    jdk_stacks: bool,
}

#[derive(Default)]
pub struct Stats {
    pub classes_seen: AtomicU64,
    pub classes_instrumented: AtomicU64,
    pub classes_failed: AtomicU64,
    pub methods_failed: AtomicU64,
    /// Methods instrumented with the synchronization hooks only (too large for all), or
    /// without their synchronized-method hooks (odd use of local 0).
    pub methods_reduced: AtomicU64,
    pub instrument_nanos: AtomicU64,
    /// JDK classes instrumented for their synchronization ([`crate::jdksync`]).
    pub jdk_classes: AtomicU64,
    pub events: AtomicU64,
    pub bp: barrier::BpStats,
    /// Accesses the TREE filter dropped (added as threads end).
    pub tree_dropped: AtomicU64,
}

// SAFETY: the JVMTI environment pointer and the JNI handles kept here (global references,
// method and field ids) are valid in every thread for the JVM's lifetime.
unsafe impl Send for Agent {}
unsafe impl Sync for Agent {}

static AGENT: OnceLock<Agent> = OnceLock::new();

pub fn agent() -> Option<&'static Agent> {
    AGENT.get()
}

/// Replay's wait of 1 ms on `obj`, whose monitor (or, for a `Condition`, whose lock) the
/// calling thread holds: `obj.wait(1)` or `obj.awaitNanos(1_000_000)`. False if it threw
/// (the exception cleared); when that was an interruption, the thread's interrupt status
/// is set again.
///
/// # Safety
/// `env` is the calling thread's JNI environment and `obj` a live reference.
pub unsafe fn replay_wait(env: *mut JNIEnv, obj: jobject, condition: bool) -> bool {
    let Some(java) = AGENT.get().and_then(|a| a.java.get()) else {
        return false;
    };
    if condition {
        let _ = jni!(
            env,
            CallLongMethod,
            obj,
            java.condition_await_nanos,
            1_000_000 as jlong
        );
    } else {
        jni!(env, CallVoidMethod, obj, java.object_wait, 1 as jlong);
    }
    let e = jni!(env, ExceptionOccurred);
    if e.is_null() {
        return true;
    }
    crate::jnienv::clear_exception(env);
    if jni!(env, IsInstanceOf, e, java.interrupted_exception) != 0 {
        let me = jni!(
            env,
            CallStaticObjectMethod,
            java.thread_class,
            java.current_thread
        );
        if !me.is_null() {
            jni!(env, CallVoidMethod, me, java.thread_interrupt);
            jni!(env, DeleteLocalRef, me);
        }
        crate::jnienv::clear_exception(env);
    }
    jni!(env, DeleteLocalRef, e);
    false
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn intern_static(a: &Agent, n: &mut Names, name: &str) -> u32 {
    if let Some(&id) = n.statics.get(name) {
        return id;
    }
    let id = n.static_names.len() as u32;
    n.statics.insert(name.to_string(), id);
    n.static_names.push(name.to_string());
    a.io(a.writer.name(Table::Static, id, name));
    id
}

// ---------------------------------------------------------------------------------------
// Per-thread state

pub struct ThreadState {
    tid: u32,
    /// A daemon thread (the JVM does not wait for it to end).
    daemon: bool,
    log: Option<ThreadLog>,
    last: u64,
    /// Monitors and locks held: object -> (re-entrancy count, lock id).
    held: FxHashMap<u64, (u32, u32)>,
    /// Monitors of locks-only JDK classes taken and not written yet (object, lock id,
    /// location): written right before the thread's next event, dropped with their exit
    /// when nothing happened inside ([`Cx::monitor_enter`]).
    lazy_locks: Vec<(u64, u32, u32)>,
    /// A `wait` whose `wake` is not recorded yet (the wait ended by an exception).
    pending_wake: Option<u32>,
    /// The start and timeout (ms) of the program's `Object.wait(long)` in progress.
    wait_timeout: Option<(std::time::Instant, u64)>,
    /// Monitors of the synchronized methods on the stack, innermost last.
    sync_stack: Vec<u64>,
    seen_init: FxHashSet<u32>,
    locks: FxHashMap<u64, u32>,
    models: FxHashMap<u64, ClassModel>,
    /// (Class id, part) -> the static id of `CLASS.$state`, or of `CLASS.$element` for a
    /// list's elements ([`models`]).
    state_names: FxHashMap<(u64, &'static str), u32>,
    /// Class id -> the field (a `jfieldID`, valid in every thread) through which its
    /// objects reach their collection (0: none), see [`models`].
    owner_fields: FxHashMap<u64, usize>,
    /// Object and variable ids: caches and the thread's block of fresh object ids.
    ident: Identity,
    /// When this thread next adds its log's growth to [`Agent::bytes`].
    size: SizeCheck,
    fixed: Vec<(&'static str, u32)>,
    /// Sites whose stack this thread recorded (threads with ids >= 64; see `stack_seen`).
    stacks_seen: FxHashSet<i32>,
    /// Locations of lock acquisitions whose stack this thread recorded (a deadlock report
    /// shows where each thread took and requests its locks).
    lock_stacks_seen: FxHashSet<u32>,
    /// What was read since the last branch (for implicit branches; see
    /// [`Cx::implicit_branch`]).
    since_branch: SinceBranch,
    /// With `tree=MODE`: this thread's TREE filter, and the accesses it dropped.
    tree: Option<Box<ThreadFilter>>,
    tree_dropped: u64,
    /// Open BarrierPairs and the reachable-set walk's caches.
    bp: barrier::ThreadBp,
    /// Modelled calls under way, innermost last ([`ordered`]).
    open_calls: Vec<ordered::OpenCall>,
    /// Class id -> `Unsafe` offsets (a cache of [`Agent::offsets`]).
    offsets: FxHashMap<u64, Arc<ordered::Offsets>>,
    /// The object this thread last began to finalize (0: none): its fields' accesses are
    /// ordered after the program's ([`Cx::finalizing`]).
    finalizee: u64,
}

/// A thread's object and variable ids ([`Cx::obj`], [`Cx::var`]).
struct Identity {
    /// The thread's block of fresh object ids: next, end.
    ids: (u64, u64),
    /// Object address -> id, valid during GC epoch `cache_epoch`.
    addr_cache: Box<[(usize, u64)]>,
    cache_epoch: u64,
    /// Variable key -> id, as this thread interned them.
    vars: FxHashMap<(u64, u32), u32>,
    /// A direct-mapped cache of the types of the arrays this thread accessed whose type
    /// the instruction does not tell, and of `System.arraycopy`'s arrays: (object id,
    /// static id, element kind), id 0 when empty, kind 0 when the class could not be told.
    array_statics: Box<[(u64, u32, u8)]>,
    /// Array class name (`java.lang.String[]`) -> static id, as this thread asked for them.
    array_classes: FxHashMap<Box<str>, u32>,
    /// A direct-mapped cache in front of `vars`: (key, id + 1), 0 when empty. Most
    /// accesses go to variables the thread touched a moment ago; `vars` (millions of
    /// entries) costs a cache miss or two per lookup, this one line.
    var_cache: Box<[((u64, u32), u32)]>,
}

/// Events until the thread next adds its log's growth to the trace's size, and the log's
/// size it last added.
struct SizeCheck {
    until_check: u32,
    counted: u64,
}

/// The reads a thread did since its last branch event, as far as they can decide an
/// address: reference values read (exact: references are never computed), whether any
/// other value was read (an array index may be computed from it), and whether a read
/// without a value (a modelled library call) happened, whose result may be anything.
#[derive(Default)]
struct SinceBranch {
    refs: Vec<u64>,
    prim: bool,
    any_address: bool,
}

impl SinceBranch {
    fn any(&self) -> bool {
        self.prim || self.any_address || !self.refs.is_empty()
    }
    /// A reference read since the last branch (past 16 of them: any address).
    fn note_ref(&mut self, v: u64) {
        if self.refs.len() >= 16 {
            self.any_address = true;
        } else if !self.refs.contains(&v) {
            self.refs.push(v);
        }
    }
    fn clear(&mut self) {
        self.refs.clear();
        self.prim = false;
        self.any_address = false;
    }
}

/// Everything a hook needs from thread-local storage, in one place (one TLS lookup; in a
/// shared library each lookup is a call).
struct Tls {
    /// This thread's state (kept alive by `owner`); null before its first event.
    state: Cell<*const Mutex<ThreadState>>,
    owner: RefCell<Option<Arc<Mutex<ThreadState>>>>,
    in_hook: Cell<bool>,
    /// Depth of quiet JDK methods this thread is in ([`crate::jdksync::quiet_method`]).
    quiet: Cell<u32>,
    /// This thread has ended (or could not get a log): record nothing more.
    done: Cell<bool>,
    /// While a virtual thread is mounted on this (carrier) thread, the carrier's own
    /// context, set aside ([`crate::vthreads`]).
    carrier: RefCell<Option<Logical>>,
}

/// The part of [`Tls`] that belongs to the Java thread rather than the native one: what a
/// virtual thread takes along from carrier to carrier.
#[derive(Default)]
struct Logical {
    owner: Option<Arc<Mutex<ThreadState>>>,
    quiet: u32,
    done: bool,
}

impl Tls {
    /// Takes this thread's Java-thread context out, leaving an empty one.
    fn take_logical(&self) -> Logical {
        self.state.set(std::ptr::null());
        Logical {
            owner: self.owner.borrow_mut().take(),
            quiet: self.quiet.replace(0),
            done: self.done.replace(false),
        }
    }

    /// Puts a Java-thread context in place (the current one must have been taken out).
    fn put_logical(&self, l: Logical) {
        self.state
            .set(l.owner.as_ref().map_or(std::ptr::null(), Arc::as_ptr));
        *self.owner.borrow_mut() = l.owner;
        self.quiet.set(l.quiet);
        self.done.set(l.done);
    }
}

thread_local! {
    static TLS: Tls = const {
        Tls {
            state: Cell::new(std::ptr::null()),
            owner: RefCell::new(None),
            in_hook: Cell::new(false),
            quiet: Cell::new(0),
            done: Cell::new(false),
            carrier: RefCell::new(None),
        }
    };
}

/// What a hook works with.
struct Cx<'a> {
    a: &'static Agent,
    env: *mut JNIEnv,
    t: &'a mut ThreadState,
    /// The access being recorded carries a reference (an object id) as its value.
    ref_value: bool,
    /// The clocks when the hook began ([`Entry`]).
    entry: Entry,
    /// The access being recorded is a read whose value was loaded before the hook
    /// began: it is stamped with [`Cx::entry`].
    loaded: bool,
    /// The hook's site is in a JDK class instrumented for its synchronization only: its
    /// events may be dropped by a modelled lock call ([`ordered`]).
    jdk: bool,
    /// ... of a class whose monitors are locks only ([`SiteEntry::locks_only`]).
    jdk_locks_only: bool,
    /// The thread is inside a quiet JDK method: JDK events are not recorded.
    quiet: bool,
    /// What the monitor being entered is, when its site knows: names the lock if this is
    /// the first time any thread takes it ([`Cx::lock_id`]).
    lock_via: LockVia,
}

/// How the bytecode reached a monitor (sites are `'static`: nothing is formatted unless a
/// lock is new).
#[derive(Clone, Copy, Default)]
enum LockVia {
    #[default]
    Unknown,
    /// A field (`pkg.Class.field`) or a class literal (`pkg.Class.class`).
    Named(&'static str),
    /// The class object of a static synchronized method of this class.
    ClassOf(&'static str),
}

/// The clock (and, for a thread's first hook, the synchronization word) when a hook
/// began: before any slow work it may do (creating the thread's state and log, interning
/// a name, taking a stack), so that a field or array read is stamped right after the
/// load it records, and a thread's `begin` right after it started. Stamped later,
/// another thread's write made in between would sort before a read that did not see it
/// (a recorded order its values contradict). Only the hooks of loads read the clock at
/// entry (the others once, when they stamp), and only a thread's first hook reads the
/// synchronization word, which plain accesses otherwise never touch.
#[derive(Clone, Copy, Default)]
struct Entry {
    /// 0: not read.
    now: u64,
    sync: Option<u64>,
}

// ---------------------------------------------------------------------------------------
// Recording
