//! BarrierPairs: which calls into excluded code are bracketed, and with which roots.

use super::scan::{is_arraycopy, MemberRef};
use super::shape::{params, Shape};
use super::Ctx;
use crate::classfile::descriptor::method_parts;
use crate::classfile::insn::{op, Arg, Insn};
use crate::classfile::ClassFile;

/// BarrierPairs (`barrier=1`): which calls are bracketed by `enter`/`exit` hooks.
///
/// Every `invoke*` (not `invokedynamic`, whose bootstrap links a call site rather than
/// calling excluded code; the lambda bodies it links to are methods of the instrumented
/// class and are instrumented themselves) whose *symbolic* owner class is excluded, and
/// every call to a `native` method of the class being instrumented, gets
/// `bpenter*(tok, roots…, site)` before it (roots: the receiver, except for constructors
/// whose receiver is still uninitialized, and the reference arguments), `bpexit(site)`
/// after a normal return, and `bpunwind(tok, site)` in every exception handler of the
/// method and in a catch-all handler that rethrows, so that an exception ends the
/// BarrierPair too. `tok` is a local set to -1 in the prologue and to the thread's
/// BarrierPair depth by the first `bpenter` of the frame: `bpunwind` closes every
/// BarrierPair opened at or above that depth. It is declared in every stack map frame
/// (see [`CodeEditor::declare_local`]). A constructor's catch-all handler covers only the
/// code after its `this()`/`super()` call (a handler cannot cover code that runs with an
/// uninitialized `this`); a BarrierPair opened before it that ends by an exception is closed
/// by the next `bpunwind`/`bpexit` below it on the thread's stack, or at the thread's end.
///
/// Not bracketed: the calls the recorder models itself ([`modelled_call`]: thread
/// start/join, wait/notify, `java.util` collections and `java.util.concurrent`,
/// atomics, `VarHandle`), `System.arraycopy`, `Object.<init>`, `getClass()`,
/// `Object.hashCode` and `System.identityHashCode` (they touch no object's state), and
/// calls whose reachable set is statically empty, counted in
/// [`Outcome::bp_skipped_empty`]: static methods and constructors whose parameters are
/// all primitive or immutable leaves (`String`, the boxed primitives), and instance
/// methods of `String` and the boxed primitives with such parameters — unless
/// `globals` is set (`bp_globals=`: every BarrierPair's set then holds those classes).
pub struct Barrier<'a> {
    /// Whether the class with this internal name is excluded from instrumentation.
    pub excluded: &'a dyn Fn(&str) -> bool,
    /// `bp_globals=` names classes whose statics every BarrierPair may touch.
    pub globals: bool,
}

/// A call bracketed as a BarrierPair.
pub(super) struct BpCall {
    pub(super) member: MemberRef,
    pub(super) shapes: Vec<Shape>,
    /// Per parameter: a reference (a root).
    pub(super) refs: Vec<bool>,
    /// The receiver is a root (an instance call that is not a constructor).
    pub(super) receiver: bool,
}

pub(super) enum BpDecision {
    /// Not a BarrierPair (instrumented callee, modelled call, not a call).
    No,
    /// Into excluded code, but nothing reachable (counted).
    Empty,
    Call(BpCall),
}

/// Descriptors of immutable leaf types: an argument of one reaches nothing mutable.
pub(super) fn immutable_leaf(desc: &str) -> bool {
    matches!(
        desc,
        "Ljava/lang/String;"
            | "Ljava/lang/Integer;"
            | "Ljava/lang/Long;"
            | "Ljava/lang/Short;"
            | "Ljava/lang/Byte;"
            | "Ljava/lang/Character;"
            | "Ljava/lang/Boolean;"
            | "Ljava/lang/Float;"
            | "Ljava/lang/Double;"
    )
}

/// Whether (and how) the call `ins` becomes a BarrierPair; see [`Barrier`].
pub(super) fn bp_call(cf: &ClassFile, ctx: &Ctx, bp: &Barrier, ins: &Insn) -> BpDecision {
    let idx = match (ins.op, &ins.arg) {
        (op::INVOKEVIRTUAL | op::INVOKESPECIAL | op::INVOKESTATIC, Arg::Cp(i)) => *i,
        (op::INVOKEINTERFACE, Arg::InvokeInterface { index, .. }) => *index,
        _ => return BpDecision::No,
    };
    let Some((owner, name, desc)) = cf.constant_pool.member_ref(idx) else {
        return BpDecision::No;
    };
    if owner.starts_with("jrace/") || owner.starts_with('[') {
        return BpDecision::No;
    }
    let native_here =
        owner == ctx.class_internal && ctx.natives.iter().any(|(n, d)| *n == name && *d == desc);
    if !native_here && !(bp.excluded)(&owner) {
        return BpDecision::No;
    }
    let is_static = ins.op == op::INVOKESTATIC;
    let is_init = name == "<init>";
    if (!is_static && !is_init && crate::sites::modelled_by_owner(&owner, &name, &desc))
        || is_arraycopy(cf, ins)
    {
        return BpDecision::No;
    }
    let pure = matches!(
        (owner.as_str(), name.as_str(), desc.as_str()),
        ("java/lang/Object", "<init>", "()V")
            | ("java/lang/Object", "hashCode", "()I")
            | (
                "java/lang/System",
                "identityHashCode",
                "(Ljava/lang/Object;)I"
            )
    ) || (name == "getClass" && desc == "()Ljava/lang/Class;"); // final in Object
    if pure {
        return BpDecision::Empty;
    }
    let (Some((descs, _)), Some((shapes, _))) = (method_parts(&desc), params(&desc)) else {
        return BpDecision::No;
    };
    let refs: Vec<bool> = shapes.iter().map(|s| *s == Shape::A).collect();
    let args_reach_nothing = descs
        .iter()
        .all(|d| !d.starts_with(['L', '[']) || immutable_leaf(d));
    let leaf_receiver = immutable_leaf(&format!("L{owner};"));
    if args_reach_nothing && (is_static || is_init || leaf_receiver) && !bp.globals && !native_here
    {
        return BpDecision::Empty;
    }
    BpDecision::Call(BpCall {
        member: (owner, name, desc),
        shapes,
        refs,
        receiver: !is_static && !is_init,
    })
}
