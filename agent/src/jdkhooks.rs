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
//! | `ForkJoinPool.WorkQueue.*push*(ForkJoinTask t, …)`| `before(t, TaskSubmit)`  | vwrite `t.$task` |
//! | `ForkJoinTask.doExec()`                           | `before(this, TaskStart)`| vread `this.$task` |
//! | `ForkJoinTask.setDone()`, `trySet*()`             | `before(this, TaskEnd)`  | read-modify-write `this.$done` |
//! | `CompletableFuture.complete*(…)`, `internalComplete` | `before(this, TaskEnd)` | read-modify-write `this.$done` |
//! | `CompletableFuture.ThreadPerTaskExecutor.execute(r)` | `before(r, TaskSubmit)` | vwrite `r.$task` |
//! | `CompletableFuture.AsyncSupply/AsyncRun.run()`    | `before(this, TaskStart)`| vread `this.$task` |
//! | `Timer.sched(TimerTask t, long, long)`            | `before(t, TaskSubmit)`  | vwrite `t.$task` (the task's own `run()` reads it through its `tenter` hook) |
//! | `VirtualThread.start(ThreadContainer)` (JDK 21+)  | `before(this, Start)`    | fork of the virtual thread ([`crate::vthreads`]) |
//! | `Thread.start()`                                  | `before(this, Start)`    | fork (once: the program's call site may have written it) |
//! | `Thread.interrupt()`, `VirtualThread.interrupt()` | `before(this, Interrupt)`| read-modify-write `this.$interrupt` |
//! | `Thread.interrupted()` (static, at each return)   | `before(null, InterruptedNow)` | vread of the current thread's `$interrupt` |
//! | `Thread.join(long)`, `join(Duration)` (at each return) | `before(this, JoinNow)`  | join, if the thread has ended |
//! | `this.wait(long)` inside `Thread.join(long)`       | `before`/`after(this, Wait)` | wait and wake, when the program holds the thread's monitor |
//! | `Thread.isAlive()` (JDK 21+, at each return)        | `afterZ(result, this, Join)` | join, if the thread has ended |
//! | `Shutdown.shutdown()` (static)                    | `before(null, VmShutdown)` | joins of every ended non-daemon thread |
//! | `NioSocketImpl.write`/`close`/`shutdownOutput`, `SocketChannelImpl.write`/`blockingWriteFully`/`shutdownOutput`/`implCloseSelectableChannel` | `before(this, StreamSend)` | vwrite of the connection direction's `$tcp` variable |
//! | `NioSocketImpl.read`, `SocketChannelImpl.read`/`blockingRead` (at each return) | `before(this, StreamReceive)` | vread of the opposite direction's `$tcp` variable |
//! | `AsynchronousSocketChannelImpl.write`/`shutdownOutput`/`close` | `before(this, StreamSend)` | vwrite, as above |
//! | `AsynchronousSocketChannelImpl.enableReading()` (a read is over, before it completes) | `before(this, StreamReceive)` | vread, as above |
//! | `Finalizer.runFinalizer(JavaLangAccess)`           | `before(this, Finalizing)` | the finalizer's accesses to its object's fields become synchronization (runtime/sync.rs `finalizing`) |
//! | `ReentrantLock.isLocked()`, `ReentrantReadWriteLock.isWriteLocked()` (at each return) | `afterZ(result, this, LockProbe)` | vread of the lock's `$writer` (seen free) or `$taken` (seen held) |
//!
//! Two threads of one JVM that talk over a TCP connection (an in-process server and its
//! client) are ordered by the kernel: what the sender did before sending comes before
//! what the receiver does after the bytes arrived. A direction of a connection is named
//! by its ports, `$tcp:SRC->DST` (the sender's local and remote port, the receiver's
//! remote and local one), so both ends find the same variable without sharing an object.
//! The receiver's read is of the latest send on that direction, which may be later than
//! the send whose bytes it got: that orders more than the kernel did (a race can be
//! missed), never less (no false race). Connections to other processes only add
//! variables nobody else writes.
//!
//! The JVM runs `Shutdown.shutdown()` in its `DestroyJavaVM` thread once the last
//! non-daemon thread has ended; the shutdown hooks it then starts
//! (`ApplicationShutdownHooks`, a JDK-sync class, see [`crate::jdksync`]) are forked from
//! there, so what the program's threads did is ordered before them.
//!
//! and at the program's call sites every call on a `Future` (`FutureTask`,
//! `CompletableFuture`, `ForkJoinTask`) is a read-modify-write of its `$done` before the
//! call (so a dependent stage registered by `thenApply` is ordered before the completion
//! that runs it) and a read after it (`get`, `join`: whatever the task did is visible);
//! `awaitTermination`/`close` on a `ThreadPoolExecutor` read `$done` of the executor
//! (runtime.rs). `submit` wraps the task in a `FutureTask` and calls `execute`, so every
//! task of a `ThreadPoolExecutor` (and `ScheduledThreadPoolExecutor`, every
//! `Executors.new*ThreadPool`) is covered, lambdas included; fork/join tasks, parallel
//! streams and `CompletableFuture`'s async stages run through the work-queue and
//! `doExec` hooks; a virtual thread is forked where every way of starting one ends.
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
    "java/util/concurrent/ForkJoinTask",
    "java/util/concurrent/ForkJoinPool$WorkQueue",
    "java/util/concurrent/CompletableFuture",
    "java/util/concurrent/CompletableFuture$ThreadPerTaskExecutor",
    "java/util/concurrent/CompletableFuture$AsyncSupply",
    "java/util/concurrent/CompletableFuture$AsyncRun",
    "java/util/Timer",
    "java/lang/VirtualThread",
    "java/lang/Thread",
    "java/lang/Shutdown",
    "sun/nio/ch/NioSocketImpl",
    "sun/nio/ch/SocketChannelImpl",
    "sun/nio/ch/AsynchronousSocketChannelImpl",
    "java/lang/ref/Finalizer",
    "java/util/concurrent/locks/ReentrantLock",
    "java/util/concurrent/locks/ReentrantReadWriteLock",
];

/// Where in the method a hook runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum At {
    /// On entry.
    Entry,
    /// Before each normal return (not when the method throws).
    Exit,
    /// Before each normal return of a method returning a boolean, which the hook gets
    /// (`afterZ(result, object, site)`).
    ExitBool,
}

/// [`hook_for`]'s local for a hook that passes `null` (a static method's).
const NULL: u8 = u8::MAX;

const TASK: &str = "Ljava/util/concurrent/ForkJoinTask;";

/// The hook for a method of a hooked class, if any: (the local holding the object, the
/// call name the runtime sees). Matched by name and descriptor shape, so that the JDK
/// versions' small differences (JDK 17's `lockedPush(task)` and `push(task, pool)`,
/// JDK 21's `push(task, pool, internal)`, ...) are all covered.
fn hook_for(class: &str, name: &str, desc: &str) -> Option<(u8, &'static str, At)> {
    if let Some(exit) = socket_hook(class, name, desc) {
        let call = if exit {
            "$streamReceive"
        } else {
            "$streamSend"
        };
        return Some((0, call, if exit { At::Exit } else { At::Entry }));
    }
    let entry = |(local, call)| Some((local, call, At::Entry));
    match (class, name) {
        ("java/util/concurrent/ThreadPoolExecutor", "execute")
            if desc == "(Ljava/lang/Runnable;)V" =>
        {
            entry((1, "$taskSubmit"))
        }
        ("java/util/concurrent/ThreadPoolExecutor", "beforeExecute")
            if desc == "(Ljava/lang/Thread;Ljava/lang/Runnable;)V" =>
        {
            entry((2, "$taskStart"))
        }
        ("java/util/concurrent/ThreadPoolExecutor", "afterExecute")
            if desc == "(Ljava/lang/Runnable;Ljava/lang/Throwable;)V" =>
        {
            entry((0, "$taskEnd"))
        }
        ("java/util/concurrent/FutureTask", "set" | "setException") => entry((0, "$taskEnd")),
        // A fork/join task runs in doExec and completes in setDone or when it records an
        // exception or a cancellation.
        ("java/util/concurrent/ForkJoinTask", "doExec") => entry((0, "$taskStart")),
        (
            "java/util/concurrent/ForkJoinTask",
            "setDone" | "trySetException" | "trySetThrown" | "trySetCancelled",
        ) => entry((0, "$taskEnd")),
        // Every submission (fork, external submit, CompletableFuture's async tasks) ends in
        // a push onto some work queue.
        ("java/util/concurrent/ForkJoinPool$WorkQueue", n)
            if n.to_ascii_lowercase().contains("push")
                && !n.to_ascii_lowercase().contains("unpush")
                && desc.starts_with(&format!("({TASK}")) =>
        {
            entry((1, "$taskSubmit"))
        }
        // With fewer than two CPUs for the common pool, CompletableFuture starts one thread
        // per async task, which runs the task's run() directly.
        ("java/util/concurrent/CompletableFuture$ThreadPerTaskExecutor", "execute")
            if desc == "(Ljava/lang/Runnable;)V" =>
        {
            entry((1, "$taskSubmit"))
        }
        (
            "java/util/concurrent/CompletableFuture$AsyncSupply"
            | "java/util/concurrent/CompletableFuture$AsyncRun",
            "run",
        ) if desc == "()V" => entry((0, "$taskStart")),
        // Every way a CompletableFuture gets its result.
        ("java/util/concurrent/CompletableFuture", n)
            if n.starts_with("complete") && n != "completeAsync" && n != "completeOnTimeout"
                || n == "internalComplete" =>
        {
            entry((0, "$taskEnd"))
        }
        // java.util.Timer: every schedule* ends in sched(task, time, period); the timer
        // thread then calls the task's run(), whose `tenter` hook reads `$task`.
        ("java/util/Timer", "sched") if desc == "(Ljava/util/TimerTask;JJ)V" => {
            entry((1, "$taskSubmit"))
        }
        // Whoever starts or interrupts a thread (the program through a method reference,
        // `Thread::start`; the JDK: `Future.cancel(true)`, `shutdownNow()`,
        // `ThreadGroup.interrupt()`), the thread's own methods run; the program's call
        // sites record the same (a fork is written once).
        ("java/lang/Thread", "start") if desc == "()V" => entry((0, "$threadStart")),
        ("java/lang/Thread" | "java/lang/VirtualThread", "interrupt") if desc == "()V" => {
            entry((0, "$threadInterrupt"))
        }
        // Every join (the program's through a method reference, `t::join`, too) returns
        // through join(long) (`join()` calls `join(0)`): a join if the thread has ended.
        // `join(Duration)` (JDK 19+) waits for a virtual thread on its own, and returns
        // at once for a thread that has ended.
        ("java/lang/Thread", "join")
            if desc == "(J)V" || desc == crate::sites::JOIN_DURATION_DESC =>
        {
            Some((0, "$threadJoin", At::Exit))
        }
        // JLS 17.4.4: a thread that detects it was interrupted (`Thread.interrupted()`)
        // comes after the interrupt: a read once it has read the flag (at its returns).
        ("java/lang/Thread", "interrupted") if desc == "()Z" => {
            Some((NULL, "$threadInterrupted", At::Exit))
        }
        // Every virtual thread start (builders, executors, Thread.startVirtualThread) ends
        // here, in the starting thread.
        ("java/lang/VirtualThread", "start")
            if desc.starts_with("(Ljdk/internal/vm/ThreadContainer;)") =>
        {
            entry((0, "$threadStart"))
        }
        ("java/lang/Shutdown", "shutdown") if desc == "()V" => entry((NULL, "$vmShutdown")),
        // A thread seen dead through `isAlive()` (JDK 21+, where it is not native; the
        // program's call sites record the same, a method reference, `Thread::isAlive`, has
        // none): a join if the thread has ended.
        ("java/lang/Thread", "isAlive") if desc == "()Z" => Some((0, "$threadAlive", At::ExitBool)),
        // Whether a lock is held, read from its state (the program's call sites record
        // the same and drop what the JDK does inside; a method reference has no site).
        ("java/util/concurrent/locks/ReentrantLock", "isLocked")
        | ("java/util/concurrent/locks/ReentrantReadWriteLock", "isWriteLocked")
            if desc == "()Z" =>
        {
            Some((0, "$lockProbe", At::ExitBool))
        }
        // The finalizer thread (and `Runtime.runFinalization`'s) runs each finalizer here.
        ("java/lang/ref/Finalizer", "runFinalizer")
            if desc == "(Ljdk/internal/access/JavaLangAccess;)V" =>
        {
            entry((0, "$finalizing"))
        }
        _ => None,
    }
}

/// Registers the site of a hook in a JDK method (`at`: class with dots, method, source
/// file) that stands for call `owner.name desc`, and returns the instruction that pushes
/// its id (`None`: the sink refused it).
fn push_call_site(
    cf: &mut ClassFile,
    sink: &mut dyn SiteSink,
    (class, method, file): (&str, &str, Option<&str>),
    (owner, name, desc): (&str, &str, &str),
) -> Result<Option<Insn>, String> {
    let site = sink.site(Site {
        kind: SiteKind::Call {
            owner: owner.to_string(),
            name: name.to_string(),
            desc: desc.to_string(),
            via: None,
        },
        loc: Location {
            class: class.into(),
            method: method.into(),
            file: file.map(Into::into),
            line: None,
            bci: 0,
        },
        jdk: true,
        fenced: false,
    });
    if site < 0 {
        return Ok(None);
    }
    if site <= i16::MAX as i32 {
        return Ok(Some(Insn::with(op::SIPUSH, Arg::I16(site as i16))));
    }
    let i = cf
        .constant_pool
        .add(Constant::Integer(site as u32))
        .map_err(|e| e.to_string())?;
    Ok(Some(Insn::with(op::LDC_W, Arg::Cp(i))))
}

/// `Thread.join(long)` waits on the thread object (`wait(delay)` in a synchronized
/// method or block): a program that joins a thread while holding that thread's monitor (a
/// `Thread` subclass whose synchronized `close()` joins itself) gives the monitor up there,
/// and the thread it joins may take it. Each `this.wait(J)` of the method gets the
/// program's wait hooks (`before`/`after`, receiver `this`), which record a wait and a wake
/// only when the program holds the monitor, as a wait in the program would.
fn wrap_join_waits(
    cf: &mut ClassFile,
    ed: &mut CodeEditor,
    sink: &mut dyn SiteSink,
    dotted: &str,
    file: Option<&str>,
) -> Result<(), String> {
    let waits: Vec<usize> = (0..ed.len())
        .filter(|&i| {
            let ins = &ed.instructions()[i].1;
            ins.op == op::INVOKEVIRTUAL
                && matches!(ins.arg, Arg::Cp(k) if cf.constant_pool.member_ref(k).is_some_and(|(c, n, d)| {
                    (c == "java/lang/Object" || c == "java/lang/Thread") && n == "wait" && d == "(J)V"
                }))
        })
        .collect();
    if waits.is_empty() {
        return Ok(());
    }
    let at_method = (dotted, "join", file);
    let wait = ("java/lang/Object", "wait", "(J)V");
    let Some(push_site) = push_call_site(cf, sink, at_method, wait)? else {
        return Ok(());
    };
    let mut hook = |name: &str| -> Result<Insn, String> {
        let k = cf
            .constant_pool
            .add_methodref("jrace/rt/R", name, "(Ljava/lang/Object;I)V")
            .map_err(|e| e.to_string())?;
        Ok(Insn::with(op::INVOKESTATIC, Arg::Cp(k)))
    };
    let before = [Insn::new(op::ALOAD_0), push_site.clone(), hook("before")?];
    let after = [Insn::new(op::ALOAD_0), push_site, hook("after")?];
    for i in waits {
        ed.insert_before(i, &before, 2).map_err(|e| e.to_string())?;
        ed.insert_after(i, &after, 2).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A TCP connection's byte stream orders what a thread did before sending before what the
/// thread that received the bytes does next (an in-process server and its client): `Some(false)`
/// for a method that sends (hooked on entry: before the bytes can arrive; closing and
/// shutting the output down count, since the peer then reads the end of the stream),
/// `Some(true)` for one that received (hooked at its returns). `java.net.Socket`'s streams
/// end in `NioSocketImpl` (JDK 13+), socket channels and their socket adaptors in
/// `SocketChannelImpl`; asynchronous socket channels (NIO.2) in
/// `AsynchronousSocketChannelImpl`, whose `enableReading()` runs once a read is over (the
/// bytes are in the buffer) and before its future or handler completes.
fn socket_hook(class: &str, name: &str, desc: &str) -> Option<bool> {
    match (class, name) {
        ("sun/nio/ch/NioSocketImpl", "read") if desc == "([BII)I" => Some(true),
        ("sun/nio/ch/NioSocketImpl", "write") if desc == "([BII)V" => Some(false),
        ("sun/nio/ch/NioSocketImpl", "close" | "shutdownOutput") if desc == "()V" => Some(false),
        ("sun/nio/ch/SocketChannelImpl", "read" | "blockingRead") if !desc.ends_with(")V") => {
            Some(true)
        }
        ("sun/nio/ch/SocketChannelImpl", "write" | "blockingWriteFully" | "shutdownOutput") => {
            Some(false)
        }
        ("sun/nio/ch/SocketChannelImpl", "implCloseSelectableChannel") if desc == "()V" => {
            Some(false)
        }
        ("sun/nio/ch/AsynchronousSocketChannelImpl", "enableReading") if desc == "()V" => {
            Some(true)
        }
        ("sun/nio/ch/AsynchronousSocketChannelImpl", "write" | "shutdownOutput") => Some(false),
        ("sun/nio/ch/AsynchronousSocketChannelImpl", "close") if desc == "()V" => Some(false),
        _ => None,
    }
}

/// Rewrites one of the [`HOOKED`] classes; `None` leaves it unchanged (another class, or
/// something unexpected: then executors are simply not modelled).
pub fn hook_class(
    name: &str,
    bytes: &[u8],
    sink: &mut dyn SiteSink,
) -> Result<Option<Vec<u8>>, String> {
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
        let Some((local, call, at)) = hook_for(name, &mname, &mdesc) else {
            continue;
        };
        if cf.methods[mi].access_flags & 0x0008 != 0 && local == 0 {
            // A static method has no `this`.
            continue;
        }
        let Some(code) = cf.methods[mi].code() else {
            continue;
        };
        let mut ed = CodeEditor::new(code).map_err(|e| e.to_string())?;
        if ed.is_empty() {
            continue;
        }
        let at_method = (dotted.as_str(), mname.as_str(), file.as_deref());
        let Some(push_site) = push_call_site(&mut cf, sink, at_method, (name, call, "()V"))? else {
            return Ok(None);
        };
        let (hook_name, hook_desc) = match at {
            At::ExitBool => ("afterZ", "(ZLjava/lang/Object;I)V"),
            _ => ("before", "(Ljava/lang/Object;I)V"),
        };
        let hook = cf
            .constant_pool
            .add_methodref("jrace/rt/R", hook_name, hook_desc)
            .map_err(|e| e.to_string())?;
        let object = if local == NULL {
            Insn::new(op::ACONST_NULL)
        } else {
            Insn::new(op::ALOAD_0 + local)
        };
        let mut seq = Vec::with_capacity(4);
        if at == At::ExitBool {
            seq.push(Insn::new(op::DUP));
        }
        seq.extend([
            object,
            push_site,
            Insn::with(op::INVOKESTATIC, Arg::Cp(hook)),
        ]);
        if (name, mname.as_str(), mdesc.as_str()) == ("java/lang/Thread", "join", "(J)V") {
            wrap_join_waits(&mut cf, &mut ed, sink, &dotted, file.as_deref())?;
        }
        match at {
            At::Entry => ed.insert_before(0, &seq, 2).map_err(|e| e.to_string())?,
            At::Exit | At::ExitBool => {
                let returns: Vec<usize> = (0..ed.len())
                    .filter(|&i| (op::IRETURN..=op::RETURN).contains(&ed.instructions()[i].1.op))
                    .collect();
                for i in returns {
                    ed.insert_before(i, &seq, 3).map_err(|e| e.to_string())?;
                }
            }
        }
        ed.apply(&mut cf, mi).map_err(|e| e.to_string())?;
        changed = true;
    }
    Ok(changed.then(|| cf.to_bytes()))
}
