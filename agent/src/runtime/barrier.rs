//! BarrierPairs (`barrier=1`, issue 6): the runtime behind `bpenter*`, `bpexit` and
//! `bpunwind` (the instrumentation is described at [`crate::instrument::Barrier`]).
//!
//! # What is recorded
//! `enter(M; D)` before a call from instrumented into excluded code and `exit(M)` after it
//! returns or throws. `M` is `pkg.Class.method` (the symbolic owner of the invoke
//! instruction). `D` is a reachable set ([`ObjSet`]) written as a metadata record; the
//! `enter` event's value is its id. Identical sets share one id.
//!
//! # Two ways to get D
//! * **Snapshots (the default; the thesis's §4.4.3).** Per call, only the roots are
//!   recorded (a roots record, shared by calls with the same roots). The first time an
//!   object is reached, its reference slots are logged once (a snapshot record) and the
//!   [`SNAPSHOTTED`] bit is set in its tag; objects already snapshotted stop the walk. A
//!   traced reference write into a snapshotted object snapshots its target and logs the
//!   new edge. The trace reader replays the graph in trace order and expands the roots at
//!   each `enter` (`jrace_trace::binlog::heap`, whose module documentation lists what this
//!   gives up: reference writes inside excluded code are not seen). A snapshot that runs
//!   over ten times `bp_budget` stops; the reader widens every set that reaches what it
//!   left out to `*`.
//! * **A walk at every call (`bp_walk=1`).** Exact at the moment of the call, and slow:
//!   the set is walked through the heap each time (described below).
//!
//! # The naming contract (what the rdit detector relies on)
//! * An object in `D` is named by its decimal object id, the same id that prefixes its
//!   variables (`12.pkg.C.f`, `12[3]`) and suffixes its lock names (`Short@12`): object
//!   `E` covers variable `V` iff `V == E` or `V` starts with `E.` or `E[`; lock `L` is on
//!   `E` iff `L == E` or `L` ends with `@E`.
//! * A `java.lang.Thread` object is named by that thread's name in the trace's thread
//!   table, so that its begin/end/fork/join are on it.
//! * Every class named with `bp_globals=` is in every `D` by its dotted name (`pkg.Lib`),
//!   covering its statics (`pkg.Lib.ready`).
//! * `*` ([`ObjSet::All`]) when the walk ran over its budget (`bp_budget=`, objects plus
//!   reference-array elements visited per call): the set is widened, never truncated.
//!
//! # Computing D (both ways)
//! The objects reachable from the roots (receiver, reference arguments) through instance
//! reference fields (inherited ones included) and reference-array elements, walked at
//! every `enter` with an explicit worklist and a visited set. Per class, the recorder
//! builds once (per thread) a slot table: JVMTI `GetClassFields` up the superclass chain,
//! statics and primitive fields dropped, `jfieldID`s kept; values are read with JNI
//! `GetObjectField` / `GetObjectArrayElement` (no access checks, so JDK internals are
//! readable). Leaves are in `D` but not walked through: `String`, the boxed primitives,
//! `Class`, `ClassLoader`, `Module`, `ThreadGroup`, `ProtectionDomain`,
//! `AccessControlContext`, `Thread` (and their subclasses), and primitive arrays.
//! Other threads may change the graph during the walk; the union of what was seen is
//! what `D` holds.
//!
//! # Blind spots (documented for users in the README)
//! * Statics touched only inside excluded code: name their classes with `bp_globals=`.
//! * Leaves are not walked: excluded code that synchronizes through something hanging off
//!   a `Class`, `ClassLoader` or `Thread` (effectively a global) is not modelled.
//! * A BarrierPair opened in a constructor's arguments before its `super(...)` call that
//!   ends by an exception is closed late (by the next unwind below it, or at thread end).

use super::*;
use jrace_trace::model::ObjSet;

/// Leaf classes (JVM signatures): in `D`, never walked through.
const LEAVES: &[&str] = &[
    "Ljava/lang/String;",
    "Ljava/lang/Integer;",
    "Ljava/lang/Long;",
    "Ljava/lang/Short;",
    "Ljava/lang/Byte;",
    "Ljava/lang/Character;",
    "Ljava/lang/Boolean;",
    "Ljava/lang/Float;",
    "Ljava/lang/Double;",
    "Ljava/lang/Class;",
    "Ljava/lang/ClassLoader;",
    "Ljava/lang/Module;",
    "Ljava/lang/ThreadGroup;",
    "Ljava/security/ProtectionDomain;",
    "Ljava/security/AccessControlContext;",
];

/// Tag bit: the object's reference slots were logged (snapshot mode). Object ids are
/// tags without it.
pub const SNAPSHOTTED: u64 = 1 << 62;

/// Per-call snapshot budget, as a multiple of `bp_budget` (each object is snapshotted
/// once, so the first call into a large structure may take it all).
const SNAPSHOT_BUDGET_FACTOR: u64 = 10;

/// What a walk does with objects of one class.
#[derive(Clone, Debug)]
pub(super) enum Slots {
    /// In `D`, not walked through.
    Leaf,
    /// A `Thread`: in `D` by its thread's name, not walked through.
    Thread,
    /// A reference array: its elements are edges.
    RefArray,
    /// Instance reference fields (`jfieldID`s as integers).
    Fields(Vec<usize>),
}

/// One open BarrierPair of a thread.
#[derive(Clone, Copy, Debug)]
struct Open {
    site: i32,
    method: u32,
}

/// Per-thread BarrierPair state.
#[derive(Default)]
pub(super) struct ThreadBp {
    stack: Vec<Open>,
    /// Class (object id of the class object) -> its slots.
    classes: FxHashMap<u64, Slots>,
    /// Object id -> object-table id (cache of [`NamesBp::objects`]).
    objects: FxHashMap<u64, u32>,
    /// Edges (container, target) of traced reference writes already logged.
    edges: FxHashSet<(u64, u64)>,
}

/// Global BarrierPair names.
#[derive(Default)]
pub(super) struct NamesBp {
    methods: FxHashMap<String, u32>,
    /// Object id -> object-table id.
    objects: FxHashMap<u64, u32>,
    next_object: u32,
    /// Trace thread id -> its name as written in the thread table.
    pub(super) thread_names: FxHashMap<u32, String>,
    /// Object-table ids of the `bp_globals=` classes (interned on first use).
    globals: Option<Vec<u32>>,
    /// Reachable sets written so far (sorted object-table ids) -> set id.
    sets: FxHashMap<Vec<u32>, u32>,
    next_set: u32,
    all_set: Option<u32>,
    /// Snapshot mode: roots (object ids) -> the reachable-set id recording them.
    root_sets: FxHashMap<Vec<u64>, u32>,
}

/// Counters written to the trace's metadata at the end.
#[derive(Default)]
pub struct BpStats {
    /// Call sites bracketed, and calls left alone as statically empty (instrumenter).
    pub sites: AtomicU64,
    pub skipped_empty: AtomicU64,
    /// `enter` events recorded.
    pub recorded: AtomicU64,
    /// Of which widened to every object (walk over budget).
    pub top: AtomicU64,
    /// Largest reachable set recorded.
    pub max_d: AtomicU64,
    /// Objects visited by all walks.
    pub visited: AtomicU64,
    /// Snapshot mode: objects snapshotted, their edges, traced reference writes logged
    /// as edges, and snapshots cut short by the budget.
    pub snapshot_objects: AtomicU64,
    pub snapshot_edges: AtomicU64,
    pub write_edges: AtomicU64,
    pub snapshot_cut: AtomicU64,
}

impl BpStats {
    /// The counters for the trace's metadata (`walk`: sets walked at each call, else
    /// snapshots, whose sets only the reader knows).
    pub fn meta(&self, walk: bool) -> Vec<(&'static str, u64)> {
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut v = vec![
            ("bp_sites", l(&self.sites)),
            ("bp_skipped_empty", l(&self.skipped_empty)),
            ("bp_recorded", l(&self.recorded)),
        ];
        if walk {
            v.extend([
                ("bp_top", l(&self.top)),
                ("bp_max_d", l(&self.max_d)),
                ("bp_visited", l(&self.visited)),
            ]);
        } else {
            v.extend([
                ("bp_snapshot_objects", l(&self.snapshot_objects)),
                ("bp_snapshot_edges", l(&self.snapshot_edges)),
                ("bp_write_edges", l(&self.write_edges)),
                ("bp_snapshot_cut", l(&self.snapshot_cut)),
            ]);
        }
        v
    }
}

/// The method id of a BarrierPair site: `pkg.Class.method`.
pub(super) fn resolve(a: &Agent, owner: &str, name: &str) -> u32 {
    let m = format!("{}.{name}", owner.replace('/', "."));
    let mut n = lock(&a.names);
    let len = n.bp.methods.len() as u32;
    let id = *n.bp.methods.entry(m.clone()).or_insert(len);
    if id == len {
        a.io(a.writer.name(Table::Method, id, &m));
    }
    id
}

impl Cx<'_> {
    /// `bpenter*`: records `enter(M; D)` and opens the BarrierPair; returns the frame's
    /// token (its depth before its first BarrierPair).
    pub(super) unsafe fn bp_enter(&mut self, tok: i32, roots: &[jobject], site: i32) -> i32 {
        let depth = self.t.bp.stack.len() as i32;
        let keep = if tok >= 0 { tok } else { depth };
        let Some(e) = self.site(site) else {
            return keep;
        };
        let Resolved::Barrier { method } = self.resolve(e) else {
            return keep;
        };
        if !self.a.opts.bp_walk {
            let set = self.roots_set(roots);
            self.a.stats.bp.recorded.fetch_add(1, Ordering::Relaxed);
            self.emit(Kind::Enter, method, e.loc, Some(set as i64), true);
            self.t.bp.stack.push(Open { site, method });
            return keep;
        }
        let set = match self.reach(roots) {
            Some(d) => self.objset(d),
            None => {
                self.a.stats.bp.top.fetch_add(1, Ordering::Relaxed);
                self.objset_all()
            }
        };
        self.a.stats.bp.recorded.fetch_add(1, Ordering::Relaxed);
        self.emit(Kind::Enter, method, e.loc, Some(set as i64), true);
        self.t.bp.stack.push(Open { site, method });
        keep
    }

    /// `bpexit`: the call at `site` returned; closes it (and whatever was left open above
    /// it). Nothing when it is not open (its enter was not recorded).
    pub(super) fn bp_exit(&mut self, site: i32) {
        let Some(k) = self.t.bp.stack.iter().rposition(|o| o.site == site) else {
            return;
        };
        let loc = self.site(site).map_or(0, |e| e.loc);
        self.bp_close_to(k, loc);
    }

    /// `bpunwind`: an exception reached a handler of the frame with token `tok`.
    pub(super) fn bp_unwind(&mut self, tok: i32, site: i32) {
        if tok < 0 {
            return;
        }
        let loc = self.site(site).map_or(0, |e| e.loc);
        self.bp_close_to(tok as usize, loc);
    }

    /// Closes every open BarrierPair at depth `depth` and above, innermost first.
    pub(super) fn bp_close_to(&mut self, depth: usize, loc: u32) {
        while self.t.bp.stack.len() > depth {
            let o = self.t.bp.stack.pop().unwrap();
            self.emit(Kind::Exit, o.method, loc, None, true);
        }
    }

    // --- snapshot mode (the default): roots per call, each object's slots once ---

    /// Snapshots what the roots reach (where not done yet) and returns the id of the
    /// reachable set that records the roots (and the `bp_globals` names).
    unsafe fn roots_set(&mut self, roots: &[jobject]) -> u32 {
        let mut ids: Vec<u64> = Vec::with_capacity(roots.len());
        for &r in roots {
            if r.is_null() {
                continue;
            }
            self.snapshot(r);
            let id = self.obj(r);
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        let names = self.globals();
        let a = self.a;
        let mut n = lock(&a.names);
        let bp = &mut n.bp;
        if let Some(&s) = bp.root_sets.get(&ids) {
            return s;
        }
        let s = bp.next_set;
        bp.next_set += 1;
        a.io(a.writer.roots(s, &ids, &names));
        if bp.root_sets.len() < 1 << 20 {
            bp.root_sets.insert(ids, s);
        }
        s
    }

    /// The object's tag has the snapshot bit.
    unsafe fn snapshotted(&self, o: jobject) -> bool {
        let mut tag: jlong = 0;
        jvmti!(self.a.jvmti, GetTag, o, &mut tag);
        tag as u64 & SNAPSHOTTED != 0
    }

    /// Logs the reference slots of `o` and of everything it reaches that is not
    /// snapshotted yet (at most the snapshot budget of objects and array elements; what
    /// is left makes the reader widen the sets that reach it to every object).
    unsafe fn snapshot(&mut self, o: jobject) {
        if o.is_null() || self.snapshotted(o) {
            return;
        }
        let env = self.env;
        if jni!(env, PushLocalFrame, 64) != 0 {
            crate::jnienv::clear_exception(env);
            return;
        }
        let budget = self.a.opts.bp_budget as u64 * SNAPSHOT_BUDGET_FACTOR;
        let stamp = self.t.last;
        let mut queued: FxHashSet<u64> = FxHashSet::default();
        queued.insert(self.obj(o));
        let mut work: Vec<jobject> = vec![jni!(env, NewLocalRef, o)];
        let mut spent: u64 = 0;
        let (mut objects, mut edges) = (0u64, 0u64);
        while let Some(x) = work.pop() {
            spent += 1;
            if spent > budget {
                self.a.stats.bp.snapshot_cut.fetch_add(1, Ordering::Relaxed);
                break;
            }
            if self.snapshotted(x) {
                jni!(env, DeleteLocalRef, x);
                continue;
            }
            let xid = self.obj(x);
            let mut targets: Vec<u64> = Vec::new();
            let mut child = |cx: &mut Self, c: jobject, work: &mut Vec<jobject>| {
                if c.is_null() {
                    return;
                }
                let cid = cx.obj(c);
                if !targets.contains(&cid) {
                    targets.push(cid);
                }
                if queued.insert(cid) && !cx.snapshotted(c) {
                    work.push(c);
                } else {
                    jni!(env, DeleteLocalRef, c);
                }
            };
            match self.slots(x) {
                Slots::Leaf => {}
                Slots::Thread => {
                    if let Some(java) = self.a.java.get() {
                        if let Some(tid) = thread_id(self.a, java, env, x) {
                            self.a.io(self.a.writer.thread_object(xid, tid));
                        }
                    }
                }
                Slots::Fields(fs) => {
                    for f in fs {
                        let c = jni!(env, GetObjectField, x, f as jfieldID);
                        child(self, c, &mut work);
                    }
                }
                Slots::RefArray => {
                    // Elements cost 1/16 each (most are null in hash tables), and a
                    // non-null one costs its object when it is visited.
                    let n = jni!(env, GetArrayLength, x as jarray).max(0);
                    spent += n as u64 / 16;
                    for i in 0..n {
                        let c = jni!(env, GetObjectArrayElement, x as jobjectArray, i);
                        if crate::jnienv::take_exception(env) {
                            break;
                        }
                        child(self, c, &mut work);
                    }
                }
            }
            // Logged before the bit is set: a thread that sees the bit finds the record.
            self.a.io(self.a.writer.snapshot(stamp, xid, &targets));
            jvmti!(self.a.jvmti, SetTag, x, (xid | SNAPSHOTTED) as jlong);
            objects += 1;
            edges += targets.len() as u64;
            jni!(env, DeleteLocalRef, x);
        }
        jni!(env, PopLocalFrame, std::ptr::null_mut());
        let st = &self.a.stats.bp;
        st.snapshot_objects.fetch_add(objects, Ordering::Relaxed);
        st.snapshot_edges.fetch_add(edges, Ordering::Relaxed);
    }

    /// A traced reference write `container.f = v` / `container[i] = v` (after its event):
    /// when the container is snapshotted, `v` is snapshotted too and the new edge logged.
    pub(super) unsafe fn bp_ref_write(&mut self, container: jobject, v: jobject) {
        let o = &self.a.opts;
        if !o.barrier || o.bp_walk || v.is_null() || container.is_null() {
            return;
        }
        if !self.snapshotted(container) {
            return;
        }
        self.snapshot(v);
        let (from, to) = (self.obj(container), self.obj(v));
        if !self.t.bp.edges.insert((from, to)) {
            return;
        }
        if self.t.bp.edges.len() > 1 << 16 {
            self.t.bp.edges.clear();
        }
        self.a.stats.bp.write_edges.fetch_add(1, Ordering::Relaxed);
        self.a.io(self.a.writer.edge(self.t.last, from, to));
    }

    // --- walk mode (bp_walk=1): the reachable set walked at every call ---

    /// The object-table ids of what `roots` reach (plus the `bp_globals` classes), sorted;
    /// `None` when the walk exceeds the budget (⊤).
    unsafe fn reach(&mut self, roots: &[jobject]) -> Option<Vec<u32>> {
        let env = self.env;
        let budget = self.a.opts.bp_budget as u64;
        let mut out: Vec<u32> = self.globals();
        if roots.iter().all(|r| r.is_null()) {
            out.sort_unstable();
            out.dedup();
            return Some(out);
        }
        if jni!(env, PushLocalFrame, 64) != 0 {
            crate::jnienv::clear_exception(env);
            return None;
        }
        let mut seen: FxHashSet<u64> = FxHashSet::default();
        // (object, a local reference of this walk's own)
        let mut work: Vec<jobject> = Vec::new();
        for &r in roots {
            if r.is_null() {
                continue;
            }
            let id = self.obj(r);
            if seen.insert(id) {
                work.push(jni!(env, NewLocalRef, r));
            }
        }
        let mut spent: u64 = 0;
        let mut over = false;
        while let Some(o) = work.pop() {
            spent += 1;
            if spent > budget {
                over = true;
                break;
            }
            let id = self.obj(o);
            let slots = self.slots(o);
            let name = match &slots {
                Slots::Thread => self.thread_object(o, id),
                _ => self.object_name(id),
            };
            out.push(name);
            let mut child = |cx: &mut Self, c: jobject, work: &mut Vec<jobject>| {
                if c.is_null() {
                    return;
                }
                if seen.insert(cx.obj(c)) {
                    work.push(c);
                } else {
                    jni!(env, DeleteLocalRef, c);
                }
            };
            match slots {
                Slots::Leaf | Slots::Thread => {}
                Slots::Fields(fs) => {
                    for f in fs {
                        let c = jni!(env, GetObjectField, o, f as jfieldID);
                        child(self, c, &mut work);
                    }
                }
                Slots::RefArray => {
                    let n = jni!(env, GetArrayLength, o as jarray).max(0) as u64;
                    spent += n;
                    if spent > budget {
                        over = true;
                        break;
                    }
                    for i in 0..n {
                        let c = jni!(env, GetObjectArrayElement, o as jobjectArray, i as jsize);
                        if crate::jnienv::take_exception(env) {
                            break;
                        }
                        child(self, c, &mut work);
                    }
                }
            }
            jni!(env, DeleteLocalRef, o);
        }
        jni!(env, PopLocalFrame, std::ptr::null_mut());
        self.a
            .stats
            .bp
            .visited
            .fetch_add(spent.min(budget), Ordering::Relaxed);
        if over {
            return None;
        }
        out.sort_unstable();
        out.dedup();
        Some(out)
    }

    /// The slot table of the object's class (computed once per thread and class).
    unsafe fn slots(&mut self, o: jobject) -> Slots {
        let env = self.env;
        let k = jni!(env, GetObjectClass, o);
        let kid = self.obj(k);
        if let Some(s) = self.t.bp.classes.get(&kid) {
            let s = s.clone();
            jni!(env, DeleteLocalRef, k);
            return s;
        }
        let s = self.class_slots(k);
        jni!(env, DeleteLocalRef, k);
        self.t.bp.classes.insert(kid, s.clone());
        s
    }

    unsafe fn class_slots(&mut self, k: jclass) -> Slots {
        let env = self.env;
        let jv = self.a.jvmti;
        let sig_of = |c: jclass| -> String {
            let mut sig: *mut c_char = std::ptr::null_mut();
            if jvmti!(jv, GetClassSignature, c, &mut sig, std::ptr::null_mut()) != 0
                || sig.is_null()
            {
                return String::new();
            }
            let s = CStr::from_ptr(sig).to_string_lossy().into_owned();
            jvmti!(jv, Deallocate, sig as *mut u8);
            s
        };
        let sig = sig_of(k);
        if let Some(elem) = sig.strip_prefix('[') {
            return if elem.starts_with(['L', '[']) {
                Slots::RefArray
            } else {
                Slots::Leaf
            };
        }
        let mut fields = Vec::new();
        let mut c = jni!(env, NewLocalRef, k);
        while !c.is_null() {
            let s = sig_of(c);
            if s == "Ljava/lang/Thread;" {
                jni!(env, DeleteLocalRef, c);
                return Slots::Thread;
            }
            if LEAVES.contains(&s.as_str()) {
                jni!(env, DeleteLocalRef, c);
                return Slots::Leaf;
            }
            let mut n: jint = 0;
            let mut fs: *mut jfieldID = std::ptr::null_mut();
            if jvmti!(jv, GetClassFields, c, &mut n, &mut fs) == 0 && !fs.is_null() {
                for &f in std::slice::from_raw_parts(fs, n.max(0) as usize) {
                    let mut m: jint = 0;
                    if jvmti!(jv, GetFieldModifiers, c, f, &mut m) != 0 || m & 0x0008 != 0 {
                        continue;
                    }
                    let mut fsig: *mut c_char = std::ptr::null_mut();
                    if jvmti!(
                        jv,
                        GetFieldName,
                        c,
                        f,
                        std::ptr::null_mut(),
                        &mut fsig,
                        std::ptr::null_mut()
                    ) != 0
                        || fsig.is_null()
                    {
                        continue;
                    }
                    let first = *fsig as u8;
                    jvmti!(jv, Deallocate, fsig as *mut u8);
                    if first == b'L' || first == b'[' {
                        fields.push(f as usize);
                    }
                }
                jvmti!(jv, Deallocate, fs as *mut u8);
            }
            let sup = jni!(env, GetSuperclass, c);
            jni!(env, DeleteLocalRef, c);
            c = sup;
        }
        Slots::Fields(fields)
    }

    /// The object-table id naming object `id` by its decimal id.
    fn object_name(&mut self, id: u64) -> u32 {
        if let Some(&o) = self.t.bp.objects.get(&id) {
            return o;
        }
        let a = self.a;
        let o = {
            let mut n = lock(&a.names);
            let bp = &mut n.bp;
            match bp.objects.get(&id) {
                Some(&o) => o,
                None => {
                    let o = bp.next_object;
                    bp.next_object += 1;
                    bp.objects.insert(id, o);
                    a.io(a.writer.name(Table::Object, o, &id.to_string()));
                    o
                }
            }
        };
        if self.t.bp.objects.len() > 1 << 20 {
            self.t.bp.objects.clear();
        }
        self.t.bp.objects.insert(id, o);
        o
    }

    /// The object-table id naming a `Thread` object by its thread's name.
    unsafe fn thread_object(&mut self, o: jobject, id: u64) -> u32 {
        if let Some(&x) = self.t.bp.objects.get(&id) {
            return x;
        }
        let a = self.a;
        let Some(java) = a.java.get() else {
            return self.object_name(id);
        };
        let Some(tid) = thread_id(a, java, self.env, o) else {
            return self.object_name(id);
        };
        let x = {
            let mut n = lock(&a.names);
            let name = n.bp.thread_names.get(&tid).cloned();
            let bp = &mut n.bp;
            match (bp.objects.get(&id), name) {
                (Some(&x), _) => x,
                (None, Some(name)) => {
                    let x = bp.next_object;
                    bp.next_object += 1;
                    bp.objects.insert(id, x);
                    a.io(a.writer.name(Table::Object, x, &name));
                    x
                }
                (None, None) => {
                    drop(n);
                    return self.object_name(id);
                }
            }
        };
        self.t.bp.objects.insert(id, x);
        x
    }

    /// The `bp_globals=` classes' object-table ids.
    fn globals(&mut self) -> Vec<u32> {
        if self.a.opts.bp_globals.is_empty() {
            return Vec::new();
        }
        let a = self.a;
        let mut n = lock(&a.names);
        let bp = &mut n.bp;
        if bp.globals.is_none() {
            let mut v = Vec::new();
            for g in &a.opts.bp_globals {
                let x = bp.next_object;
                bp.next_object += 1;
                a.io(a.writer.name(Table::Object, x, g));
                v.push(x);
            }
            bp.globals = Some(v);
        }
        bp.globals.clone().unwrap_or_default()
    }

    /// The id of reachable set `d` (sorted), writing its record the first time.
    fn objset(&mut self, d: Vec<u32>) -> u32 {
        let a = self.a;
        a.stats
            .bp
            .max_d
            .fetch_max(d.len() as u64, Ordering::Relaxed);
        let mut n = lock(&a.names);
        let bp = &mut n.bp;
        if let Some(&s) = bp.sets.get(&d) {
            return s;
        }
        let s = bp.next_set;
        bp.next_set += 1;
        a.io(a.writer.objset(s, &ObjSet::Objects(d.clone())));
        if bp.sets.len() < 1 << 20 {
            bp.sets.insert(d, s);
        }
        s
    }

    fn objset_all(&mut self) -> u32 {
        let a = self.a;
        let mut n = lock(&a.names);
        let bp = &mut n.bp;
        if let Some(s) = bp.all_set {
            return s;
        }
        let s = bp.next_set;
        bp.next_set += 1;
        a.io(a.writer.objset(s, &ObjSet::All));
        bp.all_set = Some(s);
        s
    }
}

// The natives. A hook that does not run (re-entered, recording stopped) hands the token
// back unchanged.

pub(super) unsafe extern "C" fn bp_enter0(env: Env, _: jclass, tok: jint, site: jint) -> jint {
    let mut r = tok;
    hook(env, site, |cx| r = cx.bp_enter(tok, &[], site));
    r
}
pub(super) unsafe extern "C" fn bp_enter1(
    env: Env,
    _: jclass,
    tok: jint,
    a: jobject,
    site: jint,
) -> jint {
    let mut r = tok;
    hook(env, site, |cx| r = cx.bp_enter(tok, &[a], site));
    r
}
pub(super) unsafe extern "C" fn bp_enter2(
    env: Env,
    _: jclass,
    tok: jint,
    a: jobject,
    b: jobject,
    site: jint,
) -> jint {
    let mut r = tok;
    hook(env, site, |cx| r = cx.bp_enter(tok, &[a, b], site));
    r
}
pub(super) unsafe extern "C" fn bp_enter3(
    env: Env,
    _: jclass,
    tok: jint,
    a: jobject,
    b: jobject,
    c: jobject,
    site: jint,
) -> jint {
    let mut r = tok;
    hook(env, site, |cx| r = cx.bp_enter(tok, &[a, b, c], site));
    r
}
pub(super) unsafe extern "C" fn bp_enter_n(
    env: Env,
    _: jclass,
    tok: jint,
    roots: jobjectArray,
    site: jint,
) -> jint {
    let mut r = tok;
    hook(env, site, |cx| {
        let n = if roots.is_null() {
            0
        } else {
            jni!(env, GetArrayLength, roots as jarray).max(0)
        };
        let v: Vec<jobject> = (0..n)
            .map(|i| jni!(env, GetObjectArrayElement, roots, i))
            .collect();
        r = cx.bp_enter(tok, &v, site);
        for o in v {
            if !o.is_null() {
                jni!(env, DeleteLocalRef, o);
            }
        }
    });
    r
}
pub(super) unsafe extern "C" fn bp_exit(env: Env, _: jclass, site: jint) {
    hook(env, site, |cx| cx.bp_exit(site));
}
pub(super) unsafe extern "C" fn bp_unwind(env: Env, _: jclass, tok: jint, site: jint) {
    hook(env, site, |cx| cx.bp_unwind(tok, site));
}
