//! The contract between the instrumenter (which rewrites bytecode at class load) and the
//! runtime (the natives behind `jrace.rt.R`, which record events): every instrumented
//! instruction gets a *site*, an `i32` the instrumented code passes to its hook. The site
//! tells the runtime where the event happens (class, method, file:line, bci) and what it
//! touches (which field, which call), so the bytecode passes no strings and the trace
//! interns every name once.
//!
//! The instrumenter allocates sites through a [`SiteSink`]; the agent's sink stores them
//! in a global table the natives index, tests use [`SiteList`].

use std::sync::Arc;

/// Where an instrumented instruction is. The names are shared by every site of a class or
/// method (a class gets a site per instrumented instruction).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// Class name with dots (`account.Account`, `Main$1`).
    pub class: Arc<str>,
    /// Method name (`deposit`, `<init>`, `lambda$main$0`).
    pub method: Arc<str>,
    /// From the SourceFile attribute, when the class has one.
    pub file: Option<Arc<str>>,
    /// From the LineNumberTable, when the method has one.
    pub line: Option<u32>,
    /// Bytecode index of the instruction in the original (uninstrumented) method.
    pub bci: u32,
}

/// What a site does. Class names are internal names (`java/util/List`), as in the
/// constant pool; descriptors are JVM descriptors.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SiteKind {
    /// getfield (hook `rd*`, after) / putfield (hook `wr*`, before). `owner` is the class
    /// named by the fieldref; the runtime resolves the declaring class and whether the
    /// field is volatile or final.
    FieldRead {
        owner: String,
        name: String,
        desc: String,
    },
    FieldWrite {
        owner: String,
        name: String,
        desc: String,
    },
    /// getstatic (`sr*`, after) / putstatic (`sw*`, before).
    StaticRead {
        owner: String,
        name: String,
        desc: String,
    },
    StaticWrite {
        owner: String,
        name: String,
        desc: String,
    },
    /// xaload (`ar*`, after) / xastore (`aw*`, before); `elem` is the element descriptor
    /// the opcode implies (`I`, `J`, `F`, `D`, `B` for baload/bastore (byte or boolean),
    /// `C`, `S`, `Ljava/lang/Object;` for aaload/aastore).
    ArrayRead {
        elem: String,
    },
    ArrayWrite {
        elem: String,
    },
    /// monitorenter (`menter`, after) / monitorexit (`mexit`, before). `via`: where the
    /// monitor object came from when the bytecode shows it (`pkg.Class.field` read just
    /// before, or the class literal `pkg.Class.class`), to name the lock in reports.
    MonitorEnter {
        via: Option<String>,
    },
    MonitorExit,
    /// A synchronized method: `senter` at entry, `sexit` before each return, `sthrow` in
    /// the catch-all handler. `is_static`: the monitor is the class object.
    SyncMethod {
        is_static: bool,
    },
    /// A call the runtime models: invokevirtual/invokeinterface/invokespecial (non-static
    /// calls only) whose receiver is passed to `before`/`after`/`afterZ`. See
    /// [`modelled_call`] for which calls get one.
    Call {
        owner: String,
        name: String,
        desc: String,
        /// Where the receiver of a call without arguments came from (as for
        /// `MonitorEnter`): names a `java.util.concurrent` lock in reports.
        via: Option<String>,
    },
    /// Entry/exit of an instance method `run()V` or `call()Ljava/lang/Object;` of an
    /// instrumented class (`tenter`/`texit`): the start and end of a task an executor runs.
    Task,
    /// A call into excluded code bracketed as a BarrierPair (`bpenter*` before,
    /// `bpexit` after a normal return): the call's symbolic owner, name and descriptor.
    Barrier {
        owner: String,
        name: String,
        desc: String,
    },
    /// An exception handler (or the catch-all handler) of a method with BarrierPair calls
    /// (`bpunwind`): the BarrierPairs this frame opened end here.
    BarrierUnwind,
    /// A conditional jump or switch (`br`).
    Branch,
    /// End of `<clinit>` (`clinit`): the class named in the location is initialized.
    ClassInit,
    /// After `new C` (`cu`) or a normal return from `invokestatic C.m` (`cu`), or from
    /// `Class.forName` (`cuc`, with the class returned): the JVM initialized the class
    /// before it went on (JLS 12.4.1), so whatever its `<clinit>` wrote is ordered before
    /// what follows. `class`: C (empty for `forName`).
    ClassUse {
        class: String,
    },
    /// Entry (`qenter`) and exits (`qexit`, also in a catch-all handler) of a JDK method
    /// whose synchronization is the JVM's, not the program's
    /// ([`crate::jdksync::quiet_method`]).
    Quiet,
    /// An ordered `Unsafe` access replaced by its wrapper in `jrace.rt.U`
    /// ([`crate::unsafe_ops`]), which passes the object and offset it touches.
    Ordered {
        owner: String,
        name: String,
        desc: String,
    },
}

/// One site: what and where.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Site {
    pub kind: SiteKind,
    pub loc: Location,
    /// In a JDK class instrumented for its synchronization only ([`crate::jdksync`]): its
    /// events are the JDK's own, which a modelled call of the program may replace or drop.
    pub jdk: bool,
    /// In a JDK class that orders plain accesses with fences (`VarHandle.acquireFence`,
    /// `Unsafe.loadFence`, ...): its plain field and array accesses synchronize too.
    pub fenced: bool,
}

/// Where the instrumenter puts the sites it allocates.
pub trait SiteSink {
    /// Registers a site and returns its id (a non-negative `i32`, passed to the hook).
    fn site(&mut self, site: Site) -> i32;
}

/// A plain list of sites (id = index), for tests and tools.
#[derive(Clone, Debug, Default)]
pub struct SiteList {
    pub sites: Vec<Site>,
}

impl SiteSink for SiteList {
    fn site(&mut self, site: Site) -> i32 {
        self.sites.push(site);
        (self.sites.len() - 1) as i32
    }
}

/// Fields of a class as the runtime needs them to resolve field sites: every class the
/// hook sees (instrumented or not) is described once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassInfo {
    /// Internal name.
    pub name: String,
    pub super_name: Option<String>,
    pub interfaces: Vec<String>,
    /// (name, descriptor, access flags) of every declared field.
    pub fields: Vec<(String, String, u16)>,
}

/// `Thread.join(Duration)`'s descriptor (JDK 19+): true when the thread has terminated.
pub const JOIN_DURATION_DESC: &str = "(Ljava/time/Duration;)Z";

/// `Thread.getState()`'s descriptor.
pub const THREAD_STATE_DESC: &str = "()Ljava/lang/Thread$State;";

/// Whether a non-static call from instrumented code to `owner.name desc` gets
/// `before`/`after` hooks, i.e. whether the runtime may want to record something for it:
/// thread start/join, wait/notify, calls into `java.util` (collections,
/// `java.util.concurrent` locks, queues, latches, executors, futures), and calls that may
/// reach one of those through a subclass: a method named like one of them on a class of
/// the program (the runtime decides by the receiver's class when the call runs, and a site
/// whose class cannot extend a JDK class costs a flag test from then on). Every other call
/// is left alone.
pub fn modelled_call(owner: &str, name: &str, desc: &str) -> bool {
    if name == "<init>" {
        return false;
    }
    match name {
        "start" if desc == "()V" => return true,
        "join" if matches!(desc, "()V" | "(J)V" | "(JI)V" | JOIN_DURATION_DESC) => return true,
        // Thread termination seen through isAlive() (or getState() returning TERMINATED)
        // orders like join(); an interrupt orders before isInterrupted() seeing it
        // (JLS 17.4.4).
        "isAlive" | "isInterrupted" if desc == "()Z" => return true,
        "getState" if desc == THREAD_STATE_DESC => return true,
        "interrupt" if desc == "()V" => return true,
        _ if is_wait_or_notify(name, desc) => return true,
        _ => {}
    }
    if owner.starts_with("java/util/") {
        return true;
    }
    let jdk = ["java/", "javax/", "jdk/", "sun/", "com/sun/", "["]
        .iter()
        .any(|p| owner.starts_with(p));
    !jdk && SUBCLASS_NAMES.contains(&name)
}

/// [`modelled_call`] for a call the symbolic owner of which alone makes modelled (not one
/// modelled because of its name only): such a call is never a BarrierPair.
pub fn modelled_by_owner(owner: &str, name: &str, desc: &str) -> bool {
    modelled_call(owner, name, desc) && (owner.starts_with("java/") || is_thread_sync(name, desc))
}

/// `Object.wait()`, `wait(long)`, `wait(long, int)`, `notify()`, `notifyAll()`.
pub fn is_wait_or_notify(name: &str, desc: &str) -> bool {
    match name {
        "wait" => desc == "()V" || desc == "(J)V" || desc == "(JI)V",
        "notify" | "notifyAll" => desc == "()V",
        _ => false,
    }
}

/// [`is_wait_or_notify`], `Thread.start()` and `Thread.join()` (the calls the JDK's own
/// code gets hooks for, see [`crate::jdksync`]).
pub fn is_thread_sync(name: &str, desc: &str) -> bool {
    is_wait_or_notify(name, desc)
        || (name == "start" && desc == "()V")
        || (name == "join" && matches!(desc, "()V" | "(J)V" | "(JI)V"))
}

/// Methods of the modelled `java.util` classes a subclass of one of them may inherit: a
/// call of one of these on a class of the program is hooked (see [`modelled_call`]).
const SUBCLASS_NAMES: &[&str] = &[
    "lock",
    "lockInterruptibly",
    "tryLock",
    "unlock",
    "await",
    "awaitNanos",
    "awaitUninterruptibly",
    "awaitUntil",
    "signal",
    "signalAll",
    "put",
    "take",
    "offer",
    "poll",
    "peek",
    "add",
    "remove",
    "contains",
    "containsKey",
    "get",
    "putIfAbsent",
    "iterator",
    "countDown",
    "acquire",
    "tryAcquire",
    "release",
    "drainTo",
    "transfer",
    "tryTransfer",
    "exchange",
];
