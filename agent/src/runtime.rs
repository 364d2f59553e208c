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

mod barrier;
mod models;
mod ordered;
pub use barrier::{BpStats, DEFAULT_BUDGET as BP_DEFAULT_BUDGET};
use models::{ClassModel, Ret, When};

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
    /// An array element whose static name is the element type.
    Array {
        static_id: u32,
    },
    Call(CallOp),
    /// A BarrierPair call site: the callee's method id.
    Barrier {
        method: u32,
    },
    Other,
}

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
    /// An exception handler that may have caught an InterruptedException.
    Caught,
    /// Executor hand-off, from the JDK hooks (jdkhooks.rs).
    TaskSubmit,
    TaskStart,
    TaskEnd,
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
    condition: jclass,
    condition_owner: jfieldID,
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
    if jni!(env, ExceptionCheck) == 0 {
        return true;
    }
    let e = jni!(env, ExceptionOccurred);
    jni!(env, ExceptionClear);
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
        jni!(env, ExceptionClear);
    }
    jni!(env, DeleteLocalRef, e);
    false
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Agent {
    /// Creates the global agent (once).
    pub fn install(
        jvmti: *mut jvmtiEnv,
        opts: AgentOptions,
        writer: TraceWriter,
        gc_events: bool,
    ) -> &'static Agent {
        let errors = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(writer.dir().join("agent.log"))
            .ok();
        clock::init();
        let mut names = Names::default();
        // Location 0 is "no location" (thread begin and end).
        names.locs.insert(String::new(), 0);
        let _ = writer.loc(0, "", None);
        if let Some(m) = opts.tree {
            // Written first, so that even a killed JVM's trace says it is filtered.
            let _ = writer.set_meta(jrace_trace::tree::META_FILTERED, &m.flag());
        }
        let tree = opts.tree.map(|_| VarOwners::new());
        AGENT.get_or_init(|| Agent {
            jvmti,
            opts,
            writer,
            start: Instant::now(),
            sync_clock: AtomicU64::new(0),
            sites: SiteTable::new(),
            names: Mutex::new(names),
            vars: VarTable::new(),
            classes: Mutex::new(FxHashMap::default()),
            threads: Mutex::new(Vec::new()),
            tag_lock: Mutex::new(()),
            next_ids: AtomicU64::new(1),
            rmw: std::array::from_fn(|_| Mutex::new(())),
            stopped: AtomicBool::new(false),
            cut_noted: AtomicBool::new(false),
            frames: Mutex::new(FxHashMap::default()),
            bytes: AtomicU64::new(0),
            java: OnceLock::new(),
            address_cache: AtomicBool::new(false),
            gc_events,
            errors: Mutex::new(errors),
            stats: Stats::default(),
            tree,
            flags: Mutex::new(ordered::SiteFlags::new()),
            offsets: Mutex::new(FxHashMap::default()),
            jdk_stacks: std::env::var_os("JRACE_DEBUG_JDKSTACK").is_some(),
        })
    }

    /// Writes a line to DIR/agent.log (never to the program's streams).
    pub fn log(&self, msg: &str) {
        if let Some(f) = lock(&self.errors).as_mut() {
            let _ = writeln!(f, "{msg}");
        }
    }

    /// Describes a class (for resolving field sites later).
    pub fn add_class(&self, info: ClassInfo) {
        lock(&self.classes).insert(info.name.clone(), info);
    }

    /// [`Agent::add_class`] unless the class is described already.
    pub fn add_class_if_new(&self, info: ClassInfo) {
        lock(&self.classes).entry(info.name.clone()).or_insert(info);
    }

    /// Registers a site: interns its location (writing the record) and returns its id.
    pub fn add_site(&self, site: Site) -> i32 {
        let loc = self.intern_loc(site.loc.clone());
        if let SiteKind::ClassInit = site.kind {
            let mut n = lock(&self.names);
            let m = intern_static(self, &mut n, &format!("{}.<clinit>", site.loc.class));
            n.clinit_classes.insert(m);
        }
        self.sites
            .push(SiteEntry {
                site,
                loc,
                resolved: OnceLock::new(),
                stack_seen: AtomicU64::new(0),
            })
            .unwrap_or(-1)
    }

    /// Interns a location by its display token (`File.java:LINE`, else
    /// `Class.method@BCI`), writing its record with the details of its first use.
    pub fn intern_loc(&self, l: Location) -> u32 {
        let token = match (&l.file, l.line) {
            (Some(f), Some(n)) => format!("{f}:{n}"),
            _ => format!("{}.{}@{}", l.class, l.method, l.bci),
        };
        let mut n = lock(&self.names);
        let len = n.locs.len() as u32;
        let id = *n.locs.entry(token.clone()).or_insert(len);
        if id == len {
            let detail = LocDetail {
                class: l.class,
                method: l.method,
                file: l.file,
                line: l.line,
                bci: Some(l.bci),
            };
            self.io(self.writer.loc(id, &token, Some(&detail)));
            crate::replay::loc_named(id, &token, jrace_trace::is_jdk_class(&detail.class));
            // replay
        }
        id
    }

    /// A metadata write that failed stops recording: later events could name what it
    /// did not record.
    fn io(&self, r: std::io::Result<()>) {
        if let Err(e) = r {
            if self.stopped.load(Ordering::SeqCst) {
                self.log(&format!("write error: {e}"));
            } else {
                self.cut(
                    "write_error",
                    &format!("cannot write the trace's metadata: {e}: recording stopped, the program goes on"),
                );
            }
        }
    }

    #[inline]
    fn now(&self) -> u64 {
        clock::now(self.start) + 1
    }

    /// Looks up the JNI handles the hooks need; called in VMInit.
    ///
    /// # Safety
    /// `env` is the JNI environment of the calling thread.
    pub unsafe fn init_java(&self, env: *mut JNIEnv, r_class: jclass) -> Result<(), String> {
        let class = |name: &str| -> Result<jclass, String> {
            let c = CString::new(name).unwrap();
            let k = jni!(env, FindClass, c.as_ptr());
            if k.is_null() {
                jni!(env, ExceptionClear);
                return Err(format!("class {name} not found"));
            }
            Ok(jni!(env, NewGlobalRef, k) as jclass)
        };
        let method = |k: jclass, name: &str, sig: &str, is_static: bool| {
            let (n, s) = (CString::new(name).unwrap(), CString::new(sig).unwrap());
            let m = if is_static {
                jni!(env, GetStaticMethodID, k, n.as_ptr(), s.as_ptr())
            } else {
                jni!(env, GetMethodID, k, n.as_ptr(), s.as_ptr())
            };
            if m.is_null() {
                jni!(env, ExceptionClear);
                return Err(format!("method {name}{sig} not found"));
            }
            Ok(m)
        };
        let field = |k: jclass, name: &str, sig: &str| {
            let (n, s) = (CString::new(name).unwrap(), CString::new(sig).unwrap());
            let f = jni!(env, GetFieldID, k, n.as_ptr(), s.as_ptr());
            if f.is_null() {
                jni!(env, ExceptionClear);
            }
            f
        };
        let unsafe_class = class("jdk/internal/misc/Unsafe")?;
        let get_unsafe = method(
            unsafe_class,
            "getUnsafe",
            "()Ljdk/internal/misc/Unsafe;",
            true,
        )?;
        let unsafe_obj = jni!(env, CallStaticObjectMethod, unsafe_class, get_unsafe);
        if unsafe_obj.is_null() {
            jni!(env, ExceptionClear);
            return Err("jdk.internal.misc.Unsafe.getUnsafe() failed".into());
        }
        let unsafe_obj = jni!(env, NewGlobalRef, unsafe_obj);
        let (array_base, array_base_long) = match method(
            unsafe_class,
            "arrayBaseOffset",
            "(Ljava/lang/Class;)I",
            false,
        ) {
            Ok(m) => (m, false),
            Err(_) => (
                method(
                    unsafe_class,
                    "arrayBaseOffset",
                    "(Ljava/lang/Class;)J",
                    false,
                )?,
                true,
            ),
        };
        // R's stripe locks need the offset of int[]'s first element.
        let int_array = class("[I")?;
        let base = if array_base_long {
            jni!(env, CallLongMethod, unsafe_obj, array_base, int_array)
        } else {
            jni!(env, CallIntMethod, unsafe_obj, array_base, int_array) as jlong
        };
        if jni!(env, ExceptionCheck) != 0 {
            jni!(env, ExceptionClear);
        } else {
            let f = jni!(
                env,
                GetStaticFieldID,
                r_class,
                c"LBASE".as_ptr(),
                c"J".as_ptr()
            );
            if f.is_null() {
                jni!(env, ExceptionClear);
            } else {
                jni!(env, SetStaticLongField, r_class, f, base);
            }
        }
        let thread_class = class("java/lang/Thread")?;
        let reentrant_lock = class("java/util/concurrent/locks/ReentrantLock")?;
        let read_lock = class("java/util/concurrent/locks/ReentrantReadWriteLock$ReadLock")?;
        let write_lock = class("java/util/concurrent/locks/ReentrantReadWriteLock$WriteLock")?;
        let condition =
            class("java/util/concurrent/locks/AbstractQueuedSynchronizer$ConditionObject")?;
        let rw_sync = "Ljava/util/concurrent/locks/ReentrantReadWriteLock$Sync;";
        let java = Java {
            thread_class,
            get_id: method(thread_class, "getId", "()J", false)?,
            get_name: method(thread_class, "getName", "()Ljava/lang/String;", false)?,
            is_alive: method(thread_class, "isAlive", "()Z", false)?,
            is_daemon: method(thread_class, "isDaemon", "()Z", false)?,
            current_thread: method(thread_class, "currentThread", "()Ljava/lang/Thread;", true)?,
            reentrant_lock,
            rl_sync: field(
                reentrant_lock,
                "sync",
                "Ljava/util/concurrent/locks/ReentrantLock$Sync;",
            ),
            read_lock,
            read_lock_sync: field(read_lock, "sync", rw_sync),
            write_lock,
            write_lock_sync: field(write_lock, "sync", rw_sync),
            condition,
            condition_owner: field(
                condition,
                "this$0",
                "Ljava/util/concurrent/locks/AbstractQueuedSynchronizer;",
            ),
            interrupted_exception: class("java/lang/InterruptedException")?,
            object_wait: method(class("java/lang/Object")?, "wait", "(J)V", false)?,
            condition_await_nanos: method(condition, "awaitNanos", "(J)J", false)?,
            thread_interrupt: method(thread_class, "interrupt", "()V", false)?,
            class_class: class("java/lang/Class")?,
            r_class: jni!(env, NewGlobalRef, r_class) as jclass,
            flags_field: {
                let f = jni!(
                    env,
                    GetStaticFieldID,
                    r_class,
                    c"FLAGS".as_ptr(),
                    c"[B".as_ptr()
                );
                if f.is_null() {
                    jni!(env, ExceptionClear);
                    return Err("jrace.rt.R.FLAGS not found".into());
                }
                f
            },
            field_offset: method(
                r_class,
                "fieldOffset",
                "(Ljava/lang/reflect/Field;Z)J",
                true,
            )?,
            unsafe_obj,
            array_base,
            array_base_long,
            array_scale: method(
                unsafe_class,
                "arrayIndexScale",
                "(Ljava/lang/Class;)I",
                false,
            )?,
        };
        if self.opts.replay.is_some() {
            // A replay orders threads by its schedule; a stripe lock held by a thread it
            // holds would only stall the others.
            let f = jni!(
                env,
                GetStaticFieldID,
                r_class,
                c"EXACT".as_ptr(),
                c"Z".as_ptr()
            );
            if f.is_null() {
                jni!(env, ExceptionClear);
            } else {
                jni!(env, SetStaticBooleanField, r_class, f, 0);
            }
        }
        let _ = self.java.set(java);
        if self.gc_events && collector_moves_only_in_pauses() {
            self.address_cache.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Stops recording for good while the program goes on: says why in agent.log, on
    /// stderr and in the metadata, where reports find it (`reason` as in
    /// [`jrace_trace::binlog::META_CUT`]).
    /// Only the first reason is recorded. Events that name what the metadata could not
    /// take are never written: [`Cx::append`] checks the flag this sets.
    pub fn cut(&self, reason: &str, detail: &str) {
        self.stopped.store(true, Ordering::SeqCst);
        self.note_cut(reason, detail);
    }

    /// Records why the trace ends early (once): metadata, agent.log, stderr.
    fn note_cut(&self, reason: &str, detail: &str) {
        if self.cut_noted.swap(true, Ordering::SeqCst) {
            return;
        }
        use jrace_trace::binlog::{META_CUT, META_CUT_DETAIL};
        let w = &self.writer;
        if let Err(e) = w.set_meta_reserved(META_CUT, reason) {
            self.log(&format!("cannot record why recording stopped: {e}"));
        }
        let _ = w.set_meta_reserved(META_CUT_DETAIL, detail);
        self.log(detail);
        // The one line the agent itself writes to the program's stderr: a user who set
        // max_mb, or whose disk filled up, must learn that the trace stops here.
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "jrace: {detail}");
    }

    /// Ends recording: seals the log of every thread still running (their later events
    /// are dropped) and the metadata. Called in VMDeath.
    pub fn shutdown(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        let threads = std::mem::take(&mut *lock(&self.threads));
        // A log that cannot be finished (a full disk) keeps its last records in its open
        // chunk, which readers take; the trace then says it was cut.
        let unfinished = |what: String, e: std::io::Error| {
            self.note_cut(
                "write_error",
                &format!("{what}: {e}: the end of the trace may be missing"),
            )
        };
        for t in threads {
            let mut t = lock(&t);
            if let Some(log) = t.log.take() {
                let tid = t.tid;
                if let Err(e) = log.finish() {
                    unfinished(format!("thread {tid}: cannot finish its log"), e);
                }
            }
            self.stats
                .tree_dropped
                .fetch_add(t.tree_dropped, Ordering::Relaxed);
        }
        let s = &self.stats;
        let kv = [
            ("branches", if self.opts.branches { 1 } else { 0 }),
            ("classes_seen", s.classes_seen.load(Ordering::Relaxed)),
            (
                "instrumented_classes",
                s.classes_instrumented.load(Ordering::Relaxed),
            ),
            (
                "uninstrumented_classes",
                s.classes_failed.load(Ordering::Relaxed),
            ),
            (
                "uninstrumented_methods",
                s.methods_failed.load(Ordering::Relaxed),
            ),
            (
                "partly_instrumented_methods",
                s.methods_reduced.load(Ordering::Relaxed),
            ),
            (
                "instrument_ms",
                s.instrument_nanos.load(Ordering::Relaxed) / 1_000_000,
            ),
            ("jdk_sync_classes", s.jdk_classes.load(Ordering::Relaxed)),
        ];
        for (k, v) in kv {
            self.io(self.writer.set_meta(k, &v.to_string()));
        }
        if self.opts.barrier {
            for (k, v) in s.bp.meta(self.opts.bp_walk) {
                self.io(self.writer.set_meta(k, &v.to_string()));
            }
        }
        if self.opts.tree.is_some() {
            let n = s.tree_dropped.load(Ordering::Relaxed);
            self.io(self
                .writer
                .set_meta(jrace_trace::tree::META_DROPPED, &n.to_string()));
        }
        if let Err(e) = self.writer.finish_meta() {
            unfinished("cannot finish the metadata log".into(), e);
        }
    }
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
    log: Option<ThreadLog>,
    last: u64,
    /// Monitors and locks held: object -> (re-entrancy count, lock id).
    held: FxHashMap<u64, (u32, u32)>,
    /// A `wait` whose `wake` is not recorded yet (the wait ended by an exception).
    pending_wake: Option<u32>,
    /// Monitors of the synchronized methods on the stack, innermost last.
    sync_stack: Vec<u64>,
    seen_init: FxHashSet<u32>,
    vars: FxHashMap<(u64, u32), u32>,
    locks: FxHashMap<u64, u32>,
    models: FxHashMap<u64, ClassModel>,
    /// Class id -> the field (a `jfieldID`, valid in every thread) through which its
    /// objects reach their collection (0: none), see [`models`].
    owner_fields: FxHashMap<u64, usize>,
    ids: (u64, u64),
    /// Object address -> id, valid during GC epoch `cache_epoch`.
    addr_cache: Box<[(usize, u64)]>,
    /// A direct-mapped cache in front of `vars`: (key, id + 1), 0 when empty. Most
    /// accesses go to variables the thread touched a moment ago; `vars` (millions of
    /// entries) costs a cache miss or two per lookup, this one line.
    var_cache: Box<[((u64, u32), u32)]>,
    cache_epoch: u64,
    /// Events until this thread next adds its log's growth to [`Agent::bytes`].
    until_size_check: u32,
    bytes_counted: u64,
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
}

thread_local! {
    static TLS: Tls = const {
        Tls {
            state: Cell::new(std::ptr::null()),
            owner: RefCell::new(None),
            in_hook: Cell::new(false),
            quiet: Cell::new(0),
            done: Cell::new(false),
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
    /// events may be dropped or held back by a modelled call ([`ordered`]).
    jdk: bool,
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

/// Runs a hook body on this thread's state: no re-entry (JNI calls made by a hook may run
/// Java code), no panic escapes, nothing after the VM's death.
/// `site` is the hook's site (a JDK site is never held by a replay).
#[inline]
fn hook(env: *mut JNIEnv, site: i32, f: impl FnOnce(&mut Cx)) {
    hook_at(env, site, false, f)
}

/// [`hook`] for a load: its event is stamped when the hook begins ([`Entry`]).
#[inline]
fn load_hook(env: *mut JNIEnv, site: i32, f: impl FnOnce(&mut Cx)) {
    hook_at(env, site, true, f)
}

#[inline]
fn hook_at(env: *mut JNIEnv, site: i32, load: bool, f: impl FnOnce(&mut Cx)) {
    let Some(a) = AGENT.get() else { return };
    if a.stopped.load(Ordering::Relaxed) {
        return;
    }
    // A replay holds threads at the program's hooks only: a thread held inside the JDK
    // could hold what the others need (see replay.rs).
    let gated = a.opts.replay.is_none() || !a.sites.get(site).is_some_and(|e| e.site.jdk);
    let _ = TLS.try_with(|tls| {
        if tls.in_hook.replace(true) {
            return;
        }
        let mut entry = Entry::default();
        if load {
            entry.now = a.now();
        }
        let r = catch_unwind(AssertUnwindSafe(|| {
            let mut p = tls.state.get();
            if p.is_null() {
                if tls.done.get() {
                    return;
                }
                let first = Entry {
                    now: if load { entry.now } else { a.now() },
                    sync: Some(a.sync_clock.load(Ordering::Acquire)),
                };
                // SAFETY: env is this thread's JNI environment.
                match unsafe { new_thread_state(a, env, first) } {
                    Some(s) => {
                        p = Arc::as_ptr(&s);
                        tls.state.set(p);
                        lock(&a.threads).push(s.clone());
                        *tls.owner.borrow_mut() = Some(s);
                    }
                    None => {
                        tls.done.set(true);
                        return;
                    }
                }
            }
            // SAFETY: `owner` keeps the state alive while `state` points to it.
            let ts = unsafe { &*p };
            if gated && crate::replay::gate(crate::replay::Point::Entry, env) && load {
                // Held by a replay: what the hook records happens when it is let go.
                entry.now = a.now();
            }
            let mut g = lock(ts);
            if g.log.is_none() {
                return;
            }
            let mut cx = Cx {
                a,
                env,
                t: &mut g,
                ref_value: false,
                entry,
                loaded: false,
                jdk: false,
                quiet: tls.quiet.get() > 0,
                lock_via: LockVia::Unknown,
            };
            f(&mut cx);
        }));
        if gated {
            crate::replay::gate(crate::replay::Point::Exit, env); // replay
        }
        tls.in_hook.set(false);
        if r.is_err() {
            a.log("internal error: a hook panicked; the event was dropped");
        }
    });
}

unsafe fn new_thread_state(
    a: &'static Agent,
    env: *mut JNIEnv,
    entry: Entry,
) -> Option<Arc<Mutex<ThreadState>>> {
    let java = a.java.get()?;
    let me = jni!(
        env,
        CallStaticObjectMethod,
        java.thread_class,
        java.current_thread
    );
    if me.is_null() {
        jni!(env, ExceptionClear);
        return None;
    }
    let tid = thread_id(a, java, env, me)?;
    // A daemon thread may still run when the JVM exits normally; a trace whose
    // non-daemon threads had not ended was cut by an exit (System.exit, halt).
    let daemon = jni!(
        env,
        CallNonvirtualBooleanMethod,
        me,
        java.thread_class,
        java.is_daemon
    );
    if jni!(env, ExceptionCheck) != 0 {
        jni!(env, ExceptionClear);
    } else if daemon != 0 {
        a.io(a
            .writer
            .set_meta(&jrace_trace::binlog::meta_daemon(tid), "1"));
    }
    jni!(env, DeleteLocalRef, me);
    let log = match a.writer.thread_log(tid) {
        Ok(l) => l,
        Err(e) => {
            // A thread missing from the trace would hide its races: stop recording.
            a.cut(
                "write_error",
                &format!("thread {tid}: cannot create its log: {e}: recording stopped, the program goes on"),
            );
            return None;
        }
    };
    let mut t = ThreadState {
        tid,
        log: Some(log),
        last: 0,
        held: FxHashMap::default(),
        pending_wake: None,
        sync_stack: Vec::new(),
        seen_init: FxHashSet::default(),
        vars: FxHashMap::default(),
        locks: FxHashMap::default(),
        models: FxHashMap::default(),
        owner_fields: FxHashMap::default(),
        ids: (0, 0),
        addr_cache: vec![(0usize, 0u64); ADDR_CACHE].into_boxed_slice(),
        var_cache: vec![((0u64, 0u32), 0u32); VAR_CACHE].into_boxed_slice(),
        cache_epoch: u64::MAX,
        until_size_check: SIZE_CHECK_EVERY,
        bytes_counted: 0,
        fixed: Vec::new(),
        stacks_seen: FxHashSet::default(),
        lock_stacks_seen: FxHashSet::default(),
        since_branch: SinceBranch::default(),
        tree: a.opts.tree.map(|m| Box::new(ThreadFilter::new(m))),
        tree_dropped: 0,
        bp: barrier::ThreadBp::default(),
        open_calls: Vec::new(),
        offsets: FxHashMap::default(),
    };
    let mut cx = Cx {
        a,
        env,
        t: &mut t,
        ref_value: false,
        entry,
        loaded: false,
        jdk: false,
        quiet: false,
        lock_via: LockVia::Unknown,
    };
    cx.emit(Kind::Begin, 0, 0, None, true);
    Some(Arc::new(Mutex::new(t)))
}

/// The trace's id for a `Thread` object: dense ids in order of first sight (Java's own
/// ids are sparse), named with the thread's name when first seen.
unsafe fn thread_id(a: &Agent, java: &Java, env: *mut JNIEnv, thread: jobject) -> Option<u32> {
    let jid = jni!(
        env,
        CallNonvirtualLongMethod,
        thread,
        java.thread_class,
        java.get_id
    );
    if jni!(env, ExceptionCheck) != 0 {
        jni!(env, ExceptionClear);
        return None;
    }
    if let Some(&t) = lock(&a.names).threads.get(&jid) {
        return Some(t);
    }
    let name = jni!(
        env,
        CallNonvirtualObjectMethod,
        thread,
        java.thread_class,
        java.get_name
    );
    let mut s = format!("thread-{jid}");
    if jni!(env, ExceptionCheck) != 0 {
        jni!(env, ExceptionClear);
    } else if !name.is_null() {
        let chars = jni!(
            env,
            GetStringUTFChars,
            name as jstring,
            std::ptr::null_mut()
        );
        if !chars.is_null() {
            s = CStr::from_ptr(chars).to_string_lossy().into_owned();
            jni!(env, ReleaseStringUTFChars, name as jstring, chars);
        }
        jni!(env, DeleteLocalRef, name);
    }
    let mut n = lock(&a.names);
    let len = n.threads.len() as u32;
    let t = *n.threads.entry(jid).or_insert(len);
    if t == len {
        // Thread names need not be unique: a repeated name gets the Java id appended.
        crate::replay::thread_named(t, &s); // replay
        let taken = n.thread_names.insert(s.clone());
        let shown = if taken { s } else { format!("{s}#{jid}") };
        a.io(a.writer.name(Table::Thread, t, &shown));
        if a.opts.barrier {
            n.bp.thread_names.insert(t, shown);
        }
    }
    Some(t)
}

/// ThreadEnd: records `end` and seals the thread's log.
pub fn thread_end() {
    let Some(a) = AGENT.get() else { return };
    let ts = TLS
        .try_with(|tls| {
            tls.done.set(true);
            tls.state.set(std::ptr::null());
            tls.owner.borrow_mut().take()
        })
        .ok()
        .flatten();
    let Some(ts) = ts else {
        return;
    };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let mut g = lock(&ts);
        if g.log.is_some() {
            let mut cx = Cx {
                a,
                env: std::ptr::null_mut(),
                t: &mut g,
                ref_value: false,
                entry: Entry::default(),
                loaded: false,
                jdk: false,
                quiet: false,
                lock_via: LockVia::Unknown,
            };
            // After a cut the thread's end is not recorded: the trace stops where the
            // recording did, with the thread still running in it.
            if !a.stopped.load(Ordering::SeqCst) {
                cx.bp_close_to(0, 0);
                cx.emit(Kind::End, 0, 0, None, true);
            }
            if let Some(log) = g.log.take() {
                if let Err(e) = log.finish() {
                    a.cut(
                        "write_error",
                        &format!("thread {}: cannot finish its log: {e}: recording stopped, the program goes on", g.tid),
                    );
                }
            }
            a.stats
                .tree_dropped
                .fetch_add(std::mem::take(&mut g.tree_dropped), Ordering::Relaxed);
        }
        drop(g);
        lock(&a.threads).retain(|t| !Arc::ptr_eq(t, &ts));
    }));
}

// ---------------------------------------------------------------------------------------
// Recording

impl Cx<'_> {
    fn emit(&mut self, kind: Kind, target: u32, loc: u32, value: Option<i64>, sync: bool) {
        self.emit_one(kind, target, loc, value, sync);
    }

    fn emit_one(&mut self, kind: Kind, target: u32, loc: u32, value: Option<i64>, sync: bool) {
        if !self.jdk && !self.t.open_calls.is_empty() {
            // Program code inside a modelled call: it is over, or calling back.
            self.close_open_calls();
        }
        if let Some(l) = self.t.pending_wake {
            if kind != Kind::Wake {
                self.t.pending_wake = None;
                self.emit_one(Kind::Wake, l, loc, None, true);
            }
        }
        // A branch constrains the values of the reads before it; a second branch with no
        // read in between constrains nothing more, so it is not written.
        match kind {
            Kind::Branch if !self.t.since_branch.any() => return,
            Kind::Branch => self.t.since_branch.clear(),
            Kind::Read | Kind::VRead => {
                let sb = &mut self.t.since_branch;
                match value {
                    None => sb.any_address = true,
                    // A null read decides a branch as well as any value.
                    Some(0) if self.ref_value => sb.prim = true,
                    Some(v) if self.ref_value => {
                        if sb.refs.len() >= 16 {
                            sb.any_address = true;
                        } else if !sb.refs.contains(&(v as u64)) {
                            sb.refs.push(v as u64);
                        }
                    }
                    Some(_) => sb.prim = true,
                }
            }
            _ => {}
        }
        if let Some(f) = self.t.tree.as_deref_mut() {
            // TREE: a redundant plain access is not written. Everything else about it
            // (a pending wake, what it read for branches) happened as if it were.
            if kind.is_plain_access() {
                let owners = self.a.tree.as_ref();
                let switches = owners.and_then(|o| o.touch(target, self.t.tid));
                if !f.access(loc, target, kind == Kind::Write, switches) {
                    self.t.tree_dropped += 1;
                    return;
                }
            } else {
                f.sync(kind, target);
            }
        }
        let a = self.a;
        // A loaded value and a lazily written `begin` observe what happened before the
        // hook began; everything else is stamped now (a publishing event as late as
        // possible, before its operation; an observation the hook makes itself, e.g.
        // under a lock it takes, after all it may follow).
        let early =
            kind == Kind::Begin || (self.loaded && matches!(kind, Kind::Read | Kind::VRead));
        let now = if early && self.entry.now != 0 {
            self.entry.now
        } else {
            a.now()
        };
        let mut s = now.max(self.t.last);
        if sync {
            let base = match (kind, self.entry.sync) {
                (Kind::Begin, Some(w)) => w,
                _ => a.sync_clock.load(Ordering::Acquire),
            };
            s = s.max(base + 1);
            a.sync_clock.fetch_max(s, Ordering::AcqRel);
        }
        self.t.last = s;
        let mut e = Event::new(self.t.tid, kind, target, loc);
        match value {
            // An acquire's value is a mark ([`jrace_trace::ACQUIRE_TRY`]), not a value read.
            Some(v) if kind == Kind::Acquire => e.value = v,
            Some(v) => e = e.with_value(v),
            None => {}
        }
        if self.jdk {
            if let Some(c) = self.t.open_calls.last_mut() {
                if c.mode == ordered::OpenMode::Hold {
                    // Held back until the modelled call returns ([`ordered`]).
                    c.held.push((s, e));
                    return;
                }
            }
        }
        self.append(s, &e);
    }

    /// Writes one stamped event to the thread's log (and counts the trace's size).
    #[inline]
    fn append(&mut self, s: u64, e: &Event) {
        let a = self.a;
        if let Some(log) = self.t.log.as_mut() {
            // After a cut (another thread's, or a metadata write that failed on this
            // one while naming what this event refers to) nothing more is written.
            if a.stopped.load(Ordering::Relaxed) {
                return;
            }
            if let Err(err) = log.append(s, e) {
                self.t.log = None;
                a.cut(
                    "write_error",
                    &format!(
                        "thread {}: {err}: recording stopped, the program goes on",
                        self.t.tid
                    ),
                );
                return;
            }
            let value = e.has_value().then_some(e.value);
            crate::replay::emitted(self.t.tid, e.kind, e.loc, value); // replay
            self.t.until_size_check -= 1;
            if self.t.until_size_check == 0 {
                self.t.until_size_check = SIZE_CHECK_EVERY;
                if let Some(max) = a.opts.max_bytes {
                    let now = log.bytes();
                    let grown = now - self.t.bytes_counted;
                    self.t.bytes_counted = now;
                    let total = a.bytes.fetch_add(grown, Ordering::Relaxed) + grown;
                    if total >= max {
                        a.cut(
                            "max_mb",
                            &format!(
                                "the trace reached {total} bytes (max_mb): recording stopped, the program goes on"
                            ),
                        );
                    }
                }
            }
        }
    }

    /// The object's id (0 for null). Tags are the truth; a per-thread cache from the
    /// object's current address (read through the JNI handle) saves most JVMTI calls,
    /// valid only while no garbage collection has started since the entry was made.
    #[inline]
    unsafe fn obj(&mut self, o: jobject) -> u64 {
        if o.is_null() {
            return 0;
        }
        if !self.a.address_cache.load(Ordering::Relaxed) {
            return self.obj_tag(o);
        }
        let e1 = GC_EPOCH.load(Ordering::Acquire);
        if e1 & 1 == 1 {
            return self.obj_tag(o);
        }
        if self.t.cache_epoch != e1 {
            self.t.addr_cache.fill((0, 0));
            self.t.cache_epoch = e1;
        }
        // SAFETY: a JNI local reference points to a slot holding the object's address.
        let addr = std::ptr::read_volatile(o as *const usize);
        let slot = (addr >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - 12);
        let (a, id) = self.t.addr_cache[slot];
        if a == addr && addr != 0 && GC_EPOCH.load(Ordering::Acquire) == e1 {
            return id;
        }
        let id = self.obj_tag(o);
        if GC_EPOCH.load(Ordering::Acquire) == e1 {
            self.t.addr_cache[slot] = (addr, id);
        }
        id
    }

    unsafe fn obj_tag(&mut self, o: jobject) -> u64 {
        let jv = self.a.jvmti;
        let mut tag: jlong = 0;
        jvmti!(jv, GetTag, o, &mut tag);
        if tag != 0 {
            return tag as u64 & !barrier::SNAPSHOTTED;
        }
        let _g = lock(&self.a.tag_lock);
        jvmti!(jv, GetTag, o, &mut tag);
        if tag != 0 {
            return tag as u64 & !barrier::SNAPSHOTTED;
        }
        if self.t.ids.0 == self.t.ids.1 {
            let b = self.a.next_ids.fetch_add(1024, Ordering::Relaxed);
            self.t.ids = (b, b + 1024);
        }
        let id = self.t.ids.0;
        self.t.ids.0 += 1;
        jvmti!(jv, SetTag, o, id as jlong);
        id
    }

    /// Interns the variable `key` ([`VarTable`]), first in this thread's caches.
    #[inline]
    fn var(&mut self, key: (u64, u32), static_id: u32) -> u32 {
        let slot = (var_hash(key) >> (64 - VAR_CACHE_BITS)) as usize;
        let (k, v1) = self.t.var_cache[slot];
        if k == key && v1 != 0 {
            return v1 - 1;
        }
        let v = self.var_slow(key, static_id);
        self.t.var_cache[slot] = (key, v + 1);
        v
    }

    fn var_slow(&mut self, key: (u64, u32), static_id: u32) -> u32 {
        if let Some(&v) = self.t.vars.get(&key) {
            return v;
        }
        let a = self.a;
        let v = a.vars.intern(key, |v| {
            let (obj, elem) = match key.0 & ARRAY_VAR {
                0 => (key.0, None),
                _ => (key.0 & !ARRAY_VAR, Some(key.1)),
            };
            a.io(a.writer.object_var(v, static_id, obj, elem));
        });
        if self.t.vars.len() > 1 << 20 {
            self.t.vars.clear();
        }
        self.t.vars.insert(key, v);
        v
    }

    fn field_var(&mut self, obj: u64, static_id: u32) -> u32 {
        self.var((obj, static_id), static_id)
    }

    unsafe fn lock_id(&mut self, obj: u64, o: jobject) -> u32 {
        let via = std::mem::take(&mut self.lock_via);
        if let Some(&l) = self.t.locks.get(&obj) {
            return l;
        }
        let class = if o.is_null() {
            String::from("lock")
        } else {
            self.class_name(o)
        };
        let a = self.a;
        let mut n = lock(&a.names);
        let len = n.locks.len() as u32;
        let l = *n.locks.entry(obj).or_insert(len);
        if l == len {
            // `pkg.Class.field [Object@17]`: what a reader finds in the code, then the object.
            let short = class.rsplit('.').next().unwrap_or(&class);
            let name = match via {
                LockVia::Named(v) => format!("{v} [{short}@{obj}]"),
                LockVia::ClassOf(c) => format!("{c}.class [{short}@{obj}]"),
                LockVia::Unknown => format!("{short}@{obj}"),
            };
            a.io(a.writer.name(Table::Lock, l, &name));
        }
        drop(n);
        self.t.locks.insert(obj, l);
        l
    }

    /// The dotted name of the object's class.
    unsafe fn class_name(&mut self, o: jobject) -> String {
        let env = self.env;
        if env.is_null() {
            return String::from("?");
        }
        let k = jni!(env, GetObjectClass, o);
        let mut sig: *mut c_char = std::ptr::null_mut();
        let jv = self.a.jvmti;
        let r = jvmti!(jv, GetClassSignature, k, &mut sig, std::ptr::null_mut());
        jni!(env, DeleteLocalRef, k);
        if r != 0 || sig.is_null() {
            return String::from("?");
        }
        let s = CStr::from_ptr(sig).to_string_lossy().into_owned();
        jvmti!(jv, Deallocate, sig as *mut u8);
        signature_to_name(&s)
    }

    fn site(&self, site: i32) -> Option<&'static SiteEntry> {
        self.a.sites.get(site)
    }

    fn resolve(&self, e: &'static SiteEntry) -> Resolved {
        *e.resolved.get_or_init(|| resolve_site(self.a, &e.site))
    }

    // --- accesses ---

    /// The id of a reference value being recorded, marking the access as carrying one.
    unsafe fn ref_value_of(&mut self, v: jobject) -> i64 {
        self.ref_value = true;
        self.obj(v) as i64
    }

    unsafe fn field(&mut self, write: bool, o: jobject, site: i32, value: i64) {
        let Some(e) = self.enter_site(site) else {
            return;
        };
        let Resolved::Field {
            static_id,
            volatile,
            ..
        } = self.resolve(e)
        else {
            return;
        };
        if self.jdk && !volatile && !e.site.fenced {
            return;
        }
        if self.jdk && self.a.jdk_stacks {
            self.stack_once(e, site);
        }
        let obj = self.obj(o);
        if obj == 0 {
            return;
        }
        let v = self.field_var(obj, static_id);
        // The JDK's accesses are all synchronization (fenced classes' plain ones too).
        let volatile = volatile || self.jdk;
        let kind = access_kind(write, volatile);
        if !volatile {
            self.stack_once(e, site);
        }
        if !self.jdk {
            self.implicit_branch(obj, false, e.loc);
        }
        self.loaded = !write;
        self.emit(kind, v, e.loc, Some(value), volatile);
        if self.jdk && !write {
            self.jdk_read_done(e.loc);
        }
    }

    /// An implicit control point (RVPredict §4): which variable an access touches is a
    /// decision on the values read before it, like a conditional jump, when the object
    /// (or lock) it goes through was read since the last branch, or, for an array
    /// element, when any value was (the index may be computed from it). Only written when
    /// branches are recorded.
    #[inline]
    fn implicit_branch(&mut self, obj: u64, indexed: bool, loc: u32) {
        let sb = &self.t.since_branch;
        if self.a.opts.branches
            && (sb.any_address || (indexed && sb.prim) || sb.refs.contains(&obj))
        {
            self.emit(Kind::Branch, 0, loc, None, false);
        }
    }

    /// Records, once per thread and site, the call stack with which the thread runs it.
    #[inline]
    fn stack_once(&mut self, e: &SiteEntry, site: i32) {
        let tid = self.t.tid;
        if tid < 64 {
            let bit = 1u64 << tid;
            if e.stack_seen.load(Ordering::Relaxed) & bit != 0 {
                return;
            }
            e.stack_seen.fetch_or(bit, Ordering::Relaxed);
        } else if !self.t.stacks_seen.insert(site) {
            return;
        }
        // SAFETY: called from a hook on this thread.
        unsafe { self.record_stack(e.loc) };
    }

    /// The current thread's top frames (below the hook), as locations.
    unsafe fn record_stack(&mut self, loc: u32) {
        const MAX: usize = 12;
        let jv = self.a.jvmti;
        let mut frames: [jvmtiFrameInfo; MAX] = std::mem::zeroed();
        let mut count: jint = 0;
        if jvmti!(
            jv,
            GetStackTrace,
            std::ptr::null_mut(),
            0,
            MAX as jint,
            frames.as_mut_ptr(),
            &mut count
        ) != 0
        {
            return;
        }
        let mut out = Vec::new();
        for f in &frames[..count.max(0) as usize] {
            match self.frame_loc(f.method, f.location) {
                Some(l) => out.push(l),
                None => continue,
            }
        }
        if !out.is_empty() {
            self.a.io(self.a.writer.stack(self.t.tid, loc, &out));
        }
    }

    /// A frame's location (interned, with class and method); `None` for the recorder's own
    /// frames.
    unsafe fn frame_loc(&mut self, method: jmethodID, bci: jlocation) -> Option<u32> {
        let key = (method as usize, bci);
        if let Some(&l) = lock(&self.a.frames).get(&key) {
            return (l != u32::MAX).then_some(l);
        }
        let jv = self.a.jvmti;
        let mut class: jclass = std::ptr::null_mut();
        if jvmti!(jv, GetMethodDeclaringClass, method, &mut class) != 0 {
            return None;
        }
        let take = |p: *mut c_char| -> Option<String> {
            if p.is_null() {
                return None;
            }
            let s = CStr::from_ptr(p).to_string_lossy().into_owned();
            jvmti!(jv, Deallocate, p as *mut u8);
            Some(s)
        };
        let mut sig: *mut c_char = std::ptr::null_mut();
        jvmti!(jv, GetClassSignature, class, &mut sig, std::ptr::null_mut());
        let class_name = take(sig).map(|s| signature_to_name(&s)).unwrap_or_default();
        // The recorder's own frames, and the forwarding frames of lambdas (hidden classes
        // without source), say nothing about the program.
        if class_name.starts_with("jrace.rt.") || class_name.contains("$$Lambda") {
            lock(&self.a.frames).insert(key, u32::MAX);
            return None;
        }
        let mut name: *mut c_char = std::ptr::null_mut();
        jvmti!(
            jv,
            GetMethodName,
            method,
            &mut name,
            std::ptr::null_mut(),
            std::ptr::null_mut()
        );
        let method_name = take(name).unwrap_or_default();
        let mut file: *mut c_char = std::ptr::null_mut();
        let file = if jvmti!(jv, GetSourceFileName, class, &mut file) == 0 {
            take(file)
        } else {
            None
        };
        let mut n: jint = 0;
        let mut table: *mut jvmtiLineNumberEntry = std::ptr::null_mut();
        let mut line = None;
        if jvmti!(jv, GetLineNumberTable, method, &mut n, &mut table) == 0 && !table.is_null() {
            let entries = std::slice::from_raw_parts(table, n.max(0) as usize);
            line = entries
                .iter()
                .filter(|e| e.start_location <= bci)
                .max_by_key(|e| e.start_location)
                .map(|e| e.line_number as u32);
            jvmti!(jv, Deallocate, table as *mut u8);
        }
        if !self.env.is_null() {
            jni!(self.env, DeleteLocalRef, class);
        }
        let l = self.a.intern_loc(Location {
            class: class_name,
            method: method_name,
            file,
            line,
            bci: bci.max(0) as u32,
        });
        lock(&self.a.frames).insert(key, l);
        Some(l)
    }

    fn static_field(&mut self, write: bool, site: i32, value: i64) {
        let Some(e) = self.enter_site(site) else {
            return;
        };
        let Resolved::Field {
            static_id,
            volatile,
            init,
            record,
        } = self.resolve(e)
        else {
            return;
        };
        if self.jdk {
            if (volatile || e.site.fenced) && record {
                let v = self.field_var(0, static_id);
                self.loaded = !write;
                self.emit(access_kind(write, true), v, e.loc, Some(value), true);
                if !write {
                    self.jdk_read_done(e.loc);
                }
            }
            return;
        }
        if let Some(m) = init {
            if !self.t.seen_init.contains(&m) {
                let done = lock(&self.a.names).init_done.contains(&m);
                if done {
                    self.t.seen_init.insert(m);
                    let mv = self.field_var(0, m);
                    self.emit(Kind::VRead, mv, e.loc, Some(1), true);
                    // The thread went on because the class was initialized.
                    if self.a.opts.branches {
                        self.emit(Kind::Branch, 0, e.loc, None, false);
                    }
                }
            }
        }
        if !record {
            return;
        }
        let v = self.field_var(0, static_id);
        let kind = access_kind(write, volatile);
        if !volatile {
            self.stack_once(e, site);
        }
        self.loaded = !write;
        self.emit(kind, v, e.loc, Some(value), volatile);
    }

    unsafe fn array(&mut self, write: bool, arr: jobject, idx: i32, site: i32, value: i64) {
        let Some(e) = self.enter_site(site) else {
            return;
        };
        let Resolved::Array { static_id } = self.resolve(e) else {
            return;
        };
        let obj = self.obj(arr);
        if obj == 0 || idx < 0 {
            return;
        }
        let v = self.var((obj | ARRAY_VAR, idx as u32), static_id);
        if self.jdk {
            // A JDK array store: recorded as a synchronizing write, so that an ordered read
            // of the slot elsewhere has its writer. Loads are instrumented only in classes
            // that order them with fences.
            if write {
                self.emit(Kind::VWrite, v, e.loc, Some(value), true);
            } else {
                self.loaded = true;
                self.emit(Kind::VRead, v, e.loc, Some(value), true);
                self.jdk_read_done(e.loc);
            }
            return;
        }
        let kind = if write { Kind::Write } else { Kind::Read };
        self.stack_once(e, site);
        self.implicit_branch(obj, true, e.loc);
        self.loaded = !write;
        self.emit(kind, v, e.loc, Some(value), false);
    }

    /// `System.arraycopy`, before it runs: the reads of the source elements and the writes
    /// of the destination elements it will do, with the values copied (at most
    /// [`ARRAYCOPY_MAX`] elements are recorded; a copy that will throw records nothing).
    unsafe fn arraycopy(
        &mut self,
        src: jobject,
        sp: i32,
        dst: jobject,
        dp: i32,
        n: i32,
        site: i32,
    ) {
        let Some(e) = self.site(site) else { return };
        let env = self.env;
        if src.is_null() || dst.is_null() || n <= 0 || sp < 0 || dp < 0 {
            return;
        }
        let (slen, dlen) = (
            jni!(env, GetArrayLength, src as jarray),
            jni!(env, GetArrayLength, dst as jarray),
        );
        if jni!(env, ExceptionCheck) != 0 {
            jni!(env, ExceptionClear);
            return;
        }
        if sp as i64 + n as i64 > slen as i64 || dp as i64 + n as i64 > dlen as i64 {
            return;
        }
        let k = n.min(ARRAYCOPY_MAX);
        // Element kind from the source's class signature (`[I`, `[Ljava/lang/String;`).
        let cls = jni!(env, GetObjectClass, src);
        let mut sig: *mut c_char = std::ptr::null_mut();
        let jv = self.a.jvmti;
        if jvmti!(jv, GetClassSignature, cls, &mut sig, std::ptr::null_mut()) != 0 || sig.is_null()
        {
            return;
        }
        let elem = CStr::from_ptr(sig)
            .to_bytes()
            .get(1)
            .copied()
            .unwrap_or(b'L');
        jvmti!(jv, Deallocate, sig as *mut u8);
        jni!(env, DeleteLocalRef, cls);
        let mut values = vec![0i64; k as usize];
        macro_rules! region {
            ($get:ident, $t:ty, $conv:expr) => {{
                let mut buf: Vec<$t> = vec![Default::default(); k as usize];
                jni!(env, $get, src as _, sp, k, buf.as_mut_ptr());
                for (v, x) in values.iter_mut().zip(buf) {
                    *v = $conv(x);
                }
            }};
        }
        let name = match elem {
            b'I' => {
                region!(GetIntArrayRegion, jint, |x: jint| x as i64);
                "int[]"
            }
            b'J' => {
                region!(GetLongArrayRegion, jlong, |x: jlong| x);
                "long[]"
            }
            b'F' => {
                region!(GetFloatArrayRegion, jfloat, |x: jfloat| f2i(x));
                "float[]"
            }
            b'D' => {
                region!(GetDoubleArrayRegion, jdouble, |x: jdouble| d2i(x));
                "double[]"
            }
            b'B' | b'Z' => {
                region!(GetByteArrayRegion, jbyte, |x: jbyte| x as i64);
                "byte[]"
            }
            b'C' => {
                region!(GetCharArrayRegion, jchar, |x: jchar| x as i64);
                "char[]"
            }
            b'S' => {
                region!(GetShortArrayRegion, jshort, |x: jshort| x as i64);
                "short[]"
            }
            _ => {
                for (i, v) in values.iter_mut().enumerate() {
                    let x = jni!(
                        env,
                        GetObjectArrayElement,
                        src as jobjectArray,
                        sp + i as i32
                    );
                    *v = self.obj(x) as i64;
                    if !x.is_null() {
                        jni!(env, DeleteLocalRef, x);
                    }
                }
                "java.lang.Object[]"
            }
        };
        if jni!(env, ExceptionCheck) != 0 {
            jni!(env, ExceptionClear);
            return;
        }
        let sid = self.fixed_static(name);
        let (so, dobj) = (self.obj(src), self.obj(dst));
        self.stack_once(e, site);
        self.implicit_branch(so, true, e.loc);
        self.implicit_branch(dobj, true, e.loc);
        let was_ref = std::mem::replace(&mut self.ref_value, elem == b'L' || elem == b'[');
        for (i, &v) in values.iter().enumerate() {
            let idx = (sp + i as i32) as u32;
            let var = self.var((so | ARRAY_VAR, idx), sid);
            self.emit(Kind::Read, var, e.loc, Some(v), false);
        }
        for (i, &v) in values.iter().enumerate() {
            let idx = (dp + i as i32) as u32;
            let var = self.var((dobj | ARRAY_VAR, idx), sid);
            self.emit(Kind::Write, var, e.loc, Some(v), false);
        }
        self.ref_value = was_ref;
    }

    // --- locks ---

    /// `try_`: the acquisition could not have blocked (a successful `tryLock`), which the
    /// deadlock detector must know ([`jrace_trace::ACQUIRE_TRY`]).
    unsafe fn acquire_obj(&mut self, obj: u64, o: jobject, loc: u32, try_: bool) {
        let l = self.lock_id(obj, o);
        let c = self.t.held.entry(obj).or_insert((0, l));
        c.0 += 1;
        if c.0 == 1 {
            if !self.jdk && self.t.lock_stacks_seen.insert(loc) {
                // SAFETY: called from a hook on this thread.
                unsafe { self.record_stack(loc) };
            }
            self.implicit_branch(obj, false, loc);
            let value = try_.then_some(jrace_trace::ACQUIRE_TRY);
            self.emit(Kind::Acquire, l, loc, value, true);
        }
    }

    fn release_obj(&mut self, obj: u64, loc: u32) {
        let Some(c) = self.t.held.get_mut(&obj) else {
            return;
        };
        c.0 -= 1;
        if c.0 == 0 {
            let l = c.1;
            self.t.held.remove(&obj);
            self.emit(Kind::Release, l, loc, None, true);
        }
    }

    /// A monitor entered. In JDK code ([`Cx::jdk`]) also a volatile read of the monitor's
    /// `$monitor`, which its exits write: the JDK's critical sections on one monitor keep
    /// their order (what they do inside is not recorded, so no detector may reorder them).
    unsafe fn monitor_enter(&mut self, obj: u64, o: jobject, loc: u32) {
        if obj == 0 {
            return;
        }
        let first = !self.t.held.contains_key(&obj);
        self.acquire_obj(obj, o, loc, false);
        if self.jdk {
            if first {
                self.sync_var(obj, "$monitor", loc, true, false);
            }
            self.monitor_entered_in_call();
        }
    }

    fn monitor_exit(&mut self, obj: u64, loc: u32) {
        if self.jdk && self.t.held.get(&obj).is_some_and(|c| c.0 == 1) {
            self.sync_var(obj, "$monitor", loc, false, true);
        }
        self.release_obj(obj, loc);
    }

    /// `Object.wait` / `Condition.await` on a held lock: `wait` now, `wake` when it
    /// returns (or at the thread's next event, if it ends by an exception).
    fn wait(&mut self, obj: u64, loc: u32) {
        if let Some(&(_, l)) = self.t.held.get(&obj) {
            self.emit(Kind::Wait, l, loc, None, true);
            self.t.pending_wake = Some(l);
        }
    }

    fn wake(&mut self, obj: u64, loc: u32) {
        if let (Some(l), Some(&(_, held))) = (self.t.pending_wake, self.t.held.get(&obj)) {
            if l == held {
                self.t.pending_wake = None;
                self.emit_one(Kind::Wake, l, loc, None, true);
            }
        }
    }

    fn notify(&mut self, obj: u64, all: bool, loc: u32) {
        if let Some(&(_, l)) = self.t.held.get(&obj) {
            let k = if all { Kind::NotifyAll } else { Kind::Notify };
            self.emit(k, l, loc, None, true);
        }
    }

    /// A volatile read, write or atomic read-modify-write of `<obj>.<field>`.
    fn sync_var(&mut self, obj: u64, field: &'static str, loc: u32, read: bool, write: bool) {
        let sid = self.fixed_static(field);
        let v = self.field_var(obj, sid);
        if read && write {
            // No other thread's pair on this variable in between, as if one atomic event.
            let _g = lock(&self.a.rmw[v as usize % RMW_STRIPES]);
            self.emit(Kind::VRead, v, loc, None, true);
            self.emit(Kind::VWrite, v, loc, None, true);
        } else if read {
            self.emit(Kind::VRead, v, loc, None, true);
        } else if write {
            self.emit(Kind::VWrite, v, loc, None, true);
        }
        // The call returned (await, get, take, lock, ...) because of what it read: a
        // control decision, so predicted runs keep that read's writer (mcm).
        if read && self.a.opts.branches {
            self.emit(Kind::Branch, 0, loc, None, false);
        }
    }

    /// The static id of one of the recorder's own field names (`$sync`, `$state`, ...),
    /// cached per thread.
    fn fixed_static(&mut self, name: &'static str) -> u32 {
        if let Some(&(_, id)) = self.t.fixed.iter().find(|(n, _)| *n == name) {
            return id;
        }
        let id = {
            let mut n = lock(&self.a.names);
            intern_static(self.a, &mut n, name)
        };
        self.t.fixed.push((name, id));
        id
    }

    fn plain_state(&mut self, obj: u64, loc: u32, write: bool) {
        self.implicit_branch(obj, false, loc);
        let sid = self.fixed_static("$state");
        let v = self.field_var(obj, sid);
        let k = if write { Kind::Write } else { Kind::Read };
        self.emit(k, v, loc, None, false);
    }

    // --- calls ---

    unsafe fn call(&mut self, when: When, o: jobject, site: i32) {
        let Some(e) = self.enter_site(site) else {
            return;
        };
        let Resolved::Call(op) = self.resolve(e) else {
            return;
        };
        if o.is_null() {
            return;
        }
        let loc = e.loc;
        if let SiteKind::Call { via: Some(v), .. } = &e.site.kind {
            // `lock.lock()`: a lock first taken here is named by the field.
            self.lock_via = LockVia::Named(v);
        }
        match (op, when) {
            (CallOp::Start, When::Before) => self.fork(o, loc),
            (CallOp::Join, When::After(_)) => self.join(o, loc),
            (CallOp::Wait, When::Before) => {
                let obj = self.obj(o);
                if self.jdk && self.t.held.contains_key(&obj) {
                    self.sync_var(obj, "$monitor", loc, false, true);
                }
                self.wait(obj, loc)
            }
            (CallOp::Wait, When::After(_)) => {
                let obj = self.obj(o);
                self.wake(obj, loc);
                if self.jdk && self.t.held.contains_key(&obj) {
                    self.sync_var(obj, "$monitor", loc, true, false);
                }
            }
            (CallOp::Notify, When::Before) => {
                let obj = self.obj(o);
                self.notify(obj, false, loc)
            }
            (CallOp::NotifyAll, When::Before) => {
                let obj = self.obj(o);
                self.notify(obj, true, loc)
            }
            (CallOp::Interrupt, When::Before) if self.model(o) == ClassModel::Thread => {
                let obj = self.obj(o);
                self.sync_var(obj, "$interrupt", loc, true, true)
            }
            (CallOp::Caught, When::Before) => self.caught(o, loc),
            (CallOp::Interrupted, When::After(Ret::Bool(true)))
                if self.model(o) == ClassModel::Thread =>
            {
                let obj = self.obj(o);
                self.sync_var(obj, "$interrupt", loc, true, false)
            }
            (CallOp::TaskSubmit, _) => {
                let obj = self.obj(o);
                self.sync_var(obj, "$task", loc, false, true)
            }
            (CallOp::TaskStart, _) => {
                let obj = self.obj(o);
                self.sync_var(obj, "$task", loc, true, false)
            }
            (CallOp::TaskEnd, _) => {
                let obj = self.obj(o);
                self.sync_var(obj, "$done", loc, true, true)
            }
            (CallOp::Library, _) => self.library(when, o, site, loc),
            _ => {}
        }
    }

    /// A handler caught `exc`: an InterruptedException means this thread saw its interrupt.
    unsafe fn caught(&mut self, exc: jobject, loc: u32) {
        let env = self.env;
        let java = self.a.java.get().unwrap();
        if java.interrupted_exception.is_null()
            || jni!(env, IsInstanceOf, exc, java.interrupted_exception) == 0
        {
            return;
        }
        let me = jni!(
            env,
            CallStaticObjectMethod,
            java.thread_class,
            java.current_thread
        );
        if me.is_null() {
            jni!(env, ExceptionClear);
            return;
        }
        let obj = self.obj(me);
        jni!(env, DeleteLocalRef, me);
        self.sync_var(obj, "$interrupt", loc, true, false);
    }

    unsafe fn fork(&mut self, o: jobject, loc: u32) {
        if self.model(o) != ClassModel::Thread {
            return;
        }
        let java = self.a.java.get().unwrap();
        let Some(child) = thread_id(self.a, java, self.env, o) else {
            return;
        };
        if lock(&self.a.names).forked.insert(child) {
            self.emit(Kind::Fork, child, loc, None, true);
        }
    }

    unsafe fn join(&mut self, o: jobject, loc: u32) {
        if self.model(o) != ClassModel::Thread {
            return;
        }
        let java = self.a.java.get().unwrap();
        let env = self.env;
        let alive = jni!(
            env,
            CallNonvirtualBooleanMethod,
            o,
            java.thread_class,
            java.is_alive
        );
        if jni!(env, ExceptionCheck) != 0 {
            jni!(env, ExceptionClear);
            return;
        }
        if alive != 0 {
            return;
        }
        let Some(child) = thread_id(self.a, java, env, o) else {
            return;
        };
        if child == self.t.tid {
            return;
        }
        // isAlive() is also false before start(): only a thread that was started (and
        // whose start the trace holds) can have been joined.
        if !lock(&self.a.names).forked.contains(&child) {
            return;
        }
        self.emit(Kind::Join, child, loc, None, true);
    }
}

fn access_kind(write: bool, volatile: bool) -> Kind {
    match (write, volatile) {
        (false, false) => Kind::Read,
        (true, false) => Kind::Write,
        (false, true) => Kind::VRead,
        (true, true) => Kind::VWrite,
    }
}

fn signature_to_name(sig: &str) -> String {
    let mut dims = 0;
    let mut s = sig;
    while let Some(r) = s.strip_prefix('[') {
        dims += 1;
        s = r;
    }
    let base = match s {
        "Z" => "boolean".to_string(),
        "B" => "byte".to_string(),
        "C" => "char".to_string(),
        "S" => "short".to_string(),
        "I" => "int".to_string(),
        "J" => "long".to_string(),
        "F" => "float".to_string(),
        "D" => "double".to_string(),
        _ => s
            .strip_prefix('L')
            .and_then(|x| x.strip_suffix(';'))
            .unwrap_or(s)
            .replace('/', "."),
    };
    base + &"[]".repeat(dims)
}

fn resolve_site(a: &Agent, site: &Site) -> Resolved {
    match &site.kind {
        SiteKind::FieldRead { owner, name, .. }
        | SiteKind::FieldWrite { owner, name, .. }
        | SiteKind::StaticRead { owner, name, .. }
        | SiteKind::StaticWrite { owner, name, .. } => {
            let Some((decl, flags)) = resolve_field(a, owner, name).or_else(|| {
                // A class the hook never saw was loaded before the agent: a JDK class,
                // whose fields the program only reads (System.out and the like).
                a.opts.instruments(owner).then(|| (owner.clone(), 0))
            }) else {
                return Resolved::Skip;
            };
            let is_static = matches!(
                site.kind,
                SiteKind::StaticRead { .. } | SiteKind::StaticWrite { .. }
            );
            let is_final = flags & ACC_FINAL != 0;
            if is_final && !is_static {
                return Resolved::Skip;
            }
            let class = decl.replace('/', ".");
            let mut n = lock(&a.names);
            let static_id = intern_static(a, &mut n, &format!("{class}.{name}"));
            let marker = n.statics.get(&format!("{class}.<clinit>")).copied();
            let init = marker.filter(|m| n.clinit_classes.contains(m));
            Resolved::Field {
                static_id,
                volatile: flags & ACC_VOLATILE != 0,
                init,
                record: !is_final,
            }
        }
        SiteKind::ArrayRead { elem } | SiteKind::ArrayWrite { elem } => {
            let mut n = lock(&a.names);
            let name = format!("{}[]", signature_to_name(elem));
            Resolved::Array {
                static_id: intern_static(a, &mut n, &name),
            }
        }
        SiteKind::Barrier { owner, name, .. } => Resolved::Barrier {
            method: barrier::resolve(a, owner, name),
        },
        SiteKind::Call { name, desc, .. } => Resolved::Call(match (name.as_str(), desc.as_str()) {
            ("start", "()V") => CallOp::Start,
            ("join", "()V" | "(J)V" | "(JI)V") | ("isAlive", "()Z") => CallOp::Join,
            ("interrupt", "()V") => CallOp::Interrupt,
            ("$caught", _) => CallOp::Caught,
            ("isInterrupted", "()Z") => CallOp::Interrupted,
            ("wait", "()V" | "(J)V" | "(JI)V") => CallOp::Wait,
            ("notify", "()V") => CallOp::Notify,
            ("notifyAll", "()V") => CallOp::NotifyAll,
            ("$taskSubmit", _) => CallOp::TaskSubmit,
            ("$taskStart", _) => CallOp::TaskStart,
            ("$taskEnd", _) => CallOp::TaskEnd,
            _ => CallOp::Library,
        }),
        _ => Resolved::Other,
    }
}

/// The access flags of field `owner.name` (the instrumenter's [`crate::instrument::FieldFlags`]),
/// when its declaring class is known.
pub fn field_flags(a: &Agent, owner: &str, name: &str) -> Option<u16> {
    resolve_field(a, owner, name).map(|(_, f)| f)
}

/// A class's JVM signature (`Ljava/lang/String;`, `[I`).
///
/// # Safety
/// `jv` is the agent's JVMTI environment and `k` a live class reference.
pub unsafe fn class_signature(jv: *mut jvmtiEnv, k: jclass) -> Option<String> {
    ordered::class_signature(jv, k)
}

/// Name, super class, interfaces and fields of a loaded class, asked from the JVM.
///
/// # Safety
/// `jv` is the agent's JVMTI environment, `env` this thread's JNI environment and `k` a
/// live class reference.
pub unsafe fn describe_class(jv: *mut jvmtiEnv, env: *mut JNIEnv, k: jclass) -> Option<ClassInfo> {
    let internal = |sig: String| -> Option<String> {
        sig.strip_prefix('L')
            .and_then(|s| s.strip_suffix(';'))
            .map(str::to_string)
    };
    let name = internal(class_signature(jv, k)?)?;
    let sup = jni!(env, GetSuperclass, k);
    let super_name = if sup.is_null() {
        None
    } else {
        let s = class_signature(jv, sup).and_then(internal);
        jni!(env, DeleteLocalRef, sup);
        s
    };
    let mut interfaces = Vec::new();
    let mut n: jint = 0;
    let mut ifs: *mut jclass = std::ptr::null_mut();
    if jvmti!(jv, GetImplementedInterfaces, k, &mut n, &mut ifs) == 0 && !ifs.is_null() {
        for &i in std::slice::from_raw_parts(ifs, n.max(0) as usize) {
            if let Some(s) = class_signature(jv, i).and_then(internal) {
                interfaces.push(s);
            }
            jni!(env, DeleteLocalRef, i);
        }
        jvmti!(jv, Deallocate, ifs as *mut u8);
    }
    let mut fields = Vec::new();
    let mut fs: *mut jfieldID = std::ptr::null_mut();
    if jvmti!(jv, GetClassFields, k, &mut n, &mut fs) == 0 && !fs.is_null() {
        for &f in std::slice::from_raw_parts(fs, n.max(0) as usize) {
            let (mut fname, mut fsig): (*mut c_char, *mut c_char) =
                (std::ptr::null_mut(), std::ptr::null_mut());
            let mut mods: jint = 0;
            if jvmti!(
                jv,
                GetFieldName,
                k,
                f,
                &mut fname,
                &mut fsig,
                std::ptr::null_mut()
            ) != 0
                || jvmti!(jv, GetFieldModifiers, k, f, &mut mods) != 0
            {
                continue;
            }
            let take = |p: *mut c_char| {
                if p.is_null() {
                    return String::new();
                }
                let s = CStr::from_ptr(p).to_string_lossy().into_owned();
                jvmti!(jv, Deallocate, p as *mut u8);
                s
            };
            fields.push((take(fname), take(fsig), mods as u16));
        }
        jvmti!(jv, Deallocate, fs as *mut u8);
    }
    Some(ClassInfo {
        name,
        super_name,
        interfaces,
        fields,
    })
}

/// Finds the class declaring field `name` as seen from `owner` (JVMS §5.4.3.2 order:
/// the class, its interfaces, then its superclass), with the field's flags.
fn resolve_field(a: &Agent, owner: &str, name: &str) -> Option<(String, u16)> {
    let classes = lock(&a.classes);
    let mut todo = vec![owner.to_string()];
    let mut seen = FxHashSet::default();
    while let Some(c) = todo.pop() {
        if !seen.insert(c.clone()) {
            continue;
        }
        let Some(info) = classes.get(&c) else {
            continue;
        };
        if let Some(f) = info.fields.iter().find(|f| f.0 == name) {
            return Some((c, f.2));
        }
        if let Some(s) = &info.super_name {
            todo.push(s.clone());
        }
        todo.extend(info.interfaces.iter().rev().cloned());
    }
    None
}

// ---------------------------------------------------------------------------------------
// The natives

type Env = *mut JNIEnv;

fn f2i(v: f32) -> i64 {
    v.to_bits() as i64
}
fn d2i(v: f64) -> i64 {
    v.to_bits() as i64
}

unsafe extern "C" fn rd_i(env: Env, _: jclass, v: jint, o: jobject, site: jint) {
    load_hook(env, site, |cx| cx.field(false, o, site, v as i64));
}
unsafe extern "C" fn rd_j(env: Env, _: jclass, v: jlong, o: jobject, site: jint) {
    load_hook(env, site, |cx| cx.field(false, o, site, v));
}
unsafe extern "C" fn rd_f(env: Env, _: jclass, v: jfloat, o: jobject, site: jint) {
    load_hook(env, site, |cx| cx.field(false, o, site, f2i(v)));
}
unsafe extern "C" fn rd_d(env: Env, _: jclass, v: jdouble, o: jobject, site: jint) {
    load_hook(env, site, |cx| cx.field(false, o, site, d2i(v)));
}
unsafe extern "C" fn rd_a(env: Env, _: jclass, v: jobject, o: jobject, site: jint) {
    load_hook(env, site, |cx| {
        let v = cx.ref_value_of(v);
        cx.field(false, o, site, v)
    });
}
unsafe extern "C" fn wr_i(env: Env, _: jclass, o: jobject, v: jint, site: jint) {
    hook(env, site, |cx| cx.field(true, o, site, v as i64));
}
unsafe extern "C" fn wr_j(env: Env, _: jclass, o: jobject, v: jlong, site: jint) {
    hook(env, site, |cx| cx.field(true, o, site, v));
}
unsafe extern "C" fn wr_f(env: Env, _: jclass, o: jobject, v: jfloat, site: jint) {
    hook(env, site, |cx| cx.field(true, o, site, f2i(v)));
}
unsafe extern "C" fn wr_d(env: Env, _: jclass, o: jobject, v: jdouble, site: jint) {
    hook(env, site, |cx| cx.field(true, o, site, d2i(v)));
}
unsafe extern "C" fn wr_a(env: Env, _: jclass, o: jobject, v: jobject, site: jint) {
    hook(env, site, |cx| {
        let id = cx.ref_value_of(v);
        cx.field(true, o, site, id);
        cx.bp_ref_write(o, v);
    });
}
unsafe extern "C" fn sr_i(env: Env, _: jclass, v: jint, site: jint) {
    load_hook(env, site, |cx| cx.static_field(false, site, v as i64));
}
unsafe extern "C" fn sr_j(env: Env, _: jclass, v: jlong, site: jint) {
    load_hook(env, site, |cx| cx.static_field(false, site, v));
}
unsafe extern "C" fn sr_f(env: Env, _: jclass, v: jfloat, site: jint) {
    load_hook(env, site, |cx| cx.static_field(false, site, f2i(v)));
}
unsafe extern "C" fn sr_d(env: Env, _: jclass, v: jdouble, site: jint) {
    load_hook(env, site, |cx| cx.static_field(false, site, d2i(v)));
}
unsafe extern "C" fn sr_a(env: Env, _: jclass, v: jobject, site: jint) {
    load_hook(env, site, |cx| {
        let v = cx.ref_value_of(v);
        cx.static_field(false, site, v)
    });
}
unsafe extern "C" fn sw_i(env: Env, _: jclass, v: jint, site: jint) {
    hook(env, site, |cx| cx.static_field(true, site, v as i64));
}
unsafe extern "C" fn sw_j(env: Env, _: jclass, v: jlong, site: jint) {
    hook(env, site, |cx| cx.static_field(true, site, v));
}
unsafe extern "C" fn sw_f(env: Env, _: jclass, v: jfloat, site: jint) {
    hook(env, site, |cx| cx.static_field(true, site, f2i(v)));
}
unsafe extern "C" fn sw_d(env: Env, _: jclass, v: jdouble, site: jint) {
    hook(env, site, |cx| cx.static_field(true, site, d2i(v)));
}
unsafe extern "C" fn sw_a(env: Env, _: jclass, v: jobject, site: jint) {
    hook(env, site, |cx| {
        let v = cx.ref_value_of(v);
        cx.static_field(true, site, v)
    });
}
unsafe extern "C" fn ar_i(env: Env, _: jclass, v: jint, a: jobject, i: jint, site: jint) {
    load_hook(env, site, |cx| cx.array(false, a, i, site, v as i64));
}
unsafe extern "C" fn ar_j(env: Env, _: jclass, v: jlong, a: jobject, i: jint, site: jint) {
    load_hook(env, site, |cx| cx.array(false, a, i, site, v));
}
unsafe extern "C" fn ar_f(env: Env, _: jclass, v: jfloat, a: jobject, i: jint, site: jint) {
    load_hook(env, site, |cx| cx.array(false, a, i, site, f2i(v)));
}
unsafe extern "C" fn ar_d(env: Env, _: jclass, v: jdouble, a: jobject, i: jint, site: jint) {
    load_hook(env, site, |cx| cx.array(false, a, i, site, d2i(v)));
}
unsafe extern "C" fn ar_a(env: Env, _: jclass, v: jobject, a: jobject, i: jint, site: jint) {
    load_hook(env, site, |cx| {
        let v = cx.ref_value_of(v);
        cx.array(false, a, i, site, v)
    });
}
unsafe extern "C" fn aw_i(env: Env, _: jclass, a: jobject, i: jint, v: jint, site: jint) {
    hook(env, site, |cx| cx.array(true, a, i, site, v as i64));
}
unsafe extern "C" fn aw_j(env: Env, _: jclass, a: jobject, i: jint, v: jlong, site: jint) {
    hook(env, site, |cx| cx.array(true, a, i, site, v));
}
unsafe extern "C" fn aw_f(env: Env, _: jclass, a: jobject, i: jint, v: jfloat, site: jint) {
    hook(env, site, |cx| cx.array(true, a, i, site, f2i(v)));
}
unsafe extern "C" fn aw_d(env: Env, _: jclass, a: jobject, i: jint, v: jdouble, site: jint) {
    hook(env, site, |cx| cx.array(true, a, i, site, d2i(v)));
}
unsafe extern "C" fn aw_a(env: Env, _: jclass, a: jobject, i: jint, v: jobject, site: jint) {
    hook(env, site, |cx| {
        let id = cx.ref_value_of(v);
        cx.array(true, a, i, site, id);
        cx.bp_ref_write(a, v);
    });
}
unsafe extern "C" fn menter(env: Env, _: jclass, o: jobject, site: jint) {
    hook(env, site, |cx| {
        if let Some(e) = cx.enter_site(site) {
            let obj = cx.obj(o);
            if let SiteKind::MonitorEnter { via: Some(v) } = &e.site.kind {
                cx.lock_via = LockVia::Named(v);
            }
            cx.monitor_enter(obj, o, e.loc)
        }
    });
}
unsafe extern "C" fn mexit(env: Env, _: jclass, o: jobject, site: jint) {
    hook(env, site, |cx| {
        if let Some(e) = cx.enter_site(site) {
            let obj = cx.obj(o);
            cx.monitor_exit(obj, e.loc)
        }
    });
}
unsafe extern "C" fn senter(env: Env, _: jclass, o: jobject, site: jint) {
    hook(env, site, |cx| {
        if let Some(e) = cx.enter_site(site) {
            let obj = cx.obj(o);
            cx.t.sync_stack.push(obj);
            if let SiteKind::SyncMethod { is_static: true } = e.site.kind {
                cx.lock_via = LockVia::ClassOf(&e.site.loc.class);
            }
            cx.monitor_enter(obj, o, e.loc)
        }
    });
}
unsafe extern "C" fn sexit(env: Env, _: jclass, o: jobject, site: jint) {
    hook(env, site, |cx| {
        if let Some(e) = cx.enter_site(site) {
            let obj = cx.obj(o);
            if cx.t.sync_stack.last() == Some(&obj) {
                cx.t.sync_stack.pop();
            }
            cx.monitor_exit(obj, e.loc)
        }
    });
}
unsafe extern "C" fn sthrow(env: Env, _: jclass, site: jint) {
    hook(env, site, |cx| {
        if let (Some(e), Some(obj)) = (cx.enter_site(site), cx.t.sync_stack.pop()) {
            cx.monitor_exit(obj, e.loc)
        }
    });
}
unsafe extern "C" fn before(env: Env, _: jclass, o: jobject, site: jint) {
    hook(env, site, |cx| cx.call(When::Before, o, site));
}
unsafe extern "C" fn after(env: Env, _: jclass, o: jobject, site: jint) {
    hook(env, site, |cx| cx.call(When::After(Ret::Void), o, site));
}
unsafe extern "C" fn after_z(env: Env, _: jclass, r: jboolean, o: jobject, site: jint) {
    hook(env, site, |cx| {
        cx.call(When::After(Ret::Bool(r != 0)), o, site)
    });
}
unsafe extern "C" fn after_a(env: Env, _: jclass, r: jobject, o: jobject, site: jint) {
    hook(env, site, |cx| cx.call(When::After(Ret::Ref(r)), o, site));
}
unsafe extern "C" fn tenter(env: Env, _: jclass, o: jobject, site: jint) {
    // A run()/call() of an object some hooked scheduler published (java.util.Timer; the
    // executors' own hooks cover their tasks): the task starts after its submission.
    hook(env, site, |cx| {
        let Some(e) = cx.site(site) else { return };
        let obj = cx.obj(o);
        if obj == 0 {
            return;
        }
        let sid = cx.fixed_static("$task");
        if cx.a.vars.get((obj, sid)).is_some() {
            cx.sync_var(obj, "$task", e.loc, true, false);
        }
    });
}
unsafe extern "C" fn texit(env: Env, _: jclass, _o: jobject, _site: jint) {
    let _ = env;
}
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn arraycopy(
    env: Env,
    _: jclass,
    src: jobject,
    sp: jint,
    dst: jobject,
    dp: jint,
    n: jint,
    site: jint,
) {
    hook(env, site, |cx| cx.arraycopy(src, sp, dst, dp, n, site));
}
unsafe extern "C" fn qenter(_env: Env, _: jclass, _site: jint) {
    let _ = TLS.try_with(|t| t.quiet.set(t.quiet.get().saturating_add(1)));
}
unsafe extern "C" fn qexit(_env: Env, _: jclass, _site: jint) {
    let _ = TLS.try_with(|t| t.quiet.set(t.quiet.get().saturating_sub(1)));
}
unsafe extern "C" fn br(env: Env, _: jclass, site: jint) {
    hook(env, site, |cx| {
        if let Some(e) = cx.site(site) {
            cx.emit(Kind::Branch, 0, e.loc, None, false)
        }
    });
}
unsafe extern "C" fn clinit(env: Env, _: jclass, site: jint) {
    hook(env, site, |cx| {
        let Some(e) = cx.site(site) else { return };
        let a = cx.a;
        let m = {
            let mut n = lock(&a.names);
            intern_static(a, &mut n, &format!("{}.<clinit>", e.site.loc.class))
        };
        let v = cx.field_var(0, m);
        cx.t.seen_init.insert(m);
        cx.emit(Kind::VWrite, v, e.loc, Some(1), true);
        lock(&a.names).init_done.insert(m);
    });
}

/// Binds every native of `jrace.rt.R`.
///
/// # Safety
/// `env` is the calling thread's JNI environment and `class` the defined runtime class.
pub unsafe fn register_natives(env: *mut JNIEnv, class: jclass) -> Result<(), String> {
    const O: &str = "Ljava/lang/Object;";
    let o = O;
    let table: Vec<(&str, String, *mut c_void)> = vec![
        ("rdI", format!("(I{o}I)V"), rd_i as *mut c_void),
        ("rdJ", format!("(J{o}I)V"), rd_j as *mut c_void),
        ("rdF", format!("(F{o}I)V"), rd_f as *mut c_void),
        ("rdD", format!("(D{o}I)V"), rd_d as *mut c_void),
        ("rdA", format!("({o}{o}I)V"), rd_a as *mut c_void),
        ("wrI", format!("({o}II)V"), wr_i as *mut c_void),
        ("wrJ", format!("({o}JI)V"), wr_j as *mut c_void),
        ("wrF", format!("({o}FI)V"), wr_f as *mut c_void),
        ("wrD", format!("({o}DI)V"), wr_d as *mut c_void),
        ("wrA", format!("({o}{o}I)V"), wr_a as *mut c_void),
        ("srI", "(II)V".into(), sr_i as *mut c_void),
        ("srJ", "(JI)V".into(), sr_j as *mut c_void),
        ("srF", "(FI)V".into(), sr_f as *mut c_void),
        ("srD", "(DI)V".into(), sr_d as *mut c_void),
        ("srA", format!("({o}I)V"), sr_a as *mut c_void),
        ("swI", "(II)V".into(), sw_i as *mut c_void),
        ("swJ", "(JI)V".into(), sw_j as *mut c_void),
        ("swF", "(FI)V".into(), sw_f as *mut c_void),
        ("swD", "(DI)V".into(), sw_d as *mut c_void),
        ("swA", format!("({o}I)V"), sw_a as *mut c_void),
        ("arI", format!("(I{o}II)V"), ar_i as *mut c_void),
        ("arJ", format!("(J{o}II)V"), ar_j as *mut c_void),
        ("arF", format!("(F{o}II)V"), ar_f as *mut c_void),
        ("arD", format!("(D{o}II)V"), ar_d as *mut c_void),
        ("arA", format!("({o}{o}II)V"), ar_a as *mut c_void),
        ("awI", format!("({o}III)V"), aw_i as *mut c_void),
        ("awJ", format!("({o}IJI)V"), aw_j as *mut c_void),
        ("awF", format!("({o}IFI)V"), aw_f as *mut c_void),
        ("awD", format!("({o}IDI)V"), aw_d as *mut c_void),
        ("awA", format!("({o}I{o}I)V"), aw_a as *mut c_void),
        ("menter", format!("({o}I)V"), menter as *mut c_void),
        ("mexit", format!("({o}I)V"), mexit as *mut c_void),
        ("senter", format!("({o}I)V"), senter as *mut c_void),
        ("sexit", format!("({o}I)V"), sexit as *mut c_void),
        ("sthrow", "(I)V".into(), sthrow as *mut c_void),
        ("before0", format!("({o}I)V"), before as *mut c_void),
        ("after0", format!("({o}I)V"), after as *mut c_void),
        ("afterZ0", format!("(Z{o}I)V"), after_z as *mut c_void),
        ("afterA0", format!("({o}{o}I)V"), after_a as *mut c_void),
        ("resolve", "(I)I".into(), ordered::resolve as *mut c_void),
        ("qenter", "(I)V".into(), qenter as *mut c_void),
        ("qexit", "(I)V".into(), qexit as *mut c_void),
        ("uR", format!("({o}JJI)V"), ordered::u_r as *mut c_void),
        ("uW", format!("({o}JJI)V"), ordered::u_w as *mut c_void),
        ("uRW", format!("({o}JJJI)V"), ordered::u_rw as *mut c_void),
        ("uRA", format!("({o}J{o}I)V"), ordered::u_ra as *mut c_void),
        ("uWA", format!("({o}J{o}I)V"), ordered::u_wa as *mut c_void),
        (
            "uRWA",
            format!("({o}J{o}{o}I)V"),
            ordered::u_rwa as *mut c_void,
        ),
        ("tenter", format!("({o}I)V"), tenter as *mut c_void),
        ("texit", format!("({o}I)V"), texit as *mut c_void),
        (
            "arraycopy",
            format!("({o}I{o}III)V"),
            arraycopy as *mut c_void,
        ),
        (
            "bpenter0",
            "(II)I".into(),
            barrier::bp_enter0 as *mut c_void,
        ),
        (
            "bpenter1",
            format!("(I{o}I)I"),
            barrier::bp_enter1 as *mut c_void,
        ),
        (
            "bpenter2",
            format!("(I{o}{o}I)I"),
            barrier::bp_enter2 as *mut c_void,
        ),
        (
            "bpenter3",
            format!("(I{o}{o}{o}I)I"),
            barrier::bp_enter3 as *mut c_void,
        ),
        (
            "bpenterN",
            format!("(I[{o}I)I"),
            barrier::bp_enter_n as *mut c_void,
        ),
        ("bpexit", "(I)V".into(), barrier::bp_exit as *mut c_void),
        (
            "bpunwind",
            "(II)V".into(),
            barrier::bp_unwind as *mut c_void,
        ),
        ("br", "(I)V".into(), br as *mut c_void),
        ("clinit", "(I)V".into(), clinit as *mut c_void),
    ];
    let names: Vec<(CString, CString)> = table
        .iter()
        .map(|(n, s, _)| (CString::new(*n).unwrap(), CString::new(s.as_str()).unwrap()))
        .collect();
    let methods: Vec<JNINativeMethod> = table
        .iter()
        .zip(&names)
        .map(|((_, _, f), (n, s))| JNINativeMethod {
            name: n.as_ptr() as *mut c_char,
            signature: s.as_ptr() as *mut c_char,
            fnPtr: *f,
        })
        .collect();
    let r = jni!(
        env,
        RegisterNatives,
        class,
        methods.as_ptr(),
        methods.len() as jint
    );
    if r != 0 {
        jni!(env, ExceptionDescribe);
        jni!(env, ExceptionClear);
        return Err(format!("RegisterNatives failed ({r})"));
    }
    Ok(())
}
