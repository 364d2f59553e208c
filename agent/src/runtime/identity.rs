//! What events name: object ids (JVMTI tags from a never-reused counter), variables (a
//! per-thread cache in front of the global table), locks and their names, and the sites of
//! hooks.

use super::*;

impl Cx<'_> {
    /// The object's id (0 for null). Tags are the truth; a per-thread cache from the
    /// object's current address (read through the JNI handle) saves most JVMTI calls,
    /// valid only while no garbage collection has started since the entry was made.
    #[inline]
    pub(super) unsafe fn obj(&mut self, o: jobject) -> u64 {
        if o.is_null() {
            return 0;
        }
        if !self.a.address_cache.load(Ordering::Relaxed) {
            return self.obj_tag(o);
        }
        let e1 = GC_EPOCH.load(Ordering::Acquire);
        if e1 & 1 == 1 {
            return self.obj_tag(o);
        }
        if self.t.ident.cache_epoch != e1 {
            self.t.ident.addr_cache.fill((0, 0));
            self.t.ident.cache_epoch = e1;
        }
        // SAFETY: a JNI local reference points to a slot holding the object's address.
        let addr = std::ptr::read_volatile(o as *const usize);
        let slot = (addr >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - 12);
        let (a, id) = self.t.ident.addr_cache[slot];
        if a == addr && addr != 0 && GC_EPOCH.load(Ordering::Acquire) == e1 {
            return id;
        }
        let id = self.obj_tag(o);
        if GC_EPOCH.load(Ordering::Acquire) == e1 {
            self.t.ident.addr_cache[slot] = (addr, id);
        }
        id
    }

    pub(super) unsafe fn obj_tag(&mut self, o: jobject) -> u64 {
        let jv = self.a.jvmti;
        let mut tag: jlong = 0;
        jvmti!(jv, GetTag, o, &mut tag);
        if tag != 0 {
            return tag as u64 & !barrier::SNAPSHOTTED;
        }
        let _g = lock(&self.a.tag_lock);
        jvmti!(jv, GetTag, o, &mut tag);
        if tag != 0 {
            return tag as u64 & !barrier::SNAPSHOTTED;
        }
        if self.t.ident.ids.0 == self.t.ident.ids.1 {
            let b = self.a.next_ids.fetch_add(1024, Ordering::Relaxed);
            self.t.ident.ids = (b, b + 1024);
        }
        let id = self.t.ident.ids.0;
        self.t.ident.ids.0 += 1;
        jvmti!(jv, SetTag, o, id as jlong);
        id
    }

    /// Interns the variable `key` ([`VarTable`]), first in this thread's caches.
    #[inline]
    pub(super) fn var(&mut self, key: (u64, u32), static_id: u32) -> u32 {
        let slot = (var_hash(key) >> (64 - VAR_CACHE_BITS)) as usize;
        let (k, v1) = self.t.ident.var_cache[slot];
        if k == key && v1 != 0 {
            return v1 - 1;
        }
        let v = self.var_slow(key, static_id);
        self.t.ident.var_cache[slot] = (key, v + 1);
        v
    }

    pub(super) fn var_slow(&mut self, key: (u64, u32), static_id: u32) -> u32 {
        if let Some(&v) = self.t.ident.vars.get(&key) {
            return v;
        }
        let a = self.a;
        let v = a.vars.intern(key, |v| {
            let (obj, elem) = match key.0 & ARRAY_VAR {
                0 => (key.0, None),
                _ => (key.0 & !ARRAY_VAR, Some(key.1)),
            };
            a.io(a.writer.object_var(v, static_id, obj, elem));
        });
        if self.t.ident.vars.len() > 1 << 20 {
            self.t.ident.vars.clear();
        }
        self.t.ident.vars.insert(key, v);
        v
    }

    pub(super) fn field_var(&mut self, obj: u64, static_id: u32) -> u32 {
        self.var((obj, static_id), static_id)
    }

    pub(super) unsafe fn lock_id(&mut self, obj: u64, o: jobject) -> u32 {
        let via = std::mem::take(&mut self.lock_via);
        if let Some(&l) = self.t.locks.get(&obj) {
            return l;
        }
        let class = if o.is_null() {
            String::from("lock")
        } else {
            self.class_name(o)
        };
        let a = self.a;
        let mut n = lock(&a.names);
        let len = n.locks.len() as u32;
        let l = *n.locks.entry(obj).or_insert(len);
        if l == len {
            // `pkg.Class.field [Object@17]`: what a reader finds in the code, then the object.
            let short = class.rsplit('.').next().unwrap_or(&class);
            let name = match via {
                LockVia::Named(v) => format!("{v} [{short}@{obj}]"),
                LockVia::ClassOf(c) => format!("{c}.class [{short}@{obj}]"),
                LockVia::Unknown => format!("{short}@{obj}"),
            };
            a.io(a.writer.name(Table::Lock, l, &name));
        }
        drop(n);
        self.t.locks.insert(obj, l);
        l
    }

    /// The dotted name of the object's class.
    pub(super) unsafe fn class_name(&mut self, o: jobject) -> String {
        let env = self.env;
        if env.is_null() {
            return String::from("?");
        }
        let k = jni!(env, GetObjectClass, o);
        let mut sig: *mut c_char = std::ptr::null_mut();
        let jv = self.a.jvmti;
        let r = jvmti!(jv, GetClassSignature, k, &mut sig, std::ptr::null_mut());
        jni!(env, DeleteLocalRef, k);
        if r != 0 || sig.is_null() {
            return String::from("?");
        }
        let s = CStr::from_ptr(sig).to_string_lossy().into_owned();
        jvmti!(jv, Deallocate, sig as *mut u8);
        signature_to_name(&s)
    }

    pub(super) fn site(&self, site: i32) -> Option<&'static SiteEntry> {
        self.a.sites.get(site)
    }

    pub(super) fn resolve(&self, e: &'static SiteEntry) -> Resolved {
        *e.resolved
            .get_or_init(|| unsafe { resolve_site(self.a, self.env, e) })
    }

    // --- accesses ---
}
