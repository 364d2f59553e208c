//! The event model (docs/EVENTS.md), as compact Rust values.
//!
//! An [`Event`] is 24 bytes and `Copy`: detectors stream tens of millions of them, so
//! every name (thread, variable, lock, location, method) is an interned `u32` whose text
//! lives in [`Symbols`]. The one kind-dependent operand is `target`; `value` carries the
//! accessed value, or the reachable-set id of an `enter`.

use rustc_hash::FxHashMap as HashMap;

pub type ThreadId = u32;
pub type VarId = u32;
pub type LockId = u32;
pub type LocId = u32;
pub type MethodId = u32;
pub type ObjSetId = u32;

/// What an event does. The operand in [`Event::target`] depends on the kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Kind {
    /// Plain read: `target` is a [`VarId`].
    Read = 0,
    /// Plain write: `target` is a [`VarId`].
    Write = 1,
    /// Volatile or atomic read: synchronizes, never reported.
    VRead = 2,
    /// Volatile or atomic write.
    VWrite = 3,
    /// Lock acquire: `target` is a [`LockId`].
    Acquire = 4,
    /// Lock release: `target` is a [`LockId`].
    Release = 5,
    /// `Thread.start` in the parent: `target` is the child's [`ThreadId`].
    Fork = 6,
    /// `Thread.join` returned: `target` is the joined [`ThreadId`].
    Join = 7,
    /// First event of a thread.
    Begin = 8,
    /// Last event of a thread.
    End = 9,
    /// `Object.wait` releasing the monitor `target`.
    Wait = 10,
    /// Return from `Object.wait`: the monitor `target` is re-acquired.
    Wake = 11,
    /// `Object.notify` on monitor `target`.
    Notify = 12,
    /// `Object.notifyAll` on monitor `target`.
    NotifyAll = 13,
    /// A conditional jump, switch or implicit control point.
    Branch = 14,
    /// Call into excluded code: `target` is a [`MethodId`], `value` an [`ObjSetId`].
    Enter = 15,
    /// Return from excluded code: `target` is a [`MethodId`].
    Exit = 16,
}

impl Kind {
    pub const ALL: [Kind; 17] = [
        Kind::Read,
        Kind::Write,
        Kind::VRead,
        Kind::VWrite,
        Kind::Acquire,
        Kind::Release,
        Kind::Fork,
        Kind::Join,
        Kind::Begin,
        Kind::End,
        Kind::Wait,
        Kind::Wake,
        Kind::Notify,
        Kind::NotifyAll,
        Kind::Branch,
        Kind::Enter,
        Kind::Exit,
    ];

    pub fn from_u8(b: u8) -> Option<Kind> {
        Kind::ALL.get(b as usize).copied()
    }

    /// Plain or volatile access of a variable.
    pub fn is_access(self) -> bool {
        matches!(self, Kind::Read | Kind::Write | Kind::VRead | Kind::VWrite)
    }
    /// Plain (reportable) access.
    pub fn is_plain_access(self) -> bool {
        matches!(self, Kind::Read | Kind::Write)
    }
    pub fn is_write(self) -> bool {
        matches!(self, Kind::Write | Kind::VWrite)
    }
    /// Kinds whose `target` is a lock.
    pub fn has_lock(self) -> bool {
        matches!(
            self,
            Kind::Acquire
                | Kind::Release
                | Kind::Wait
                | Kind::Wake
                | Kind::Notify
                | Kind::NotifyAll
        )
    }
    /// Kinds whose `target` is a thread.
    pub fn has_thread(self) -> bool {
        matches!(self, Kind::Fork | Kind::Join)
    }
    /// Kinds whose `target` is a method.
    pub fn has_method(self) -> bool {
        matches!(self, Kind::Enter | Kind::Exit)
    }

    /// The operation's name as used in reports ("read", "write", ...).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::VRead => "vread",
            Kind::VWrite => "vwrite",
            Kind::Acquire => "acquire",
            Kind::Release => "release",
            Kind::Fork => "fork",
            Kind::Join => "join",
            Kind::Begin => "begin",
            Kind::End => "end",
            Kind::Wait => "wait",
            Kind::Wake => "wake",
            Kind::Notify => "notify",
            Kind::NotifyAll => "notifyall",
            Kind::Branch => "branch",
            Kind::Enter => "enter",
            Kind::Exit => "exit",
        }
    }
}

/// `Event::flags` bit: the access carries a recorded value.
pub const FLAG_VALUE: u8 = 1;
/// `Event::flags` bit: a re-entrant (inner) acquire or its matching release. Set by
/// [`crate::wellformed::Checker`]; detectors skip such events, since only the outermost
/// acquisition of a re-entrant lock synchronizes.
pub const FLAG_NESTED: u8 = 2;
/// `Event::flags` bit: the event is the JDK's own synchronization (an agent trace's event
/// at a location in a JDK class, [`is_jdk_class`]). Set by the binary trace reader. What
/// such a read saw decides JDK code the trace does not show, so the value-based
/// detectors keep its recorded writer, not only its value (`value_keys` in the analyzer).
pub const FLAG_JDK: u8 = 4;

/// `Event::value` of an `acquire` that could not have blocked: a successful `tryLock`.
/// Such an acquisition never waits for its lock, so it is never part of a deadlock. The
/// `.std` format does not write it.
pub const ACQUIRE_TRY: i64 = 1;

/// `Event::value` of a `wake` whose wait ran out of time: a timed wait that returned after
/// its timeout had elapsed, so no notify was needed for it to return (the detectors that
/// keep an unmatched wake after everything before it leave this one free). The `.std`
/// format does not write it.
pub const WAKE_TIMED_OUT: i64 = 1;

/// One event. See [`Kind`] for what `target` and `value` mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    pub thread: ThreadId,
    pub kind: Kind,
    pub flags: u8,
    pub target: u32,
    pub loc: LocId,
    pub value: i64,
}

impl Event {
    pub fn new(thread: ThreadId, kind: Kind, target: u32, loc: LocId) -> Event {
        Event {
            thread,
            kind,
            flags: 0,
            target,
            loc,
            value: 0,
        }
    }
    pub fn with_value(mut self, value: i64) -> Event {
        self.value = value;
        self.flags |= FLAG_VALUE;
        self
    }
    pub fn has_value(&self) -> bool {
        self.flags & FLAG_VALUE != 0
    }
    /// True for re-entrant inner acquires/releases that do not synchronize.
    pub fn is_nested(&self) -> bool {
        self.flags & FLAG_NESTED != 0
    }
    /// True for an acquisition that could not have blocked ([`ACQUIRE_TRY`]).
    pub fn is_try_acquire(&self) -> bool {
        self.kind == Kind::Acquire && self.value == ACQUIRE_TRY
    }
    /// True for a wake whose wait timed out ([`WAKE_TIMED_OUT`]).
    pub fn is_timed_out_wake(&self) -> bool {
        self.kind == Kind::Wake && self.value == WAKE_TIMED_OUT && !self.has_value()
    }
    /// True for the JDK's own synchronization ([`FLAG_JDK`]).
    pub fn is_jdk(&self) -> bool {
        self.flags & FLAG_JDK != 0
    }
}

pub use crate::interner::{Interner, Names};

/// Where in the source an event happened, when the recorder knows more than a token.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocDetail {
    /// Fully qualified class name, e.g. `account.Account`.
    pub class: String,
    /// Method name, e.g. `deposit`.
    pub method: String,
    /// Source file from the SourceFile attribute, if any.
    pub file: Option<String>,
    /// Source line, if the class has a LineNumberTable.
    pub line: Option<u32>,
    /// Bytecode index.
    pub bci: Option<u32>,
}

/// Whether a class (dotted name) is the JDK's: its events in an agent trace are the JDK's
/// own synchronization, which a replay neither holds nor counts.
pub fn is_jdk_class(class: &str) -> bool {
    ["java.", "javax.", "jdk.", "sun.", "com.sun."]
        .iter()
        .any(|p| class.starts_with(p))
}

impl LocDetail {
    /// The location is in a JDK class ([`is_jdk_class`]).
    pub fn in_jdk(&self) -> bool {
        is_jdk_class(&self.class)
    }

    /// The display token (docs/EVENTS.md): `File.java:LINE`, else `Class.method@BCI`.
    pub fn display(&self) -> String {
        match (&self.file, self.line) {
            (Some(f), Some(l)) => format!("{f}:{l}"),
            _ => format!("{}.{}@{}", self.class, self.method, self.bci.unwrap_or(0)),
        }
    }
}

/// A reachable set of an `enter` event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjSet {
    /// `*`: the recorder gave up bounding the set.
    All,
    /// Object names (interned in [`Symbols::objects`]).
    Objects(Vec<u32>),
}

/// All names of a trace. Ids index these tables.
#[derive(Clone, Debug, Default)]
pub struct Symbols {
    pub threads: Interner,
    /// Dynamic variables (one memory location each), e.g. `12.account.Account.balance`.
    pub vars: Interner,
    /// For each variable, its static name id in [`Symbols::statics`] (the field, or the
    /// array element at a site): the variable part of a race signature.
    pub var_static: Vec<u32>,
    pub statics: Interner,
    pub locks: Interner,
    /// Location tokens as displayed (`File.java:17`, or the `.std` token as written).
    pub locs: Interner,
    /// Optional details for each location (same index as `locs`).
    pub loc_detail: Vec<Option<LocDetail>>,
    pub methods: Interner,
    pub objects: Interner,
    pub objsets: Vec<ObjSet>,
    /// Call stacks recorded by the agent: (thread, location of an access) -> the frames
    /// (as locations, innermost first) the first time that thread ran that access.
    pub stacks: HashMap<(ThreadId, LocId), Vec<LocId>>,
}

impl Symbols {
    pub fn thread(&mut self, name: &str) -> ThreadId {
        self.threads.intern(name)
    }
    /// Interns a variable whose static (signature) name is the name itself, as in `.std`.
    pub fn var(&mut self, name: &str) -> VarId {
        self.var_hashed(name, Interner::hash(name))
    }
    /// [`Symbols::var`] with `hash` = [`Interner::hash`]`(name)`.
    #[inline]
    pub fn var_hashed(&mut self, name: &str, hash: u32) -> VarId {
        let before = self.vars.len();
        let id = self.vars.intern_hashed(name, hash);
        if self.vars.len() > before {
            let s = self.statics.intern_hashed(name, hash);
            self.var_static.push(s);
        }
        id
    }
    pub fn var_with_static(&mut self, name: &str, static_name: &str) -> VarId {
        let before = self.vars.len();
        let id = self.vars.intern(name);
        if self.vars.len() > before {
            let s = self.statics.intern(static_name);
            self.var_static.push(s);
        }
        id
    }
    pub fn lock(&mut self, name: &str) -> LockId {
        self.locks.intern(name)
    }
    pub fn loc(&mut self, token: &str) -> LocId {
        let before = self.locs.len();
        let id = self.locs.intern(token);
        if self.locs.len() > before {
            self.loc_detail.push(None);
        }
        id
    }
    pub fn loc_with_detail(&mut self, detail: LocDetail) -> LocId {
        let token = detail.display();
        let id = self.loc(&token);
        if self.loc_detail[id as usize].is_none() {
            self.loc_detail[id as usize] = Some(detail);
        }
        id
    }
    pub fn method(&mut self, name: &str) -> MethodId {
        self.methods.intern(name)
    }
    pub fn objset(&mut self, set: ObjSet) -> ObjSetId {
        self.objsets.push(set);
        (self.objsets.len() - 1) as u32
    }
    pub fn static_of(&self, var: VarId) -> u32 {
        self.var_static[var as usize]
    }
    pub fn thread_name(&self, t: ThreadId) -> &str {
        self.threads.name(t)
    }
    pub fn var_name(&self, v: VarId) -> &str {
        self.vars.name(v)
    }
    pub fn static_name(&self, v: VarId) -> &str {
        self.statics.name(self.static_of(v))
    }
    pub fn lock_name(&self, l: LockId) -> &str {
        self.locks.name(l)
    }
    pub fn loc_name(&self, l: LocId) -> &str {
        self.locs.name(l)
    }
}

/// A whole trace in memory: names plus events in the recorded global order.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub symbols: Symbols,
    pub events: Vec<Event>,
    /// Whether branch events were recorded (a `.std` file with at least one `br`, or an
    /// agent trace recorded with branches on). Without them, analyses that use branches
    /// must treat every read as followed by a branch.
    pub has_branches: bool,
}

/// Per-trace counts shown by `jrace stats` and in the report header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub events: u64,
    pub by_kind: [u64; 17],
}

impl Counts {
    pub fn add(&mut self, e: &Event) {
        self.events += 1;
        self.by_kind[e.kind as usize] += 1;
    }
    pub fn of(&self, k: Kind) -> u64 {
        self.by_kind[k as usize]
    }
}
