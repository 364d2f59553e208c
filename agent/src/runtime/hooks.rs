//! Running a hook: the thread's state and log found (or set up on its first event) through
//! one thread-local lookup, no re-entry, no panic across the JNI boundary, nothing after
//! the VM's death; and the thread's end, which seals its log.

use super::*;

/// Runs a hook body on this thread's state: no re-entry (JNI calls made by a hook may run
/// Java code), no panic escapes, nothing after the VM's death.
/// `site` is the hook's site (a JDK site is never held by a replay).
#[inline]
pub(super) fn hook(env: *mut JNIEnv, site: i32, f: impl FnOnce(&mut Cx)) {
    hook_at(env, site, false, f)
}

/// [`hook`] for a load: its event is stamped when the hook begins ([`Entry`]).
#[inline]
pub(super) fn load_hook(env: *mut JNIEnv, site: i32, f: impl FnOnce(&mut Cx)) {
    hook_at(env, site, true, f)
}

#[inline]
pub(super) fn hook_at(env: *mut JNIEnv, site: i32, load: bool, f: impl FnOnce(&mut Cx)) {
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
                jdk_locks_only: false,
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

pub(super) unsafe fn new_thread_state(
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
        crate::jnienv::clear_exception(env);
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
    if crate::jnienv::take_exception(env) {
    } else if daemon != 0 {
        a.mark_daemon(tid);
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
        daemon: daemon != 0,
        log: Some(log),
        last: 0,
        held: FxHashMap::default(),
        lazy_locks: Vec::new(),
        pending_wake: None,
        wait_timeout: None,
        sync_stack: Vec::new(),
        seen_init: FxHashSet::default(),
        locks: FxHashMap::default(),
        models: FxHashMap::default(),
        state_names: FxHashMap::default(),
        owner_fields: FxHashMap::default(),
        ident: Identity {
            ids: (0, 0),
            addr_cache: vec![(0usize, 0u64); ADDR_CACHE].into_boxed_slice(),
            cache_epoch: u64::MAX,
            vars: FxHashMap::default(),
            array_statics: vec![(0u64, 0u32, 0u8); ARRAY_CACHE].into_boxed_slice(),
            array_classes: FxHashMap::default(),
            var_cache: vec![((0u64, 0u32), 0u32); VAR_CACHE].into_boxed_slice(),
        },
        size: SizeCheck {
            until_check: SIZE_CHECK_EVERY,
            counted: 0,
        },
        fixed: Vec::new(),
        stacks_seen: FxHashSet::default(),
        lock_stacks_seen: FxHashSet::default(),
        since_branch: SinceBranch::default(),
        tree: a.opts.tree.map(|m| Box::new(ThreadFilter::new(m))),
        tree_dropped: 0,
        bp: barrier::ThreadBp::default(),
        open_calls: Vec::new(),
        offsets: FxHashMap::default(),
        finalizee: 0,
    };
    let mut cx = Cx {
        a,
        env,
        t: &mut t,
        ref_value: false,
        entry,
        loaded: false,
        jdk: false,
        jdk_locks_only: false,
        quiet: false,
        lock_via: LockVia::Unknown,
    };
    cx.emit(Kind::Begin, 0, 0, None, true);
    Some(Arc::new(Mutex::new(t)))
}

/// The trace's id for a `Thread` object: dense ids in order of first sight (Java's own
/// ids are sparse), named with the thread's name when first seen.
pub(super) unsafe fn thread_id(
    a: &Agent,
    java: &Java,
    env: *mut JNIEnv,
    thread: jobject,
) -> Option<u32> {
    let jid = jni!(
        env,
        CallNonvirtualLongMethod,
        thread,
        java.thread_class,
        java.get_id
    );
    if crate::jnienv::take_exception(env) {
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
    if crate::jnienv::take_exception(env) {
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
    if s.is_empty() {
        // Virtual threads are unnamed unless the program names them (as `Thread.toString`
        // shows them: `#id`).
        s = format!("thread#{jid}");
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

/// ThreadStart: a new Java thread on this native thread (the launcher's thread detaches
/// `main` and attaches `DestroyJavaVM`, which runs the shutdown hooks): it records anew.
pub fn thread_start() {
    let _ = TLS.try_with(|tls| {
        if tls.carrier.borrow().is_none() && tls.state.get().is_null() {
            tls.done.set(false);
        }
    });
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
                jdk_locks_only: false,
                quiet: false,
                lock_via: LockVia::Unknown,
            };
            // After a cut the thread's end is not recorded: the trace stops where the
            // recording did, with the thread still running in it.
            if !a.stopped.load(Ordering::SeqCst) {
                cx.bp_close_to(0, 0);
                cx.emit(Kind::End, 0, 0, None, true);
                let mut n = lock(&a.names);
                n.finished.insert(cx.t.tid);
                if !cx.t.daemon {
                    n.ended.push(cx.t.tid);
                }
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

/// A virtual thread's context while it is not mounted, in its JVMTI thread-local storage.
unsafe fn take_parked(jv: *mut jvmtiEnv, vthread: jthread) -> Option<Box<Logical>> {
    let mut p: *mut c_void = std::ptr::null_mut();
    if jvmti!(jv, GetThreadLocalStorage, vthread, &mut p) != 0 || p.is_null() {
        return None;
    }
    jvmti!(jv, SetThreadLocalStorage, vthread, std::ptr::null());
    // SAFETY: only `vthread_unmounting` stores there, a `Box<Logical>`.
    Some(Box::from_raw(p as *mut Logical))
}

/// A virtual thread was mounted on this carrier: its context replaces the carrier's.
///
/// # Safety
/// Called on the carrier by the JVM, `vthread` current.
pub unsafe fn vthread_mounted(jv: *mut jvmtiEnv, vthread: jthread) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let parked = take_parked(jv, vthread);
        let _ = TLS.try_with(|tls| {
            let current = tls.take_logical();
            // (Already set: an unmount went unreported; the context in place was that
            // virtual thread's, and is dropped.)
            tls.carrier.borrow_mut().get_or_insert(current);
            tls.put_logical(parked.map(|b| *b).unwrap_or_default());
        });
    }));
}

/// A virtual thread is about to leave this carrier: its context is kept for its next
/// mount, and the carrier's comes back.
///
/// # Safety
/// Called on the carrier by the JVM, `vthread` current.
pub unsafe fn vthread_unmounting(jv: *mut jvmtiEnv, vthread: jthread) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let _ = TLS.try_with(|tls| {
            let Some(carrier) = tls.carrier.borrow_mut().take() else {
                return; // already restored by `vthread_ended`
            };
            let own = tls.take_logical();
            if !own.done {
                let p = Box::into_raw(Box::new(own));
                if jvmti!(jv, SetThreadLocalStorage, vthread, p as *const c_void) != 0 {
                    drop(Box::from_raw(p));
                }
            }
            tls.put_logical(carrier);
        });
    }));
}

/// `VirtualThreadEnd`: the virtual thread's log ends as a platform thread's does
/// ([`thread_end`]). HotSpot sends it after the last unmount (then the context is in the
/// thread's storage) or, in other versions, before it (then it is in place).
///
/// # Safety
/// Called on the carrier by the JVM.
pub unsafe fn vthread_ended(jv: *mut jvmtiEnv, vthread: jthread) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let parked = take_parked(jv, vthread);
        let _ = TLS.try_with(|tls| {
            let carrier = match tls.carrier.borrow_mut().take() {
                Some(carrier) => carrier, // mounted: the context in place is the thread's
                None => {
                    let Some(own) = parked else { return };
                    let carrier = tls.take_logical();
                    tls.put_logical(*own);
                    carrier
                }
            };
            thread_end();
            drop(tls.take_logical());
            tls.put_logical(carrier);
        });
    }));
}
