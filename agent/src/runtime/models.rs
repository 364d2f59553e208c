//! The program's calls into `java.util`, as the recorder models them: by the receiver's
//! class at run time (its first JDK ancestor for a class of the program), so that
//! subclasses and wrappers are covered wherever the call is made.
//!
//! | receiver | model |
//! |---|---|
//! | `ReentrantLock`, the read and write locks of a `ReentrantReadWriteLock`, their `Condition`s | acquire/release, wait/wake, notify (the lock being the lock's `sync`); the JDK's own events inside the call are dropped, so that the detectors may reorder critical sections; each outermost acquisition writes `<lock>.$taken`, which a `tryLock` that fails reads |
//! | any other `java.util.concurrent` class (queues, maps, latches, semaphores, barriers, executors, futures, ...) | the JDK's own events inside the call ([`crate::jdksync`]), whether it succeeds or fails: a `poll()` that found the queue empty read what the last operation on it left |
//! | atomics | nothing more: their operations are recorded where they happen ([`super::ordered`]) |
//! | the JDK's mutable collections (`ArrayList`, `HashMap`, ...) | a read or a write of `<collection>.$state` ([`lib_op`]) |
//! | `ArrayList`'s and `LinkedList`'s `get(int)` and `set(int, E)` | a read of its `$state` and a read or write of element `<list>[index]` (static name `CLASS.$element`, `java.util.ArrayList.$element`): setting different elements from different threads is no race, as with an array |
//! | their views and iterators, `Collections.unmodifiable*`/`checked*` wrappers | the same, of the collection they belong to ([`Cx::state_owner`]) |
//! | `Vector`, `Hashtable`, `Collections.synchronized*` | the same, inside the wrapper's monitor (the JDK's monitor, recorded where it is entered) |
//!
//! `Thread` calls (start, join, interrupt) are decided by the call itself (`CallOp`).

use super::ordered::OpenMode;
use super::*;

/// What the recorder knows about a receiver's class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ClassModel {
    None,
    Thread,
    ReentrantLock,
    ReadLock,
    WriteLock,
    Condition,
    /// `ReentrantReadWriteLock` itself (its read and write locks are the two above).
    RwLock,
    /// `java.util.concurrent` (not a lock, not an atomic).
    Concurrent,
    /// A mutable `java.util` collection: calls read or write its `$state`.
    Collection,
    /// `ArrayList` or `LinkedList` (or a class of the program extending one): a
    /// [`ClassModel::Collection`] whose `get(int)` and `set(int, E)` touch one element, as
    /// on an array.
    List,
    /// A `java.util` class that belongs to a collection (a view, an iterator, a wrapper):
    /// calls read or write the state of the collection it belongs to, if any.
    View,
    /// `Vector`, `Hashtable`, `Collections.synchronized*`: the state of the backing
    /// collection, accessed inside the JDK's monitor.
    Synchronized,
}

/// What a call on a collection, view or wrapper touches ([`Cx::state_owner`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Owner {
    None,
    /// The `$state` of this collection: its object id and the static id of
    /// `CLASS.$state` ([`Cx::state_static`]).
    State(u64, u32),
    /// A `java.util.concurrent` object: modelled like a call on it.
    Concurrent,
}

/// When a modelled call's hook runs.
#[derive(Clone, Copy)]
pub(super) enum When {
    Before,
    /// After a normal return, with the result.
    After(Ret),
}

/// What a call returned.
#[derive(Clone, Copy)]
pub(super) enum Ret {
    Void,
    Bool(bool),
    /// A reference (no model looks at it).
    Ref,
}

/// How a library method acts on the state it touches, by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LibOp {
    Lock,
    TryLock,
    Unlock,
    Await,
    Signal,
    SignalAll,
    /// `isLocked()`, `isWriteLocked()`: whether someone holds the lock.
    Probe,
    /// Reads the receiver's state.
    Read,
    /// Writes it.
    Write,
}

impl ClassModel {
    /// Calls on the object read or write its own `$state`.
    fn has_state(self) -> bool {
        matches!(self, ClassModel::Collection | ClassModel::List)
    }
}

pub(super) fn lib_op(name: &str) -> LibOp {
    match name {
        "lock" | "lockInterruptibly" => LibOp::Lock,
        "tryLock" => LibOp::TryLock,
        "unlock" => LibOp::Unlock,
        "await" | "awaitNanos" | "awaitUninterruptibly" | "awaitUntil" => LibOp::Await,
        "signal" => LibOp::Signal,
        "signalAll" => LibOp::SignalAll,
        "isLocked" | "isWriteLocked" => LibOp::Probe,
        // Methods that modify a collection; every other method is taken as a read, so
        // that a misclassified method can hide a race but never invent one.
        "set"
        | "add"
        | "addAll"
        | "addFirst"
        | "addLast"
        | "put"
        | "putAll"
        | "putIfAbsent"
        | "remove"
        | "removeAll"
        | "removeIf"
        | "retainAll"
        | "clear"
        | "offer"
        | "offerFirst"
        | "offerLast"
        | "poll"
        | "pollFirst"
        | "pollLast"
        | "pollFirstEntry"
        | "pollLastEntry"
        | "push"
        | "pop"
        | "sort"
        | "replace"
        | "replaceAll"
        | "compute"
        | "computeIfAbsent"
        | "computeIfPresent"
        | "merge"
        | "removeFirst"
        | "removeLast"
        | "removeFirstOccurrence"
        | "removeLastOccurrence"
        | "trimToSize"
        | "ensureCapacity"
        | "flip"
        | "and"
        | "or"
        | "xor"
        | "andNot"
        | "setSize"
        | "insertElementAt"
        | "removeElementAt"
        | "addElement"
        | "removeElement"
        | "removeAllElements"
        | "setElementAt"
        | "removeRange" => LibOp::Write,
        _ => LibOp::Read,
    }
}

/// The model of a JDK class, by its dotted name (the receiver's class, or its first JDK
/// ancestor for a class of the program: `exact` is false then).
fn model_of_jdk_class(name: &str, exact: bool) -> ClassModel {
    if name.starts_with("java.util.concurrent.atomic.") {
        return ClassModel::None;
    }
    if name.starts_with("java.util.concurrent.") {
        return ClassModel::Concurrent;
    }
    const SYNCHRONIZED: &[&str] = &["java.util.Vector", "java.util.Stack", "java.util.Hashtable"];
    if SYNCHRONIZED.contains(&name) || name.starts_with("java.util.Collections$Synchronized") {
        return ClassModel::Synchronized;
    }
    // Only the JDK's mutable, non-thread-safe collections have a `$state`: immutable ones
    // (List.of, Collections.empty*) and thread-safe classes have none to race on.
    const MUTABLE: &[&str] = &[
        "java.util.ArrayList",
        "java.util.LinkedList",
        "java.util.HashMap",
        "java.util.LinkedHashMap",
        "java.util.TreeMap",
        "java.util.IdentityHashMap",
        "java.util.WeakHashMap",
        "java.util.EnumMap",
        "java.util.HashSet",
        "java.util.LinkedHashSet",
        "java.util.TreeSet",
        "java.util.EnumSet",
        "java.util.RegularEnumSet",
        "java.util.JumboEnumSet",
        "java.util.ArrayDeque",
        "java.util.PriorityQueue",
        "java.util.BitSet",
    ];
    if name == "java.util.ArrayList" || name == "java.util.LinkedList" {
        return ClassModel::List;
    }
    if MUTABLE.contains(&name) {
        return ClassModel::Collection;
    }
    // The JDK's own classes around collections (views, iterators, wrappers): whether one
    // belongs to a collection is asked of the object (Cx::state_owner).
    if exact && name.starts_with("java.util.") {
        return ClassModel::View;
    }
    ClassModel::None
}

/// Fields through which a `java.util` view, iterator or wrapper reaches the collection it
/// belongs to, tried in this order: an inner class's outer object, a sublist's root, a
/// wrapper's map or collection.
const OWNER_FIELDS: &[&str] = &["this$0", "root", "m", "c"];

impl Cx<'_> {
    /// The model of object `o`'s class (cached per class).
    pub(super) unsafe fn model(&mut self, o: jobject) -> ClassModel {
        self.model_of(o).0
    }

    /// [`Cx::model`] and the id of `o`'s class.
    unsafe fn model_of(&mut self, o: jobject) -> (ClassModel, u64) {
        let env = self.env;
        let k = jni!(env, GetObjectClass, o);
        let kid = self.obj(k);
        if let Some(&m) = self.t.models.get(&kid) {
            jni!(env, DeleteLocalRef, k);
            return (m, kid);
        }
        let java = self.a.java.get().unwrap();
        let is = |c: jclass| jni!(env, IsAssignableFrom, k, c) != 0;
        let m = if is(java.thread_class) {
            ClassModel::Thread
        } else if is(java.reentrant_lock) {
            ClassModel::ReentrantLock
        } else if is(java.read_lock) {
            ClassModel::ReadLock
        } else if is(java.write_lock) {
            ClassModel::WriteLock
        } else if is(java.condition) {
            ClassModel::Condition
        } else if is(java.rw_lock) {
            ClassModel::RwLock
        } else {
            match self.jdk_ancestor(k) {
                Some((name, exact)) => model_of_jdk_class(&name, exact),
                None => ClassModel::None,
            }
        };
        jni!(env, DeleteLocalRef, k);
        self.t.models.insert(kid, m);
        (m, kid)
    }

    /// The static id of `CLASS.$state` for a collection `o` of class `kid`
    /// (`java.util.ArrayList.$state`): a race on a collection says what kind it is.
    unsafe fn state_static(&mut self, kid: u64, o: jobject) -> u32 {
        self.class_part_static(kid, o, "$state")
    }

    /// The static id of `CLASS.$element` (`java.util.ArrayList.$element`), the static
    /// name of the elements of a list `o` of class `kid` ([`ClassModel::List`]).
    unsafe fn element_static_of_list(&mut self, kid: u64, o: jobject) -> u32 {
        self.class_part_static(kid, o, "$element")
    }

    /// The static id of `CLASS.PART` for an object `o` of class `kid` (cached per class
    /// and part).
    unsafe fn class_part_static(&mut self, kid: u64, o: jobject, part: &'static str) -> u32 {
        if let Some(&sid) = self.t.state_names.get(&(kid, part)) {
            return sid;
        }
        let name = format!("{}.{part}", self.class_name(o));
        let sid = {
            let mut n = lock(&self.a.names);
            intern_static(self.a, &mut n, &name)
        };
        self.t.state_names.insert((kid, part), sid);
        sid
    }

    /// The dotted name of class `k` or of its first ancestor in the JDK's packages, and
    /// whether that is `k` itself.
    unsafe fn jdk_ancestor(&mut self, k: jclass) -> Option<(String, bool)> {
        let env = self.env;
        let jv = self.a.jvmti;
        let mut class = jni!(env, NewLocalRef, k) as jclass;
        let mut exact = true;
        while !class.is_null() {
            let name = ordered::class_signature(jv, class).map(|s| signature_to_name(&s));
            let is_jdk = name.as_deref().is_some_and(|n| {
                ["java.", "javax.", "jdk.", "sun.", "com.sun."]
                    .iter()
                    .any(|p| n.starts_with(p))
            });
            if is_jdk {
                jni!(env, DeleteLocalRef, class);
                return name.map(|n| (n, exact));
            }
            let sup = jni!(env, GetSuperclass, class);
            jni!(env, DeleteLocalRef, class);
            class = sup;
            exact = false;
        }
        None
    }

    unsafe fn object_field(&mut self, o: jobject, f: jfieldID) -> jobject {
        if f.is_null() {
            return std::ptr::null_mut();
        }
        jni!(self.env, GetObjectField, o, f)
    }

    /// The object whose identity stands for a `java.util.concurrent` lock: its `sync`.
    pub(super) unsafe fn lock_object(&mut self, o: jobject, m: ClassModel) -> jobject {
        let java = self.a.java.get().unwrap();
        let f = match m {
            ClassModel::ReentrantLock => java.rl_sync,
            ClassModel::ReadLock => java.read_lock_sync,
            ClassModel::WriteLock => java.write_lock_sync,
            ClassModel::Condition => java.condition_owner,
            ClassModel::RwLock => java.rw_lock_sync,
            _ => return o,
        };
        let s = self.object_field(o, f);
        if s.is_null() {
            o
        } else {
            s
        }
    }

    /// What a call on `o` touches: the `$state` of a collection (its id: `o` itself for a
    /// mutable collection, `Vector` or `Hashtable`; for a view, an iterator or a wrapper,
    /// the collection it belongs to, found through [`OWNER_FIELDS`]), or a
    /// `java.util.concurrent` object (a view or wrapper of one: `Collections.newSetFromMap`
    /// over a `ConcurrentHashMap`, a key set of one, ...).
    pub(super) unsafe fn state_owner(&mut self, o: jobject) -> Owner {
        let env = self.env;
        let mut cur = jni!(env, NewLocalRef, o);
        let mut found = Owner::None;
        for _ in 0..8 {
            if cur.is_null() {
                break;
            }
            let (m, kid) = self.model_of(cur);
            if m == ClassModel::Concurrent {
                found = Owner::Concurrent;
                break;
            }
            let owns =
                m.has_state() || (m == ClassModel::Synchronized && self.owner_field(cur).is_none());
            if owns {
                found = Owner::State(self.obj(cur), self.state_static(kid, cur));
                break;
            }
            if !matches!(m, ClassModel::View | ClassModel::Synchronized) {
                break;
            }
            let Some(f) = self.owner_field(cur) else {
                break;
            };
            let next = jni!(env, GetObjectField, cur, f);
            jni!(env, DeleteLocalRef, cur);
            cur = next;
        }
        if !cur.is_null() {
            jni!(env, DeleteLocalRef, cur);
        }
        found
    }

    /// The field (declared by `o`'s class or a JDK super class) through which `o` reaches
    /// the collection it belongs to (cached per class).
    unsafe fn owner_field(&mut self, o: jobject) -> Option<jfieldID> {
        let env = self.env;
        let jv = self.a.jvmti;
        let k = jni!(env, GetObjectClass, o);
        let kid = self.obj(k);
        if let Some(&f) = self.t.owner_fields.get(&kid) {
            jni!(env, DeleteLocalRef, k);
            return (f != 0).then_some(f as jfieldID);
        }
        let mut found: jfieldID = std::ptr::null_mut();
        let mut class = jni!(env, NewLocalRef, k) as jclass;
        'up: while !class.is_null() {
            let mut n: jint = 0;
            let mut fields: *mut jfieldID = std::ptr::null_mut();
            if jvmti!(jv, GetClassFields, class, &mut n, &mut fields) == 0 && !fields.is_null() {
                let fs = std::slice::from_raw_parts(fields, n.max(0) as usize).to_vec();
                jvmti!(jv, Deallocate, fields as *mut u8);
                for want in OWNER_FIELDS {
                    for &f in &fs {
                        let mut name: *mut c_char = std::ptr::null_mut();
                        let mut sig: *mut c_char = std::ptr::null_mut();
                        let mut mods: jint = 0;
                        if jvmti!(
                            jv,
                            GetFieldName,
                            class,
                            f,
                            &mut name,
                            &mut sig,
                            std::ptr::null_mut()
                        ) != 0
                        {
                            continue;
                        }
                        let fname = CStr::from_ptr(name).to_string_lossy().into_owned();
                        let fsig = CStr::from_ptr(sig).to_string_lossy().into_owned();
                        jvmti!(jv, Deallocate, name as *mut u8);
                        jvmti!(jv, Deallocate, sig as *mut u8);
                        let _ = jvmti!(jv, GetFieldModifiers, class, f, &mut mods);
                        if fname == *want && mods & 0x0008 == 0 && fsig.starts_with('L') {
                            found = f;
                            jni!(env, DeleteLocalRef, class);
                            break 'up;
                        }
                    }
                }
            }
            let sup = jni!(env, GetSuperclass, class);
            jni!(env, DeleteLocalRef, class);
            class = sup;
            // Only the JDK's own classes are looked through.
            let in_jdk = !class.is_null()
                && ordered::class_signature(jv, class)
                    .is_some_and(|s| s.starts_with("Ljava/util/"));
            if !in_jdk {
                if !class.is_null() {
                    jni!(env, DeleteLocalRef, class);
                }
                break;
            }
        }
        jni!(env, DeleteLocalRef, k);
        self.t.owner_fields.insert(kid, found as usize);
        (!found.is_null()).then_some(found)
    }

    /// The element of its list that view `o` touches in this call, as the list's
    /// `get(int)`/`set(int, E)` name it: a sublist's `get(int)`/`set(int, E)` (`index`)
    /// the one at its offset plus the index (within its size); an iterator's `next()` or
    /// `previous()` (after it) the one it returned, its `set(E)` (before it) the one it
    /// replaces; `(CLASS.$element of the list, index)`. Only for the sublists and
    /// iterators of `ArrayList` and `LinkedList` (also of the program's subclasses);
    /// `None` for any other call or view, which then reads or writes the list's `$state`
    /// alone.
    unsafe fn view_element(
        &mut self,
        o: jobject,
        name: &str,
        before: bool,
        index: Option<i32>,
    ) -> Option<(u32, i32)> {
        let java = self.a.java.get()?;
        let env = self.env;
        let is = |k: jclass| !k.is_null() && jni!(env, IsInstanceOf, o, k) != 0;
        if let Some(i) = index {
            let [root, offset, size] = if is(java.array_sub) {
                java.array_sub_fields
            } else if is(java.abstract_sub) {
                java.abstract_sub_fields
            } else {
                return None;
            };
            // Out of range, the call throws: no element.
            if i < 0 || i >= jni!(env, GetIntField, o, size) {
                return None;
            }
            let at = jni!(env, GetIntField, o, offset).checked_add(i)?;
            let list = jni!(env, GetObjectField, o, root);
            return self.list_element(list, at);
        }
        let step = match (name, before) {
            ("next" | "previous", false) | ("set", true) => name,
            _ => return None,
        };
        let (list, index) = if is(java.array_itr) {
            // `lastRet`: the index next() or previous() returned, which set(E) replaces.
            let i = jni!(env, GetIntField, o, java.array_itr_last);
            (jni!(env, GetObjectField, o, java.array_itr_list), i)
        } else if is(java.linked_itr) {
            let n = jni!(env, GetIntField, o, java.linked_itr_index);
            let i = match step {
                "next" => n - 1,
                "previous" => n,
                _ => {
                    // After previous() the returned node is also the next one.
                    let last = jni!(env, GetObjectField, o, java.linked_itr_last);
                    let next = jni!(env, GetObjectField, o, java.linked_itr_next);
                    let i = if last.is_null() {
                        -1
                    } else if jni!(env, IsSameObject, last, next) != 0 {
                        n
                    } else {
                        n - 1
                    };
                    for r in [last, next] {
                        if !r.is_null() {
                            jni!(env, DeleteLocalRef, r);
                        }
                    }
                    i
                }
            };
            (jni!(env, GetObjectField, o, java.linked_itr_list), i)
        } else {
            return None;
        };
        self.list_element(list, index)
    }

    /// Element `index` of `list` (a local reference, deleted here) when it is a
    /// [`ClassModel::List`]: `(CLASS.$element, index)`.
    unsafe fn list_element(&mut self, list: jobject, index: i32) -> Option<(u32, i32)> {
        let env = self.env;
        if list.is_null() {
            return None;
        }
        let (m, kid) = self.model_of(list);
        let found = (m == ClassModel::List && index >= 0)
            .then(|| (self.element_static_of_list(kid, list), index));
        jni!(env, DeleteLocalRef, list);
        found
    }

    /// A call of the program on a library object ([`CallOp::Library`]).
    /// `index`: the index argument of a list's `get(int)` or `set(int, E)`.
    pub(super) unsafe fn library(
        &mut self,
        when: When,
        o: jobject,
        site: i32,
        loc: u32,
        index: Option<i32>,
    ) {
        let (m, kid) = self.model_of(o);
        let Some(e) = self.a.sites.get(site) else {
            return;
        };
        let name: &str = match &e.site.kind {
            SiteKind::Call { name, .. } => name,
            _ => return,
        };
        let op = lib_op(name);
        let before = matches!(when, When::Before);
        // A view or wrapper of a java.util.concurrent object is modelled as a call on it.
        let owner = match m {
            ClassModel::Collection | ClassModel::List => {
                Owner::State(self.obj(o), self.state_static(kid, o))
            }
            ClassModel::View | ClassModel::Synchronized => self.state_owner(o),
            _ => Owner::None,
        };
        let m = if owner == Owner::Concurrent {
            ClassModel::Concurrent
        } else {
            m
        };
        if let When::After(_) = when {
            // The call's own open call first, before anything the model adds.
            self.close_call(site);
        }
        match m {
            ClassModel::None | ClassModel::Thread => {}
            ClassModel::ReentrantLock | ClassModel::WriteLock | ClassModel::ReadLock => {
                let lo = self.lock_object(o, m);
                let obj = self.obj(lo);
                let read = m == ClassModel::ReadLock;
                let acquired = match (op, when) {
                    (LibOp::Lock, When::After(_)) => true,
                    (LibOp::TryLock, When::After(Ret::Bool(ok))) => ok,
                    _ => false,
                };
                let failed_try =
                    matches!((op, when), (LibOp::TryLock, When::After(Ret::Bool(false))));
                if acquired {
                    let outermost = if read {
                        // Readers share the lock: order them after the last write
                        // unlock only.
                        self.sync_var(obj, "$writer", loc, true, false);
                        true
                    } else {
                        self.acquire_obj(obj, lo, loc, op == LibOp::TryLock);
                        self.sync_var(obj, "$readers", loc, true, false);
                        self.t.held.get(&obj).is_some_and(|c| c.0 == 1)
                    };
                    // Who took it last, for a tryLock that finds it taken.
                    if outermost {
                        self.sync_var(obj, "$taken", loc, false, true);
                    }
                } else if let (LibOp::Probe, When::After(Ret::Bool(held))) = (op, when) {
                    self.lock_probe(obj, held, loc);
                } else if failed_try {
                    // A tryLock that failed found the lock taken: the thread goes on
                    // knowing that someone's lock() returned, after whatever that thread
                    // did before it.
                    self.sync_var(obj, "$taken", loc, true, false);
                } else if op == LibOp::Unlock && before {
                    if read {
                        self.sync_var(obj, "$readers", loc, true, true);
                    } else if self.t.held.get(&obj).is_some_and(|c| c.0 == 1) {
                        self.sync_var(obj, "$writer", loc, false, true);
                        self.release_obj(obj, loc);
                    } else {
                        self.release_obj(obj, loc);
                    }
                }
                if before {
                    self.open_call(site, OpenMode::Drop);
                }
            }
            // Its accessors (readLock(), writeLock()) synchronize nothing; its locks are
            // modelled themselves. Only isWriteLocked() looks at the lock.
            ClassModel::RwLock => {
                if let (LibOp::Probe, When::After(Ret::Bool(held))) = (op, when) {
                    let lo = self.lock_object(o, m);
                    let obj = self.obj(lo);
                    self.lock_probe(obj, held, loc);
                }
                if before {
                    self.open_call(site, OpenMode::Drop);
                }
            }
            ClassModel::Condition => {
                let lo = self.lock_object(o, m);
                let obj = self.obj(lo);
                match (op, before) {
                    (LibOp::Await, true) => {
                        self.wait(obj, loc);
                        crate::replay::awaiting(self.env, o); // replay
                    }
                    // `await(time, unit)` and `awaitUntil(deadline)` return false when
                    // the time ran out.
                    (LibOp::Await, false) => {
                        let timed_out = matches!(when, When::After(Ret::Bool(false)));
                        self.wake(obj, loc, timed_out)
                    }
                    (LibOp::Signal, true) => self.notify(obj, false, loc),
                    (LibOp::SignalAll, true) => self.notify(obj, true, loc),
                    _ => {}
                }
                if before {
                    self.open_call(site, OpenMode::Drop);
                }
            }
            // Its events are the JDK's own, written as they happen, whether the call
            // succeeds or fails ([`super::ordered`]).
            ClassModel::Concurrent => {}
            ClassModel::Collection | ClassModel::List | ClassModel::View => {
                let Owner::State(owner, sid) = owner else {
                    return;
                };
                // Reads after the call, writes before it.
                let write = match (op, before) {
                    (LibOp::Read, false) => false,
                    (LibOp::Write, true) => true,
                    _ => return,
                };
                // A list's get(int) or set(int, E), and a step or a set of its
                // iterator, read its structure (its size, its array) and read or write
                // one element.
                let element = match m {
                    ClassModel::List => index
                        .filter(|&i| i >= 0)
                        .map(|i| (self.element_static_of_list(kid, o), i)),
                    _ => self.view_element(o, name, before, index),
                };
                self.plain_state(owner, sid, loc, write && element.is_none());
                if let Some((esid, i)) = element {
                    let v = self.var((owner | ARRAY_VAR, i as u32), esid);
                    let k = if write { Kind::Write } else { Kind::Read };
                    self.emit(k, v, loc, None, false);
                }
            }
            ClassModel::Synchronized => {
                if before {
                    let (owner, sid) = match owner {
                        Owner::State(x, sid) => (x, sid),
                        _ => (0, 0),
                    };
                    self.open_call(
                        site,
                        OpenMode::Monitor {
                            owner,
                            sid,
                            write: op == LibOp::Write,
                            loc,
                        },
                    );
                }
            }
        }
    }
}
