//! Classes defined more than once: one class name, several defining class loaders (an
//! application server's web applications, plugins each with its own copy of a library).
//!
//! Why: each definition is a class of its own, with its own static fields and its own
//! initialization, but the instrumenter names a field by its class's name. Statics of two
//! definitions written by two threads would be one variable, and a false race. The first
//! definition of a name keeps the plain name; the k-th (k ≥ 2) is named `CLASS#k`
//! (`app.Config#2.cache`), its statics and its initialization marker with it. A site
//! resolves its field's class as the loader of its own class sees it: the definition
//! of that loader, else the class it initiated loading of (asked of the JVM only for a
//! name defined more than once, so the common case costs a map look-up per class).

use super::*;

/// Weak global references to class loaders (null: the bootstrap loader).
type Loader = jobject;

#[derive(Default)]
pub(super) struct ClassDefs {
    /// Per instrumented class name (internal form): its defining loaders, in the order
    /// of their first definition.
    by_name: FxHashMap<String, Vec<Loader>>,
    /// Per definition id (what the sites of a class carry): its loader and its ordinal
    /// among its name's definitions (0: the first).
    defs: Vec<(Loader, u32)>,
}

// The references are JNI weak global references, valid in every thread.
unsafe impl Send for ClassDefs {}

/// A site that does not come from a class of the program (the JDK's classes).
pub(crate) const NO_DEF: u32 = u32::MAX;

/// How a class is named in the trace: its dotted name, with `#k` for its k-th definition.
pub(super) fn class_display(dotted: &str, ordinal: u32) -> String {
    if ordinal == 0 {
        dotted.to_string()
    } else {
        format!("{dotted}#{}", ordinal + 1)
    }
}

impl Agent {
    /// Notes that `loader` defines class `name` (internal form); the definition's id.
    ///
    /// # Safety
    /// `env` is the calling thread's JNI environment and `loader` a live reference or null.
    pub(crate) unsafe fn note_definition(
        &self,
        env: *mut JNIEnv,
        name: &str,
        loader: jobject,
    ) -> u32 {
        let mut d = lock(&self.defs);
        let list = d.by_name.entry(name.to_string()).or_default();
        let same = |l: Loader| jni!(env, IsSameObject, l, loader) != 0;
        let ordinal = match list.iter().position(|&l| same(l)) {
            Some(k) => k,
            None => {
                let weak = if loader.is_null() {
                    std::ptr::null_mut()
                } else {
                    jni!(env, NewWeakGlobalRef, loader)
                };
                list.push(weak);
                list.len() - 1
            }
        };
        let weak = list[ordinal];
        d.defs.push((weak, ordinal as u32));
        (d.defs.len() - 1) as u32
    }

    /// The ordinal of the definition that site class `def`'s code sees as class `decl`
    /// (internal form); 0 for a class defined once.
    ///
    /// # Safety
    /// `env` is the calling thread's JNI environment.
    pub(super) unsafe fn ordinal_seen(&self, env: *mut JNIEnv, decl: &str, def: u32) -> u32 {
        let d = lock(&self.defs);
        let Some(list) = d.by_name.get(decl).filter(|l| l.len() > 1) else {
            return 0;
        };
        let Some(&(site_loader, _)) = d.defs.get(def as usize) else {
            return 0;
        };
        let index_of = |l: jobject| {
            list.iter()
                .position(|&x| jni!(env, IsSameObject, x, l) != 0)
                .map(|k| k as u32)
        };
        // The common case: the class is defined by the site's own loader.
        if let Some(k) = index_of(site_loader) {
            return k;
        }
        // Else the class the site's loader initiated loading of (it delegated).
        let jv = self.jvmti;
        let (mut n, mut classes): (jint, *mut jclass) = (0, std::ptr::null_mut());
        if site_loader.is_null()
            || jvmti!(jv, GetClassLoaderClasses, site_loader, &mut n, &mut classes) != 0
            || classes.is_null()
        {
            return 0;
        }
        let want = format!("L{decl};");
        let mut found = 0;
        for &k in std::slice::from_raw_parts(classes, n.max(0) as usize) {
            if found == 0 && ordered::class_signature(jv, k).as_deref() == Some(&want) {
                let mut l: jobject = std::ptr::null_mut();
                if jvmti!(jv, GetClassLoader, k, &mut l) == 0 {
                    found = index_of(l).unwrap_or(0);
                    if !l.is_null() {
                        jni!(env, DeleteLocalRef, l);
                    }
                }
            }
            jni!(env, DeleteLocalRef, k);
        }
        jvmti!(jv, Deallocate, classes as *mut u8);
        found
    }

    /// The ordinal of definition `def` among its name's definitions (0 for none).
    pub(super) fn own_ordinal(&self, def: u32) -> u32 {
        lock(&self.defs).defs.get(def as usize).map_or(0, |d| d.1)
    }
}
