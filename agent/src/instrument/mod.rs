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
//! Tested (agent/tests/it/instrument.rs, instrument_jdk.rs): test programs of every shape run
//! under `-Xverify:all` against a Java stand-in for R that logs each hook call, with the
//! same output as uninstrumented and the expected hook sequences; class versions 45-61 (with
//! jsr/ret); every class of `java.base` patched into the JDK and every class of the jars in
//! /usr/share/java load and verify with the same outcomes as the originals. Speed on the
//! shared 2-core test machine, one thread, classes in memory (the ignored `bench_` test in
//! instrument_jdk.rs): java.base's 6,445 classes in 0.6 s, ≈ 10,000 classes/s or 40 MB/s of
//! class files, all hooks on; the Debian jars (Derby, Guava, Maven, …) ≈ 5,000 classes/s
//! under load. [`class_info`] takes ≈ 1.6 µs per class.
//!
//! Where things are: this file has the entry points and the per-class context;
//! `method.rs` one method's rewrite, one rule per instruction kind; `scan.rs` what the
//! bytecode says before anything is inserted; `barrier.rs` which calls become
//! BarrierPairs; `emit.rs` site ids and the hooks' constant-pool entries; `shape.rs` value
//! shapes and hook names.

mod barrier;
mod emit;
mod method;
mod scan;
mod shape;

pub use barrier::Barrier;

use crate::classfile::summary::summarize;
use crate::classfile::ClassFile;
use crate::sites::{ClassInfo, SiteSink};
use emit::Pool;
use method::{instrument_method, Done};
use scan::uses_fences;

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

/// True for classes that are never instrumented (internal names).
pub fn excluded(name: &str) -> bool {
    name == "java/lang/Object" || name.starts_with("jrace/")
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
        class_dotted: info.name.replace('/', ".").into(),
        class_internal: info.name.clone(),
        file: cf.source_file().map(Into::into),
        pool: Pool::default(),
        natives,
        own_fields,
        fields,
        jdk: opts.jdk,
        // The JDK's fenced classes have their plain accesses instrumented for that alone;
        // the program's are instrumented anyway, fences only make them synchronization.
        fenced: uses_fences(&cf, !opts.jdk)
            || (opts.jdk && crate::jdksync::plain_accesses_sync(&info.name)),
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
    let s = summarize(class_bytes)?;
    Some(ClassInfo {
        name: s.name,
        super_name: s.super_name,
        interfaces: s.interfaces,
        fields: s.fields,
    })
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
    class_dotted: std::sync::Arc<str>,
    class_internal: String,
    file: Option<std::sync::Arc<str>>,
    pool: Pool,
    /// (name, descriptor) of the class's own `native` methods.
    natives: Vec<(String, String)>,
    /// (name, access flags) of the class's own fields.
    own_fields: Vec<(String, u16)>,
    fields: FieldFlags<'a>,
    /// The class is a JDK class of [`crate::jdksync`] ([`Options::jdk`]).
    jdk: bool,
    /// ... that orders plain accesses with acquire or full fences (a class of the program:
    /// with any fence): its plain field and array accesses are recorded as
    /// synchronization.
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

const ACC_NATIVE: u16 = 0x0100;
