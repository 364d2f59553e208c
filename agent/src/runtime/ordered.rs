//! Synchronization in the order it happened: the recorder side of the stripe locks of
//! `jrace.rt.R` and the `Unsafe` wrappers of `jrace.rt.U`, the JDK's own synchronization
//! (see [`crate::jdksync`]), and the modelled calls of the program that drop the JDK's
//! events or hold them back until they know whether the call succeeded.
//!
//! # Exact order
//! A volatile field access, and every ordered `Unsafe` operation (what atomics,
//! `VarHandle`s, field updaters and the lock-free JDK classes are made of), runs in Java
//! under the stripe lock of its object (`R.lock`: one of 4096 locks, chosen by the
//! object's identity hash; statics share one), and is recorded before that lock is
//! released. Two such accesses to one variable are therefore stamped in the order they
//! happened, and the synchronization word (see the module documentation of `runtime`)
//! makes the stamps strictly increasing across that hand-over. What an operation read and
//! wrote is recorded as its value (references as object ids): a compare-and-set that
//! succeeded is a volatile read of the expected value followed by a volatile write of the
//! new one; one that failed is a volatile read of the value it found (a strong
//! compare-and-set reads with volatile semantics whether or not it succeeds, and the
//! thread goes on knowing that value: `if (!state.compareAndSet(PENDING, CANCELLED))`
//! follows the other thread's `compareAndSet(PENDING, DONE)`).
//!
//! # Which variable an `Unsafe` offset is
//! The wrappers pass `(object, offset)`. Per class, the offsets of its fields (inherited
//! ones included) are asked once from `Unsafe.objectFieldOffset` (through `R.fieldOffset`);
//! a `Class` object stands for its class's statics (`staticFieldBase`), an array for its
//! elements (`arrayBaseOffset`, `arrayIndexScale`). So `AtomicInteger.value` reached by
//! `getAndAdd`, by `get()` and by a field updater is one variable, and a `VarHandle` on a
//! program's field touches the same variable as the program's own `getfield` of it.
//!
//! # The JDK's events inside a modelled call
//! A call of the program that the recorder models itself (a `ReentrantLock`'s `lock`, a
//! synchronized collection's operation) opens an [`OpenCall`]. Events of JDK code
//! ([`Cx::jdk`]) that run inside a lock's call are dropped (the model records an acquire
//! or a release instead, which the detectors may reorder). Any event of the program's
//! own code inside an open call (a callback the call runs, or the code after a call that
//! ended by an exception) closes the call.
//!
//! The other `java.util.concurrent` calls are not modelled: their events are written as
//! they happen, whether the call succeeds or fails. A `poll()` that found the queue
//! empty, a map's `get(k)` that found no mapping, a `tryAcquire` that found no permit
//! read what another thread's operation left, and the thread goes on knowing it (`while
//! (map.get(k) != null)` ends only after the other thread's `remove(k)`).

use super::*;

/// `R.FLAGS` values (per site).
pub(super) const FLAG_PLAIN: u8 = 1;
pub(super) const FLAG_VOLATILE: u8 = 2;
pub(super) const FLAG_MODELLED: u8 = 3;

/// Off-heap memory's object id in variable keys: `(ARRAY_VAR | OFFHEAP_OBJ | high 32 bits
/// of the address, low 32 bits)`. Object ids are counted from 1 and never reach it.
const OFFHEAP_OBJ: u64 = 1 << 62;

/// The agent's copy of `R.FLAGS` and the Java array it keeps in sync.
pub(super) struct SiteFlags {
    flags: Vec<u8>,
    /// Global reference to the current `R.FLAGS` array (null until the first flag).
    array: jobject,
    cap: usize,
}

// SAFETY: the global reference is valid in every thread.
unsafe impl Send for SiteFlags {}

impl SiteFlags {
    pub(super) fn new() -> SiteFlags {
        SiteFlags {
            flags: Vec::new(),
            array: std::ptr::null_mut(),
            cap: 0,
        }
    }
}

/// A modelled call of the program under way (see the module documentation).
pub(super) struct OpenCall {
    pub(super) site: i32,
    pub(super) mode: OpenMode,
}

/// What an open call does with the JDK's events inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OpenMode {
    /// Drops them (the model records the call itself).
    Drop,
    /// Writes them, and when the JDK enters a monitor, a read or write of the `$state` of
    /// collection `owner` right after, at the call's location `loc` (a synchronized
    /// collection's operation, inside its monitor); `owner` is 0 once written, or when
    /// there is none.
    Monitor {
        owner: u64,
        sid: u32,
        write: bool,
        loc: u32,
    },
}

/// How the `Unsafe` offsets of one class (or of one class object's statics, or of an
/// array class) map to variables.
pub(super) enum Offsets {
    Array {
        base: i64,
        scale: i64,
        static_id: u32,
    },
    /// Instance fields (inherited ones included): offset -> static id.
    Fields(FxHashMap<i64, u32>),
    /// The statics of the class a `Class` object stands for.
    Statics(FxHashMap<i64, u32>),
}

impl Cx<'_> {
    /// The site, with [`Cx::jdk`] set from it; `None` when it is unknown, or when it is a
    /// JDK site whose events the innermost open call drops.
    #[inline]
    pub(super) fn enter_site(&mut self, site: i32) -> Option<&'static SiteEntry> {
        let e = self.a.sites.get(site)?;
        self.jdk = e.site.jdk;
        self.jdk_locks_only = e.locks_only;
        // Of a locks-only JDK class only the monitors (and wait/notify) are recorded: its
        // volatile fields (a `FilterInputStream`'s `in`, read at every byte) order the
        // JDK's own state, which the program does not reach.
        if e.locks_only
            && matches!(
                e.site.kind,
                SiteKind::FieldRead { .. }
                    | SiteKind::FieldWrite { .. }
                    | SiteKind::StaticRead { .. }
                    | SiteKind::StaticWrite { .. }
                    | SiteKind::ArrayRead { .. }
                    | SiteKind::ArrayWrite { .. }
                    | SiteKind::Ordered { .. }
                    | SiteKind::Branch
            )
        {
            return None;
        }
        if self.jdk && self.quiet {
            return None;
        }
        if self.jdk
            && self
                .t
                .open_calls
                .last()
                .is_some_and(|c| c.mode == OpenMode::Drop)
        {
            return None;
        }
        Some(e)
    }

    /// Opens a modelled call (after its own `before` events were written).
    pub(super) fn open_call(&mut self, site: i32, mode: OpenMode) {
        // The program calls from inside open calls (a callback): they are over for it.
        if !self.jdk && !self.t.open_calls.is_empty() {
            self.close_open_calls();
        }
        if self.t.open_calls.len() < 64 {
            self.t.open_calls.push(OpenCall { site, mode });
        }
    }

    /// Inside an open call of a synchronized collection, the JDK entered a monitor: the
    /// call's access to the collection's state happens now.
    pub(super) fn monitor_entered_in_call(&mut self) {
        let Some(c) = self.t.open_calls.last_mut() else {
            return;
        };
        if let OpenMode::Monitor {
            owner,
            sid,
            write,
            loc,
        } = &mut c.mode
        {
            if *owner != 0 {
                let (o, s, w, l) = (*owner, *sid, *write, *loc);
                *owner = 0;
                self.plain_state(o, s, l, w);
            }
        }
    }

    /// Closes the innermost open call if it is `site`'s.
    pub(super) fn close_call(&mut self, site: i32) {
        if self.t.open_calls.last().map(|c| c.site) == Some(site) {
            self.t.open_calls.pop();
        }
    }

    /// Program code runs inside open calls: they are over (or called back into the
    /// program).
    pub(super) fn close_open_calls(&mut self) {
        self.t.open_calls.clear();
    }

    /// After a read in JDK code: the branch that code may take on it (its own branches are
    /// not recorded), so that mcm keeps what it read.
    pub(super) fn jdk_read_done(&mut self, loc: u32) {
        if self.a.opts.branches {
            self.emit(Kind::Branch, 0, loc, None, false);
        }
    }

    /// An ordered `Unsafe` access at `(o, off)`: what it read and wrote. Under the
    /// object's stripe lock (held by the wrapper in `jrace.rt.U`).
    pub(super) unsafe fn ordered(
        &mut self,
        site: i32,
        o: jobject,
        off: jlong,
        read: Option<i64>,
        write: Option<i64>,
    ) {
        let Some(e) = self.enter_site(site) else {
            return;
        };
        let Some(v) = self.ordered_var(o, off) else {
            return;
        };
        if self.jdk && self.a.jdk_stacks {
            self.stack_once(e, site);
        }
        let loc = e.loc;
        if let Some(r) = read {
            self.emit(Kind::VRead, v, loc, Some(r), true);
        }
        if let Some(w) = write {
            self.emit(Kind::VWrite, v, loc, Some(w), true);
        }
        if read.is_some() && self.jdk {
            self.jdk_read_done(loc);
        }
    }

    /// The variable an `Unsafe` access at `(o, off)` touches; `None` for what is not a
    /// field or an array element (or when the JVM does not say).
    unsafe fn ordered_var(&mut self, o: jobject, off: jlong) -> Option<u32> {
        if o.is_null() {
            // Off-heap memory at address `off`: one variable per address.
            let sid = self.fixed_static("$offheap");
            let a = off as u64;
            return Some(self.var((super::ARRAY_VAR | OFFHEAP_OBJ | a >> 32, a as u32), sid));
        }
        let offsets = self.offsets_of(o)?;
        match &*offsets {
            Offsets::Array {
                base,
                scale,
                static_id,
            } => {
                if off < *base || *scale <= 0 || (off - base) % scale != 0 {
                    return None;
                }
                let idx = u32::try_from((off - base) / scale).ok()?;
                let obj = self.obj(o);
                let sid = *static_id;
                Some(self.var((obj | super::ARRAY_VAR, idx), sid))
            }
            Offsets::Fields(m) => {
                let sid = *m.get(&off)?;
                let obj = self.obj(o);
                Some(self.field_var(obj, sid))
            }
            Offsets::Statics(m) => {
                let sid = *m.get(&off)?;
                Some(self.field_var(0, sid))
            }
        }
    }

    /// The offset map for object `o`: of its class, or (a `Class` object) of the statics
    /// of the class it stands for. Cached per thread and globally.
    unsafe fn offsets_of(&mut self, o: jobject) -> Option<Arc<Offsets>> {
        let env = self.env;
        if env.is_null() || o.is_null() {
            return None;
        }
        let java = self.a.java.get()?;
        let mirror = jni!(env, IsInstanceOf, o, java.class_class) != 0;
        let (key, k) = if mirror {
            (self.obj(o) | 1 << 62, o as jclass)
        } else {
            let k = jni!(env, GetObjectClass, o);
            (self.obj(k), k)
        };
        let found = self.t.offsets.get(&key).cloned().or_else(|| {
            let g = lock(&self.a.offsets).get(&key).cloned();
            g
        });
        let r = match found {
            Some(x) => Some(x),
            None => self.compute_offsets(k, mirror).map(|x| {
                let x = Arc::new(x);
                lock(&self.a.offsets).insert(key, x.clone());
                x
            }),
        };
        if !mirror {
            jni!(env, DeleteLocalRef, k);
        }
        if let Some(x) = &r {
            if self.t.offsets.len() > 4096 {
                self.t.offsets.clear();
            }
            self.t.offsets.insert(key, x.clone());
        }
        r
    }

    /// Asks the JVM for the offsets of class `k`'s fields (`mirror`: its statics).
    /// Makes JNI calls into `R` (no recorder lock is held meanwhile).
    unsafe fn compute_offsets(&mut self, k: jclass, mirror: bool) -> Option<Offsets> {
        let env = self.env;
        let jv = self.a.jvmti;
        let java = self.a.java.get()?;
        let sig = class_signature(jv, k)?;
        if let Some(elem) = sig.strip_prefix('[') {
            if mirror {
                return None;
            }
            let base = if java.array_base_long {
                jni!(env, CallLongMethod, java.unsafe_obj, java.array_base, k)
            } else {
                jni!(env, CallIntMethod, java.unsafe_obj, java.array_base, k) as jlong
            };
            let scale = jni!(env, CallIntMethod, java.unsafe_obj, java.array_scale, k);
            if crate::jnienv::take_exception(env) {
                return None;
            }
            let name = match elem.as_bytes().first() {
                Some(b'L' | b'[') => "java.lang.Object[]".to_string(),
                _ => format!("{}[]", signature_to_name(elem)),
            };
            let static_id = self.fixed_name(&name);
            return Some(Offsets::Array {
                base,
                scale: scale as i64,
                static_id,
            });
        }
        let mut map = FxHashMap::default();
        let mut class = jni!(env, NewLocalRef, k) as jclass;
        while !class.is_null() {
            let mut n: jint = 0;
            let mut fields: *mut jfieldID = std::ptr::null_mut();
            if jvmti!(jv, GetClassFields, class, &mut n, &mut fields) == 0 && !fields.is_null() {
                let decl = class_signature(jv, class)
                    .map(|s| signature_to_name(&s))
                    .unwrap_or_default();
                for &f in std::slice::from_raw_parts(fields, n.max(0) as usize) {
                    let mut mods: jint = 0;
                    if jvmti!(jv, GetFieldModifiers, class, f, &mut mods) != 0 {
                        continue;
                    }
                    let is_static = mods & 0x0008 != 0;
                    if is_static != mirror {
                        continue;
                    }
                    let mut name: *mut c_char = std::ptr::null_mut();
                    if jvmti!(
                        jv,
                        GetFieldName,
                        class,
                        f,
                        &mut name,
                        std::ptr::null_mut(),
                        std::ptr::null_mut()
                    ) != 0
                        || name.is_null()
                    {
                        continue;
                    }
                    let fname = CStr::from_ptr(name).to_string_lossy().into_owned();
                    jvmti!(jv, Deallocate, name as *mut u8);
                    let refl = jni!(env, ToReflectedField, class, f, is_static as jboolean);
                    if refl.is_null() {
                        crate::jnienv::clear_exception(env);
                        continue;
                    }
                    let off = jni!(
                        env,
                        CallStaticLongMethod,
                        java.r_class,
                        java.field_offset,
                        refl,
                        is_static as std::ffi::c_uint
                    );
                    jni!(env, DeleteLocalRef, refl);
                    if crate::jnienv::take_exception(env) {
                        continue;
                    }
                    let sid = self.fixed_name(&format!("{decl}.{fname}"));
                    map.entry(off).or_insert(sid);
                }
                jvmti!(jv, Deallocate, fields as *mut u8);
            }
            if mirror {
                jni!(env, DeleteLocalRef, class);
                break;
            }
            let sup = jni!(env, GetSuperclass, class);
            jni!(env, DeleteLocalRef, class);
            class = sup;
        }
        Some(if mirror {
            Offsets::Statics(map)
        } else {
            Offsets::Fields(map)
        })
    }

    /// A static name's id (interned once globally).
    fn fixed_name(&mut self, name: &str) -> u32 {
        let mut n = lock(&self.a.names);
        intern_static(self.a, &mut n, name)
    }
}

/// A class's JVM signature (`Ljava/lang/String;`, `[I`).
pub(super) unsafe fn class_signature(jv: *mut jvmtiEnv, k: jclass) -> Option<String> {
    let mut sig: *mut c_char = std::ptr::null_mut();
    if jvmti!(jv, GetClassSignature, k, &mut sig, std::ptr::null_mut()) != 0 || sig.is_null() {
        return None;
    }
    let s = CStr::from_ptr(sig).to_string_lossy().into_owned();
    jvmti!(jv, Deallocate, sig as *mut u8);
    Some(s)
}

impl Agent {
    /// The flag of a site for `R.lk`/`R.before` (see [`FLAG_PLAIN`]...): 0 while it cannot
    /// be decided yet (the field's class is not known), else cached in `R.FLAGS`.
    unsafe fn site_flag(&'static self, env: *mut JNIEnv, site: i32) -> u8 {
        let Some(e) = self.sites.get(site) else {
            return FLAG_PLAIN;
        };
        {
            let f = lock(&self.flags);
            if let Some(&x) = f.flags.get(site as usize) {
                if x != 0 {
                    return x;
                }
            }
        }
        let flag = match &e.site.kind {
            SiteKind::FieldRead { owner, name, .. }
            | SiteKind::FieldWrite { owner, name, .. }
            | SiteKind::StaticRead { owner, name, .. }
            | SiteKind::StaticWrite { owner, name, .. } => match resolve_field(self, owner, name) {
                None => return 0,
                Some((_, flags)) if flags & ACC_VOLATILE != 0 => FLAG_VOLATILE,
                // Ordered like a volatile (the instrumenter locks such sites).
                Some(_) if e.site.fenced => FLAG_VOLATILE,
                Some(_) => FLAG_PLAIN,
            },
            SiteKind::Call {
                owner, name, desc, ..
            } => {
                if call_may_be_modelled(self, owner, name, desc) {
                    FLAG_MODELLED
                } else {
                    FLAG_PLAIN
                }
            }
            // Hooks only while the class or a superclass has an instrumented <clinit>.
            SiteKind::ClassUse { class } => {
                if !lock(&self.classes).contains_key(class.as_str()) {
                    return 0;
                }
                match resolve_site(self, env, e) {
                    Resolved::ClassUse { markers } if markers[0] != NO_MARKER => FLAG_VOLATILE,
                    _ => FLAG_PLAIN,
                }
            }
            _ => FLAG_PLAIN,
        };
        self.set_flag(env, site, flag);
        flag
    }

    unsafe fn set_flag(&self, env: *mut JNIEnv, site: i32, flag: u8) {
        let Some(java) = self.java.get() else { return };
        let i = site as usize;
        let mut f = lock(&self.flags);
        if f.flags.len() <= i {
            f.flags.resize(i + 1, 0);
        }
        f.flags[i] = flag;
        if i >= f.cap {
            // A bigger array, filled from our copy; readers of the old one see 0 and ask.
            let cap = (f.flags.len() * 2).max(4096);
            let arr = jni!(env, NewByteArray, cap as jsize);
            if arr.is_null() {
                crate::jnienv::clear_exception(env);
                return;
            }
            jni!(
                env,
                SetByteArrayRegion,
                arr,
                0,
                f.flags.len() as jsize,
                f.flags.as_ptr() as *const jbyte
            );
            jni!(
                env,
                SetStaticObjectField,
                java.r_class,
                java.flags_field,
                arr
            );
            let g = jni!(env, NewGlobalRef, arr);
            jni!(env, DeleteLocalRef, arr);
            if !f.array.is_null() {
                jni!(env, DeleteGlobalRef, f.array);
            }
            f.array = g;
            f.cap = cap;
        } else if !f.array.is_null() {
            let b = flag as jbyte;
            jni!(env, SetByteArrayRegion, f.array as jbyteArray, site, 1, &b);
        }
    }
}

/// Whether a call site's hooks may model something: calls on `java.util` are, and so is
/// any call whose name and descriptor alone say what it does (a thread's `start`, `join`,
/// `interrupt`, ..., [`call_op`]; the receiver's class is checked when it runs: a
/// program's `Thread` subclass is started through `invokevirtual Worker.start`, or
/// through an interface of the program). Any other call on a class of the program is when
/// that class can be (or extend) one of `java.util`'s, which the class hierarchy known by
/// now tells (an interface of the program without a `java.util` super-interface, or a
/// class without a `java.util` ancestor, cannot).
fn call_may_be_modelled(a: &Agent, owner: &str, name: &str, desc: &str) -> bool {
    // `$taskSubmit`, `$streamSend`, ...: the hooks jdkhooks.rs put in JDK classes.
    if owner.starts_with("java/") || owner.starts_with('[') || name.starts_with('$') {
        return true;
    }
    if call_op(name, desc) != CallOp::Library {
        return true;
    }
    let classes = lock(&a.classes);
    let mut todo = vec![owner.to_string()];
    let mut seen = FxHashSet::default();
    while let Some(c) = todo.pop() {
        if c.starts_with("java/util/") {
            return true;
        }
        if !seen.insert(c.clone()) {
            continue;
        }
        let Some(info) = classes.get(&c) else {
            // Not known: cannot rule it out.
            return true;
        };
        if let Some(s) = &info.super_name {
            if s != "java/lang/Object" {
                todo.push(s.clone());
            }
        }
        todo.extend(info.interfaces.iter().cloned());
    }
    false
}

// ---------------------------------------------------------------------------------------
// The natives

pub(super) unsafe extern "C" fn resolve(env: Env, _: jclass, site: jint) -> jint {
    let Some(a) = AGENT.get() else {
        return FLAG_PLAIN as jint;
    };
    catch_unwind(AssertUnwindSafe(|| a.site_flag(env, site) as jint)).unwrap_or(FLAG_PLAIN as jint)
}

pub(super) unsafe extern "C" fn u_r(
    env: Env,
    _: jclass,
    o: jobject,
    off: jlong,
    v: jlong,
    site: jint,
) {
    hook(env, site, |cx| cx.ordered(site, o, off, Some(v), None));
}
pub(super) unsafe extern "C" fn u_w(
    env: Env,
    _: jclass,
    o: jobject,
    off: jlong,
    v: jlong,
    site: jint,
) {
    hook(env, site, |cx| cx.ordered(site, o, off, None, Some(v)));
}
pub(super) unsafe extern "C" fn u_rw(
    env: Env,
    _: jclass,
    o: jobject,
    off: jlong,
    r: jlong,
    w: jlong,
    site: jint,
) {
    hook(env, site, |cx| cx.ordered(site, o, off, Some(r), Some(w)));
}
pub(super) unsafe extern "C" fn u_ra(
    env: Env,
    _: jclass,
    o: jobject,
    off: jlong,
    v: jobject,
    site: jint,
) {
    hook(env, site, |cx| {
        let v = cx.ref_value_of(v);
        cx.ordered(site, o, off, Some(v), None)
    });
}
pub(super) unsafe extern "C" fn u_wa(
    env: Env,
    _: jclass,
    o: jobject,
    off: jlong,
    v: jobject,
    site: jint,
) {
    hook(env, site, |cx| {
        let v = cx.ref_value_of(v);
        cx.ordered(site, o, off, None, Some(v))
    });
}
pub(super) unsafe extern "C" fn u_rwa(
    env: Env,
    _: jclass,
    o: jobject,
    off: jlong,
    r: jobject,
    w: jobject,
    site: jint,
) {
    hook(env, site, |cx| {
        let r = cx.ref_value_of(r);
        let w = cx.ref_value_of(w);
        cx.ordered(site, o, off, Some(r), Some(w))
    });
}
