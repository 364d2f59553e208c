//! The instrumenter: rewrites a class so that its accesses, monitors, calls and branches
//! call the hooks of `jrace.rt.R` (agent/runtime/jrace/rt/R.java), each with a site id
//! allocated through a [`SiteSink`] (see [`crate::sites`]).
//!
//! Every inserted sequence obeys the frame-boundary rule of [`crate::classfile`]: code
//! inserted before an instruction is stack-neutral and branch-free, code inserted after an
//! instruction only runs when it falls through; temporaries live in fresh locals above the
//! method's own. What is inserted, per instruction (`S` = push the site id):
//!
//! | instruction | before | after |
//! |---|---|---|
//! | getfield | `dup; astore o` | `dup(2) v; aload o; S; rdX` |
//! | putfield | `xstore v; dup; xload v; S; wrX; xload v` | |
//! | getstatic | | `dup(2); S; srX` |
//! | putstatic | `dup(2); S; swX` | |
//! | xaload | `dup2; istore i; astore a` | `dup(2); aload a; iload i; S; arX` |
//! | xastore | `xstore v; dup2; xload v; S; awX; xload v` | |
//! | monitorenter | `dup; astore o` | `aload o; S; menter` |
//! | monitorexit | `dup; S; mexit` | |
//! | modelled call | spill args; `dup; astore r; dup; S; before`; reload args | `[dup;] aload r; S; after[Z]` |
//! | if*, switches | `S; br` | |
//! | returns | `texit`, `sexit`, `clinit` as they apply | |
//!
//! plus, for synchronized methods, `senter` in a prologue and a catch-all handler calling
//! `sthrow` before rethrowing; for `run()V`/`call()Ljava/lang/Object;`, `tenter` in the
//! prologue. X is I (boolean, byte, char, short, int), J, F, D or A (references).
//!
//! Rules that keep the result verifiable:
//! * In a constructor, field accesses before the constructor's own `this(…)`/`super(…)`
//!   call are left alone (the receiver may be `uninitializedThis`, which cannot be passed
//!   to a method). The call is found as the first `invokespecial <init>` that no `new`
//!   before it in code order is waiting for (javac emits `new … <init>` pairs nested), and
//!   must name this class or the super class; when the code does not have that shape, no
//!   field access of the constructor is instrumented.
//! * Sync and task hooks use local 0 as `this`; a method that stores into local 0, or
//!   whose stack map frames do not keep an object in it, gets none. Static synchronized
//!   methods of classes older than version 49 (no `ldc` of a class) get none either.
//! * A method whose rewrite fails (code too large, constant pool full, odd bytecode) is
//!   tried again with the synchronization hooks only (monitors, synchronized methods,
//!   modelled calls, tasks, `<clinit>`: missing those would make the analyzer report false
//!   races, missing accesses only hides races) and counted in `reduced_methods`; if that
//!   fails too it is left unchanged, with its constant-pool additions undone, and counted
//!   in `failed_methods`. Site ids handed out for an attempt that failed are not reused
//!   (the sink keeps them; no code refers to them).
//! * `java/lang/Object` (HotSpot crashes if it changes) and `jrace/**` (the runtime) are
//!   never instrumented.
//!
//! Tested (agent/tests/instrument.rs, instrument_jdk.rs): test programs of every shape run
//! under `-Xverify:all` against a Java stand-in for R that logs each hook call, with the
//! same output as uninstrumented and the expected hook sequences; class versions 45-61 (with
//! jsr/ret); every class of `java.base` patched into the JDK and every class of the jars in
//! /usr/share/java load and verify with the same outcomes as the originals. Speed on the
//! shared 2-core test machine, one thread, classes in memory (the ignored `bench_` test in
//! instrument_jdk.rs): java.base's 6,445 classes in 0.6 s, ≈ 10,000 classes/s or 40 MB/s of
//! class files, all hooks on; the Debian jars (Derby, Guava, Maven, …) ≈ 5,000 classes/s
//! under load. [`class_info`] takes ≈ 1.6 µs per class.

use crate::classfile::attributes::{AttrInfo, FrameKind, VType};
use crate::classfile::class::ACC_STATIC;
use crate::classfile::edit::CodeEditor;
use crate::classfile::insn::{op, Arg, Insn};
use crate::classfile::{ClassFile, Constant};
use crate::sites::{modelled_call, ClassInfo, Location, Site, SiteKind, SiteSink};
use std::collections::{HashMap, HashSet};

/// What to instrument besides accesses, monitors, synchronized methods and `<clinit>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// `br` before conditional jumps and switches.
    pub branches: bool,
    /// `tenter`/`texit` in `run()V` and `call()Ljava/lang/Object;`.
    pub tasks: bool,
    /// `before`/`after` around the calls [`modelled_call`] selects.
    pub calls: bool,
    /// A JDK class of [`crate::jdksync`]: only its synchronization is recorded (volatile
    /// fields, ordered `Unsafe` operations, monitors, wait/notify), none of its plain
    /// accesses, branches or calls; and its [`crate::jdksync::quiet_method`]s are
    /// bracketed with `qenter`/`qexit`.
    pub jdk: bool,
    /// With `jdk`: only the `qenter`/`qexit` brackets, nothing else.
    pub quiet_only: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            branches: true,
            tasks: true,
            calls: true,
            jdk: false,
            quiet_only: false,
        }
    }
}

/// The access flags of field `name` as seen from class `owner` (internal name), when the
/// declaring class is known (loaded already); `None` when it is not.
pub type FieldFlags<'a> = &'a dyn Fn(&str, &str) -> Option<u16>;

/// The result of [`instrument`].
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The rewritten class; `None` = leave the class unchanged (not instrumented, nothing
    /// to insert, or it did not parse).
    pub bytes: Option<Vec<u8>>,
    /// The class's name, super class, interfaces and fields (when it parsed).
    pub info: Option<ClassInfo>,
    /// Methods with code that were looked at.
    pub methods: u32,
    /// Methods whose rewrite failed and that were left unchanged.
    pub failed_methods: u32,
    /// Methods that could not take every hook (too large, mostly) and were instrumented
    /// with the synchronization hooks only: monitors, synchronized methods, modelled calls,
    /// tasks and `<clinit>`, but no field, array or branch hooks.
    pub reduced_methods: u32,
    /// Synchronized methods that got no `senter`/`sexit`/`sthrow` hooks: the method stores
    /// into local 0 (so `aload_0` is not surely `this`), or it is static in a class older
    /// than version 49 (no `ldc` of a class). Their monitor is invisible to the recorder.
    pub sync_skipped: u32,
    /// Calls bracketed as BarrierPairs (with [`Barrier`]).
    pub bp_sites: u32,
    /// Calls into excluded code left without a BarrierPair because what they can reach
    /// is statically empty (primitive or immutable-leaf arguments only, see [`Barrier`]).
    pub bp_skipped_empty: u32,
    /// Why the class was left unchanged when it did not parse.
    pub error: Option<String>,
    /// `method+descriptor: reason` for each failed, reduced or sync-skipped method (for
    /// the agent's log).
    pub failures: Vec<String>,
}

const R: &str = "jrace/rt/R";

/// True for classes that are never instrumented (internal names).
pub fn excluded(name: &str) -> bool {
    name == "java/lang/Object" || name.starts_with("jrace/")
}

/// BarrierPairs (`barrier=1`): which calls are bracketed by `enter`/`exit` hooks.
///
/// Every `invoke*` (not `invokedynamic`, whose bootstrap links a call site rather than
/// calling excluded code; the lambda bodies it links to are methods of the instrumented
/// class and are instrumented themselves) whose *symbolic* owner class is excluded, and
/// every call to a `native` method of the class being instrumented, gets
/// `bpenter*(tok, roots…, site)` before it (roots: the receiver, except for constructors
/// whose receiver is still uninitialized, and the reference arguments), `bpexit(site)`
/// after a normal return, and `bpunwind(tok, site)` in every exception handler of the
/// method and in a catch-all handler that rethrows, so that an exception ends the
/// BarrierPair too. `tok` is a local set to -1 in the prologue and to the thread's
/// BarrierPair depth by the first `bpenter` of the frame: `bpunwind` closes every
/// BarrierPair opened at or above that depth. It is declared in every stack map frame
/// (see [`CodeEditor::declare_local`]). A constructor's catch-all handler covers only the
/// code after its `this()`/`super()` call (a handler cannot cover code that runs with an
/// uninitialized `this`); a BarrierPair opened before it that ends by an exception is closed
/// by the next `bpunwind`/`bpexit` below it on the thread's stack, or at the thread's end.
///
/// Not bracketed: the calls the recorder models itself ([`modelled_call`]: thread
/// start/join, wait/notify, `java.util` collections and `java.util.concurrent`,
/// atomics, `VarHandle`), `System.arraycopy`, `Object.<init>`, `getClass()`,
/// `Object.hashCode` and `System.identityHashCode` (they touch no object's state), and
/// calls whose reachable set is statically empty, counted in
/// [`Outcome::bp_skipped_empty`]: static methods and constructors whose parameters are
/// all primitive or immutable leaves (`String`, the boxed primitives), and instance
/// methods of `String` and the boxed primitives with such parameters — unless
/// `globals` is set (`bp_globals=`: every BarrierPair's set then holds those classes).
pub struct Barrier<'a> {
    /// Whether the class with this internal name is excluded from instrumentation.
    pub excluded: &'a dyn Fn(&str) -> bool,
    /// `bp_globals=` names classes whose statics every BarrierPair may touch.
    pub globals: bool,
}

/// Instruments one class. Never panics on any input: a class that does not parse comes
/// back unchanged with `error` set; a method that cannot be rewritten stays as it was.
pub fn instrument(class_bytes: &[u8], opts: &Options, sink: &mut dyn SiteSink) -> Outcome {
    instrument_with(class_bytes, opts, None, &|_, _| None, sink)
}

/// [`instrument`], with BarrierPairs around calls into excluded code when `bp` is given,
/// and `fields` to tell which fields of other classes are volatile (see [`FieldFlags`]:
/// an access to a field not known to be plain gets the stripe lock of a volatile one,
/// decided when it first runs).
pub fn instrument_with(
    class_bytes: &[u8],
    opts: &Options,
    bp: Option<&Barrier>,
    fields: FieldFlags,
    sink: &mut dyn SiteSink,
) -> Outcome {
    let mut cf = match ClassFile::parse(class_bytes) {
        Ok(c) => c,
        Err(e) => {
            return Outcome {
                info: class_info(class_bytes),
                error: Some(format!("class does not parse: {e}")),
                ..Default::default()
            }
        }
    };
    let info = info_of(&cf);
    let mut out = Outcome {
        info: info.clone(),
        ..Default::default()
    };
    let Some(info) = info else {
        out.error = Some("class has no readable name".into());
        return out;
    };
    if excluded(&info.name) {
        return out;
    }
    let natives = cf
        .methods
        .iter()
        .filter(|m| m.access_flags & ACC_NATIVE != 0)
        .map(|m| (cf.method_name(m), cf.method_descriptor(m)))
        .collect();
    let own_fields = info.fields.iter().map(|f| (f.0.clone(), f.2)).collect();
    let mut ctx = Ctx {
        class_dotted: info.name.replace('/', "."),
        class_internal: info.name.clone(),
        file: cf.source_file(),
        pool: Pool::default(),
        natives,
        own_fields,
        fields,
        jdk: opts.jdk,
        fenced: opts.jdk && uses_fences(&cf),
    };
    let mut modified = false;
    for mi in 0..cf.methods.len() {
        if cf.methods[mi].code().is_none() {
            continue;
        }
        out.methods += 1;
        let cp_len = cf.constant_pool.entries.len();
        let pool = ctx.pool.clone();
        let m = &cf.methods[mi];
        let what = format!("{}{}", cf.method_name(m), cf.method_descriptor(m));
        let note_sync = |d: &Done, out: &mut Outcome| {
            if d.sync_skipped {
                out.sync_skipped += 1;
                out.failures.push(format!(
                    "{what}: synchronized, but without sync hooks (stores into local 0, or static before class version 49)"
                ));
            }
        };
        let e = match instrument_method(&mut cf, mi, opts, bp, false, &mut ctx, sink) {
            Ok(d) => {
                modified |= d.changed;
                out.bp_sites += d.bp_sites;
                out.bp_skipped_empty += d.bp_skipped_empty;
                note_sync(&d, &mut out);
                continue;
            }
            Err(e) => e,
        };
        cf.constant_pool.entries.truncate(cp_len);
        ctx.pool = pool.clone();
        // Second try with the synchronization hooks only.
        match instrument_method(&mut cf, mi, opts, bp, true, &mut ctx, sink) {
            Ok(d) => {
                modified |= d.changed;
                out.bp_sites += d.bp_sites;
                out.bp_skipped_empty += d.bp_skipped_empty;
                out.reduced_methods += 1;
                out.failures
                    .push(format!("{what}: reduced to sync hooks: {e}"));
                note_sync(&d, &mut out);
            }
            Err(e2) => {
                cf.constant_pool.entries.truncate(cp_len);
                ctx.pool = pool;
                out.failed_methods += 1;
                out.failures.push(format!("{what}: {e2} (in full: {e})"));
            }
        }
    }
    if modified {
        out.bytes = Some(cf.to_bytes());
    }
    out
}

/// Name, super class, interfaces and fields of a class, without decoding its methods.
pub fn class_info(class_bytes: &[u8]) -> Option<ClassInfo> {
    light::class_info(class_bytes)
}

fn info_of(cf: &ClassFile) -> Option<ClassInfo> {
    let cp = &cf.constant_pool;
    Some(ClassInfo {
        name: cf.name()?,
        super_name: cp.class_name(cf.super_class),
        interfaces: cf
            .interfaces
            .iter()
            .filter_map(|i| cp.class_name(*i))
            .collect(),
        fields: cf
            .fields
            .iter()
            .map(|f| {
                (
                    cp.utf8(f.name_index).unwrap_or_default(),
                    cp.utf8(f.descriptor_index).unwrap_or_default(),
                    f.access_flags,
                )
            })
            .collect(),
    })
}

struct Ctx<'a> {
    class_dotted: String,
    class_internal: String,
    file: Option<String>,
    pool: Pool,
    /// (name, descriptor) of the class's own `native` methods.
    natives: Vec<(String, String)>,
    /// (name, access flags) of the class's own fields.
    own_fields: Vec<(String, u16)>,
    fields: FieldFlags<'a>,
    /// The class is a JDK class of [`crate::jdksync`] ([`Options::jdk`]).
    jdk: bool,
    /// ... that orders plain accesses with acquire or full fences: its plain field and
    /// array accesses are recorded (as synchronization) too.
    fenced: bool,
}

impl Ctx<'_> {
    /// The flags of field `owner.name`, when known.
    fn field_flags(&self, owner: &str, name: &str) -> Option<u16> {
        if owner == self.class_internal {
            if let Some((_, f)) = self.own_fields.iter().find(|(n, _)| n == name) {
                return Some(*f);
            }
        }
        (self.fields)(owner, name)
    }
}

const ACC_VOLATILE: u16 = 0x0040;

/// How a field access is instrumented.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum FieldPlan {
    /// Not at all (JDK classes: plain fields).
    Skip,
    /// The plain access hooks (`rd*`, `wr*`, `sr*`, `sw*`).
    Plain,
    /// Possibly volatile: the stripe lock is taken before the access (`lk`/`lks`, which
    /// decide at run time from the field's flags) and released after it was recorded.
    Locked,
}

const ACC_NATIVE: u16 = 0x0100;

/// Constant-pool entries added for the hooks so far (restored with the pool when a
/// method's rewrite is undone).
#[derive(Clone, Default)]
struct Pool {
    /// Methodref index of each hook of R.
    hooks: HashMap<&'static str, u16>,
    r_class: Option<u16>,
    /// Utf8 index of each hook descriptor.
    descs: HashMap<&'static str, u16>,
    /// Methodref index of each wrapper of U used, by name and descriptor.
    wrappers: HashMap<(String, String), u16>,
    u_class: Option<u16>,
}

/// The value shape of a field descriptor or array element: I, J, F, D or A.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    I,
    J,
    F,
    D,
    A,
}

impl Shape {
    fn of_desc(d: &str) -> Option<Shape> {
        Self::of_first(*d.as_bytes().first()?)
    }
    fn of_first(c: u8) -> Option<Shape> {
        Some(match c {
            b'Z' | b'B' | b'C' | b'S' | b'I' => Shape::I,
            b'J' => Shape::J,
            b'F' => Shape::F,
            b'D' => Shape::D,
            b'L' | b'[' => Shape::A,
            _ => return None,
        })
    }
    fn size(self) -> u16 {
        match self {
            Shape::J | Shape::D => 2,
            _ => 1,
        }
    }
    fn load(self) -> u8 {
        match self {
            Shape::I => 0x15,
            Shape::J => 0x16,
            Shape::F => 0x17,
            Shape::D => 0x18,
            Shape::A => 0x19,
        }
    }
    fn store(self) -> u8 {
        self.load() + 0x21
    }
    fn dup(self) -> u8 {
        if self.size() == 2 {
            0x5c // dup2
        } else {
            op::DUP
        }
    }
}

/// (element descriptor, shape) of an array load (0x2e–0x35) or store (0x4f–0x56).
fn array_elem(opc: u8) -> Option<(&'static str, Shape)> {
    let k = match opc {
        0x2e..=0x35 => opc - 0x2e,
        0x4f..=0x56 => opc - 0x4f,
        _ => return None,
    };
    Some(match k {
        0 => ("I", Shape::I),
        1 => ("J", Shape::J),
        2 => ("F", Shape::F),
        3 => ("D", Shape::D),
        4 => ("Ljava/lang/Object;", Shape::A),
        5 => ("B", Shape::I),
        6 => ("C", Shape::I),
        _ => ("S", Shape::I),
    })
}

fn local(opc: u8, index: u16) -> Insn {
    Insn::with(
        opc,
        Arg::Local {
            index,
            wide: index > 255,
        },
    )
}

fn ldc(index: u16) -> Insn {
    if index <= 255 {
        Insn::with(op::LDC, Arg::Cp(index))
    } else {
        Insn::with(op::LDC_W, Arg::Cp(index))
    }
}

/// Parameter shapes of a method descriptor, in order.
fn params(desc: &str) -> Option<(Vec<Shape>, Option<Shape>)> {
    // Bytes, not chars: a malformed descriptor may put a multi-byte character anywhere.
    let b = desc.as_bytes();
    if b.first() != Some(&b'(') {
        return None;
    }
    let mut k = 1;
    let mut v = Vec::new();
    while *b.get(k)? != b')' {
        let s = k;
        while *b.get(k)? == b'[' {
            k += 1;
        }
        if b[k] == b'L' {
            k += b[k..].iter().position(|&c| c == b';')?;
        }
        k += 1;
        v.push(Shape::of_first(*b.get(s)?)?);
    }
    let ret = b.get(k + 1..)?;
    Some((
        v,
        if ret == b"V" {
            None
        } else {
            Shape::of_first(*ret.first()?)
        },
    ))
}

fn e0(r: crate::classfile::Result<()>) -> Result<(), String> {
    r.map_err(|e| e.to_string())
}

/// Per-method state while collecting insertions.
struct MethodCx<'a, 'f> {
    cf: &'a mut ClassFile,
    ctx: &'a mut Ctx<'f>,
    sink: &'a mut dyn SiteSink,
    method: String,
    lines: Vec<(u16, u16)>,
}

impl MethodCx<'_, '_> {
    fn site(&mut self, kind: SiteKind, bci: u32) -> i32 {
        let line = match self.lines.partition_point(|(pc, _)| *pc as u32 <= bci) {
            0 => None,
            k => Some(self.lines[k - 1].1 as u32),
        };
        self.sink.site(Site {
            kind,
            loc: Location {
                class: self.ctx.class_dotted.clone(),
                method: self.method.clone(),
                file: self.ctx.file.clone(),
                line,
                bci,
            },
            jdk: self.ctx.jdk,
            fenced: self.ctx.fenced,
        })
    }

    /// `invokestatic jrace/rt/U.name desc` (a wrapper of [`crate::unsafe_ops`]).
    fn call_wrapper(&mut self, name: &str, desc: &str) -> Result<Insn, String> {
        let key = (name.to_string(), desc.to_string());
        if let Some(&i) = self.ctx.pool.wrappers.get(&key) {
            return Ok(Insn::with(op::INVOKESTATIC, Arg::Cp(i)));
        }
        let cp = &mut self.cf.constant_pool.entries;
        let pool = &mut self.ctx.pool;
        let mut push = |c: Constant| -> Result<u16, String> {
            if cp.len() >= 65535 {
                return Err("room in the constant pool for the hooks".into());
            }
            cp.push(c);
            Ok((cp.len() - 1) as u16)
        };
        let class = match pool.u_class {
            Some(c) => c,
            None => {
                let n = push(Constant::Utf8(b"jrace/rt/U".to_vec()))?;
                let c = push(Constant::Class(n))?;
                pool.u_class = Some(c);
                c
            }
        };
        let n = push(Constant::Utf8(name.as_bytes().to_vec()))?;
        let d = push(Constant::Utf8(desc.as_bytes().to_vec()))?;
        let nt = push(Constant::NameAndType(n, d))?;
        let i = push(Constant::Methodref(class, nt))?;
        pool.wrappers.insert(key, i);
        Ok(Insn::with(op::INVOKESTATIC, Arg::Cp(i)))
    }

    /// The instruction pushing site id `s`.
    fn push(&mut self, s: i32) -> Result<Insn, String> {
        Ok(match s {
            0..=5 => Insn::new(op::ICONST_0 + s as u8),
            6..=127 => Insn::with(op::BIPUSH, Arg::I8(s as i8)),
            128..=32767 => Insn::with(op::SIPUSH, Arg::I16(s as i16)),
            _ => {
                // Site ids are unique: no point searching the pool for an equal entry.
                let e = &mut self.cf.constant_pool.entries;
                if e.len() >= 65535 {
                    return Err("room in the constant pool for a site id".into());
                }
                e.push(Constant::Integer(s as u32));
                ldc((e.len() - 1) as u16)
            }
        })
    }

    fn call(&mut self, hook: &'static str) -> Result<Insn, String> {
        let idx = match self.ctx.pool.hooks.get(hook) {
            Some(i) => *i,
            None => {
                // Appended without searching the pool for equal entries (which costs a scan
                // of the whole pool per entry): a duplicate Utf8 or NameAndType is legal.
                let cp = &mut self.cf.constant_pool.entries;
                let pool = &mut self.ctx.pool;
                let mut push = |c: Constant| -> Result<u16, String> {
                    if cp.len() >= 65535 {
                        return Err("room in the constant pool for the hooks".into());
                    }
                    cp.push(c);
                    Ok((cp.len() - 1) as u16)
                };
                let class = match pool.r_class {
                    Some(c) => c,
                    None => {
                        let n = push(Constant::Utf8(R.as_bytes().to_vec()))?;
                        let c = push(Constant::Class(n))?;
                        pool.r_class = Some(c);
                        c
                    }
                };
                let d = crate::hook_abi::called(hook)
                    .ok_or_else(|| format!("a hook of jrace.rt.R, found `{hook}`"))?;
                let desc = match pool.descs.get(d) {
                    Some(i) => *i,
                    None => {
                        let i = push(Constant::Utf8(d.as_bytes().to_vec()))?;
                        pool.descs.insert(d, i);
                        i
                    }
                };
                let name = push(Constant::Utf8(hook.as_bytes().to_vec()))?;
                let nt = push(Constant::NameAndType(name, desc))?;
                let i = push(Constant::Methodref(class, nt))?;
                pool.hooks.insert(hook, i);
                i
            }
        };
        Ok(Insn::with(op::INVOKESTATIC, Arg::Cp(idx)))
    }

    /// `S; invokestatic hook`.
    fn hook(&mut self, kind: SiteKind, bci: u32, hook: &'static str) -> Result<[Insn; 2], String> {
        let s = self.site(kind, bci);
        Ok([self.push(s)?, self.call(hook)?])
    }
}

/// Where the object on top of the stack at instruction `i` came from: the monitor of a
/// `monitorenter`, as javac (and ecj) compile `synchronized (EXPR)` (`EXPR; dup; astore N;
/// monitorenter` or `EXPR; monitorenter`), or the receiver of a call without arguments
/// (`lock.lock()`). When EXPR is one `getfield`/`getstatic`, the field
/// (`pkg.Class.field`); a class literal, `pkg.Class.class`; otherwise (or when control can
/// enter between EXPR and `i`: `entries` holds every jump target and handler start)
/// nothing. Reports name locks by it.
fn stack_top_source(
    cf: &ClassFile,
    insns: &[(u32, Insn)],
    i: usize,
    entries: &HashSet<u32>,
) -> Option<String> {
    let is_astore = |op: u8| op == op::ASTORE || (0x4b..=0x4e).contains(&op);
    let mut j = i.checked_sub(1)?;
    if is_astore(insns[j].1.op) {
        j = j.checked_sub(1)?;
        if insns[j].1.op != op::DUP {
            return None;
        }
        j = j.checked_sub(1)?;
    }
    if insns[j + 1..=i]
        .iter()
        .any(|(off, _)| entries.contains(off))
    {
        return None;
    }
    let (_, src) = &insns[j];
    let Arg::Cp(idx) = src.arg else { return None };
    match src.op {
        op::GETFIELD | op::GETSTATIC => {
            let (owner, name, _) = cf.constant_pool.member_ref(idx)?;
            Some(format!("{}.{name}", owner.replace('/', ".")))
        }
        op::LDC | op::LDC_W => {
            let class = cf.constant_pool.class_name(idx)?;
            Some(format!("{}.class", class.replace('/', ".")))
        }
        _ => None,
    }
}

/// Offsets where control can arrive other than from the instruction before: jump and
/// switch targets, exception handler starts.
fn entry_points(insns: &[(u32, Insn)], handlers: &[u16]) -> HashSet<u32> {
    let mut set: HashSet<u32> = handlers.iter().map(|&h| h as u32).collect();
    for (_, ins) in insns {
        match &ins.arg {
            Arg::Jump(t) => {
                set.insert(*t);
            }
            Arg::TableSwitch {
                default, targets, ..
            } => {
                set.insert(*default);
                set.extend(targets.iter().copied());
            }
            Arg::LookupSwitch { default, pairs } => {
                set.insert(*default);
                set.extend(pairs.iter().map(|(_, t)| *t));
            }
            _ => {}
        }
    }
    set
}

fn hook_name(prefix: &str, s: Shape) -> &'static str {
    // Every combination, so that hook names can be &'static.
    const NAMES: [[&str; 5]; 8] = [
        ["rdI", "rdJ", "rdF", "rdD", "rdA"],
        ["wrI", "wrJ", "wrF", "wrD", "wrA"],
        ["srI", "srJ", "srF", "srD", "srA"],
        ["swI", "swJ", "swF", "swD", "swA"],
        ["arI", "arJ", "arF", "arD", "arA"],
        ["awI", "awJ", "awF", "awD", "awA"],
        ["rdIL", "rdJL", "rdFL", "rdDL", "rdAL"],
        ["srIL", "srJL", "srFL", "srDL", "srAL"],
    ];
    let row = ["rd", "wr", "sr", "sw", "ar", "aw", "rdL", "srL"]
        .iter()
        .position(|p| *p == prefix)
        .unwrap_or(0);
    NAMES[row][s as usize]
}

/// Index of the instruction from which field accesses of a constructor may be
/// instrumented: the one after its own `this(…)`/`super(…)` call. `None` when it cannot be
/// found (nothing is instrumented then).
fn after_super_call(cf: &ClassFile, insns: &[(u32, Insn)]) -> Option<usize> {
    let this = cf.name();
    let sup = cf.constant_pool.class_name(cf.super_class);
    let mut pending: Vec<Option<String>> = Vec::new();
    for (i, (_, ins)) in insns.iter().enumerate() {
        match ins.op {
            op::NEW => {
                let Arg::Cp(c) = ins.arg else { return None };
                pending.push(cf.constant_pool.class_name(c));
            }
            op::INVOKESPECIAL => {
                let Arg::Cp(m) = ins.arg else { return None };
                let (owner, name, _) = cf.constant_pool.member_ref(m)?;
                if name != "<init>" {
                    continue;
                }
                match pending.last() {
                    Some(p) if p.as_deref() == Some(owner.as_str()) => {
                        pending.pop();
                    }
                    Some(_) => return None, // not the nesting javac makes: give up
                    // The constructor's own this(...)/super(...) call, if it names this
                    // class or the super class; anything else is code we do not understand.
                    None if Some(&owner) == this.as_ref() || Some(&owner) == sup.as_ref() => {
                        return Some(i + 1)
                    }
                    None => return None,
                }
            }
            _ => {}
        }
    }
    None
}

/// True when local 0 holds an object in every stack map frame and is never stored to, so
/// that `aload_0` is `this` everywhere.
fn local0_is_this(code: &crate::classfile::Code, insns: &[(u32, Insn)], n_params: usize) -> bool {
    for (_, ins) in insns {
        // istore..astore (0x36-0x3a) and their _0.._3 forms (0x3b-0x4e).
        if (0x36..=0x4e).contains(&ins.op) {
            let idx = match (ins.op, &ins.arg) {
                (0x36..=0x3a, Arg::Local { index, .. }) => *index,
                (o @ 0x3b..=0x4e, _) => ((o - 0x3b) % 4) as u16,
                _ => return false,
            };
            if idx == 0 {
                return false;
            }
        }
        // iinc/ret on local 0 would not verify with an object in it.
    }
    let mut count = 1 + n_params as i64;
    for a in &code.attributes {
        let AttrInfo::StackMapTable(frames) = &a.info else {
            continue;
        };
        for f in frames {
            match &f.kind {
                FrameKind::Chop(k) => count -= *k as i64,
                FrameKind::Append(v) => count += v.len() as i64,
                FrameKind::Full { locals, .. } => {
                    if !matches!(locals.first(), Some(VType::Object(_))) {
                        return false;
                    }
                    count = locals.len() as i64;
                }
                _ => {}
            }
            if count < 1 {
                return false;
            }
        }
    }
    true
}

fn instrument_method(
    cf: &mut ClassFile,
    mi: usize,
    opts: &Options,
    bp: Option<&Barrier>,
    sync_only: bool,
    ctx: &mut Ctx<'_>,
    sink: &mut dyn SiteSink,
) -> Result<Done, String> {
    let m = &cf.methods[mi];
    let name = cf.method_name(m);
    let desc = cf.method_descriptor(m);
    let flags = m.access_flags;
    let is_static = flags & ACC_STATIC != 0;
    let code = m.code().ok_or("a method with code")?;
    let max_locals = code.max_locals;
    let exception_table = code.exception_table.clone();
    let mut ed = CodeEditor::new(code).map_err(|e| e.to_string())?;
    let insns = ed.instructions().to_vec();
    let mut lines: Vec<(u16, u16)> = code
        .attributes
        .iter()
        .filter_map(|a| match &a.info {
            AttrInfo::LineNumberTable(v) => Some(v.iter().map(|l| (l.start_pc, l.line))),
            _ => None,
        })
        .flatten()
        .collect();
    lines.sort_unstable();
    let (param_shapes, _) =
        params(&desc).ok_or_else(|| format!("a method descriptor, found {desc}"))?;
    let this_ok = !is_static && local0_is_this(code, &insns, param_shapes.len());

    let is_init = name == "<init>";
    let is_clinit = name == "<clinit>";
    let fields_from = if is_init {
        after_super_call(cf, &insns).unwrap_or(usize::MAX)
    } else {
        0
    };
    let sync_wanted = flags & 0x0020 != 0 && !is_init && !is_clinit;
    let sync = sync_wanted
        && if is_static {
            cf.major_version >= 49
        } else {
            this_ok
        };
    let sync_skipped = sync_wanted && !sync;
    let jdk = opts.jdk;
    let quiet = jdk && crate::jdksync::quiet_method(&ctx.class_internal, &name) && !is_init;
    if jdk && opts.quiet_only && !quiet {
        return Ok(Done {
            changed: false,
            sync_skipped: false,
            bp_sites: 0,
            bp_skipped_empty: 0,
        });
    }
    // A quiet-only class gets its brackets and nothing else.
    let sync_only = sync_only || (jdk && opts.quiet_only);
    let task = opts.tasks
        && !jdk
        && !is_static
        && this_ok
        && ((name == "run" && desc == "()V") || (name == "call" && desc == "()Ljava/lang/Object;"));
    let this_class = cf.this_class;

    // Temporaries: slot t (object / receiver / array), t+1 (index), t+2..t+3 (a value),
    // call arguments from t+1.
    let mut arg_slots = 0u16;
    if opts.calls {
        for (_, ins) in &insns {
            if let Some((_, sh)) = modelled(cf, ins, jdk) {
                arg_slots = arg_slots.max(sh.iter().map(|s| s.size()).sum());
            }
        }
    }
    // System.arraycopy's five arguments.
    if opts.calls && !jdk && insns.iter().any(|(_, ins)| is_arraycopy(cf, ins)) {
        arg_slots = arg_slots.max(5);
    }
    // Ordered Unsafe accesses, by instruction index (see crate::unsafe_ops).
    let ordered: HashMap<usize, crate::unsafe_ops::Method> = insns
        .iter()
        .enumerate()
        .filter(|_| !opts.quiet_only)
        .filter_map(|(i, (_, ins))| Some((i, ordered_unsafe(cf, ins)?)))
        .collect();
    // BarrierPair calls, by instruction index.
    let mut bp_calls: HashMap<usize, BpCall> = HashMap::new();
    let mut bp_skipped_empty = 0u32;
    if let Some(bp) = bp {
        for (i, (_, ins)) in insns.iter().enumerate() {
            if ordered.contains_key(&i) {
                continue;
            }
            match bp_call(cf, ctx, bp, ins) {
                BpDecision::No => {}
                BpDecision::Empty => bp_skipped_empty += 1,
                BpDecision::Call(c) => {
                    arg_slots = arg_slots.max(c.shapes.iter().map(|s| s.size()).sum());
                    bp_calls.insert(i, c);
                }
            }
        }
    }
    let needed = 4u16.max(1 + arg_slots);
    if max_locals as u32 + needed as u32 + 2 > 65535 {
        return Err("room for temporary locals".into());
    }
    let t = ed.add_locals(max_locals, needed);
    let (t_obj, t_idx, t_val, t_args) = (t, t + 1, t + 2, t + 1);
    // The stripe an access of a possibly volatile field took (`lk`).
    let t_lk = ed.add_locals(max_locals, 1);
    // The frame's BarrierPair depth (-1 until its first bpenter), in every frame.
    let tok = if bp_calls.is_empty() {
        None
    } else {
        let tok = ed.add_locals(max_locals, 1);
        e0(ed.declare_local(tok, VType::Integer))?;
        e0(ed.insert_prologue(&[Insn::new(0x02), local(op::ISTORE, tok)], 1))?;
        Some(tok)
    };

    let mut mcx = MethodCx {
        cf,
        ctx,
        sink,
        method: name.clone(),
        lines,
    };
    let e = |r: crate::classfile::Result<()>| r.map_err(|e| e.to_string());

    // The `this`-or-class push for sync hooks.
    let monitor = || -> Insn {
        if is_static {
            ldc(this_class)
        } else {
            Insn::new(op::ALOAD_0)
        }
    };

    if quiet {
        let seq = mcx.hook(SiteKind::Quiet, 0, "qenter")?;
        e(ed.insert_prologue(&seq, 1))?;
    }
    if sync && !opts.quiet_only {
        let [p, c] = mcx.hook(SiteKind::SyncMethod { is_static }, 0, "senter")?;
        let mo = monitor();
        e(ed.insert_prologue(&[mo, p, c], 2))?;
    }
    if task {
        let [p, c] = mcx.hook(SiteKind::Task, 0, "tenter")?;
        e(ed.insert_prologue(&[Insn::new(op::ALOAD_0), p, c], 2))?;
    }
    // An exception caught in this frame ends the BarrierPairs the frame opened (first
    // thing in the handler, before any other hook there).
    if let Some(tok) = tok {
        let mut handlers: Vec<u16> = exception_table.iter().map(|x| x.handler_pc).collect();
        handlers.sort_unstable();
        handlers.dedup();
        for h in handlers {
            let Some(i) = ed.index_at(h as u32) else {
                continue;
            };
            let [p, c] = mcx.hook(SiteKind::BarrierUnwind, h as u32, "bpunwind")?;
            e(ed.insert_before(i, &[local(op::ILOAD, tok), p, c], 2))?;
        }
    }

    let handler_pcs: Vec<u16> = exception_table.iter().map(|x| x.handler_pc).collect();
    let entries = entry_points(&insns, &handler_pcs);
    for (i, (off, ins)) in insns.iter().enumerate() {
        let bci = *off;
        let opc = ins.op;
        if jdk && opts.quiet_only && !(0xac..=0xb1).contains(&opc) {
            continue;
        }
        match opc {
            op::GETFIELD | op::PUTFIELD | op::GETSTATIC | op::PUTSTATIC => {
                let instance = opc == op::GETFIELD || opc == op::PUTFIELD;
                if instance && i < fields_from {
                    continue;
                }
                let Arg::Cp(fi) = ins.arg else { continue };
                let Some((owner, fname, fdesc)) = mcx.cf.constant_pool.member_ref(fi) else {
                    continue;
                };
                let Some(sh) = Shape::of_desc(&fdesc) else {
                    continue;
                };
                let fenced = mcx.ctx.fenced;
                // A fenced class's plain accesses are synchronization too: under the
                // stripe lock, like a volatile's, so that an ordered write (a CAS, whose
                // record follows it) and a plain read of what it wrote are recorded in
                // the order they happened.
                let plan = match mcx.ctx.field_flags(&owner, &fname) {
                    Some(f) if f & ACC_VOLATILE != 0 => FieldPlan::Locked,
                    Some(_) if jdk && fenced && !sync_only => FieldPlan::Locked,
                    Some(_) if jdk || sync_only => FieldPlan::Skip,
                    Some(_) => FieldPlan::Plain,
                    None if sync_only => FieldPlan::Skip,
                    None => FieldPlan::Locked,
                };
                if plan == FieldPlan::Skip {
                    continue;
                }
                let locked = plan == FieldPlan::Locked;
                let kind = match opc {
                    op::GETFIELD => SiteKind::FieldRead {
                        owner,
                        name: fname,
                        desc: fdesc,
                    },
                    op::PUTFIELD => SiteKind::FieldWrite {
                        owner,
                        name: fname,
                        desc: fdesc,
                    },
                    op::GETSTATIC => SiteKind::StaticRead {
                        owner,
                        name: fname,
                        desc: fdesc,
                    },
                    _ => SiteKind::StaticWrite {
                        owner,
                        name: fname,
                        desc: fdesc,
                    },
                };
                let s = mcx.site(kind, bci);
                let p = mcx.push(s)?;
                match (opc, locked) {
                    (op::GETFIELD, false) => {
                        let c = mcx.call(hook_name("rd", sh))?;
                        e(ed.insert_before(i, &[Insn::new(op::DUP), local(op::ASTORE, t_obj)], 1))?;
                        e(ed.insert_after(
                            i,
                            &[Insn::new(sh.dup()), local(op::ALOAD, t_obj), p, c],
                            sh.size() + 2,
                        ))?;
                    }
                    (op::GETFIELD, true) => {
                        let (lk, c) = (mcx.call("lk")?, mcx.call(hook_name("rdL", sh))?);
                        e(ed.insert_before(
                            i,
                            &[
                                Insn::new(op::DUP),
                                local(op::ASTORE, t_obj),
                                local(op::ALOAD, t_obj),
                                p.clone(),
                                lk,
                                local(op::ISTORE, t_lk),
                            ],
                            2,
                        ))?;
                        e(ed.insert_after(
                            i,
                            &[
                                Insn::new(sh.dup()),
                                local(op::ALOAD, t_obj),
                                local(op::ILOAD, t_lk),
                                p,
                                c,
                            ],
                            sh.size() + 3,
                        ))?;
                    }
                    (op::PUTFIELD, _) => {
                        let c = mcx.call(hook_name("wr", sh))?;
                        let mut seq = vec![local(sh.store(), t_val)];
                        if locked {
                            seq.extend([
                                Insn::new(op::DUP),
                                p.clone(),
                                mcx.call("lk")?,
                                local(op::ISTORE, t_lk),
                            ]);
                        }
                        seq.extend([
                            Insn::new(op::DUP),
                            local(sh.load(), t_val),
                            p,
                            c,
                            local(sh.load(), t_val),
                        ]);
                        e(ed.insert_before(i, &seq, 3))?;
                        if locked {
                            let ul = mcx.call("ul")?;
                            e(ed.insert_after(i, &[local(op::ILOAD, t_lk), ul], 1))?;
                        }
                    }
                    (op::GETSTATIC, false) => {
                        let c = mcx.call(hook_name("sr", sh))?;
                        e(ed.insert_after(i, &[Insn::new(sh.dup()), p, c], sh.size() + 1))?;
                    }
                    (op::GETSTATIC, true) => {
                        let (lks, c) = (mcx.call("lks")?, mcx.call(hook_name("srL", sh))?);
                        e(ed.insert_before(i, &[p.clone(), lks, local(op::ISTORE, t_lk)], 1))?;
                        e(ed.insert_after(
                            i,
                            &[Insn::new(sh.dup()), local(op::ILOAD, t_lk), p, c],
                            sh.size() + 2,
                        ))?;
                    }
                    _ => {
                        let c = mcx.call(hook_name("sw", sh))?;
                        let mut seq = Vec::new();
                        if locked {
                            seq.extend([p.clone(), mcx.call("lks")?, local(op::ISTORE, t_lk)]);
                        }
                        seq.extend([Insn::new(sh.dup()), p, c]);
                        e(ed.insert_before(i, &seq, sh.size() + 1))?;
                        if locked {
                            let ul = mcx.call("ul")?;
                            e(ed.insert_after(i, &[local(op::ILOAD, t_lk), ul], 1))?;
                        }
                    }
                }
            }
            op::INVOKEVIRTUAL if ordered.contains_key(&i) => {
                // An ordered Unsafe access: the wrapper of U does it under the stripe lock
                // and records it (the site is pushed after the arguments).
                let Some(m) = ordered.get(&i) else { continue };
                let s = mcx.site(
                    SiteKind::Ordered {
                        owner: m.owner.to_string(),
                        name: m.name.clone(),
                        desc: m.desc.clone(),
                    },
                    bci,
                );
                let p = mcx.push(s)?;
                let w = mcx.call_wrapper(&m.name, &m.wrapper_desc())?;
                e(ed.insert_before(i, &[p], 1))?;
                e(ed.replace(i, w))?;
            }
            0x2e..=0x35 if !sync_only && (!jdk || mcx.ctx.fenced) => {
                let Some((elem, sh)) = array_elem(opc) else {
                    continue;
                };
                let kind = SiteKind::ArrayRead { elem: elem.into() };
                let [p, c] = mcx.hook(kind, bci, hook_name("ar", sh))?;
                e(ed.insert_before(
                    i,
                    &[
                        Insn::new(0x5c), // dup2
                        local(op::ISTORE, t_idx),
                        local(op::ASTORE, t_obj),
                    ],
                    2,
                ))?;
                e(ed.insert_after(
                    i,
                    &[
                        Insn::new(sh.dup()),
                        local(op::ALOAD, t_obj),
                        local(op::ILOAD, t_idx),
                        p,
                        c,
                    ],
                    sh.size() + 3,
                ))?;
            }
            // In a JDK class too: the JDK stores into an array plainly (under a lock) and
            // reads it with an ordered access elsewhere (a fork/join queue's slots).
            0x4f..=0x56 if !sync_only => {
                let Some((elem, sh)) = array_elem(opc) else {
                    continue;
                };
                let kind = SiteKind::ArrayWrite { elem: elem.into() };
                let [p, c] = mcx.hook(kind, bci, hook_name("aw", sh))?;
                e(ed.insert_before(
                    i,
                    &[
                        local(sh.store(), t_val),
                        Insn::new(0x5c), // dup2
                        local(sh.load(), t_val),
                        p,
                        c,
                        local(sh.load(), t_val),
                    ],
                    3,
                ))?;
            }
            op::MONITORENTER => {
                let via = stack_top_source(mcx.cf, &insns, i, &entries);
                let [p, c] = mcx.hook(SiteKind::MonitorEnter { via }, bci, "menter")?;
                e(ed.insert_before(i, &[Insn::new(op::DUP), local(op::ASTORE, t_obj)], 1))?;
                // Inside the handler that releases the monitor, or the JIT never compiles
                // the method.
                e(ed.insert_after_in_next_ranges(i, &[local(op::ALOAD, t_obj), p, c], 2))?;
            }
            op::MONITOREXIT => {
                let [p, c] = mcx.hook(SiteKind::MonitorExit, bci, "mexit")?;
                e(ed.insert_before(i, &[Insn::new(op::DUP), p, c], 2))?;
            }
            op::INVOKESTATIC if opts.calls && !sync_only && !jdk && is_arraycopy(mcx.cf, ins) => {
                // Stack: src, srcPos, dst, dstPos, length. Save, pass copies, restore.
                let (src, sp, dst, dp, n) =
                    (t_args, t_args + 1, t_args + 2, t_args + 3, t_args + 4);
                let kind = SiteKind::Call {
                    owner: "java/lang/System".into(),
                    name: "arraycopy".into(),
                    desc: "(Ljava/lang/Object;ILjava/lang/Object;II)V".into(),
                    via: None,
                };
                let [p, c] = mcx.hook(kind, bci, "arraycopy")?;
                let mut seq = vec![
                    local(op::ISTORE, n),
                    local(op::ISTORE, dp),
                    local(op::ASTORE, dst),
                    local(op::ISTORE, sp),
                    local(op::ASTORE, src),
                ];
                let reload = [
                    local(op::ALOAD, src),
                    local(op::ILOAD, sp),
                    local(op::ALOAD, dst),
                    local(op::ILOAD, dp),
                    local(op::ILOAD, n),
                ];
                seq.extend(reload.iter().cloned());
                seq.extend([p, c]);
                seq.extend(reload.iter().cloned());
                e(ed.insert_before(i, &seq, 6))?;
            }
            op::INVOKEVIRTUAL | op::INVOKEINTERFACE | op::INVOKESPECIAL | op::INVOKESTATIC
                if bp_calls.contains_key(&i) =>
            {
                let (Some(c), Some(tok)) = (bp_calls.get(&i), tok) else {
                    continue;
                };
                let (owner, mname, mdesc) = c.member.clone();
                let kind = SiteKind::Barrier {
                    owner,
                    name: mname,
                    desc: mdesc,
                };
                let s = mcx.site(kind, bci);
                let push = mcx.push(s)?;
                let mut slots = Vec::with_capacity(c.shapes.len());
                let mut k = t_args;
                for sh in &c.shapes {
                    slots.push(k);
                    k += sh.size();
                }
                let mut seq = Vec::with_capacity(3 * c.shapes.len() + 12);
                for (sh, slot) in c.shapes.iter().zip(&slots).rev() {
                    seq.push(local(sh.store(), *slot));
                }
                let mut roots = Vec::new();
                if c.receiver {
                    seq.extend([Insn::new(op::DUP), local(op::ASTORE, t_obj)]);
                    roots.push(local(op::ALOAD, t_obj));
                }
                for ((sh, slot), is_ref) in c.shapes.iter().zip(&slots).zip(&c.refs) {
                    if *is_ref {
                        roots.push(local(sh.load(), *slot));
                    }
                }
                seq.push(local(op::ILOAD, tok));
                let hook = match roots.len() {
                    0 => "bpenter0",
                    1 => "bpenter1",
                    2 => "bpenter2",
                    3 => "bpenter3",
                    _ => "bpenterN",
                };
                if roots.len() <= 3 {
                    seq.extend(roots);
                } else {
                    let object = mcx
                        .cf
                        .constant_pool
                        .add_class("java/lang/Object")
                        .map_err(|e| e.to_string())?;
                    seq.push(Insn::with(op::SIPUSH, Arg::I16(roots.len() as i16)));
                    seq.push(Insn::with(op::ANEWARRAY, Arg::Cp(object)));
                    for (k, r) in roots.into_iter().enumerate() {
                        seq.push(Insn::new(op::DUP));
                        seq.push(Insn::with(op::SIPUSH, Arg::I16(k as i16)));
                        seq.push(r);
                        seq.push(Insn::new(0x53)); // aastore
                    }
                }
                seq.push(push.clone());
                seq.push(mcx.call(hook)?);
                seq.push(local(op::ISTORE, tok));
                for (sh, slot) in c.shapes.iter().zip(&slots) {
                    seq.push(local(sh.load(), *slot));
                }
                e(ed.insert_before(i, &seq, 6))?;
                let exit = mcx.call("bpexit")?;
                e(ed.insert_after(i, &[push, exit], 1))?;
            }
            op::INVOKEVIRTUAL | op::INVOKEINTERFACE | op::INVOKESPECIAL if opts.calls => {
                let Some(((owner, mname, mdesc), shapes)) = modelled(mcx.cf, ins, jdk) else {
                    continue;
                };
                let ret_z = mdesc.ends_with(")Z");
                let ret_a = mdesc
                    .rsplit(')')
                    .next()
                    .is_some_and(|r| r.starts_with('L') || r.starts_with('['));
                let via = if mdesc.starts_with("()") {
                    stack_top_source(mcx.cf, &insns, i, &entries)
                } else {
                    None
                };
                let kind = SiteKind::Call {
                    owner,
                    name: mname,
                    desc: mdesc,
                    via,
                };
                let s = mcx.site(kind, bci);
                let push = mcx.push(s)?;
                let before = mcx.call("before")?;
                let after = mcx.call(if ret_z {
                    "afterZ"
                } else if ret_a {
                    "afterA"
                } else {
                    "after"
                })?;
                let mut slots = Vec::with_capacity(shapes.len());
                let mut k = t_args;
                for sh in &shapes {
                    slots.push(k);
                    k += sh.size();
                }
                let mut seq = Vec::with_capacity(2 * shapes.len() + 5);
                for (sh, slot) in shapes.iter().zip(&slots).rev() {
                    seq.push(local(sh.store(), *slot));
                }
                seq.extend([
                    Insn::new(op::DUP),
                    local(op::ASTORE, t_obj),
                    Insn::new(op::DUP),
                    push.clone(),
                    before,
                ]);
                for (sh, slot) in shapes.iter().zip(&slots) {
                    seq.push(local(sh.load(), *slot));
                }
                e(ed.insert_before(i, &seq, 2))?;
                let mut aft = Vec::with_capacity(4);
                if ret_z || ret_a {
                    aft.push(Insn::new(op::DUP));
                }
                aft.extend([local(op::ALOAD, t_obj), push, after]);
                e(ed.insert_after(i, &aft, 3))?;
            }
            _ if opts.branches
                && !sync_only
                && !jdk
                && (ins.is_conditional_branch()
                    || opc == op::TABLESWITCH
                    || opc == op::LOOKUPSWITCH) =>
            {
                let seq = mcx.hook(SiteKind::Branch, bci, "br")?;
                e(ed.insert_before(i, &seq, 1))?;
            }
            0xac..=0xb1 => {
                if task {
                    let [p, c] = mcx.hook(SiteKind::Task, bci, "texit")?;
                    e(ed.insert_before(i, &[Insn::new(op::ALOAD_0), p, c], 2))?;
                }
                if quiet {
                    let seq = mcx.hook(SiteKind::Quiet, bci, "qexit")?;
                    e(ed.insert_before(i, &seq, 1))?;
                }
                if sync && !opts.quiet_only {
                    let [p, c] = mcx.hook(SiteKind::SyncMethod { is_static }, bci, "sexit")?;
                    let mo = monitor();
                    e(ed.insert_before(i, &[mo, p, c], 2))?;
                }
                if is_clinit && !jdk {
                    let seq = mcx.hook(SiteKind::ClassInit, bci, "clinit")?;
                    e(ed.insert_before(i, &seq, 1))?;
                }
            }
            _ => {}
        }
    }
    // Handlers that may catch an InterruptedException: catching one is how a thread
    // "determines that it has been interrupted" (JLS 17.4.4), which orders it after the
    // interrupt(). The hook gets the exception (`before(exc, site)`; the runtime checks
    // its class).
    if opts.calls && !sync_only && !jdk {
        let mut handlers: Vec<u16> = exception_table
            .iter()
            .filter(|x| {
                x.catch_type == 0
                    || matches!(
                        mcx.cf.constant_pool.class_name(x.catch_type).as_deref(),
                        Some(
                            "java/lang/InterruptedException"
                                | "java/lang/Exception"
                                | "java/lang/Throwable"
                        )
                    )
            })
            .map(|x| x.handler_pc)
            .collect();
        handlers.sort_unstable();
        handlers.dedup();
        for h in handlers {
            let Some(i) = ed.index_at(h as u32) else {
                continue;
            };
            let kind = SiteKind::Call {
                owner: "$handler".into(),
                name: "$caught".into(),
                desc: "(Ljava/lang/Throwable;)V".into(),
                via: None,
            };
            let [p, c] = mcx.hook(kind, h as u32, "before")?;
            e(ed.insert_before(i, &[Insn::new(op::DUP), p, c], 2))?;
        }
    }
    // The catch-all handler: BarrierPairs of this frame end (before the monitor of a
    // synchronized method is released), then the exception goes on.
    let mut catch_all = Vec::new();
    if let Some(tok) = tok {
        let [p, c] = mcx.hook(SiteKind::BarrierUnwind, 0, "bpunwind")?;
        catch_all.extend([local(op::ILOAD, tok), p, c]);
    }
    if sync && !opts.quiet_only {
        let seq = mcx.hook(SiteKind::SyncMethod { is_static }, 0, "sthrow")?;
        catch_all.extend(seq);
    }
    if quiet {
        let seq = mcx.hook(SiteKind::Quiet, 0, "qexit")?;
        catch_all.extend(seq);
    }
    if !catch_all.is_empty() {
        if is_init {
            // Only after this(...)/super(...): a BarrierPair opened before it is closed by
            // a later unwind below it (see [`Barrier`]).
            if fields_from < insns.len() {
                e(ed.add_catch_all_handler_from(fields_from, &catch_all, 3))?;
            }
        } else {
            e(ed.add_catch_all_handler(&catch_all, 3))?;
        }
    }
    if !ed.is_modified() {
        return Ok(Done {
            changed: false,
            sync_skipped,
            bp_sites: 0,
            bp_skipped_empty,
        });
    }
    ed.apply(mcx.cf, mi).map_err(|e| e.to_string())?;
    Ok(Done {
        changed: true,
        sync_skipped,
        bp_sites: bp_calls.len() as u32,
        bp_skipped_empty,
    })
}

/// What [`instrument_method`] did.
struct Done {
    changed: bool,
    sync_skipped: bool,
    bp_sites: u32,
    bp_skipped_empty: u32,
}

/// A call bracketed as a BarrierPair.
struct BpCall {
    member: MemberRef,
    shapes: Vec<Shape>,
    /// Per parameter: a reference (a root).
    refs: Vec<bool>,
    /// The receiver is a root (an instance call that is not a constructor).
    receiver: bool,
}

enum BpDecision {
    /// Not a BarrierPair (instrumented callee, modelled call, not a call).
    No,
    /// Into excluded code, but nothing reachable (counted).
    Empty,
    Call(BpCall),
}

/// Descriptors of immutable leaf types: an argument of one reaches nothing mutable.
fn immutable_leaf(desc: &str) -> bool {
    matches!(
        desc,
        "Ljava/lang/String;"
            | "Ljava/lang/Integer;"
            | "Ljava/lang/Long;"
            | "Ljava/lang/Short;"
            | "Ljava/lang/Byte;"
            | "Ljava/lang/Character;"
            | "Ljava/lang/Boolean;"
            | "Ljava/lang/Float;"
            | "Ljava/lang/Double;"
    )
}

/// The parameter descriptors of a method descriptor.
fn param_descs(desc: &str) -> Option<Vec<&str>> {
    let b = desc.as_bytes();
    if b.first() != Some(&b'(') {
        return None;
    }
    let mut k = 1;
    let mut v = Vec::new();
    while *b.get(k)? != b')' {
        let s = k;
        while *b.get(k)? == b'[' {
            k += 1;
        }
        if *b.get(k)? == b'L' {
            k += b[k..].iter().position(|&c| c == b';')?;
        }
        k += 1;
        v.push(desc.get(s..k)?);
    }
    Some(v)
}

/// Whether (and how) the call `ins` becomes a BarrierPair; see [`Barrier`].
fn bp_call(cf: &ClassFile, ctx: &Ctx, bp: &Barrier, ins: &Insn) -> BpDecision {
    let idx = match (ins.op, &ins.arg) {
        (op::INVOKEVIRTUAL | op::INVOKESPECIAL | op::INVOKESTATIC, Arg::Cp(i)) => *i,
        (op::INVOKEINTERFACE, Arg::InvokeInterface { index, .. }) => *index,
        _ => return BpDecision::No,
    };
    let Some((owner, name, desc)) = cf.constant_pool.member_ref(idx) else {
        return BpDecision::No;
    };
    if owner.starts_with("jrace/") || owner.starts_with('[') {
        return BpDecision::No;
    }
    let native_here =
        owner == ctx.class_internal && ctx.natives.iter().any(|(n, d)| *n == name && *d == desc);
    if !native_here && !(bp.excluded)(&owner) {
        return BpDecision::No;
    }
    let is_static = ins.op == op::INVOKESTATIC;
    let is_init = name == "<init>";
    if (!is_static && !is_init && crate::sites::modelled_by_owner(&owner, &name, &desc))
        || is_arraycopy(cf, ins)
    {
        return BpDecision::No;
    }
    let pure = matches!(
        (owner.as_str(), name.as_str(), desc.as_str()),
        ("java/lang/Object", "<init>", "()V")
            | ("java/lang/Object", "hashCode", "()I")
            | (
                "java/lang/System",
                "identityHashCode",
                "(Ljava/lang/Object;)I"
            )
    ) || (name == "getClass" && desc == "()Ljava/lang/Class;"); // final in Object
    if pure {
        return BpDecision::Empty;
    }
    let (Some((shapes, _)), Some(descs)) = (params(&desc), param_descs(&desc)) else {
        return BpDecision::No;
    };
    let refs: Vec<bool> = shapes.iter().map(|s| *s == Shape::A).collect();
    let args_reach_nothing = descs
        .iter()
        .all(|d| !d.starts_with(['L', '[']) || immutable_leaf(d));
    let leaf_receiver = immutable_leaf(&format!("L{owner};"));
    if args_reach_nothing && (is_static || is_init || leaf_receiver) && !bp.globals && !native_here
    {
        return BpDecision::Empty;
    }
    BpDecision::Call(BpCall {
        member: (owner, name, desc),
        shapes,
        refs,
        receiver: !is_static && !is_init,
    })
}

type MemberRef = (String, String, String);

/// Whether a class calls an acquire, load or full fence (`VarHandle.acquireFence`,
/// `Unsafe.loadFence`, ...): it then orders plain reads with it (ConcurrentSkipListMap,
/// ForkJoinPool), which only a record of those reads can show.
fn uses_fences(cf: &ClassFile) -> bool {
    let cp = &cf.constant_pool;
    (1..cp.entries.len() as u16).any(|i| match cp.get(i) {
        Some(Constant::Methodref(..)) => cp.member_ref(i).is_some_and(|(owner, name, _)| {
            matches!(
                owner.as_str(),
                "java/lang/invoke/VarHandle" | "jdk/internal/misc/Unsafe" | "sun/misc/Unsafe"
            ) && matches!(
                name.as_str(),
                "acquireFence" | "fullFence" | "loadLoadFence" | "loadFence"
            )
        }),
        _ => false,
    })
}

/// The ordered `Unsafe` access an `invokevirtual` calls, if it is one.
fn ordered_unsafe(cf: &ClassFile, ins: &Insn) -> Option<crate::unsafe_ops::Method> {
    if ins.op != op::INVOKEVIRTUAL {
        return None;
    }
    let Arg::Cp(i) = ins.arg else { return None };
    let cp = &cf.constant_pool;
    let c = match cp.get(i)? {
        Constant::Methodref(c, _) => *c,
        _ => return None,
    };
    let owner = match cp.get(c)? {
        Constant::Class(n) => cp.utf8_bytes(*n)?,
        _ => return None,
    };
    if owner != crate::unsafe_ops::MISC.as_bytes() && owner != crate::unsafe_ops::SUN.as_bytes() {
        return None;
    }
    let (owner, name, desc) = cp.member_ref(i)?;
    crate::unsafe_ops::lookup(&owner, &name, &desc)
}

/// `invokestatic java/lang/System.arraycopy`.
fn is_arraycopy(cf: &ClassFile, ins: &Insn) -> bool {
    if ins.op != op::INVOKESTATIC {
        return false;
    }
    let Arg::Cp(i) = ins.arg else { return false };
    cf.constant_pool.member_ref(i).is_some_and(|(c, n, d)| {
        c == "java/lang/System"
            && n == "arraycopy"
            && d == "(Ljava/lang/Object;ILjava/lang/Object;II)V"
    })
}

/// The member and argument shapes of a call that gets `before`/`after` hooks (in a JDK
/// class, [`Options::jdk`]: only `wait`, `notify`, `notifyAll`, `start` and `join`: a
/// pool's threads are forked by the pool).
fn modelled(cf: &ClassFile, ins: &Insn, jdk: bool) -> Option<(MemberRef, Vec<Shape>)> {
    let idx = match (ins.op, &ins.arg) {
        (op::INVOKEVIRTUAL | op::INVOKESPECIAL, Arg::Cp(i)) => *i,
        (op::INVOKEINTERFACE, Arg::InvokeInterface { index, .. }) => *index,
        _ => return None,
    };
    // Most calls are not modelled: ask without allocating when the names are ASCII (whose
    // modified UTF-8 is plain UTF-8).
    let cp = &cf.constant_pool;
    let (c, nt) = match cp.get(idx)? {
        Constant::Methodref(c, nt) | Constant::InterfaceMethodref(c, nt) => (*c, *nt),
        _ => return None,
    };
    let owner_raw = match cp.get(c)? {
        Constant::Class(n) => cp.utf8_bytes(*n)?,
        _ => return None,
    };
    let (name_raw, desc_raw) = match cp.get(nt)? {
        Constant::NameAndType(n, d) => (cp.utf8_bytes(*n)?, cp.utf8_bytes(*d)?),
        _ => return None,
    };
    fn ascii(b: &[u8]) -> Option<&str> {
        if b.iter().all(|&x| (1..0x80).contains(&x)) {
            std::str::from_utf8(b).ok()
        } else {
            None
        }
    }
    if let (Some(o), Some(n), Some(d)) = (ascii(owner_raw), ascii(name_raw), ascii(desc_raw)) {
        if !modelled_call(o, n, d) {
            return None;
        }
    }
    let (owner, name, desc) = cp.member_ref(idx)?;
    if !modelled_call(&owner, &name, &desc) {
        return None;
    }
    if jdk && !crate::sites::is_thread_sync(&name, &desc) {
        return None;
    }
    let (shapes, _) = params(&desc)?;
    Some(((owner, name, desc), shapes))
}

/// A minimal class-file reader for [`class_info`]: the constant pool, the header and the
/// fields; methods and attributes are not decoded.
mod light {
    use crate::classfile::constpool::decode_modified_utf8;
    use crate::sites::ClassInfo;

    struct R<'a> {
        b: &'a [u8],
        p: usize,
    }
    impl R<'_> {
        fn u8(&mut self) -> Option<u8> {
            let v = *self.b.get(self.p)?;
            self.p += 1;
            Some(v)
        }
        fn u16(&mut self) -> Option<u16> {
            let s = self.b.get(self.p..self.p + 2)?;
            self.p += 2;
            Some(u16::from_be_bytes([s[0], s[1]]))
        }
        fn u32(&mut self) -> Option<u32> {
            let s = self.b.get(self.p..self.p + 4)?;
            self.p += 4;
            Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
        }
        fn skip(&mut self, n: usize) -> Option<()> {
            if self.p + n > self.b.len() {
                return None;
            }
            self.p += n;
            Some(())
        }
    }

    pub fn class_info(b: &[u8]) -> Option<ClassInfo> {
        let mut r = R { b, p: 0 };
        if r.u32()? != 0xCAFE_BABE {
            return None;
        }
        r.skip(4)?;
        let n = r.u16()? as usize;
        // (utf8 range) or class name index per slot.
        let mut utf8: Vec<Option<(usize, usize)>> = vec![None; n.max(1)];
        let mut class: Vec<u16> = vec![0; n.max(1)];
        let mut i = 1;
        while i < n {
            let tag = r.u8()?;
            match tag {
                1 => {
                    let len = r.u16()? as usize;
                    utf8[i] = Some((r.p, len));
                    r.skip(len)?;
                }
                7 => class[i] = r.u16()?,
                8 | 16 | 19 | 20 => r.skip(2)?,
                3 | 4 | 9..=12 | 17 | 18 => r.skip(4)?,
                15 => r.skip(3)?,
                5 | 6 => {
                    r.skip(8)?;
                    i += 1;
                }
                _ => return None,
            }
            i += 1;
        }
        let s = |k: u16| -> Option<String> {
            let (p, l) = (*utf8.get(k as usize)?)?;
            Some(decode_modified_utf8(b.get(p..p + l)?))
        };
        let cname = |k: u16| -> Option<String> { s(*class.get(k as usize)?) };
        r.skip(2)?;
        let name = cname(r.u16()?)?;
        let super_name = cname(r.u16()?);
        let ni = r.u16()?;
        let mut interfaces = Vec::with_capacity(ni as usize);
        for _ in 0..ni {
            interfaces.push(cname(r.u16()?)?);
        }
        let nf = r.u16()?;
        let mut fields = Vec::with_capacity(nf as usize);
        for _ in 0..nf {
            let flags = r.u16()?;
            let fname = s(r.u16()?)?;
            let fdesc = s(r.u16()?)?;
            let na = r.u16()?;
            for _ in 0..na {
                r.skip(2)?;
                let len = r.u32()? as usize;
                r.skip(len)?;
            }
            fields.push((fname, fdesc, flags));
        }
        Some(ClassInfo {
            name,
            super_name,
            interfaces,
            fields,
        })
    }
}
