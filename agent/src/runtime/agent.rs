//! The agent's process-wide side: installing it, the trace's metadata (classes, sites,
//! locations, names), the clock, the cut when recording must stop, and the shutdown that
//! seals every log.

use super::*;

impl Agent {
    /// Creates the global agent (once).
    pub fn install(
        jvmti: *mut jvmtiEnv,
        opts: AgentOptions,
        writer: TraceWriter,
        gc_events: bool,
    ) -> &'static Agent {
        let errors = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(writer.dir().join("agent.log"))
            .ok();
        clock::init();
        let mut names = Names::default();
        // Location 0 is "no location" (thread begin and end).
        names.locs.insert(String::new(), 0);
        let _ = writer.loc(0, "", None);
        if let Some(m) = opts.tree {
            // Written first, so that even a killed JVM's trace says it is filtered.
            let _ = writer.set_meta(jrace_trace::tree::META_FILTERED, &m.flag());
        }
        let tree = opts.tree.map(|_| VarOwners::new());
        AGENT.get_or_init(|| Agent {
            jvmti,
            opts,
            writer,
            start: Instant::now(),
            sync_clock: AtomicU64::new(0),
            sites: SiteTable::new(),
            names: Mutex::new(names),
            vars: VarTable::new(),
            classes: Mutex::new(FxHashMap::default()),
            defs: Mutex::default(),
            threads: Mutex::new(Vec::new()),
            tag_lock: Mutex::new(()),
            next_ids: AtomicU64::new(1),
            rmw: std::array::from_fn(|_| Mutex::new(())),
            stopped: AtomicBool::new(false),
            cut_noted: AtomicBool::new(false),
            frames: Mutex::new(FxHashMap::default()),
            bytes: AtomicU64::new(0),
            java: OnceLock::new(),
            net: super::net::NetIds::new(),
            address_cache: AtomicBool::new(false),
            gc_events,
            errors: Mutex::new(errors),
            stats: Stats::default(),
            tree,
            flags: Mutex::new(ordered::SiteFlags::new()),
            offsets: Mutex::new(FxHashMap::default()),
            jdk_stacks: std::env::var_os("JRACE_DEBUG_JDKSTACK").is_some(),
        })
    }

    /// Writes a line to DIR/agent.log (never to the program's streams).
    pub fn log(&self, msg: &str) {
        if let Some(f) = lock(&self.errors).as_mut() {
            let _ = writeln!(f, "{msg}");
        }
    }

    /// Describes a class (for resolving field sites later).
    pub fn add_class(&self, info: ClassInfo) {
        lock(&self.classes).insert(info.name.clone(), info);
    }

    /// [`Agent::add_class`] unless the class is described already.
    pub fn add_class_if_new(&self, info: ClassInfo) {
        lock(&self.classes).entry(info.name.clone()).or_insert(info);
    }

    /// Registers a site of a class of definition `def` ([`defs`]; [`NO_DEF`]: a JDK class):
    /// interns its location (writing the record) and returns its id.
    pub fn add_site(&self, site: Site, def: u32) -> i32 {
        let loc = self.intern_loc(site.loc.clone());
        let locks_only =
            site.jdk && crate::jdksync::locks_only_class(&site.loc.class.replace('.', "/"));
        if let SiteKind::ClassInit = site.kind {
            let marker = self.init_marker_name(&site.loc.class, def);
            let mut n = lock(&self.names);
            let m = intern_static(self, &mut n, &marker);
            n.clinit_classes.insert(m);
        }
        self.sites
            .push(SiteEntry {
                site,
                loc,
                resolved: OnceLock::new(),
                stack_seen: AtomicU64::new(0),
                init_seen: AtomicU64::new(0),
                def,
                locks_only,
            })
            .unwrap_or(-1)
    }

    /// The static name of the initialization marker of class `dotted` of definition `def`
    /// (`CLASS.<clinit>`, `CLASS#k.<clinit>` for its k-th definition).
    pub(super) fn init_marker_name(&self, dotted: &str, def: u32) -> String {
        format!(
            "{}.<clinit>",
            defs::class_display(dotted, self.own_ordinal(def))
        )
    }

    /// Interns a location by its display token (`File.java:LINE`, else
    /// `Class.method@BCI`), writing its record with the details of its first use.
    pub fn intern_loc(&self, l: Location) -> u32 {
        let token = match (&l.file, l.line) {
            (Some(f), Some(n)) => format!("{f}:{n}"),
            _ => format!("{}.{}@{}", l.class, l.method, l.bci),
        };
        let mut n = lock(&self.names);
        let len = n.locs.len() as u32;
        let id = *n.locs.entry(token.clone()).or_insert(len);
        if id == len {
            let detail = LocDetail {
                class: l.class.to_string(),
                method: l.method.to_string(),
                file: l.file.as_deref().map(str::to_owned),
                line: l.line,
                bci: Some(l.bci),
            };
            self.io(self.writer.loc(id, &token, Some(&detail)));
            crate::replay::loc_named(id, &token, jrace_trace::is_jdk_class(&detail.class));
            // replay
        }
        id
    }

    /// Notes in the metadata that thread `tid` is a daemon: the JVM may end while it runs
    /// without the trace being cut.
    pub(super) fn mark_daemon(&self, tid: u32) {
        self.io(self
            .writer
            .set_meta(&jrace_trace::binlog::meta_daemon(tid), "1"));
    }

    /// A metadata write that failed stops recording: later events could name what it
    /// did not record.
    pub(super) fn io(&self, r: std::io::Result<()>) {
        if let Err(e) = r {
            if self.stopped.load(Ordering::SeqCst) {
                self.log(&format!("write error: {e}"));
            } else {
                self.cut(
                    "write_error",
                    &format!("cannot write the trace's metadata: {e}: recording stopped, the program goes on"),
                );
            }
        }
    }

    #[inline]
    pub(super) fn now(&self) -> u64 {
        clock::now(self.start) + 1
    }

    /// Looks up the JNI handles the hooks need; called in VMInit.
    ///
    /// # Safety
    /// `env` is the JNI environment of the calling thread.
    pub unsafe fn init_java(&self, env: *mut JNIEnv, r_class: jclass) -> Result<(), String> {
        let class = |name: &str| -> Result<jclass, String> {
            let c = CString::new(name).unwrap();
            let k = jni!(env, FindClass, c.as_ptr());
            if k.is_null() {
                crate::jnienv::clear_exception(env);
                return Err(format!("class {name} not found"));
            }
            Ok(jni!(env, NewGlobalRef, k) as jclass)
        };
        let method = |k: jclass, name: &str, sig: &str, is_static: bool| {
            let (n, s) = (CString::new(name).unwrap(), CString::new(sig).unwrap());
            let m = if is_static {
                jni!(env, GetStaticMethodID, k, n.as_ptr(), s.as_ptr())
            } else {
                jni!(env, GetMethodID, k, n.as_ptr(), s.as_ptr())
            };
            if m.is_null() {
                crate::jnienv::clear_exception(env);
                return Err(format!("method {name}{sig} not found"));
            }
            Ok(m)
        };
        let field = |k: jclass, name: &str, sig: &str| {
            let (n, s) = (CString::new(name).unwrap(), CString::new(sig).unwrap());
            let f = jni!(env, GetFieldID, k, n.as_ptr(), s.as_ptr());
            if f.is_null() {
                crate::jnienv::clear_exception(env);
            }
            f
        };
        let unsafe_class = class("jdk/internal/misc/Unsafe")?;
        let get_unsafe = method(
            unsafe_class,
            "getUnsafe",
            "()Ljdk/internal/misc/Unsafe;",
            true,
        )?;
        let unsafe_obj = jni!(env, CallStaticObjectMethod, unsafe_class, get_unsafe);
        if unsafe_obj.is_null() {
            crate::jnienv::clear_exception(env);
            return Err("jdk.internal.misc.Unsafe.getUnsafe() failed".into());
        }
        let unsafe_obj = jni!(env, NewGlobalRef, unsafe_obj);
        let (array_base, array_base_long) = match method(
            unsafe_class,
            "arrayBaseOffset",
            "(Ljava/lang/Class;)I",
            false,
        ) {
            Ok(m) => (m, false),
            Err(_) => (
                method(
                    unsafe_class,
                    "arrayBaseOffset",
                    "(Ljava/lang/Class;)J",
                    false,
                )?,
                true,
            ),
        };
        // R's stripe locks need the offset of int[]'s first element.
        let int_array = class("[I")?;
        let base = if array_base_long {
            jni!(env, CallLongMethod, unsafe_obj, array_base, int_array)
        } else {
            jni!(env, CallIntMethod, unsafe_obj, array_base, int_array) as jlong
        };
        if crate::jnienv::take_exception(env) {
        } else {
            let f = jni!(
                env,
                GetStaticFieldID,
                r_class,
                c"LBASE".as_ptr(),
                c"J".as_ptr()
            );
            if f.is_null() {
                crate::jnienv::clear_exception(env);
            } else {
                jni!(env, SetStaticLongField, r_class, f, base);
            }
        }
        let thread_class = class("java/lang/Thread")?;
        let reentrant_lock = class("java/util/concurrent/locks/ReentrantLock")?;
        let read_lock = class("java/util/concurrent/locks/ReentrantReadWriteLock$ReadLock")?;
        let write_lock = class("java/util/concurrent/locks/ReentrantReadWriteLock$WriteLock")?;
        let rw_lock = class("java/util/concurrent/locks/ReentrantReadWriteLock")?;
        let condition =
            class("java/util/concurrent/locks/AbstractQueuedSynchronizer$ConditionObject")?;
        let rw_sync = "Ljava/util/concurrent/locks/ReentrantReadWriteLock$Sync;";
        // Optional classes: null when missing, with every field of theirs.
        let optional = |name: &str, fields: &[(&str, &str)]| -> (jclass, Vec<jfieldID>) {
            let none = (
                std::ptr::null_mut(),
                vec![std::ptr::null_mut(); fields.len()],
            );
            let Ok(k) = class(name) else {
                return none;
            };
            let ids: Vec<jfieldID> = fields.iter().map(|(n, s)| field(k, n, s)).collect();
            if ids.iter().any(|f| f.is_null()) {
                jni!(env, DeleteGlobalRef, k);
                return none;
            }
            (k, ids)
        };
        let (array_itr, ai) = optional(
            "java/util/ArrayList$Itr",
            &[("lastRet", "I"), ("this$0", "Ljava/util/ArrayList;")],
        );
        let sub = |name: &str, root: &str| -> (jclass, [jfieldID; 3]) {
            let (k, f) = optional(name, &[("root", root), ("offset", "I"), ("size", "I")]);
            (k, [f[0], f[1], f[2]])
        };
        let (array_sub, array_sub_fields) =
            sub("java/util/ArrayList$SubList", "Ljava/util/ArrayList;");
        let (abstract_sub, abstract_sub_fields) =
            sub("java/util/AbstractList$SubList", "Ljava/util/AbstractList;");
        let node = "Ljava/util/LinkedList$Node;";
        let (linked_itr, li) = optional(
            "java/util/LinkedList$ListItr",
            &[
                ("nextIndex", "I"),
                ("lastReturned", node),
                ("next", node),
                ("this$0", "Ljava/util/LinkedList;"),
            ],
        );
        let java = Java {
            thread_class,
            get_id: method(thread_class, "getId", "()J", false)?,
            get_name: method(thread_class, "getName", "()Ljava/lang/String;", false)?,
            is_alive: method(thread_class, "isAlive", "()Z", false)?,
            is_daemon: method(thread_class, "isDaemon", "()Z", false)?,
            current_thread: method(thread_class, "currentThread", "()Ljava/lang/Thread;", true)?,
            reentrant_lock,
            rl_sync: field(
                reentrant_lock,
                "sync",
                "Ljava/util/concurrent/locks/ReentrantLock$Sync;",
            ),
            read_lock,
            read_lock_sync: field(read_lock, "sync", rw_sync),
            write_lock,
            write_lock_sync: field(write_lock, "sync", rw_sync),
            rw_lock,
            rw_lock_sync: field(rw_lock, "sync", rw_sync),
            condition,
            condition_owner: field(
                condition,
                "this$0",
                "Ljava/util/concurrent/locks/AbstractQueuedSynchronizer;",
            ),
            referent: field(
                class("java/lang/ref/Reference")?,
                "referent",
                "Ljava/lang/Object;",
            ),
            interrupted_exception: class("java/lang/InterruptedException")?,
            object_wait: method(class("java/lang/Object")?, "wait", "(J)V", false)?,
            condition_await_nanos: method(condition, "awaitNanos", "(J)J", false)?,
            thread_interrupt: method(thread_class, "interrupt", "()V", false)?,
            class_class: class("java/lang/Class")?,
            r_class: jni!(env, NewGlobalRef, r_class) as jclass,
            flags_field: {
                let f = jni!(
                    env,
                    GetStaticFieldID,
                    r_class,
                    c"FLAGS".as_ptr(),
                    c"[B".as_ptr()
                );
                if f.is_null() {
                    crate::jnienv::clear_exception(env);
                    return Err("jrace.rt.R.FLAGS not found".into());
                }
                f
            },
            field_offset: method(
                r_class,
                "fieldOffset",
                "(Ljava/lang/reflect/Field;Z)J",
                true,
            )?,
            unsafe_obj,
            array_base,
            array_base_long,
            array_scale: method(
                unsafe_class,
                "arrayIndexScale",
                "(Ljava/lang/Class;)I",
                false,
            )?,
            array_itr,
            array_itr_last: ai[0],
            array_itr_list: ai[1],
            linked_itr,
            linked_itr_index: li[0],
            linked_itr_last: li[1],
            linked_itr_next: li[2],
            linked_itr_list: li[3],
            array_sub,
            array_sub_fields,
            abstract_sub,
            abstract_sub_fields,
        };
        if self.opts.replay.is_some() {
            // A replay orders threads by its schedule; a stripe lock held by a thread it
            // holds would only stall the others.
            let f = jni!(
                env,
                GetStaticFieldID,
                r_class,
                c"EXACT".as_ptr(),
                c"Z".as_ptr()
            );
            if f.is_null() {
                crate::jnienv::clear_exception(env);
            } else {
                jni!(env, SetStaticBooleanField, r_class, f, 0);
            }
        }
        let _ = self.java.set(java);
        if self.gc_events && collector_moves_only_in_pauses() {
            self.address_cache.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Stops recording for good while the program goes on: says why in agent.log, on
    /// stderr and in the metadata, where reports find it (`reason` as in
    /// [`jrace_trace::binlog::META_CUT`]).
    /// Only the first reason is recorded. Events that name what the metadata could not
    /// take are never written: [`Cx::append`] checks the flag this sets.
    pub fn cut(&self, reason: &str, detail: &str) {
        self.stopped.store(true, Ordering::SeqCst);
        self.note_cut(reason, detail);
    }

    /// Records why the trace ends early (once): metadata, agent.log, stderr.
    pub(super) fn note_cut(&self, reason: &str, detail: &str) {
        if self.cut_noted.swap(true, Ordering::SeqCst) {
            return;
        }
        use jrace_trace::binlog::{META_CUT, META_CUT_DETAIL};
        let w = &self.writer;
        if let Err(e) = w.set_meta_reserved(META_CUT, reason) {
            self.log(&format!("cannot record why recording stopped: {e}"));
        }
        let _ = w.set_meta_reserved(META_CUT_DETAIL, detail);
        self.log(detail);
        // The one line the agent itself writes to the program's stderr: a user who set
        // max_mb, or whose disk filled up, must learn that the trace stops here.
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "jrace: {detail}");
    }

    /// Ends recording: seals the log of every thread still running (their later events
    /// are dropped) and the metadata. Called in VMDeath.
    pub fn shutdown(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        let threads = std::mem::take(&mut *lock(&self.threads));
        // A log that cannot be finished (a full disk) keeps its last records in its open
        // chunk, which readers take; the trace then says it was cut.
        let unfinished = |what: String, e: std::io::Error| {
            self.note_cut(
                "write_error",
                &format!("{what}: {e}: the end of the trace may be missing"),
            )
        };
        for t in threads {
            let mut t = lock(&t);
            if let Some(log) = t.log.take() {
                let tid = t.tid;
                if let Err(e) = log.finish() {
                    unfinished(format!("thread {tid}: cannot finish its log"), e);
                }
            }
            self.stats
                .tree_dropped
                .fetch_add(t.tree_dropped, Ordering::Relaxed);
        }
        let s = &self.stats;
        let kv = [
            ("branches", if self.opts.branches { 1 } else { 0 }),
            ("classes_seen", s.classes_seen.load(Ordering::Relaxed)),
            (
                "instrumented_classes",
                s.classes_instrumented.load(Ordering::Relaxed),
            ),
            (
                "uninstrumented_classes",
                s.classes_failed.load(Ordering::Relaxed),
            ),
            (
                "uninstrumented_methods",
                s.methods_failed.load(Ordering::Relaxed),
            ),
            (
                "partly_instrumented_methods",
                s.methods_reduced.load(Ordering::Relaxed),
            ),
            (
                "instrument_ms",
                s.instrument_nanos.load(Ordering::Relaxed) / 1_000_000,
            ),
            ("jdk_sync_classes", s.jdk_classes.load(Ordering::Relaxed)),
        ];
        for (k, v) in kv {
            self.io(self.writer.set_meta(k, &v.to_string()));
        }
        if self.opts.barrier {
            for (k, v) in s.bp.meta(self.opts.bp_walk) {
                self.io(self.writer.set_meta(k, &v.to_string()));
            }
        }
        if self.opts.tree.is_some() {
            let n = s.tree_dropped.load(Ordering::Relaxed);
            self.io(self
                .writer
                .set_meta(jrace_trace::tree::META_DROPPED, &n.to_string()));
        }
        if let Err(e) = self.writer.finish_meta() {
            unfinished("cannot finish the metadata log".into(), e);
        }
    }
}
