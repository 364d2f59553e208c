//! What the bytecode says, read before anything is inserted: where a monitor or a
//! receiver came from, where control can arrive, where a constructor's `super(…)` call
//! is, whether local 0 is surely `this`, and which calls are fences, ordered `Unsafe`
//! accesses, `System.arraycopy` or calls the recorder models.

use super::shape::{params, Shape};
use crate::classfile::attributes::{AttrInfo, FrameKind, VType};
use crate::classfile::insn::{op, Arg, Insn};
use crate::classfile::{ClassFile, Constant};
use crate::sites::modelled_call;
use std::collections::HashSet;

pub(super) type MemberRef = (String, String, String);

/// Where the object on top of the stack at instruction `i` came from: the monitor of a
/// `monitorenter`, as javac (and ecj) compile `synchronized (EXPR)` (`EXPR; dup; astore N;
/// monitorenter` or `EXPR; monitorenter`), or the receiver of a call without arguments
/// (`lock.lock()`). When EXPR is one `getfield`/`getstatic`, the field
/// (`pkg.Class.field`); a class literal, `pkg.Class.class`; otherwise (or when control can
/// enter between EXPR and `i`: `entries` holds every jump target and handler start)
/// nothing. Reports name locks by it.
pub(super) fn stack_top_source(
    cf: &ClassFile,
    insns: &[(u32, Insn)],
    i: usize,
    entries: &HashSet<u32>,
) -> Option<String> {
    let is_astore = |op: u8| op == op::ASTORE || (0x4b..=0x4e).contains(&op);
    let mut j = i.checked_sub(1)?;
    if is_astore(insns[j].1.op) {
        j = j.checked_sub(1)?;
        if insns[j].1.op != op::DUP {
            return None;
        }
        j = j.checked_sub(1)?;
    }
    if insns[j + 1..=i]
        .iter()
        .any(|(off, _)| entries.contains(off))
    {
        return None;
    }
    let (_, src) = &insns[j];
    let Arg::Cp(idx) = src.arg else { return None };
    match src.op {
        op::GETFIELD | op::GETSTATIC => {
            let (owner, name, _) = cf.constant_pool.member_ref(idx)?;
            Some(format!("{}.{name}", owner.replace('/', ".")))
        }
        op::LDC | op::LDC_W => {
            let class = cf.constant_pool.class_name(idx)?;
            Some(format!("{}.class", class.replace('/', ".")))
        }
        _ => None,
    }
}

/// Offsets where control can arrive other than from the instruction before: jump and
/// switch targets, exception handler starts.
pub(super) fn entry_points(insns: &[(u32, Insn)], handlers: &[u16]) -> HashSet<u32> {
    let mut set: HashSet<u32> = handlers.iter().map(|&h| h as u32).collect();
    for (_, ins) in insns {
        match &ins.arg {
            Arg::Jump(t) => {
                set.insert(*t);
            }
            Arg::TableSwitch {
                default, targets, ..
            } => {
                set.insert(*default);
                set.extend(targets.iter().copied());
            }
            Arg::LookupSwitch { default, pairs } => {
                set.insert(*default);
                set.extend(pairs.iter().map(|(_, t)| *t));
            }
            _ => {}
        }
    }
    set
}

/// Index of the instruction from which field accesses of a constructor may be
/// instrumented: the one after its own `this(…)`/`super(…)` call. `None` when it cannot be
/// found (nothing is instrumented then).
pub(super) fn after_super_call(cf: &ClassFile, insns: &[(u32, Insn)]) -> Option<usize> {
    let this = cf.name();
    let sup = cf.constant_pool.class_name(cf.super_class);
    let mut pending: Vec<Option<String>> = Vec::new();
    for (i, (_, ins)) in insns.iter().enumerate() {
        match ins.op {
            op::NEW => {
                let Arg::Cp(c) = ins.arg else { return None };
                pending.push(cf.constant_pool.class_name(c));
            }
            op::INVOKESPECIAL => {
                let Arg::Cp(m) = ins.arg else { return None };
                let (owner, name, _) = cf.constant_pool.member_ref(m)?;
                if name != "<init>" {
                    continue;
                }
                match pending.last() {
                    Some(p) if p.as_deref() == Some(owner.as_str()) => {
                        pending.pop();
                    }
                    Some(_) => return None, // not the nesting javac makes: give up
                    // The constructor's own this(...)/super(...) call, if it names this
                    // class or the super class; anything else is code we do not understand.
                    None if Some(&owner) == this.as_ref() || Some(&owner) == sup.as_ref() => {
                        return Some(i + 1)
                    }
                    None => return None,
                }
            }
            _ => {}
        }
    }
    None
}

/// True when local 0 holds an object in every stack map frame and is never stored to, so
/// that `aload_0` is `this` everywhere.
pub(super) fn local0_is_this(
    code: &crate::classfile::Code,
    insns: &[(u32, Insn)],
    n_params: usize,
) -> bool {
    for (_, ins) in insns {
        // istore..astore (0x36-0x3a) and their _0.._3 forms (0x3b-0x4e).
        if (0x36..=0x4e).contains(&ins.op) {
            let idx = match (ins.op, &ins.arg) {
                (0x36..=0x3a, Arg::Local { index, .. }) => *index,
                (o @ 0x3b..=0x4e, _) => ((o - 0x3b) % 4) as u16,
                _ => return false,
            };
            if idx == 0 {
                return false;
            }
        }
        // iinc/ret on local 0 would not verify with an object in it.
    }
    let mut count = 1 + n_params as i64;
    for a in &code.attributes {
        let AttrInfo::StackMapTable(frames) = &a.info else {
            continue;
        };
        for f in frames {
            match &f.kind {
                FrameKind::Chop(k) => count -= *k as i64,
                FrameKind::Append(v) => count += v.len() as i64,
                FrameKind::Full { locals, .. } => {
                    if !matches!(locals.first(), Some(VType::Object(_))) {
                        return false;
                    }
                    count = locals.len() as i64;
                }
                _ => {}
            }
            if count < 1 {
                return false;
            }
        }
    }
    true
}

/// Whether a class calls an acquire, load or full fence (`VarHandle.acquireFence`,
/// `Unsafe.loadFence`, ...): it then orders plain reads with it (ConcurrentSkipListMap,
/// ForkJoinPool), which only a record of those reads can show. With `release`, a release
/// or store fence counts too: a class of the program that publishes with
/// `releaseFence(); this.value = v` (the LMAX Disruptor's `Sequence`) orders its plain
/// writes with it.
pub(super) fn uses_fences(cf: &ClassFile, release: bool) -> bool {
    let cp = &cf.constant_pool;
    (1..cp.entries.len() as u16).any(|i| match cp.get(i) {
        Some(Constant::Methodref(..)) => cp.member_ref(i).is_some_and(|(owner, name, _)| {
            matches!(
                owner.as_str(),
                "java/lang/invoke/VarHandle" | "jdk/internal/misc/Unsafe" | "sun/misc/Unsafe"
            ) && (matches!(
                name.as_str(),
                "acquireFence" | "fullFence" | "loadLoadFence" | "loadFence"
            ) || release
                && matches!(
                    name.as_str(),
                    "releaseFence" | "storeStoreFence" | "storeFence"
                ))
        }),
        _ => false,
    })
}

/// The ordered `Unsafe` access an `invokevirtual` calls, if it is one.
pub(super) fn ordered_unsafe(cf: &ClassFile, ins: &Insn) -> Option<crate::unsafe_ops::Method> {
    if ins.op != op::INVOKEVIRTUAL {
        return None;
    }
    let Arg::Cp(i) = ins.arg else { return None };
    let cp = &cf.constant_pool;
    let c = match cp.get(i)? {
        Constant::Methodref(c, _) => *c,
        _ => return None,
    };
    let owner = match cp.get(c)? {
        Constant::Class(n) => cp.utf8_bytes(*n)?,
        _ => return None,
    };
    if owner != crate::unsafe_ops::MISC.as_bytes() && owner != crate::unsafe_ops::SUN.as_bytes() {
        return None;
    }
    let (owner, name, desc) = cp.member_ref(i)?;
    crate::unsafe_ops::lookup(&owner, &name, &desc)
}

/// `invokestatic java/lang/System.arraycopy`.
pub(super) fn is_arraycopy(cf: &ClassFile, ins: &Insn) -> bool {
    if ins.op != op::INVOKESTATIC {
        return false;
    }
    let Arg::Cp(i) = ins.arg else { return false };
    cf.constant_pool.member_ref(i).is_some_and(|(c, n, d)| {
        c == "java/lang/System"
            && n == "arraycopy"
            && d == "(Ljava/lang/Object;ILjava/lang/Object;II)V"
    })
}

/// The member and argument shapes of a call that gets `before`/`after` hooks (in a JDK
/// class, [`Options::jdk`]: only `wait`, `notify`, `notifyAll`, `start` and `join`: a
/// pool's threads are forked by the pool).
pub(super) fn modelled(cf: &ClassFile, ins: &Insn, jdk: bool) -> Option<(MemberRef, Vec<Shape>)> {
    let idx = match (ins.op, &ins.arg) {
        (op::INVOKEVIRTUAL | op::INVOKESPECIAL, Arg::Cp(i)) => *i,
        (op::INVOKEINTERFACE, Arg::InvokeInterface { index, .. }) => *index,
        _ => return None,
    };
    // Most calls are not modelled: ask without allocating when the names are ASCII (whose
    // modified UTF-8 is plain UTF-8).
    let cp = &cf.constant_pool;
    let (c, nt) = match cp.get(idx)? {
        Constant::Methodref(c, nt) | Constant::InterfaceMethodref(c, nt) => (*c, *nt),
        _ => return None,
    };
    let owner_raw = match cp.get(c)? {
        Constant::Class(n) => cp.utf8_bytes(*n)?,
        _ => return None,
    };
    let (name_raw, desc_raw) = match cp.get(nt)? {
        Constant::NameAndType(n, d) => (cp.utf8_bytes(*n)?, cp.utf8_bytes(*d)?),
        _ => return None,
    };
    fn ascii(b: &[u8]) -> Option<&str> {
        if b.iter().all(|&x| (1..0x80).contains(&x)) {
            std::str::from_utf8(b).ok()
        } else {
            None
        }
    }
    if let (Some(o), Some(n), Some(d)) = (ascii(owner_raw), ascii(name_raw), ascii(desc_raw)) {
        if !modelled_call(o, n, d) {
            return None;
        }
    }
    let (owner, name, desc) = cp.member_ref(idx)?;
    if !modelled_call(&owner, &name, &desc) {
        return None;
    }
    if jdk && !crate::sites::is_thread_sync(&name, &desc) {
        return None;
    }
    let (shapes, _) = params(&desc)?;
    Some(((owner, name, desc), shapes))
}
