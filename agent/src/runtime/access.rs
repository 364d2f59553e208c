//! Field, static and array accesses (and `System.arraycopy`), with the implicit control
//! points they make and the call stack the first time a thread runs each access.

use super::*;

impl Cx<'_> {
    /// The id of a reference value being recorded, marking the access as carrying one.
    pub(super) unsafe fn ref_value_of(&mut self, v: jobject) -> i64 {
        self.ref_value = true;
        self.obj(v) as i64
    }

    pub(super) unsafe fn field(&mut self, write: bool, o: jobject, site: i32, value: i64) {
        let Some(e) = self.enter_site(site) else {
            return;
        };
        let Resolved::Field {
            static_id,
            volatile,
            init,
            ..
        } = self.resolve(e)
        else {
            return;
        };
        if self.jdk && !volatile && !e.site.fenced {
            return;
        }
        if let (Some(m), false) = (init, self.jdk) {
            self.class_init_edge(&[m], e);
        }
        if self.jdk && self.a.jdk_stacks {
            self.stack_once(e, site);
        }
        let obj = self.obj(o);
        if obj == 0 {
            return;
        }
        let v = self.field_var(obj, static_id);
        // The JDK's accesses are all synchronization, fenced classes' plain ones too (the
        // program's: a class that orders them with fences), and so are a finalizer's of
        // its object's fields ([`Cx::finalizing`]).
        let volatile = volatile || self.jdk || e.site.fenced || obj == self.t.finalizee;
        let kind = access_kind(write, volatile);
        if !volatile {
            self.stack_once(e, site);
        }
        if !self.jdk {
            self.implicit_branch(obj, false, e.loc);
        }
        self.loaded = !write;
        self.emit(kind, v, e.loc, Some(value), volatile);
        if self.jdk && !write {
            self.jdk_read_done(e.loc);
        }
    }

    /// The first time this thread touches a field of a class whose `<clinit>` has
    /// completed: a read of the class's initialization marker, which its `<clinit>` wrote
    /// at its end. The JVM orders every use of a class after its initialization (the
    /// class's init lock); a thread reaching an instance field may have found the object
    /// through code the trace does not show (an enum constant from `Enum.valueOf`, whose
    /// cache the JDK keeps), so instance fields take the edge too, not only statics. The
    /// other uses that initialize a class (`new`, a static call, `Class.forName`) take it
    /// through [`Cx::class_use`], for the class and its superclasses (`markers`, ending at
    /// the first [`NO_MARKER`]).
    #[inline]
    fn class_init_edge(&mut self, markers: &[u32], e: &SiteEntry) {
        let tid = self.t.tid;
        let bit = if tid < 64 { 1u64 << tid } else { 0 };
        if e.init_seen.load(Ordering::Relaxed) & bit != 0 {
            return;
        }
        if self.init_edges(markers, e.loc) {
            e.init_seen.fetch_or(bit, Ordering::Relaxed);
        }
    }

    /// The reads of the markers this thread has not read yet, of the classes initialized
    /// by now; whether every class of `markers` is.
    fn init_edges(&mut self, markers: &[u32], loc: u32) -> bool {
        let mut all_seen = true;
        for &marker in markers.iter().take_while(|&&m| m != NO_MARKER) {
            if self.t.seen_init.contains(&marker) {
                continue;
            }
            if !lock(&self.a.names).init_done.contains(&marker) {
                // Not initialized yet, or by this thread right now (a use from inside
                // its own `<clinit>`): ask again next time.
                all_seen = false;
                continue;
            }
            self.t.seen_init.insert(marker);
            let mv = self.field_var(0, marker);
            self.emit(Kind::VRead, mv, loc, Some(1), true);
            // The thread went on because the class was initialized.
            if self.a.opts.branches {
                self.emit(Kind::Branch, 0, loc, None, false);
            }
        }
        all_seen
    }

    /// After `new C` or a static call of C returned ([`SiteKind::ClassUse`]): C and its
    /// superclasses are initialized.
    pub(super) fn class_use(&mut self, site: i32) {
        let Some(e) = self.enter_site(site) else {
            return;
        };
        if let Resolved::ClassUse { markers } = self.resolve(e) {
            self.class_init_edge(&markers, e);
        }
    }

    /// After `Class.forName` returned `class` (null: it threw, nothing to order).
    pub(super) unsafe fn class_use_of(&mut self, class: jobject, site: i32) {
        let Some(e) = self.enter_site(site) else {
            return;
        };
        if class.is_null() {
            return;
        }
        let Some(internal) = class_internal_name(self.a.jvmti, class) else {
            return;
        };
        // Per class, not per site: no bit of the site.
        let markers = init_markers(self.a, self.env, &internal, e.def);
        self.init_edges(&markers, e.loc);
    }

    /// An implicit control point (RVPredict §4): which variable an access touches is a
    /// decision on the values read before it, like a conditional jump, when the object
    /// (or lock) it goes through was read since the last branch, or, for an array
    /// element, when any value was (the index may be computed from it). Only written when
    /// branches are recorded.
    #[inline]
    pub(super) fn implicit_branch(&mut self, obj: u64, indexed: bool, loc: u32) {
        let sb = &self.t.since_branch;
        if self.a.opts.branches
            && (sb.any_address || (indexed && sb.prim) || sb.refs.contains(&obj))
        {
            self.emit(Kind::Branch, 0, loc, None, false);
        }
    }

    /// Records, once per thread and site, the call stack with which the thread runs it.
    #[inline]
    pub(super) fn stack_once(&mut self, e: &SiteEntry, site: i32) {
        let tid = self.t.tid;
        if tid < 64 {
            let bit = 1u64 << tid;
            if e.stack_seen.load(Ordering::Relaxed) & bit != 0 {
                return;
            }
            e.stack_seen.fetch_or(bit, Ordering::Relaxed);
        } else if !self.t.stacks_seen.insert(site) {
            return;
        }
        // SAFETY: called from a hook on this thread.
        unsafe { self.record_stack(e.loc) };
    }

    /// The current thread's top frames (below the hook), as locations.
    pub(super) unsafe fn record_stack(&mut self, loc: u32) {
        const MAX: usize = 12;
        let jv = self.a.jvmti;
        let mut frames: [jvmtiFrameInfo; MAX] = std::mem::zeroed();
        let mut count: jint = 0;
        if jvmti!(
            jv,
            GetStackTrace,
            std::ptr::null_mut(),
            0,
            MAX as jint,
            frames.as_mut_ptr(),
            &mut count
        ) != 0
        {
            return;
        }
        let mut out = Vec::new();
        for f in &frames[..count.max(0) as usize] {
            match self.frame_loc(f.method, f.location) {
                Some(l) => out.push(l),
                None => continue,
            }
        }
        if !out.is_empty() {
            self.a.io(self.a.writer.stack(self.t.tid, loc, &out));
        }
    }

    /// A frame's location (interned, with class and method); `None` for the recorder's own
    /// frames.
    pub(super) unsafe fn frame_loc(&mut self, method: jmethodID, bci: jlocation) -> Option<u32> {
        let key = (method as usize, bci);
        if let Some(&l) = lock(&self.a.frames).get(&key) {
            return (l != u32::MAX).then_some(l);
        }
        let jv = self.a.jvmti;
        let mut class: jclass = std::ptr::null_mut();
        if jvmti!(jv, GetMethodDeclaringClass, method, &mut class) != 0 {
            return None;
        }
        let take = |p: *mut c_char| -> Option<String> {
            if p.is_null() {
                return None;
            }
            let s = CStr::from_ptr(p).to_string_lossy().into_owned();
            jvmti!(jv, Deallocate, p as *mut u8);
            Some(s)
        };
        let mut sig: *mut c_char = std::ptr::null_mut();
        jvmti!(jv, GetClassSignature, class, &mut sig, std::ptr::null_mut());
        let class_name = take(sig).map(|s| signature_to_name(&s)).unwrap_or_default();
        // The recorder's own frames, and the forwarding frames of lambdas (hidden classes
        // without source), say nothing about the program.
        if class_name.starts_with("jrace.rt.") || class_name.contains("$$Lambda") {
            lock(&self.a.frames).insert(key, u32::MAX);
            return None;
        }
        let mut name: *mut c_char = std::ptr::null_mut();
        jvmti!(
            jv,
            GetMethodName,
            method,
            &mut name,
            std::ptr::null_mut(),
            std::ptr::null_mut()
        );
        let method_name = take(name).unwrap_or_default();
        let mut file: *mut c_char = std::ptr::null_mut();
        let file = if jvmti!(jv, GetSourceFileName, class, &mut file) == 0 {
            take(file)
        } else {
            None
        };
        let mut n: jint = 0;
        let mut table: *mut jvmtiLineNumberEntry = std::ptr::null_mut();
        let mut line = None;
        if jvmti!(jv, GetLineNumberTable, method, &mut n, &mut table) == 0 && !table.is_null() {
            let entries = std::slice::from_raw_parts(table, n.max(0) as usize);
            line = entries
                .iter()
                .filter(|e| e.start_location <= bci)
                .max_by_key(|e| e.start_location)
                .map(|e| e.line_number as u32);
            jvmti!(jv, Deallocate, table as *mut u8);
        }
        if !self.env.is_null() {
            jni!(self.env, DeleteLocalRef, class);
        }
        let l = self.a.intern_loc(Location {
            class: class_name.into(),
            method: method_name.into(),
            file: file.map(Into::into),
            line,
            bci: bci.max(0) as u32,
        });
        lock(&self.a.frames).insert(key, l);
        Some(l)
    }

    pub(super) fn static_field(&mut self, write: bool, site: i32, value: i64) {
        let Some(e) = self.enter_site(site) else {
            return;
        };
        let Resolved::Field {
            static_id,
            volatile,
            init,
            record,
        } = self.resolve(e)
        else {
            return;
        };
        if self.jdk {
            if (volatile || e.site.fenced) && record {
                let v = self.field_var(0, static_id);
                self.loaded = !write;
                self.emit(access_kind(write, true), v, e.loc, Some(value), true);
                if !write {
                    self.jdk_read_done(e.loc);
                }
            }
            return;
        }
        if let Some(m) = init {
            self.class_init_edge(&[m], e);
        }
        if !record {
            return;
        }
        let v = self.field_var(0, static_id);
        let volatile = volatile || e.site.fenced;
        let kind = access_kind(write, volatile);
        if !volatile {
            self.stack_once(e, site);
        }
        self.loaded = !write;
        self.emit(kind, v, e.loc, Some(value), volatile);
    }

    pub(super) unsafe fn array(
        &mut self,
        write: bool,
        arr: jobject,
        idx: i32,
        site: i32,
        value: i64,
    ) {
        let Some(e) = self.enter_site(site) else {
            return;
        };
        let Resolved::Array { static_id, exact } = self.resolve(e) else {
            return;
        };
        let obj = self.obj(arr);
        if obj == 0 || idx < 0 {
            return;
        }
        let static_id = match exact {
            true => static_id,
            false => self.element_static(obj, arr, static_id),
        };
        let v = self.var((obj | ARRAY_VAR, idx as u32), static_id);
        // A program's class that orders its plain accesses with fences: synchronization,
        // as the JDK's array stores (and its fenced classes' loads) are.
        if self.jdk || e.site.fenced {
            if !self.jdk {
                self.implicit_branch(obj, true, e.loc);
            }
            // A JDK array store: recorded as a synchronizing write, so that an ordered read
            // of the slot elsewhere has its writer. Loads are instrumented only in classes
            // that order them with fences.
            if write {
                self.emit(Kind::VWrite, v, e.loc, Some(value), true);
            } else {
                self.loaded = true;
                self.emit(Kind::VRead, v, e.loc, Some(value), true);
                if self.jdk {
                    self.jdk_read_done(e.loc);
                }
            }
            return;
        }
        let kind = if write { Kind::Write } else { Kind::Read };
        self.stack_once(e, site);
        self.implicit_branch(obj, true, e.loc);
        self.loaded = !write;
        self.emit(kind, v, e.loc, Some(value), false);
    }

    /// The static name of `arr`'s (object `obj`'s) elements from its class: `boolean[]`
    /// or `byte[]`, `java.lang.String[]`, `int[][]`; `fallback` (the site's) when the
    /// class cannot be told.
    pub(super) unsafe fn element_static(&mut self, obj: u64, arr: jobject, fallback: u32) -> u32 {
        match self.array_type(obj, arr) {
            Some((s, _)) => s,
            None => fallback,
        }
    }

    /// `arr`'s (object `obj`'s) class as the static name of its elements and their kind
    /// ([`element_kind`]); `None` when the class cannot be told. Asked once per array
    /// while it stays in this thread's small cache.
    unsafe fn array_type(&mut self, obj: u64, arr: jobject) -> Option<(u32, u8)> {
        let slot = (obj.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - ARRAY_CACHE_BITS)) as usize;
        let (k, s, kind) = self.t.ident.array_statics[slot];
        if k == obj && obj != 0 {
            return (kind != 0).then_some((s, kind));
        }
        // `?` when the class cannot be told.
        let name = self.class_name(arr);
        let (s, kind) = match self.t.ident.array_classes.get(name.as_str()) {
            Some(&s) => (s, element_kind(&name)),
            None if name.ends_with("[]") => {
                let s = {
                    let mut n = lock(&self.a.names);
                    intern_static(self.a, &mut n, &name)
                };
                let kind = element_kind(&name);
                self.t.ident.array_classes.insert(name.into_boxed_str(), s);
                (s, kind)
            }
            None => (0, 0),
        };
        if obj != 0 {
            self.t.ident.array_statics[slot] = (obj, s, kind);
        }
        (kind != 0).then_some((s, kind))
    }

    /// `System.arraycopy`, before it runs: the reads of the source elements and the writes
    /// of the destination elements it will do, with the values copied (at most
    /// [`ARRAYCOPY_MAX`] elements are recorded; a copy that will throw records nothing).
    pub(super) unsafe fn arraycopy(
        &mut self,
        src: jobject,
        sp: i32,
        dst: jobject,
        dp: i32,
        n: i32,
        site: i32,
    ) {
        let Some(e) = self.site(site) else { return };
        let env = self.env;
        if src.is_null() || dst.is_null() || n <= 0 || sp < 0 || dp < 0 {
            return;
        }
        let (slen, dlen) = (
            jni!(env, GetArrayLength, src as jarray),
            jni!(env, GetArrayLength, dst as jarray),
        );
        if crate::jnienv::take_exception(env) {
            return;
        }
        if sp as i64 + n as i64 > slen as i64 || dp as i64 + n as i64 > dlen as i64 {
            return;
        }
        let k = n.min(ARRAYCOPY_MAX);
        // The source's element kind and static name, from its class (cached per array).
        let so = self.obj(src);
        let Some((src_static, elem)) = self.array_type(so, src) else {
            return;
        };
        let mut values = vec![0i64; k as usize];
        macro_rules! region {
            ($get:ident, $t:ty, $conv:expr) => {{
                let mut buf: Vec<$t> = vec![Default::default(); k as usize];
                jni!(env, $get, src as _, sp, k, buf.as_mut_ptr());
                for (v, x) in values.iter_mut().zip(buf) {
                    *v = $conv(x);
                }
            }};
        }
        let name = match elem {
            b'I' => {
                region!(GetIntArrayRegion, jint, |x: jint| x as i64);
                "int[]"
            }
            b'J' => {
                region!(GetLongArrayRegion, jlong, |x: jlong| x);
                "long[]"
            }
            b'F' => {
                region!(GetFloatArrayRegion, jfloat, |x: jfloat| f2i(x));
                "float[]"
            }
            b'D' => {
                region!(GetDoubleArrayRegion, jdouble, |x: jdouble| d2i(x));
                "double[]"
            }
            b'B' => {
                region!(GetByteArrayRegion, jbyte, |x: jbyte| x as i64);
                "byte[]"
            }
            b'Z' => {
                region!(GetBooleanArrayRegion, jboolean, |x: jboolean| x as i64);
                "boolean[]"
            }
            b'C' => {
                region!(GetCharArrayRegion, jchar, |x: jchar| x as i64);
                "char[]"
            }
            b'S' => {
                region!(GetShortArrayRegion, jshort, |x: jshort| x as i64);
                "short[]"
            }
            _ => {
                for (i, v) in values.iter_mut().enumerate() {
                    let x = jni!(
                        env,
                        GetObjectArrayElement,
                        src as jobjectArray,
                        sp + i as i32
                    );
                    *v = self.obj(x) as i64;
                    if !x.is_null() {
                        jni!(env, DeleteLocalRef, x);
                    }
                }
                "java.lang.Object[]"
            }
        };
        if crate::jnienv::take_exception(env) {
            return;
        }
        let sid = self.fixed_static(name);
        let dobj = self.obj(dst);
        // Each side's elements are named by its own array's class when the element kind
        // does not tell it (`String[]` copied into `Object[]`), as an access would.
        let (ssid, dsid) = match elem {
            b'I' | b'J' | b'F' | b'D' | b'C' | b'S' => (sid, sid),
            _ => (src_static, self.element_static(dobj, dst, sid)),
        };
        self.stack_once(e, site);
        self.implicit_branch(so, true, e.loc);
        self.implicit_branch(dobj, true, e.loc);
        let was_ref = std::mem::replace(&mut self.ref_value, elem == b'L' || elem == b'[');
        for (i, &v) in values.iter().enumerate() {
            let idx = (sp + i as i32) as u32;
            let var = self.var((so | ARRAY_VAR, idx), ssid);
            self.emit(Kind::Read, var, e.loc, Some(v), false);
        }
        for (i, &v) in values.iter().enumerate() {
            let idx = (dp + i as i32) as u32;
            let var = self.var((dobj | ARRAY_VAR, idx), dsid);
            self.emit(Kind::Write, var, e.loc, Some(v), false);
        }
        self.ref_value = was_ref;
    }

    // --- locks ---
}

/// The kind of an array's elements, as a JVM descriptor's first character, from the
/// array's type name: `int[]` → `I`, `boolean[]` → `Z`, `java.lang.String[]` → `L`,
/// `int[][]` → `[`.
fn element_kind(array: &str) -> u8 {
    match array.strip_suffix("[]") {
        Some("int") => b'I',
        Some("long") => b'J',
        Some("float") => b'F',
        Some("double") => b'D',
        Some("byte") => b'B',
        Some("boolean") => b'Z',
        Some("char") => b'C',
        Some("short") => b'S',
        Some(e) if e.ends_with("[]") => b'[',
        _ => b'L',
    }
}
