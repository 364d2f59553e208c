//! The rules for calls: `System.arraycopy`, BarrierPair calls into excluded code, the
//! calls the recorder models, and the uses of a class that initialize it.

use super::super::scan::{modelled, stack_top_source};
use super::super::shape::{local, Shape};
use super::{e0, Res, Rewrite};
use crate::classfile::insn::{op, Arg, Insn};
use crate::sites::SiteKind;

/// `List.set(int, E)` and `List.get(int)`, as a call to any list class names them.
const LIST_SET: &str = "(ILjava/lang/Object;)Ljava/lang/Object;";
const LIST_GET: &str = "(I)Ljava/lang/Object;";

impl Rewrite<'_, '_, '_> {
    /// `System.arraycopy(src, srcPos, dst, dstPos, length)`: the arguments saved, passed
    /// to the hook, and restored.
    pub(super) fn arraycopy(&mut self, i: usize, bci: u32) -> Res {
        let a = self.t.args;
        let (src, sp, dst, dp, n) = (a, a + 1, a + 2, a + 3, a + 4);
        let kind = SiteKind::Call {
            owner: "java/lang/System".into(),
            name: "arraycopy".into(),
            desc: "(Ljava/lang/Object;ILjava/lang/Object;II)V".into(),
            via: None,
        };
        let [p, c] = self.mcx.hook(kind, bci, "arraycopy")?;
        let mut seq = vec![
            local(op::ISTORE, n),
            local(op::ISTORE, dp),
            local(op::ASTORE, dst),
            local(op::ISTORE, sp),
            local(op::ASTORE, src),
        ];
        let reload = [
            local(op::ALOAD, src),
            local(op::ILOAD, sp),
            local(op::ALOAD, dst),
            local(op::ILOAD, dp),
            local(op::ILOAD, n),
        ];
        seq.extend(reload.iter().cloned());
        seq.extend([p, c]);
        seq.extend(reload.iter().cloned());
        e0(self.ed.insert_before(i, &seq, 6))
    }

    /// Slots for the arguments of a call, from the argument temporaries.
    pub(super) fn arg_slots(&self, shapes: &[Shape]) -> Vec<u16> {
        let mut k = self.t.args;
        shapes
            .iter()
            .map(|sh| {
                let s = k;
                k += sh.size();
                s
            })
            .collect()
    }

    /// A call into excluded code ([`Barrier`]): `bpenter*(tok, roots…, site)` before it,
    /// with the arguments spilled and reloaded, `bpexit(site)` after it.
    pub(super) fn barrier_call(&mut self, i: usize, bci: u32) -> Res {
        let (Some(c), Some(tok)) = (self.f.bp_calls.get(&i), self.t.tok) else {
            return Ok(());
        };
        let (owner, name, desc) = c.member.clone();
        let s = self.mcx.site(SiteKind::Barrier { owner, name, desc }, bci);
        let push = self.mcx.push(s)?;
        let slots = self.arg_slots(&c.shapes);
        let mut seq = Vec::with_capacity(3 * c.shapes.len() + 12);
        for (sh, slot) in c.shapes.iter().zip(&slots).rev() {
            seq.push(local(sh.store(), *slot));
        }
        let mut roots = Vec::new();
        if c.receiver {
            seq.extend([Insn::new(op::DUP), local(op::ASTORE, self.t.obj)]);
            roots.push(local(op::ALOAD, self.t.obj));
        }
        for ((sh, slot), is_ref) in c.shapes.iter().zip(&slots).zip(&c.refs) {
            if *is_ref {
                roots.push(local(sh.load(), *slot));
            }
        }
        seq.push(local(op::ILOAD, tok));
        let hook = match roots.len() {
            0 => "bpenter0",
            1 => "bpenter1",
            2 => "bpenter2",
            3 => "bpenter3",
            _ => "bpenterN",
        };
        if roots.len() <= 3 {
            seq.extend(roots);
        } else {
            let object = self
                .mcx
                .cf
                .constant_pool
                .add_class("java/lang/Object")
                .map_err(|e| e.to_string())?;
            seq.push(Insn::with(op::SIPUSH, Arg::I16(roots.len() as i16)));
            seq.push(Insn::with(op::ANEWARRAY, Arg::Cp(object)));
            for (k, r) in roots.into_iter().enumerate() {
                seq.push(Insn::new(op::DUP));
                seq.push(Insn::with(op::SIPUSH, Arg::I16(k as i16)));
                seq.push(r);
                seq.push(Insn::new(op::AASTORE));
            }
        }
        seq.push(push.clone());
        seq.push(self.mcx.call(hook)?);
        seq.push(local(op::ISTORE, tok));
        for (sh, slot) in c.shapes.iter().zip(&slots) {
            seq.push(local(sh.load(), *slot));
        }
        e0(self.ed.insert_before(i, &seq, 6))?;
        let exit = self.mcx.call("bpexit")?;
        e0(self.ed.insert_after(i, &[push, exit], 1))
    }

    /// A call the recorder models ([`modelled`]): arguments spilled, `before(receiver,
    /// site)`, arguments reloaded; after it, `after[Z|A]([result,] receiver, site)`. A
    /// list's `set(int, E)` and `get(int)` pass their index too (`beforeI`, `afterAI`):
    /// an element is a variable of its own ([`crate::runtime`]'s list model).
    pub(super) fn modelled_call(&mut self, i: usize, bci: u32, ins: &Insn) -> Res {
        let Some(((owner, name, desc), shapes)) = modelled(self.mcx.cf, ins, self.f.jdk) else {
            return Ok(());
        };
        let indexed = (
            name == "set" && desc == LIST_SET,
            name == "get" && desc == LIST_GET,
        );
        let ret_z = desc.ends_with(")Z");
        let wait_with_timeout = name == "wait" && desc.starts_with("(J");
        let ret_a = desc
            .rsplit(')')
            .next()
            .is_some_and(|r| r.starts_with('L') || r.starts_with('['));
        let via = if desc.starts_with("()") {
            stack_top_source(self.mcx.cf, &self.f.insns, i, &self.f.entries)
        } else {
            None
        };
        let s = self.mcx.site(
            SiteKind::Call {
                owner,
                name,
                desc,
                via,
            },
            bci,
        );
        let push = self.mcx.push(s)?;
        let slots = self.arg_slots(&shapes);
        // The index of `set(int, E)` (before the call) or `get(int)` (after it).
        let at = slots.first().copied();
        let (set_at, get_at) = (at.filter(|_| indexed.0), at.filter(|_| indexed.1));
        // `wait(long)`/`wait(long, int)`: its timeout goes to `beforeWait`.
        let timed_wait = at.filter(|_| wait_with_timeout);
        let before = self.mcx.call(if set_at.is_some() {
            "beforeI"
        } else if timed_wait.is_some() {
            "beforeWait"
        } else {
            "before"
        })?;
        let after = self.mcx.call(match (ret_z, ret_a, get_at.is_some()) {
            (true, _, _) => "afterZ",
            (_, true, true) => "afterAI",
            (_, true, false) => "afterA",
            _ => "after",
        })?;
        let t_obj = self.t.obj;
        let mut seq = Vec::with_capacity(2 * shapes.len() + 5);
        for (sh, slot) in shapes.iter().zip(&slots).rev() {
            seq.push(local(sh.store(), *slot));
        }
        seq.extend([
            Insn::new(op::DUP),
            local(op::ASTORE, t_obj),
            Insn::new(op::DUP),
        ]);
        if let Some(slot) = set_at {
            seq.push(local(op::ILOAD, slot));
        }
        if let Some(slot) = timed_wait {
            seq.push(local(shapes[0].load(), slot));
        }
        seq.extend([push.clone(), before]);
        for (sh, slot) in shapes.iter().zip(&slots) {
            seq.push(local(sh.load(), *slot));
        }
        e0(self.ed.insert_before(i, &seq, 5))?;
        let mut aft = Vec::with_capacity(5);
        if ret_z || ret_a {
            aft.push(Insn::new(op::DUP));
        }
        aft.push(local(op::ALOAD, t_obj));
        if let Some(slot) = get_at {
            aft.push(local(op::ILOAD, slot));
        }
        aft.extend([push, after]);
        e0(self.ed.insert_after(i, &aft, 4))
    }

    /// `new C` and `invokestatic C.m` of another class of the program, and
    /// `Class.forName`: `cu(site)` after them (`cuc(class, site)` for `forName`), where
    /// the JVM has initialized the class ([`SiteKind::ClassUse`]). A JDK class's
    /// `<clinit>` is not instrumented, so only `forName` gets a hook among its calls.
    pub(super) fn class_use(&mut self, i: usize, bci: u32, ins: &Insn) -> Res {
        let Arg::Cp(k) = ins.arg else { return Ok(()) };
        let cp = &self.mcx.cf.constant_pool;
        let class = if ins.op == op::NEW {
            let Some(c) = cp.class_name(k) else {
                return Ok(());
            };
            c
        } else {
            let Some((c, n, d)) = cp.member_ref(k) else {
                return Ok(());
            };
            if is_for_name(&c, &n, &d) {
                let kind = SiteKind::ClassUse {
                    class: String::new(),
                };
                let [p, c] = self.mcx.hook(kind, bci, "cuc")?;
                return e0(self.ed.insert_after(i, &[Insn::new(op::DUP), p, c], 2));
            }
            c
        };
        if jdk_class(&class) || class.replace('/', ".") == *self.mcx.ctx.class_dotted {
            return Ok(());
        }
        let [p, c] = self.mcx.hook(SiteKind::ClassUse { class }, bci, "cu")?;
        e0(self.ed.insert_after(i, &[p, c], 1))
    }
}

/// `Class.forName(String)` or `Class.forName(String, boolean, ClassLoader)`.
fn is_for_name(class: &str, name: &str, desc: &str) -> bool {
    class == "java/lang/Class"
        && name == "forName"
        && (desc == "(Ljava/lang/String;)Ljava/lang/Class;"
            || desc == "(Ljava/lang/String;ZLjava/lang/ClassLoader;)Ljava/lang/Class;")
}

/// A class of the JDK, whose `<clinit>` the recorder does not instrument.
fn jdk_class(internal: &str) -> bool {
    ["java/", "javax/", "jdk/", "sun/", "com/sun/", "jrace/"]
        .iter()
        .any(|p| internal.starts_with(p))
}
