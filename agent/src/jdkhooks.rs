//! Hooks inside a few JDK classes, for hand-offs that call sites cannot see.
//!
//! An executor runs a task in a pool thread the program never started: nothing in the
//! program's own code links `submit(task)` to the task's first access, and the task is
//! often a lambda, whose class (a hidden class) never passes through ClassFileLoadHook.
//! So the JDK's executor is hooked where it really hands work over, at method entries:
//!
//! | method (entry)                                    | hook                     | records |
//! |---------------------------------------------------|--------------------------|---------|
//! | `ThreadPoolExecutor.execute(Runnable r)`          | `before(r, TaskSubmit)`  | vwrite `r.$task` |
//! | `ThreadPoolExecutor.beforeExecute(Thread, r)`     | `before(r, TaskStart)`   | vread `r.$task` |
//! | `ThreadPoolExecutor.afterExecute(r, Throwable)`   | `before(this, TaskEnd)`  | read-modify-write `this.$done` |
//! | `FutureTask.set(V)` / `setException(Throwable)`   | `before(this, TaskEnd)`  | read-modify-write `this.$done` |
//!
//! and at the program's call sites `Future.get` (on a `FutureTask`) reads `$done` of the
//! future, `awaitTermination`/`invokeAll`/`close` on a `ThreadPoolExecutor` read `$done` of
//! the executor (runtime.rs). `submit` wraps the task in a `FutureTask` and calls
//! `execute`, so every task of a `ThreadPoolExecutor` (and `ScheduledThreadPoolExecutor`,
//! and every `Executors.new*ThreadPool`) is covered, lambdas included. Not covered:
//! `ForkJoinPool` (parallel streams, `CompletableFuture.*Async`) and virtual threads.
//!
//! The JDK class calls `jrace.rt.R`, which lives in the bootstrap loader's unnamed module;
//! the agent lets `java.base` read it (JVMTI `AddModuleReads`) when it defines `R`.

use crate::classfile::edit::CodeEditor;
use crate::classfile::insn::{op, Arg, Insn};
use crate::classfile::{ClassFile, Constant};
use crate::sites::{Location, Site, SiteKind, SiteSink};

/// The classes this module hooks (internal names).
pub const HOOKED: &[&str] = &[
    "java/util/concurrent/ThreadPoolExecutor",
    "java/util/concurrent/FutureTask",
];

/// Hooks for one method: (name, descriptor, local holding the object, the call name the
/// runtime sees).
const HOOKS: &[(&str, &str, &str, u8, &str)] = &[
    (
        "java/util/concurrent/ThreadPoolExecutor",
        "execute",
        "(Ljava/lang/Runnable;)V",
        1,
        "$taskSubmit",
    ),
    (
        "java/util/concurrent/ThreadPoolExecutor",
        "beforeExecute",
        "(Ljava/lang/Thread;Ljava/lang/Runnable;)V",
        2,
        "$taskStart",
    ),
    (
        "java/util/concurrent/ThreadPoolExecutor",
        "afterExecute",
        "(Ljava/lang/Runnable;Ljava/lang/Throwable;)V",
        0,
        "$taskEnd",
    ),
    (
        "java/util/concurrent/FutureTask",
        "set",
        "(Ljava/lang/Object;)V",
        0,
        "$taskEnd",
    ),
    (
        "java/util/concurrent/FutureTask",
        "setException",
        "(Ljava/lang/Throwable;)V",
        0,
        "$taskEnd",
    ),
];

/// Rewrites one of the [`HOOKED`] classes; `None` leaves it unchanged (another class, or
/// something unexpected: then executors are simply not modelled).
pub fn hook_class(name: &str, bytes: &[u8], sink: &mut dyn SiteSink) -> Result<Option<Vec<u8>>, String> {
    if !HOOKED.contains(&name) {
        return Ok(None);
    }
    let mut cf = ClassFile::parse(bytes).map_err(|e| e.to_string())?;
    let file = cf.source_file();
    let dotted = name.replace('/', ".");
    let mut changed = false;
    for mi in 0..cf.methods.len() {
        let (mname, mdesc) = (
            cf.method_name(&cf.methods[mi]),
            cf.method_descriptor(&cf.methods[mi]),
        );
        let Some(&(_, _, _, local, call)) = HOOKS
            .iter()
            .find(|h| h.0 == name && h.1 == mname && h.2 == mdesc)
        else {
            continue;
        };
        let Some(code) = cf.methods[mi].code() else {
            continue;
        };
        let mut ed = CodeEditor::new(code).map_err(|e| e.to_string())?;
        if ed.is_empty() {
            continue;
        }
        let site = sink.site(Site {
            kind: SiteKind::Call {
                owner: name.to_string(),
                name: call.to_string(),
                desc: "()V".to_string(),
            },
            loc: Location {
                class: dotted.clone(),
                method: mname.clone(),
                file: file.clone(),
                line: None,
                bci: 0,
            },
        });
        if site < 0 {
            return Ok(None);
        }
        let push_site = if site <= i16::MAX as i32 {
            Insn::with(op::SIPUSH, Arg::I16(site as i16))
        } else {
            let i = cf
                .constant_pool
                .add(Constant::Integer(site as u32))
                .map_err(|e| e.to_string())?;
            Insn::with(op::LDC_W, Arg::Cp(i))
        };
        let hook = cf
            .constant_pool
            .add_methodref("jrace/rt/R", "before", "(Ljava/lang/Object;I)V")
            .map_err(|e| e.to_string())?;
        let seq = [
            Insn::new(op::ALOAD_0 + local),
            push_site,
            Insn::with(op::INVOKESTATIC, Arg::Cp(hook)),
        ];
        ed.insert_before(0, &seq, 2).map_err(|e| e.to_string())?;
        ed.apply(&mut cf, mi).map_err(|e| e.to_string())?;
        changed = true;
    }
    Ok(changed.then(|| cf.to_bytes()))
}
