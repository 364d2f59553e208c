//! Locks, monitors, wait/notify, the JDK's synchronization variables, modelled library
//! calls, caught exceptions, fork and join.

use super::*;

impl Cx<'_> {
    /// `try_`: the acquisition could not have blocked (a successful `tryLock`), which the
    /// deadlock detector must know ([`jrace_trace::ACQUIRE_TRY`]).
    pub(super) unsafe fn acquire_obj(&mut self, obj: u64, o: jobject, loc: u32, try_: bool) {
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

    pub(super) fn release_obj(&mut self, obj: u64, loc: u32) {
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
    ///
    /// A monitor of a locks-only JDK class ([`crate::jdksync::locks_only_class`]) is a lock
    /// without that order, and is written lazily: only if the thread writes an event while
    /// holding it (the program's callback under `PrintStream.println`, say), right before
    /// that event ([`Cx::write_lazy_locks`]). A `println` of the program's own strings,
    /// which takes five monitors of the stream and its buffers, then writes nothing.
    pub(super) unsafe fn monitor_enter(&mut self, obj: u64, o: jobject, loc: u32) {
        if obj == 0 {
            return;
        }
        if self.jdk && self.jdk_locks_only {
            if let Some(c) = self.t.held.get_mut(&obj) {
                c.0 += 1;
            } else {
                let l = self.lock_id(obj, o);
                self.t.held.insert(obj, (1, l));
                self.t.lazy_locks.push((obj, l, loc));
            }
            return;
        }
        let first = !self.t.held.contains_key(&obj);
        self.acquire_obj(obj, o, loc, false);
        if self.jdk {
            // The JDK's critical sections keep their order: their plain accesses are not
            // recorded.
            if first {
                self.sync_var(obj, "$monitor", loc, true, false);
            }
            self.monitor_entered_in_call();
        }
    }

    pub(super) fn monitor_exit(&mut self, obj: u64, loc: u32) {
        let last = self.t.held.get(&obj).is_some_and(|c| c.0 == 1);
        if last {
            if let Some(i) = self.t.lazy_locks.iter().rposition(|x| x.0 == obj) {
                // Nothing was written inside: neither is the section.
                self.t.lazy_locks.remove(i);
                self.t.held.remove(&obj);
                return;
            }
        }
        if self.jdk && !self.jdk_locks_only && last {
            self.sync_var(obj, "$monitor", loc, false, true);
        }
        self.release_obj(obj, loc);
    }

    /// Writes the acquisitions of the lazily taken monitors the thread holds (before an
    /// event of the thread).
    pub(super) fn write_lazy_locks(&mut self) {
        for (_, l, loc) in std::mem::take(&mut self.t.lazy_locks) {
            self.emit_one(Kind::Acquire, l, loc, None, true);
        }
    }

    /// `Object.wait` / `Condition.await` on a held lock: `wait` now, `wake` when it
    /// returns (or at the thread's next event, if it ends by an exception).
    pub(super) fn wait(&mut self, obj: u64, loc: u32) {
        if let Some(&(_, l)) = self.t.held.get(&obj) {
            self.emit(Kind::Wait, l, loc, None, true);
            self.t.pending_wake = Some(l);
        }
    }

    /// The return from a wait; `timed_out`: it returned because its time ran out
    /// ([`jrace_trace::WAKE_TIMED_OUT`]).
    pub(super) fn wake(&mut self, obj: u64, loc: u32, timed_out: bool) {
        if let (Some(l), Some(&(_, held))) = (self.t.pending_wake, self.t.held.get(&obj)) {
            if l == held {
                self.t.pending_wake = None;
                let mark = timed_out.then_some(jrace_trace::WAKE_TIMED_OUT);
                self.emit_one(Kind::Wake, l, loc, mark, true);
            }
        }
    }

    pub(super) fn notify(&mut self, obj: u64, all: bool, loc: u32) {
        if let Some(&(_, l)) = self.t.held.get(&obj) {
            let k = if all { Kind::NotifyAll } else { Kind::Notify };
            self.emit(k, l, loc, None, true);
        }
    }

    /// A volatile read, write or atomic read-modify-write of `<obj>.<field>`.
    pub(super) fn sync_var(
        &mut self,
        obj: u64,
        field: &'static str,
        loc: u32,
        read: bool,
        write: bool,
    ) {
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
    pub(super) fn fixed_static(&mut self, name: &'static str) -> u32 {
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

    /// `isLocked()` or `isWriteLocked()` returned `held`. Seen free, the lock was last
    /// released by an outermost unlock, which wrote `$writer`; seen held, someone's
    /// outermost acquisition wrote `$taken`. Either is a volatile read of the lock's state
    /// in the JDK: the thread goes on after what that unlock or lock followed (`while
    /// (lock.isLocked()) spin; read data`).
    pub(super) fn lock_probe(&mut self, obj: u64, held: bool, loc: u32) {
        let field = if held { "$taken" } else { "$writer" };
        self.sync_var(obj, field, loc, true, false);
    }

    /// A read or write of a collection's `$state` (`sid`: `CLASS.$state`). A write is an
    /// update, a read of the state then a write: what `poll()`, `remove(k)` or `add(e)`
    /// return depends on what the collection held, so a consumer that polled the element
    /// a producer added is ordered after the add (without the read, m2 and mcm could move
    /// the poll before the add and report the element's fields as racing).
    pub(super) fn plain_state(&mut self, obj: u64, sid: u32, loc: u32, write: bool) {
        self.implicit_branch(obj, false, loc);
        let v = self.field_var(obj, sid);
        self.emit(Kind::Read, v, loc, None, false);
        if write {
            self.emit(Kind::Write, v, loc, None, false);
        }
    }

    // --- calls ---

    pub(super) unsafe fn call(&mut self, when: When, o: jobject, site: i32) {
        self.call_indexed(when, o, site, None)
    }

    /// [`Cx::call`] with the index argument of a list's `get(int)` or `set(int, E)`.
    pub(super) unsafe fn call_indexed(
        &mut self,
        when: When,
        o: jobject,
        site: i32,
        index: Option<i32>,
    ) {
        let Some(e) = self.enter_site(site) else {
            return;
        };
        let Resolved::Call(op) = self.resolve(e) else {
            return;
        };
        let loc = e.loc;
        if op == CallOp::VmShutdown {
            if matches!(when, When::Before) {
                self.vm_shutdown(loc);
            }
            return;
        }
        if op == CallOp::InterruptedNow {
            // A read even when nothing interrupted the thread: an order an earlier
            // interrupt already gave (its detection cleared the flag), or one that hides
            // a race, never a false one.
            let java = self.a.java.get().unwrap();
            let me = jni!(
                self.env,
                CallStaticObjectMethod,
                java.thread_class,
                java.current_thread
            );
            if crate::jnienv::take_exception(self.env) || me.is_null() {
                return;
            }
            let obj = self.obj(me);
            jni!(self.env, DeleteLocalRef, me);
            self.sync_var(obj, "$interrupt", loc, true, false);
            return;
        }
        if o.is_null() {
            return;
        }
        if let SiteKind::Call { via: Some(v), .. } = &e.site.kind {
            // `lock.lock()`: a lock first taken here is named by the field.
            self.lock_via = LockVia::Named(v);
        }
        match (op, when) {
            (CallOp::Start, When::Before) => self.fork(o, loc),
            (CallOp::Join, When::After(_)) | (CallOp::JoinNow, _) => self.join(o, loc),
            (CallOp::LockProbe, When::After(Ret::Bool(held))) => {
                let m = self.model(o);
                let lo = self.lock_object(o, m);
                let obj = self.obj(lo);
                self.lock_probe(obj, held, loc);
            }
            (CallOp::Wait, When::Before) => {
                let obj = self.obj(o);
                if self.jdk && self.t.held.contains_key(&obj) {
                    self.sync_var(obj, "$monitor", loc, false, true);
                }
                self.wait(obj, loc)
            }
            (CallOp::Wait, When::After(_)) => {
                let obj = self.obj(o);
                // Back after its timeout: it needed no notify.
                let timed_out =
                    self.t.wait_timeout.take().is_some_and(|(t0, ms)| {
                        t0.elapsed() >= std::time::Duration::from_millis(ms)
                    });
                self.wake(obj, loc, timed_out);
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
            (CallOp::StreamSend | CallOp::StreamReceive, _) => {
                if let SiteKind::Call { owner, .. } = &e.site.kind {
                    self.stream(o, owner, op == CallOp::StreamReceive, loc)
                }
            }
            (CallOp::Finalizing, When::Before) => self.finalizing(o),
            (CallOp::Library, _) => self.library(when, o, site, loc, index),
            _ => {}
        }
    }

    /// The finalizer thread is about to run the finalizer of `f`'s referent (a
    /// `java.lang.ref.Finalizer`). Every write to a field of an object before its
    /// finalization is visible to the finalizer (JLS 12.6.2): the collector found the
    /// object unreachable, so no thread touches it any more, and the JVM orders what was
    /// written before that pause before the finalizer thread's work after it. Nothing the
    /// program does records that order, so this thread's accesses to the object's fields
    /// from now on (the finalizer's) are recorded as synchronization: they never race
    /// with the program's earlier accesses (mcm keeps what they read).
    pub(super) unsafe fn finalizing(&mut self, f: jobject) {
        let java = self.a.java.get().unwrap();
        self.t.finalizee = 0;
        if java.referent.is_null() {
            return;
        }
        let env = self.env;
        let x = jni!(env, GetObjectField, f, java.referent);
        if !x.is_null() {
            self.t.finalizee = self.obj(x);
            jni!(env, DeleteLocalRef, x);
        }
    }

    /// A handler caught `exc`: an InterruptedException means this thread saw its interrupt.
    pub(super) unsafe fn caught(&mut self, exc: jobject, loc: u32) {
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
            crate::jnienv::clear_exception(env);
            return;
        }
        let obj = self.obj(me);
        jni!(env, DeleteLocalRef, me);
        self.sync_var(obj, "$interrupt", loc, true, false);
    }

    pub(super) unsafe fn fork(&mut self, o: jobject, loc: u32) {
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

    /// The JVM shuts down after its last non-daemon thread ended (JLS 12.8): this thread
    /// (`DestroyJavaVM`) comes after every non-daemon thread's end, and starts the shutdown
    /// hooks. It is itself never joined: the JVM ends under it by design, so it counts as
    /// a daemon (a trace is not cut by it).
    pub(super) fn vm_shutdown(&mut self, loc: u32) {
        let a = self.a;
        a.mark_daemon(self.t.tid);
        self.t.daemon = true;
        let ended = lock(&a.names).ended.clone();
        for t in ended {
            if t != self.t.tid {
                self.emit(Kind::Join, t, loc, None, true);
            }
        }
    }

    /// Whether thread `o` has terminated (JVMTI), not merely not started yet.
    unsafe fn terminated(&self, o: jobject) -> bool {
        let mut state: jint = 0;
        jvmti!(self.a.jvmti, GetThreadState, o, &mut state) == 0
            && state as u32 & JVMTI_THREAD_STATE_TERMINATED != 0
    }

    pub(super) unsafe fn join(&mut self, o: jobject, loc: u32) {
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
        if crate::jnienv::take_exception(env) {
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
        // isAlive() is also false before start(), and between a start() the trace holds
        // and the thread's becoming alive: only a thread that ended can have been joined,
        // one whose end is recorded (the JVM reports it before the thread stops being
        // alive), or, when it recorded nothing, one the JVM says has terminated.
        let (forked, finished) = {
            let n = lock(&self.a.names);
            (n.forked.contains(&child), n.finished.contains(&child))
        };
        if !forked || (!finished && !self.terminated(o)) {
            return;
        }
        self.emit(Kind::Join, child, loc, None, true);
    }
}
