//! What a site is at run time: resolving a hook site to the field, method or lock it
//! touches, and describing classes (field flags, signatures) for the instrumenter.

use super::*;

pub(super) fn access_kind(write: bool, volatile: bool) -> Kind {
    match (write, volatile) {
        (false, false) => Kind::Read,
        (true, false) => Kind::Write,
        (false, true) => Kind::VRead,
        (true, true) => Kind::VWrite,
    }
}

pub(super) fn signature_to_name(sig: &str) -> String {
    let mut dims = 0;
    let mut s = sig;
    while let Some(r) = s.strip_prefix('[') {
        dims += 1;
        s = r;
    }
    let base = match s {
        "Z" => "boolean".to_string(),
        "B" => "byte".to_string(),
        "C" => "char".to_string(),
        "S" => "short".to_string(),
        "I" => "int".to_string(),
        "J" => "long".to_string(),
        "F" => "float".to_string(),
        "D" => "double".to_string(),
        _ => s
            .strip_prefix('L')
            .and_then(|x| x.strip_suffix(';'))
            .unwrap_or(s)
            .replace('/', "."),
    };
    base + &"[]".repeat(dims)
}

/// # Safety
/// `env` is the calling thread's JNI environment (or null: no class defined twice is told
/// apart).
pub(super) unsafe fn resolve_site(a: &Agent, env: *mut JNIEnv, e: &SiteEntry) -> Resolved {
    let site = &e.site;
    match &site.kind {
        SiteKind::FieldRead { owner, name, .. }
        | SiteKind::FieldWrite { owner, name, .. }
        | SiteKind::StaticRead { owner, name, .. }
        | SiteKind::StaticWrite { owner, name, .. } => {
            let Some((decl, flags)) = resolve_field(a, owner, name).or_else(|| {
                // A class the hook never saw was loaded before the agent: a JDK class,
                // whose fields the program only reads (System.out and the like).
                a.opts.instruments(owner).then(|| (owner.clone(), 0))
            }) else {
                return Resolved::Skip;
            };
            let is_static = matches!(
                site.kind,
                SiteKind::StaticRead { .. } | SiteKind::StaticWrite { .. }
            );
            let is_final = flags & ACC_FINAL != 0;
            if is_final && !is_static {
                return Resolved::Skip;
            }
            // The definition the site's class sees, when the class is defined twice.
            let ordinal = if env.is_null() || e.def == defs::NO_DEF {
                0
            } else {
                a.ordinal_seen(env, &decl, e.def)
            };
            let class = defs::class_display(&decl.replace('/', "."), ordinal);
            let mut n = lock(&a.names);
            let static_id = intern_static(a, &mut n, &format!("{class}.{name}"));
            let marker = n.statics.get(&format!("{class}.<clinit>")).copied();
            let init = marker.filter(|m| n.clinit_classes.contains(m));
            Resolved::Field {
                static_id,
                volatile: flags & ACC_VOLATILE != 0,
                init,
                record: !is_final,
            }
        }
        SiteKind::ArrayRead { elem } | SiteKind::ArrayWrite { elem } => {
            let mut n = lock(&a.names);
            let name = format!("{}[]", signature_to_name(elem));
            Resolved::Array {
                static_id: intern_static(a, &mut n, &name),
                exact: !matches!(elem.as_bytes().first(), Some(b'B' | b'L' | b'[')),
            }
        }
        SiteKind::Barrier { owner, name, .. } => Resolved::Barrier {
            method: barrier::resolve(a, owner, name),
        },
        SiteKind::Call { name, desc, .. } => Resolved::Call(call_op(name, desc)),
        SiteKind::ClassUse { class } if !class.is_empty() => Resolved::ClassUse {
            markers: init_markers(a, env, class, e.def),
        },
        _ => Resolved::Other,
    }
}

/// What a call does by its name and descriptor (`Library`: it depends on the receiver's
/// class, [`models`]).
pub(super) fn call_op(name: &str, desc: &str) -> CallOp {
    match (name, desc) {
        ("start", "()V") | ("$threadStart", _) => CallOp::Start,
        ("join", "()V" | "(J)V" | "(JI)V" | crate::sites::JOIN_DURATION_DESC)
        | ("isAlive", "()Z") => CallOp::Join,
        // A thread found TERMINATED is not alive either: the same check after the call.
        ("getState", crate::sites::THREAD_STATE_DESC) => CallOp::Join,
        ("interrupt", "()V") | ("$threadInterrupt", _) => CallOp::Interrupt,
        ("$threadInterrupted", _) => CallOp::InterruptedNow,
        ("$threadJoin", _) => CallOp::JoinNow,
        ("$threadAlive", _) => CallOp::Join,
        ("$lockProbe", _) => CallOp::LockProbe,
        ("$caught", _) => CallOp::Caught,
        ("isInterrupted", "()Z") => CallOp::Interrupted,
        ("wait", "()V" | "(J)V" | "(JI)V") => CallOp::Wait,
        ("notify", "()V") => CallOp::Notify,
        ("notifyAll", "()V") => CallOp::NotifyAll,
        ("$taskSubmit", _) => CallOp::TaskSubmit,
        ("$taskStart", _) => CallOp::TaskStart,
        ("$taskEnd", _) => CallOp::TaskEnd,
        ("$vmShutdown", _) => CallOp::VmShutdown,
        ("$streamSend", _) => CallOp::StreamSend,
        ("$streamReceive", _) => CallOp::StreamReceive,
        ("$finalizing", _) => CallOp::Finalizing,
        _ => CallOp::Library,
    }
}

/// The access flags of field `owner.name` (the instrumenter's [`crate::instrument::FieldFlags`]),
/// when its declaring class is known.
pub fn field_flags(a: &Agent, owner: &str, name: &str) -> Option<u16> {
    resolve_field(a, owner, name).map(|(_, f)| f)
}

/// A class's JVM signature (`Ljava/lang/String;`, `[I`).
///
/// # Safety
/// `jv` is the agent's JVMTI environment and `k` a live class reference.
pub unsafe fn class_signature(jv: *mut jvmtiEnv, k: jclass) -> Option<String> {
    ordered::class_signature(jv, k)
}

/// A class's internal name (`java/lang/String`); `None` for an array or primitive class.
///
/// # Safety
/// As [`class_signature`].
pub(super) unsafe fn class_internal_name(jv: *mut jvmtiEnv, k: jclass) -> Option<String> {
    let sig = class_signature(jv, k)?;
    sig.strip_prefix('L')
        .and_then(|s| s.strip_suffix(';'))
        .map(str::to_string)
}

/// Name, super class, interfaces and fields of a loaded class, asked from the JVM.
///
/// # Safety
/// `jv` is the agent's JVMTI environment, `env` this thread's JNI environment and `k` a
/// live class reference.
pub unsafe fn describe_class(jv: *mut jvmtiEnv, env: *mut JNIEnv, k: jclass) -> Option<ClassInfo> {
    let internal = |k: jclass| class_internal_name(jv, k);
    let name = internal(k)?;
    let sup = jni!(env, GetSuperclass, k);
    let super_name = if sup.is_null() {
        None
    } else {
        let s = internal(sup);
        jni!(env, DeleteLocalRef, sup);
        s
    };
    let mut interfaces = Vec::new();
    let mut n: jint = 0;
    let mut ifs: *mut jclass = std::ptr::null_mut();
    if jvmti!(jv, GetImplementedInterfaces, k, &mut n, &mut ifs) == 0 && !ifs.is_null() {
        for &i in std::slice::from_raw_parts(ifs, n.max(0) as usize) {
            if let Some(s) = internal(i) {
                interfaces.push(s);
            }
            jni!(env, DeleteLocalRef, i);
        }
        jvmti!(jv, Deallocate, ifs as *mut u8);
    }
    let mut fields = Vec::new();
    let mut fs: *mut jfieldID = std::ptr::null_mut();
    if jvmti!(jv, GetClassFields, k, &mut n, &mut fs) == 0 && !fs.is_null() {
        for &f in std::slice::from_raw_parts(fs, n.max(0) as usize) {
            let (mut fname, mut fsig): (*mut c_char, *mut c_char) =
                (std::ptr::null_mut(), std::ptr::null_mut());
            let mut mods: jint = 0;
            if jvmti!(
                jv,
                GetFieldName,
                k,
                f,
                &mut fname,
                &mut fsig,
                std::ptr::null_mut()
            ) != 0
                || jvmti!(jv, GetFieldModifiers, k, f, &mut mods) != 0
            {
                continue;
            }
            let take = |p: *mut c_char| {
                if p.is_null() {
                    return String::new();
                }
                let s = CStr::from_ptr(p).to_string_lossy().into_owned();
                jvmti!(jv, Deallocate, p as *mut u8);
                s
            };
            fields.push((take(fname), take(fsig), mods as u16));
        }
        jvmti!(jv, Deallocate, fs as *mut u8);
    }
    Some(ClassInfo {
        name,
        super_name,
        interfaces,
        fields,
    })
}

/// The initialization markers of class `internal` and of its superclasses (nearest first,
/// at most four) whose `<clinit>` is instrumented, as a class of definition `def` sees
/// them: initializing a class initializes its superclasses first (JVMS 5.5). A static
/// method inherited from a superclass initializes only that superclass; the site's class
/// is taken as well, which orders more than the JVM does only when that class was
/// initialized too (a missed race at worst, never a false one).
///
/// # Safety
/// As [`resolve_site`].
pub(super) unsafe fn init_markers(
    a: &Agent,
    env: *mut JNIEnv,
    internal: &str,
    def: u32,
) -> [u32; 4] {
    let mut chain = Vec::new();
    {
        let classes = lock(&a.classes);
        let mut c = Some(internal.to_string());
        while let Some(name) = c.take() {
            if name.starts_with("java/") || chain.len() >= 16 {
                break;
            }
            c = classes.get(&name).and_then(|i| i.super_name.clone());
            chain.push(name);
        }
    }
    let mut out = [NO_MARKER; 4];
    let mut k = 0;
    for decl in chain {
        let ordinal = if env.is_null() || def == defs::NO_DEF {
            0
        } else {
            a.ordinal_seen(env, &decl, def)
        };
        let marker = format!(
            "{}.<clinit>",
            defs::class_display(&decl.replace('/', "."), ordinal)
        );
        let n = lock(&a.names);
        if let Some(&m) = n
            .statics
            .get(&marker)
            .filter(|m| n.clinit_classes.contains(m))
        {
            out[k] = m;
            k += 1;
            if k == out.len() {
                break;
            }
        }
    }
    out
}

/// Finds the class declaring field `name` as seen from `owner` (JVMS §5.4.3.2 order:
/// the class, its interfaces, then its superclass), with the field's flags.
pub(super) fn resolve_field(a: &Agent, owner: &str, name: &str) -> Option<(String, u16)> {
    let classes = lock(&a.classes);
    let mut todo = vec![owner.to_string()];
    let mut seen = FxHashSet::default();
    while let Some(c) = todo.pop() {
        if !seen.insert(c.clone()) {
            continue;
        }
        let Some(info) = classes.get(&c) else {
            continue;
        };
        if let Some(f) = info.fields.iter().find(|f| f.0 == name) {
            return Some((c, f.2));
        }
        if let Some(s) = &info.super_name {
            todo.push(s.clone());
        }
        todo.extend(info.interfaces.iter().rev().cloned());
    }
    None
}
