//! The JVMTI agent (libjrace_agent.so) that records Java programs into trace directories.
//!
//! Loaded with `java -agentpath:libjrace_agent.so=out=DIR[,exclude=…][,include=…][,branches=0]`
//! (or through `jrace record`). The pieces, each with one job:
//!
//! * [`classfile`] reads and writes class files byte-identically and inserts code around
//!   instructions with every offset remapped.
//! * [`sites`] is the contract between the instrumenter and the runtime: what each
//!   instrumented instruction is, by a small integer.
//! * [`instrument`] rewrites a class to call the hooks of `jrace.rt.R`.
//! * [`runtime`] is the recorder behind those hooks (per-thread logs, stamps, ids).
//! * [`options`] parses the agent's options and decides which classes are instrumented.
//! * This file wires them to the JVM: `Agent_OnLoad` (capabilities, events), the
//!   ClassFileLoadHook, VMInit (defines `jrace.rt.R` in the bootstrap loader and binds its
//!   natives), ThreadEnd (seals a thread's log) and VMDeath (seals everything).
//!
//! Nothing here may take the JVM down: every callback catches panics, a class that cannot
//! be instrumented is loaded unchanged (and counted), and errors go to `DIR/agent.log`.

pub mod classfile;
pub mod hook_abi;
pub mod instrument;
pub mod jdkhooks;
pub mod jdksync;
pub mod jnienv;
pub mod jvmti;
pub mod options;
pub mod replay;
pub mod runtime;
pub mod sites;
pub mod unsafe_ops;
pub mod vthreads;

use jvmti::*;
use runtime::Agent;
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

/// `jrace.rt.R` is defined and its natives bound: classes may be instrumented.
static RUNTIME_READY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The compiled `jrace.rt.R`, and `jrace.rt.U` (the `Unsafe` wrappers, generated).
static RUNTIME_CLASS: &[u8] = include_bytes!(env!("JRACE_RUNTIME_CLASS"));
static UNSAFE_CLASS: &[u8] = include_bytes!(env!("JRACE_UNSAFE_CLASS"));

/// The JVM lets the agent retransform classes (those of [`jdksync`] loaded before it was
/// ready).
static CAN_RETRANSFORM: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sites allocated by the instrumenter go straight into the agent's table.
/// Where the instrumenter's sites go: the agent's table, with the definition of the class
/// they are in (`runtime::NO_DEF` for the JDK's classes).
struct AgentSites(&'static Agent, u32);

impl sites::SiteSink for AgentSites {
    fn site(&mut self, site: sites::Site) -> i32 {
        self.0.add_site(site, self.1)
    }
}

/// # Safety
/// Called by the JVM with a valid `vm`.
#[no_mangle]
pub unsafe extern "C" fn Agent_OnLoad(
    vm: *mut JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    match catch_unwind(AssertUnwindSafe(|| on_load(vm, options))) {
        Ok(Ok(())) => 0,
        Ok(Err(msg)) => {
            eprintln!("jrace agent: {msg}");
            1
        }
        Err(_) => {
            eprintln!("jrace agent: internal error while loading");
            1
        }
    }
}

unsafe fn on_load(vm: *mut JavaVM, options: *mut c_char) -> Result<(), String> {
    let opts = if options.is_null() {
        ""
    } else {
        CStr::from_ptr(options).to_str().unwrap_or("")
    };
    let mut opts = options::AgentOptions::parse(opts)?;
    // `%p` in out= becomes the process id: one trace per JVM when a build tool starts
    // several with the same options (JAVA_TOOL_OPTIONS).
    let out = opts
        .out
        .to_string_lossy()
        .replace("%p", &std::process::id().to_string());
    opts.out = out.into();
    // zstd level 1: sealing runs on the recording thread, and level 3 cost a fifth of
    // the recording time for a few percent of size.
    // `JRACE_ZSTD_LEVEL` overrides it (negative levels are zstd's fast modes).
    let level = std::env::var("JRACE_ZSTD_LEVEL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let wopts = jrace_trace::binlog::WriterOptions {
        zstd_level: level,
        ..Default::default()
    };
    let writer = match jrace_trace::binlog::TraceWriter::create_with(&opts.out, wopts) {
        Ok(w) => w,
        Err(e) => {
            // The program runs on, unrecorded: the agent never stops a JVM from starting
            // over its own trouble (bad options do, so that a typo is seen).
            eprintln!(
                "jrace agent: cannot create the trace directory {}: {e}; the program runs without recording (use out=DIR/%p for one trace per JVM)",
                opts.out.display()
            );
            return Ok(());
        }
    };
    let mut env: *mut c_void = std::ptr::null_mut();
    if ((**vm).GetEnv.unwrap())(vm, &mut env, JVMTI_VERSION_1_2 as jint) != 0 {
        return Err("JVMTI 1.2 is not available".into());
    }
    let jv = env as *mut jvmtiEnv;
    let mut caps: jvmtiCapabilities = std::mem::zeroed();
    caps.set_can_tag_objects(1);
    caps.set_can_generate_all_class_hook_events(1);
    if jvmti!(jv, AddCapabilities, &caps) != 0 {
        return Err(
            "the JVM refused the capabilities jrace needs (object tags, class hooks)".into(),
        );
    }
    // Retransforming the JDK classes loaded before VMInit (jdksync.rs).
    let mut rt: jvmtiCapabilities = std::mem::zeroed();
    rt.set_can_retransform_classes(1);
    CAN_RETRANSFORM.store(jvmti!(jv, AddCapabilities, &rt) == 0, Ordering::Relaxed);
    // Optional: source files and line numbers of stack frames.
    let mut lines: jvmtiCapabilities = std::mem::zeroed();
    lines.set_can_get_source_file_name(1);
    lines.set_can_get_line_numbers(1);
    let _ = jvmti!(jv, AddCapabilities, &lines);
    let mut gc: jvmtiCapabilities = std::mem::zeroed();
    gc.set_can_generate_garbage_collection_events(1);
    let gc_events = jvmti!(jv, AddCapabilities, &gc) == 0;
    // replay: MonitorWaited notes the monitor a woken thread waits on again until its turn.
    let replay_waits = opts.replay.is_some() && {
        let mut mc: jvmtiCapabilities = std::mem::zeroed();
        mc.set_can_generate_monitor_events(1);
        jvmti!(jv, AddCapabilities, &mc) == 0
    };
    // JDK 21+: each virtual thread its own trace thread (vthreads.rs).
    let virtual_threads = vthreads::enable(jv);
    let a = Agent::install(jv, opts, writer, gc_events);
    let _ = a.writer.set_meta("recorder", "jrace-agent");
    // replay
    if let Some(f) = &a.opts.replay {
        let host = replay::Host {
            log: |m| {
                if let Some(a) = runtime::agent() {
                    a.log(m)
                }
            },
            stopped: || runtime::agent().is_some_and(|a| a.stopped.load(Ordering::Relaxed)),
            wait: runtime::replay_wait,
        };
        replay::start(f, a.writer.dir(), a.opts.replay_timeout, host)?;
    }
    let mut cb: jvmtiEventCallbacks = std::mem::zeroed();
    cb.VMInit = Some(vm_init);
    cb.VMDeath = Some(vm_death);
    cb.ThreadStart = Some(thread_start);
    cb.ThreadEnd = Some(thread_end);
    cb.ClassFileLoadHook = Some(class_file_load_hook);
    cb.GarbageCollectionStart = Some(gc_start);
    cb.GarbageCollectionFinish = Some(gc_finish);
    if replay_waits {
        cb.MonitorWaited = Some(monitor_waited); // replay
    }
    let set = if virtual_threads {
        let cb21 = vthreads::Callbacks21 {
            base: cb,
            virtual_thread_start: std::ptr::null_mut(),
            virtual_thread_end: Some(vthreads::ended),
        };
        let size = std::mem::size_of::<vthreads::Callbacks21>() as jint;
        jvmti!(jv, SetEventCallbacks, &cb21.base, size)
    } else {
        let size = std::mem::size_of::<jvmtiEventCallbacks>() as jint;
        jvmti!(jv, SetEventCallbacks, &cb, size)
    };
    if set != 0 {
        return Err("SetEventCallbacks failed".into());
    }
    for ev in [
        jvmtiEvent_JVMTI_EVENT_VM_INIT,
        jvmtiEvent_JVMTI_EVENT_VM_DEATH,
        jvmtiEvent_JVMTI_EVENT_THREAD_START,
        jvmtiEvent_JVMTI_EVENT_THREAD_END,
        jvmtiEvent_JVMTI_EVENT_CLASS_FILE_LOAD_HOOK,
    ]
    .into_iter()
    .chain(gc_events.then_some(jvmtiEvent_JVMTI_EVENT_GARBAGE_COLLECTION_START))
    .chain(gc_events.then_some(jvmtiEvent_JVMTI_EVENT_GARBAGE_COLLECTION_FINISH))
    .chain(replay_waits.then_some(jvmtiEvent_JVMTI_EVENT_MONITOR_WAITED))
    .chain(virtual_threads.then_some(vthreads::VIRTUAL_THREAD_END))
    {
        if jvmti!(
            jv,
            SetEventNotificationMode,
            jvmtiEventMode_JVMTI_ENABLE,
            ev,
            std::ptr::null_mut()
        ) != 0
        {
            return Err(format!("cannot enable JVMTI event {ev}"));
        }
    }
    Ok(())
}

unsafe extern "C" fn vm_init(jv: *mut jvmtiEnv, env: *mut JNIEnv, _thread: jthread) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let Some(a) = runtime::agent() else { return };
        let define = |name: &std::ffi::CStr, bytes: &[u8]| {
            let c = jni!(
                env,
                DefineClass,
                name.as_ptr(),
                std::ptr::null_mut(),
                bytes.as_ptr() as *const jbyte,
                bytes.len() as jsize
            );
            if c.is_null() {
                crate::jnienv::clear_exception(env);
            }
            c
        };
        let class = define(c"jrace/rt/R", RUNTIME_CLASS);
        let u_class = define(c"jrace/rt/U", UNSAFE_CLASS);
        if class.is_null() || u_class.is_null() {
            a.log("cannot define jrace.rt.R and jrace.rt.U: nothing will be recorded");
            a.stopped.store(true, Ordering::SeqCst);
            return;
        }
        if let Err(e) = let_java_base_read(jv, env, class) {
            a.log(&format!("{e}: nothing will be recorded"));
            a.stopped.store(true, Ordering::SeqCst);
            return;
        }
        if let Err(e) = runtime::register_natives(env, class) {
            a.log(&format!("{e}: nothing will be recorded"));
            a.stopped.store(true, Ordering::SeqCst);
            return;
        }
        // Ready before init_java: it loads the JDK classes whose hooks need R (executors).
        RUNTIME_READY.store(true, Ordering::Release);
        if let Err(e) = a.init_java(env, class) {
            a.log(&format!("{e}: nothing will be recorded"));
            a.stopped.store(true, Ordering::SeqCst);
            return;
        }
        describe_loaded_classes(jv, env, a);
        retransform_jdk_classes(jv, env, a);
    }));
}

/// Registers the name, super class, interfaces and fields of every class loaded before
/// the class hook saw any (for field sites that name them).
unsafe fn describe_loaded_classes(jv: *mut jvmtiEnv, env: *mut JNIEnv, a: &Agent) {
    let mut n: jint = 0;
    let mut classes: *mut jclass = std::ptr::null_mut();
    if jvmti!(jv, GetLoadedClasses, &mut n, &mut classes) != 0 || classes.is_null() {
        return;
    }
    for &k in std::slice::from_raw_parts(classes, n.max(0) as usize) {
        if let Some(info) = runtime::describe_class(jv, env, k) {
            a.add_class_if_new(info);
        }
        jni!(env, DeleteLocalRef, k);
    }
    jvmti!(jv, Deallocate, classes as *mut u8);
}

/// Retransforms the classes of [`jdksync`] (and the executor classes [`jdkhooks`] hooks)
/// that were loaded before the recorder was ready.
unsafe fn retransform_jdk_classes(jv: *mut jvmtiEnv, env: *mut JNIEnv, a: &Agent) {
    if !CAN_RETRANSFORM.load(Ordering::Relaxed) {
        a.log("the JVM cannot retransform classes: the JDK classes loaded at start-up are not recorded");
        return;
    }
    let mut n: jint = 0;
    let mut classes: *mut jclass = std::ptr::null_mut();
    if jvmti!(jv, GetLoadedClasses, &mut n, &mut classes) != 0 || classes.is_null() {
        return;
    }
    let mut todo = Vec::new();
    for &k in std::slice::from_raw_parts(classes, n.max(0) as usize) {
        let sig = runtime::class_signature(jv, k).unwrap_or_default();
        let name = sig
            .strip_prefix('L')
            .and_then(|s| s.strip_suffix(';'))
            .unwrap_or("");
        let mut modifiable: jboolean = 0;
        if jdk_class(name)
            && !a.opts.instruments(name)
            && jvmti!(jv, IsModifiableClass, k, &mut modifiable) == 0
            && modifiable != 0
        {
            todo.push(k);
        } else {
            jni!(env, DeleteLocalRef, k);
        }
    }
    jvmti!(jv, Deallocate, classes as *mut u8);
    // All at once (one VM operation: a few dozen classes one by one cost the start-up
    // tens of milliseconds); if the JVM refuses, one at a time, so that a class it refuses
    // does not keep the others unrecorded.
    let all = jvmti!(jv, RetransformClasses, todo.len() as jint, todo.as_ptr());
    if all == 0 {
        for k in todo {
            jni!(env, DeleteLocalRef, k);
        }
        return;
    }
    for k in todo {
        let r = jvmti!(jv, RetransformClasses, 1, &k);
        if r != 0 {
            let sig = runtime::class_signature(jv, k).unwrap_or_default();
            a.stats.classes_failed.fetch_add(1, Ordering::Relaxed);
            a.log(&format!(
                "class {sig}: retransformation refused (JVMTI error {r})"
            ));
        }
        jni!(env, DeleteLocalRef, k);
    }
}

/// Lets `java.base` (whose classes call R and U, see jdksync.rs) read the module of
/// `jrace.rt.R` (the bootstrap loader's unnamed module), and that module use
/// `jdk.internal.misc.Unsafe`.
unsafe fn let_java_base_read(jv: *mut jvmtiEnv, env: *mut JNIEnv, r: jclass) -> Result<(), String> {
    let class_class = jni!(env, GetObjectClass, r);
    let get_module = jni!(
        env,
        GetMethodID,
        class_class,
        c"getModule".as_ptr(),
        c"()Ljava/lang/Module;".as_ptr()
    );
    if get_module.is_null() {
        crate::jnienv::clear_exception(env);
        return Err("Class.getModule not found".into());
    }
    let r_module = jni!(env, CallObjectMethod, r, get_module);
    if r_module.is_null() {
        crate::jnienv::clear_exception(env);
        return Err("the module of jrace.rt.R is unknown".into());
    }
    let mut base: jobject = std::ptr::null_mut();
    if jvmti!(
        jv,
        GetNamedModule,
        std::ptr::null_mut(),
        c"java/lang".as_ptr(),
        &mut base
    ) != 0
        || base.is_null()
    {
        return Err("module java.base not found".into());
    }
    let global = jni!(env, NewGlobalRef, r_module);
    let _ = R_MODULE.set(global as usize);
    if jvmti!(jv, AddModuleReads, base, r_module) != 0 {
        return Err("AddModuleReads(java.base, jrace.rt.R) failed".into());
    }
    // R and U use jdk.internal.misc.Unsafe.
    if jvmti!(
        jv,
        AddModuleExports,
        base,
        c"jdk.internal.misc".as_ptr(),
        r_module
    ) != 0
    {
        return Err("AddModuleExports(java.base, jdk.internal.misc, jrace.rt.R) failed".into());
    }
    Ok(())
}

/// The module of `jrace.rt.R` (a global reference), once defined.
static R_MODULE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
/// Packages whose named module was already made to read R's module.
static READING: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Instrumented code in a named module (an application built with module-info) must read
/// the module of `jrace.rt.R` to call it: arrange that once per package.
unsafe fn let_module_read(jv: *mut jvmtiEnv, loader: jobject, class: &str) {
    let Some(&r) = R_MODULE.get() else { return };
    let Some((pkg, _)) = class.rsplit_once('/') else {
        return;
    };
    {
        let mut seen = READING.lock().unwrap_or_else(|p| p.into_inner());
        if seen.iter().any(|p| p == pkg) {
            return;
        }
        seen.push(pkg.to_string());
    }
    let Ok(cpkg) = std::ffi::CString::new(pkg) else {
        return;
    };
    let mut module: jobject = std::ptr::null_mut();
    if jvmti!(jv, GetNamedModule, loader, cpkg.as_ptr(), &mut module) == 0 && !module.is_null() {
        let _ = jvmti!(jv, AddModuleReads, module, r as jobject);
    }
}

unsafe extern "C" fn vm_death(_jv: *mut jvmtiEnv, _env: *mut JNIEnv) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        replay::vm_death(); // replay
        if let Some(a) = runtime::agent() {
            a.shutdown();
        }
    }));
}

/// Replay mode only: `Object.wait` is over, the monitor not yet re-entered.
unsafe extern "C" fn monitor_waited(
    _jv: *mut jvmtiEnv,
    env: *mut JNIEnv,
    _thread: jthread,
    object: jobject,
    _timed_out: jboolean,
) {
    // SAFETY: JVMTI passes this thread's JNI environment and a live reference.
    let _ = catch_unwind(|| unsafe { replay::monitor_waited(env, object) });
}

unsafe extern "C" fn gc_start(_jv: *mut jvmtiEnv) {
    runtime::gc_start();
}

unsafe extern "C" fn gc_finish(_jv: *mut jvmtiEnv) {
    runtime::gc_finish();
}

unsafe extern "C" fn thread_start(_jv: *mut jvmtiEnv, _env: *mut JNIEnv, _thread: jthread) {
    runtime::thread_start();
}

unsafe extern "C" fn thread_end(_jv: *mut jvmtiEnv, _env: *mut JNIEnv, _thread: jthread) {
    runtime::thread_end();
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn class_file_load_hook(
    jv: *mut jvmtiEnv,
    env: *mut JNIEnv,
    class_being_redefined: jclass,
    loader: jobject,
    name: *const c_char,
    _protection_domain: jobject,
    len: jint,
    data: *const u8,
    new_len: *mut jint,
    new_data: *mut *mut u8,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let Some(a) = runtime::agent() else { return };
        if data.is_null() || len <= 0 {
            return;
        }
        // Only the JDK classes of jdksync.rs are retransformed (at VMInit).
        let redefining = !class_being_redefined.is_null();
        let bytes = std::slice::from_raw_parts(data, len as usize);
        let name = if name.is_null() {
            None
        } else {
            Some(CStr::from_ptr(name).to_string_lossy().into_owned())
        };
        if !redefining {
            a.stats.classes_seen.fetch_add(1, Ordering::Relaxed);
            if a.opts.verbose {
                a.log(&format!("class {}", name.as_deref().unwrap_or("?")));
            }
        }
        // Until jrace.rt.R is defined (VMInit), code that calls it could run and fail to
        // resolve it for good: classes loaded that early (by the JDK's start-up, or by
        // another agent) are left as they are, and counted.
        let ready = RUNTIME_READY.load(Ordering::Acquire);
        if !ready && name.as_deref().is_some_and(|n| a.opts.instruments(n)) {
            a.stats.classes_failed.fetch_add(1, Ordering::Relaxed);
            a.log(&format!(
                "class {} loaded before the recorder was ready: left uninstrumented",
                name.as_deref().unwrap_or("?")
            ));
        }
        let fields = |owner: &str, field: &str| runtime::field_flags(a, owner, field);
        if let Some(n) = name
            .as_deref()
            .filter(|n| ready && !a.opts.instruments(n) && jdk_class(n))
        {
            if let Some(info) = instrument::class_info(bytes) {
                a.add_class_if_new(info);
            }
            if let Some(nb) = instrument_jdk_class(a, n, bytes, &fields) {
                give_back(jv, a, n, &nb, new_len, new_data);
            }
            return;
        }
        if redefining {
            return;
        }
        let wanted = ready && name.as_deref().is_some_and(|n| a.opts.instruments(n));
        if !wanted {
            if let Some(info) = instrument::class_info(bytes) {
                a.add_class(info);
            }
            return;
        }
        let t0 = std::time::Instant::now();
        let opts = instrument::Options {
            branches: a.opts.branches,
            tasks: true,
            calls: true,
            jdk: false,
            quiet_only: false,
        };
        let excluded = |owner: &str| !a.opts.instruments(owner);
        let bp = instrument::Barrier {
            excluded: &excluded,
            globals: !a.opts.bp_globals.is_empty(),
        };
        let bp = a.opts.barrier.then_some(&bp);
        // Which definition of its name this class is (a class defined by two loaders).
        let def = match name.as_deref() {
            Some(n) if !env.is_null() => a.note_definition(env, n, loader),
            _ => runtime::NO_DEF,
        };
        let out = instrument::instrument_with(bytes, &opts, bp, &fields, &mut AgentSites(a, def));
        if a.opts.barrier {
            a.stats
                .bp
                .sites
                .fetch_add(out.bp_sites as u64, Ordering::Relaxed);
            a.stats
                .bp
                .skipped_empty
                .fetch_add(out.bp_skipped_empty as u64, Ordering::Relaxed);
        }
        a.stats
            .instrument_nanos
            .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        if let Some(info) = out.info {
            a.add_class(info);
        }
        let cname = name.as_deref().unwrap_or("?");
        if let Some(e) = &out.error {
            a.stats.classes_failed.fetch_add(1, Ordering::Relaxed);
            a.log(&format!("class {cname} left uninstrumented: {e}"));
        }
        if out.reduced_methods > 0 || out.sync_skipped > 0 {
            a.stats.methods_reduced.fetch_add(
                (out.reduced_methods + out.sync_skipped) as u64,
                Ordering::Relaxed,
            );
            if out.failed_methods == 0 {
                for f in &out.failures {
                    a.log(&format!("method {cname}.{f}"));
                }
            }
        }
        if out.failed_methods > 0 {
            a.stats
                .methods_failed
                .fetch_add(out.failed_methods as u64, Ordering::Relaxed);
            for f in &out.failures {
                a.log(&format!("method {cname}.{f} left uninstrumented"));
            }
        }
        let Some(nb) = out.bytes else { return };
        let_module_read(jv, loader, cname);
        if give_back(jv, a, cname, &nb, new_len, new_data) {
            a.stats.classes_instrumented.fetch_add(1, Ordering::Relaxed);
        }
    }));
}

/// A JDK class the recorder instruments: for its synchronization ([`jdksync`]), for its
/// quiet methods, or for the executor hooks of [`jdkhooks`].
fn jdk_class(name: &str) -> bool {
    jdksync::is_jdk_sync_class(name)
        || jdksync::locks_only_class(name)
        || jdksync::quiet_only_class(name)
        || jdkhooks::HOOKED.contains(&name)
}

/// A JDK class of [`jdksync`] instrumented for its synchronization, with the executor
/// hooks of [`jdkhooks`] where it has some; `None` to leave it as it is.
fn instrument_jdk_class(
    a: &'static Agent,
    name: &str,
    bytes: &[u8],
    fields: instrument::FieldFlags,
) -> Option<Vec<u8>> {
    let mut current: Option<Vec<u8>> = None;
    let quiet_only = jdksync::quiet_only_class(name);
    if jdksync::is_jdk_sync_class(name) || jdksync::locks_only_class(name) || quiet_only {
        let t0 = std::time::Instant::now();
        let opts = instrument::Options {
            branches: false,
            tasks: false,
            calls: true,
            jdk: true,
            quiet_only,
        };
        let out = instrument::instrument_with(
            bytes,
            &opts,
            None,
            fields,
            &mut AgentSites(a, runtime::NO_DEF),
        );
        a.stats
            .instrument_nanos
            .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        if let Some(e) = &out.error {
            a.stats.classes_failed.fetch_add(1, Ordering::Relaxed);
            a.log(&format!("class {name} left uninstrumented: {e}"));
        }
        if out.failed_methods > 0 || out.reduced_methods > 0 {
            a.stats.methods_failed.fetch_add(
                (out.failed_methods + out.reduced_methods) as u64,
                Ordering::Relaxed,
            );
            for f in &out.failures {
                a.log(&format!(
                    "method {name}.{f}: its synchronization is not recorded"
                ));
            }
        }
        current = out.bytes;
    }
    if jdkhooks::HOOKED.contains(&name) {
        match jdkhooks::hook_class(
            name,
            current.as_deref().unwrap_or(bytes),
            &mut AgentSites(a, runtime::NO_DEF),
        ) {
            Ok(Some(nb)) => current = Some(nb),
            Ok(None) => {}
            Err(e) => a.log(&format!("class {name}: executor hooks not inserted: {e}")),
        }
    }
    if current.is_some() {
        a.stats.jdk_classes.fetch_add(1, Ordering::Relaxed);
    }
    current
}

/// Hands a rewritten class to the JVM (in JVMTI-allocated memory).
unsafe fn give_back(
    jv: *mut jvmtiEnv,
    a: &Agent,
    name: &str,
    bytes: &[u8],
    new_len: *mut jint,
    new_data: *mut *mut u8,
) -> bool {
    let mut mem: *mut u8 = std::ptr::null_mut();
    if jvmti!(jv, Allocate, bytes.len() as jlong, &mut mem) != 0 || mem.is_null() {
        a.log(&format!(
            "class {name}: JVMTI Allocate failed; left uninstrumented"
        ));
        return false;
    }
    std::ptr::copy_nonoverlapping(bytes.as_ptr(), mem, bytes.len());
    *new_len = bytes.len() as jint;
    *new_data = mem;
    true
}
