//! The contract between the instrumenter (which rewrites bytecode at class load) and the
//! runtime (the natives behind `jrace.rt.R`, which record events): every instrumented
//! instruction gets a *site*, an `i32` the instrumented code passes to its hook. The site
//! tells the runtime where the event happens (class, method, file:line, bci) and what it
//! touches (which field, which call), so the bytecode passes no strings and the trace
//! interns every name once.
//!
//! The instrumenter allocates sites through a [`SiteSink`]; the agent's sink stores them
//! in a global table the natives index, tests use [`SiteList`].

/// Where an instrumented instruction is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// Class name with dots (`account.Account`, `Main$1`).
    pub class: String,
    /// Method name (`deposit`, `<init>`, `lambda$main$0`).
    pub method: String,
    /// From the SourceFile attribute, when the class has one.
    pub file: Option<String>,
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
    /// monitorenter (`menter`, after) / monitorexit (`mexit`, before).
    MonitorEnter,
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
}

/// One site: what and where.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Site {
    pub kind: SiteKind,
    pub loc: Location,
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

/// Whether a non-static call from instrumented code to `owner.name desc` gets
/// `before`/`after` hooks, i.e. whether the runtime may want to record something for it:
/// thread start/join, wait/notify, calls into `java.util` (collections,
/// `java.util.concurrent` locks, atomics, queues, latches, executors, futures) and
/// `VarHandle` accesses. Every other call is left alone.
pub fn modelled_call(owner: &str, name: &str, desc: &str) -> bool {
    if name == "<init>" {
        return false;
    }
    match name {
        "start" if desc == "()V" => return true,
        "join" if desc == "()V" || desc == "(J)V" || desc == "(JI)V" => return true,
        "wait" if desc == "()V" || desc == "(J)V" || desc == "(JI)V" => return true,
        "notify" | "notifyAll" if desc == "()V" => return true,
        // Thread termination seen through isAlive() orders like join(); an interrupt
        // orders before isInterrupted() seeing it (JLS 17.4.4).
        "isAlive" | "isInterrupted" if desc == "()Z" => return true,
        "interrupt" if desc == "()V" => return true,
        _ => {}
    }
    owner.starts_with("java/util/") || owner == "java/lang/invoke/VarHandle"
}
