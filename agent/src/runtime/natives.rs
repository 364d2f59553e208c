//! The natives of `jrace.rt.R`: one per hook, each a thin `extern "C"` entry that runs
//! its body through [`super::hook`], and their registration.

use super::*;

pub(super) type Env = *mut JNIEnv;

pub(super) fn f2i(v: f32) -> i64 {
    v.to_bits() as i64
}
pub(super) fn d2i(v: f64) -> i64 {
    v.to_bits() as i64
}

pub(super) unsafe extern "C" fn rd_i(env: Env, _: jclass, v: jint, o: jobject, site: jint) {
    load_hook(env, site, |cx| cx.field(false, o, site, v as i64));
}
pub(super) unsafe extern "C" fn rd_j(env: Env, _: jclass, v: jlong, o: jobject, site: jint) {
    load_hook(env, site, |cx| cx.field(false, o, site, v));
}
pub(super) unsafe extern "C" fn rd_f(env: Env, _: jclass, v: jfloat, o: jobject, site: jint) {
    load_hook(env, site, |cx| cx.field(false, o, site, f2i(v)));
}
pub(super) unsafe extern "C" fn rd_d(env: Env, _: jclass, v: jdouble, o: jobject, site: jint) {
    load_hook(env, site, |cx| cx.field(false, o, site, d2i(v)));
}
pub(super) unsafe extern "C" fn rd_a(env: Env, _: jclass, v: jobject, o: jobject, site: jint) {
    load_hook(env, site, |cx| {
        let v = cx.ref_value_of(v);
        cx.field(false, o, site, v)
    });
}
pub(super) unsafe extern "C" fn wr_i(env: Env, _: jclass, o: jobject, v: jint, site: jint) {
    hook(env, site, |cx| cx.field(true, o, site, v as i64));
}
pub(super) unsafe extern "C" fn wr_j(env: Env, _: jclass, o: jobject, v: jlong, site: jint) {
    hook(env, site, |cx| cx.field(true, o, site, v));
}
pub(super) unsafe extern "C" fn wr_f(env: Env, _: jclass, o: jobject, v: jfloat, site: jint) {
    hook(env, site, |cx| cx.field(true, o, site, f2i(v)));
}
pub(super) unsafe extern "C" fn wr_d(env: Env, _: jclass, o: jobject, v: jdouble, site: jint) {
    hook(env, site, |cx| cx.field(true, o, site, d2i(v)));
}
pub(super) unsafe extern "C" fn wr_a(env: Env, _: jclass, o: jobject, v: jobject, site: jint) {
    hook(env, site, |cx| {
        let id = cx.ref_value_of(v);
        cx.field(true, o, site, id);
        cx.bp_ref_write(o, v);
    });
}
pub(super) unsafe extern "C" fn sr_i(env: Env, _: jclass, v: jint, site: jint) {
    load_hook(env, site, |cx| cx.static_field(false, site, v as i64));
}
pub(super) unsafe extern "C" fn sr_j(env: Env, _: jclass, v: jlong, site: jint) {
    load_hook(env, site, |cx| cx.static_field(false, site, v));
}
pub(super) unsafe extern "C" fn sr_f(env: Env, _: jclass, v: jfloat, site: jint) {
    load_hook(env, site, |cx| cx.static_field(false, site, f2i(v)));
}
pub(super) unsafe extern "C" fn sr_d(env: Env, _: jclass, v: jdouble, site: jint) {
    load_hook(env, site, |cx| cx.static_field(false, site, d2i(v)));
}
pub(super) unsafe extern "C" fn sr_a(env: Env, _: jclass, v: jobject, site: jint) {
    load_hook(env, site, |cx| {
        let v = cx.ref_value_of(v);
        cx.static_field(false, site, v)
    });
}
pub(super) unsafe extern "C" fn sw_i(env: Env, _: jclass, v: jint, site: jint) {
    hook(env, site, |cx| cx.static_field(true, site, v as i64));
}
pub(super) unsafe extern "C" fn sw_j(env: Env, _: jclass, v: jlong, site: jint) {
    hook(env, site, |cx| cx.static_field(true, site, v));
}
pub(super) unsafe extern "C" fn sw_f(env: Env, _: jclass, v: jfloat, site: jint) {
    hook(env, site, |cx| cx.static_field(true, site, f2i(v)));
}
pub(super) unsafe extern "C" fn sw_d(env: Env, _: jclass, v: jdouble, site: jint) {
    hook(env, site, |cx| cx.static_field(true, site, d2i(v)));
}
pub(super) unsafe extern "C" fn sw_a(env: Env, _: jclass, v: jobject, site: jint) {
    hook(env, site, |cx| {
        let v = cx.ref_value_of(v);
        cx.static_field(true, site, v)
    });
}
pub(super) unsafe extern "C" fn ar_i(
    env: Env,
    _: jclass,
    v: jint,
    a: jobject,
    i: jint,
    site: jint,
) {
    load_hook(env, site, |cx| cx.array(false, a, i, site, v as i64));
}
pub(super) unsafe extern "C" fn ar_j(
    env: Env,
    _: jclass,
    v: jlong,
    a: jobject,
    i: jint,
    site: jint,
) {
    load_hook(env, site, |cx| cx.array(false, a, i, site, v));
}
pub(super) unsafe extern "C" fn ar_f(
    env: Env,
    _: jclass,
    v: jfloat,
    a: jobject,
    i: jint,
    site: jint,
) {
    load_hook(env, site, |cx| cx.array(false, a, i, site, f2i(v)));
}
pub(super) unsafe extern "C" fn ar_d(
    env: Env,
    _: jclass,
    v: jdouble,
    a: jobject,
    i: jint,
    site: jint,
) {
    load_hook(env, site, |cx| cx.array(false, a, i, site, d2i(v)));
}
pub(super) unsafe extern "C" fn ar_a(
    env: Env,
    _: jclass,
    v: jobject,
    a: jobject,
    i: jint,
    site: jint,
) {
    load_hook(env, site, |cx| {
        let v = cx.ref_value_of(v);
        cx.array(false, a, i, site, v)
    });
}
pub(super) unsafe extern "C" fn aw_i(
    env: Env,
    _: jclass,
    a: jobject,
    i: jint,
    v: jint,
    site: jint,
) {
    hook(env, site, |cx| cx.array(true, a, i, site, v as i64));
}
pub(super) unsafe extern "C" fn aw_j(
    env: Env,
    _: jclass,
    a: jobject,
    i: jint,
    v: jlong,
    site: jint,
) {
    hook(env, site, |cx| cx.array(true, a, i, site, v));
}
pub(super) unsafe extern "C" fn aw_f(
    env: Env,
    _: jclass,
    a: jobject,
    i: jint,
    v: jfloat,
    site: jint,
) {
    hook(env, site, |cx| cx.array(true, a, i, site, f2i(v)));
}
pub(super) unsafe extern "C" fn aw_d(
    env: Env,
    _: jclass,
    a: jobject,
    i: jint,
    v: jdouble,
    site: jint,
) {
    hook(env, site, |cx| cx.array(true, a, i, site, d2i(v)));
}
pub(super) unsafe extern "C" fn aw_a(
    env: Env,
    _: jclass,
    a: jobject,
    i: jint,
    v: jobject,
    site: jint,
) {
    hook(env, site, |cx| {
        let id = cx.ref_value_of(v);
        cx.array(true, a, i, site, id);
        cx.bp_ref_write(a, v);
    });
}
pub(super) unsafe extern "C" fn menter(env: Env, _: jclass, o: jobject, site: jint) {
    hook(env, site, |cx| {
        if let Some(e) = cx.enter_site(site) {
            let obj = cx.obj(o);
            if let SiteKind::MonitorEnter { via: Some(v) } = &e.site.kind {
                cx.lock_via = LockVia::Named(v);
            }
            cx.monitor_enter(obj, o, e.loc)
        }
    });
}
pub(super) unsafe extern "C" fn mexit(env: Env, _: jclass, o: jobject, site: jint) {
    hook(env, site, |cx| {
        if let Some(e) = cx.enter_site(site) {
            let obj = cx.obj(o);
            cx.monitor_exit(obj, e.loc)
        }
    });
}
pub(super) unsafe extern "C" fn senter(env: Env, _: jclass, o: jobject, site: jint) {
    hook(env, site, |cx| {
        if let Some(e) = cx.enter_site(site) {
            let obj = cx.obj(o);
            cx.t.sync_stack.push(obj);
            if let SiteKind::SyncMethod { is_static: true } = e.site.kind {
                cx.lock_via = LockVia::ClassOf(&e.site.loc.class);
            }
            cx.monitor_enter(obj, o, e.loc)
        }
    });
}
pub(super) unsafe extern "C" fn sexit(env: Env, _: jclass, o: jobject, site: jint) {
    hook(env, site, |cx| {
        if let Some(e) = cx.enter_site(site) {
            let obj = cx.obj(o);
            if cx.t.sync_stack.last() == Some(&obj) {
                cx.t.sync_stack.pop();
            }
            cx.monitor_exit(obj, e.loc)
        }
    });
}
pub(super) unsafe extern "C" fn sthrow(env: Env, _: jclass, site: jint) {
    hook(env, site, |cx| {
        if let (Some(e), Some(obj)) = (cx.enter_site(site), cx.t.sync_stack.pop()) {
            cx.monitor_exit(obj, e.loc)
        }
    });
}
pub(super) unsafe extern "C" fn before(env: Env, _: jclass, o: jobject, site: jint) {
    hook(env, site, |cx| cx.call(When::Before, o, site));
}
/// Before `o.wait(timeout)` (or `wait(timeout, nanos)`) in the program.
pub(super) unsafe extern "C" fn before_wait(
    env: Env,
    _: jclass,
    o: jobject,
    timeout: jlong,
    site: jint,
) {
    hook(env, site, |cx| {
        cx.t.wait_timeout = (timeout > 0).then(|| (std::time::Instant::now(), timeout as u64));
        cx.call(When::Before, o, site)
    });
}
pub(super) unsafe extern "C" fn after(env: Env, _: jclass, o: jobject, site: jint) {
    hook(env, site, |cx| cx.call(When::After(Ret::Void), o, site));
}
pub(super) unsafe extern "C" fn after_z(env: Env, _: jclass, r: jboolean, o: jobject, site: jint) {
    hook(env, site, |cx| {
        cx.call(When::After(Ret::Bool(r != 0)), o, site)
    });
}
pub(super) unsafe extern "C" fn after_a(env: Env, _: jclass, _r: jobject, o: jobject, site: jint) {
    hook(env, site, |cx| cx.call(When::After(Ret::Ref), o, site));
}
/// [`before`] of `set(int, E)` on a list, with the index.
pub(super) unsafe extern "C" fn before_i(env: Env, _: jclass, o: jobject, i: jint, site: jint) {
    hook(env, site, |cx| {
        cx.call_indexed(When::Before, o, site, Some(i))
    });
}
/// [`after_a`] of `get(int)` on a list, with the index.
pub(super) unsafe extern "C" fn after_a_i(
    env: Env,
    _: jclass,
    _r: jobject,
    o: jobject,
    i: jint,
    site: jint,
) {
    hook(env, site, |cx| {
        cx.call_indexed(When::After(Ret::Ref), o, site, Some(i))
    });
}
pub(super) unsafe extern "C" fn tenter(env: Env, _: jclass, o: jobject, site: jint) {
    // A run()/call() of an object some hooked scheduler published (java.util.Timer; the
    // executors' own hooks cover their tasks): the task starts after its submission.
    hook(env, site, |cx| {
        let Some(e) = cx.site(site) else { return };
        let obj = cx.obj(o);
        if obj == 0 {
            return;
        }
        let sid = cx.fixed_static("$task");
        if cx.a.vars.get((obj, sid)).is_some() {
            cx.sync_var(obj, "$task", e.loc, true, false);
        }
    });
}
pub(super) unsafe extern "C" fn texit(env: Env, _: jclass, _o: jobject, _site: jint) {
    let _ = env;
}
#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn arraycopy(
    env: Env,
    _: jclass,
    src: jobject,
    sp: jint,
    dst: jobject,
    dp: jint,
    n: jint,
    site: jint,
) {
    hook(env, site, |cx| cx.arraycopy(src, sp, dst, dp, n, site));
}
pub(super) unsafe extern "C" fn qenter(_env: Env, _: jclass, _site: jint) {
    let _ = TLS.try_with(|t| t.quiet.set(t.quiet.get().saturating_add(1)));
}
pub(super) unsafe extern "C" fn qexit(_env: Env, _: jclass, _site: jint) {
    let _ = TLS.try_with(|t| t.quiet.set(t.quiet.get().saturating_sub(1)));
}
pub(super) unsafe extern "C" fn br(env: Env, _: jclass, site: jint) {
    hook(env, site, |cx| {
        if let Some(e) = cx.site(site) {
            cx.emit(Kind::Branch, 0, e.loc, None, false)
        }
    });
}
pub(super) unsafe extern "C" fn clinit(env: Env, _: jclass, site: jint) {
    hook(env, site, |cx| {
        let Some(e) = cx.site(site) else { return };
        let a = cx.a;
        let marker = a.init_marker_name(&e.site.loc.class, e.def);
        let m = {
            let mut n = lock(&a.names);
            intern_static(a, &mut n, &marker)
        };
        let v = cx.field_var(0, m);
        cx.t.seen_init.insert(m);
        cx.emit(Kind::VWrite, v, e.loc, Some(1), true);
        lock(&a.names).init_done.insert(m);
    });
}

pub(super) unsafe extern "C" fn cu0(env: Env, _: jclass, site: jint) {
    hook(env, site, |cx| cx.class_use(site));
}
pub(super) unsafe extern "C" fn cuc(env: Env, _: jclass, class: jobject, site: jint) {
    hook(env, site, |cx| cx.class_use_of(class, site));
}

/// The entry point of every native of `jrace.rt.R`, by name.
fn entry_points() -> [(&'static str, *mut c_void); 65] {
    [
        ("rdI", rd_i as *mut c_void),
        ("rdJ", rd_j as *mut c_void),
        ("rdF", rd_f as *mut c_void),
        ("rdD", rd_d as *mut c_void),
        ("rdA", rd_a as *mut c_void),
        ("wrI", wr_i as *mut c_void),
        ("wrJ", wr_j as *mut c_void),
        ("wrF", wr_f as *mut c_void),
        ("wrD", wr_d as *mut c_void),
        ("wrA", wr_a as *mut c_void),
        ("srI", sr_i as *mut c_void),
        ("srJ", sr_j as *mut c_void),
        ("srF", sr_f as *mut c_void),
        ("srD", sr_d as *mut c_void),
        ("srA", sr_a as *mut c_void),
        ("swI", sw_i as *mut c_void),
        ("swJ", sw_j as *mut c_void),
        ("swF", sw_f as *mut c_void),
        ("swD", sw_d as *mut c_void),
        ("swA", sw_a as *mut c_void),
        ("arI", ar_i as *mut c_void),
        ("arJ", ar_j as *mut c_void),
        ("arF", ar_f as *mut c_void),
        ("arD", ar_d as *mut c_void),
        ("arA", ar_a as *mut c_void),
        ("awI", aw_i as *mut c_void),
        ("awJ", aw_j as *mut c_void),
        ("awF", aw_f as *mut c_void),
        ("awD", aw_d as *mut c_void),
        ("awA", aw_a as *mut c_void),
        ("menter", menter as *mut c_void),
        ("mexit", mexit as *mut c_void),
        ("senter", senter as *mut c_void),
        ("sexit", sexit as *mut c_void),
        ("sthrow", sthrow as *mut c_void),
        ("before0", before as *mut c_void),
        ("beforeWait0", before_wait as *mut c_void),
        ("after0", after as *mut c_void),
        ("afterZ0", after_z as *mut c_void),
        ("afterA0", after_a as *mut c_void),
        ("beforeI0", before_i as *mut c_void),
        ("afterAI0", after_a_i as *mut c_void),
        ("resolve", ordered::resolve as *mut c_void),
        ("qenter", qenter as *mut c_void),
        ("qexit", qexit as *mut c_void),
        ("uR", ordered::u_r as *mut c_void),
        ("uW", ordered::u_w as *mut c_void),
        ("uRW", ordered::u_rw as *mut c_void),
        ("uRA", ordered::u_ra as *mut c_void),
        ("uWA", ordered::u_wa as *mut c_void),
        ("uRWA", ordered::u_rwa as *mut c_void),
        ("tenter", tenter as *mut c_void),
        ("texit", texit as *mut c_void),
        ("arraycopy", arraycopy as *mut c_void),
        ("bpenter0", barrier::bp_enter0 as *mut c_void),
        ("bpenter1", barrier::bp_enter1 as *mut c_void),
        ("bpenter2", barrier::bp_enter2 as *mut c_void),
        ("bpenter3", barrier::bp_enter3 as *mut c_void),
        ("bpenterN", barrier::bp_enter_n as *mut c_void),
        ("bpexit", barrier::bp_exit as *mut c_void),
        ("bpunwind", barrier::bp_unwind as *mut c_void),
        ("br", br as *mut c_void),
        ("clinit", clinit as *mut c_void),
        ("cu0", cu0 as *mut c_void),
        ("cuc", cuc as *mut c_void),
    ]
}

/// Binds every native of `jrace.rt.R`.
///
/// # Safety
/// `env` is the calling thread's JNI environment and `class` the defined runtime class.
pub unsafe fn register_natives(env: *mut JNIEnv, class: jclass) -> Result<(), String> {
    // Names and descriptors from the hook ABI table ([`crate::hook_abi`]).
    let fns = entry_points();
    let mut table: Vec<(&str, String, *mut c_void)> = Vec::with_capacity(fns.len());
    for h in crate::hook_abi::HOOKS.iter().filter(|h| h.native) {
        let Some(&(_, f)) = fns.iter().find(|(n, _)| *n == h.name) else {
            return Err(format!("native {} has no entry point", h.name));
        };
        table.push((h.name, h.desc.to_string(), f));
    }
    let natives: Vec<(&str, &str, *mut c_void)> =
        table.iter().map(|(n, s, f)| (*n, s.as_str(), *f)).collect();
    crate::jnienv::register_natives(env, class, &natives)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every native of the hook ABI table has an entry point here, and every entry point
    /// is a native of the table.
    #[test]
    fn entry_points_are_the_tables_natives() {
        let fns = entry_points();
        for h in crate::hook_abi::HOOKS.iter().filter(|h| h.native) {
            assert!(
                fns.iter().any(|(n, _)| *n == h.name),
                "{} has no entry point",
                h.name
            );
        }
        for (n, _) in fns {
            assert!(
                crate::hook_abi::native(n).is_some(),
                "{n} is not a native of the table"
            );
        }
    }
}
