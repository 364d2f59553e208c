//! The rules for field accesses: plain hooks, or the stripe lock of a possibly volatile
//! field around the access and its record.

use super::super::shape::{hook_name, local, Shape};
use super::{e0, FieldPlan, Res, Rewrite, ACC_VOLATILE};
use crate::classfile::insn::{op, Arg, Insn};
use crate::sites::SiteKind;

impl Rewrite<'_, '_, '_> {
    /// `getfield`, `putfield`, `getstatic`, `putstatic`: plain hooks, or under the stripe
    /// lock of a possibly volatile field ([`FieldPlan`]).
    pub(super) fn field_access(&mut self, i: usize, bci: u32, ins: &Insn) -> Res {
        let (f, opc) = (self.f, ins.op);
        let instance = opc == op::GETFIELD || opc == op::PUTFIELD;
        if instance && i < f.fields_from {
            return Ok(());
        }
        let Arg::Cp(fi) = ins.arg else { return Ok(()) };
        let Some((owner, fname, fdesc)) = self.mcx.cf.constant_pool.member_ref(fi) else {
            return Ok(());
        };
        let Some(sh) = Shape::of_desc(&fdesc) else {
            return Ok(());
        };
        // A fenced class's plain accesses are synchronization too: under the stripe lock,
        // like a volatile's, so that an ordered write (a CAS, whose record follows it) and
        // a plain read of what it wrote are recorded in the order they happened.
        let plan = match self.mcx.ctx.field_flags(&owner, &fname) {
            Some(fl) if fl & ACC_VOLATILE != 0 => FieldPlan::Locked,
            Some(_) if self.mcx.ctx.fenced && !f.sync_only => FieldPlan::Locked,
            Some(_) if f.jdk || f.sync_only => FieldPlan::Skip,
            Some(_) => FieldPlan::Plain,
            None if f.sync_only => FieldPlan::Skip,
            None => FieldPlan::Locked,
        };
        if plan == FieldPlan::Skip {
            return Ok(());
        }
        let locked = plan == FieldPlan::Locked;
        let (owner, name, desc) = (owner, fname, fdesc);
        let kind = match opc {
            op::GETFIELD => SiteKind::FieldRead { owner, name, desc },
            op::PUTFIELD => SiteKind::FieldWrite { owner, name, desc },
            op::GETSTATIC => SiteKind::StaticRead { owner, name, desc },
            _ => SiteKind::StaticWrite { owner, name, desc },
        };
        let s = self.mcx.site(kind, bci);
        let p = self.mcx.push(s)?;
        match opc {
            op::GETFIELD => self.getfield(i, sh, p, locked),
            op::PUTFIELD => self.putfield(i, sh, p, locked),
            op::GETSTATIC => self.getstatic(i, sh, p, locked),
            _ => self.putstatic(i, sh, p, locked),
        }
    }

    pub(super) fn getfield(&mut self, i: usize, sh: Shape, p: Insn, locked: bool) -> Res {
        let (t_obj, t_lk) = (self.t.obj, self.t.lk);
        if !locked {
            let c = self.mcx.call(hook_name("rd", sh))?;
            e0(self
                .ed
                .insert_before(i, &[Insn::new(op::DUP), local(op::ASTORE, t_obj)], 1))?;
            return e0(self.ed.insert_after(
                i,
                &[Insn::new(sh.dup()), local(op::ALOAD, t_obj), p, c],
                sh.size() + 2,
            ));
        }
        let (lk, c) = (self.mcx.call("lk")?, self.mcx.call(hook_name("rdL", sh))?);
        e0(self.ed.insert_before(
            i,
            &[
                Insn::new(op::DUP),
                local(op::ASTORE, t_obj),
                local(op::ALOAD, t_obj),
                p.clone(),
                lk,
                local(op::ISTORE, t_lk),
            ],
            2,
        ))?;
        e0(self.ed.insert_after(
            i,
            &[
                Insn::new(sh.dup()),
                local(op::ALOAD, t_obj),
                local(op::ILOAD, t_lk),
                p,
                c,
            ],
            sh.size() + 3,
        ))
    }

    pub(super) fn putfield(&mut self, i: usize, sh: Shape, p: Insn, locked: bool) -> Res {
        let (t_val, t_lk) = (self.t.val, self.t.lk);
        let c = self.mcx.call(hook_name("wr", sh))?;
        let mut seq = vec![local(sh.store(), t_val)];
        if locked {
            seq.extend([
                Insn::new(op::DUP),
                p.clone(),
                self.mcx.call("lk")?,
                local(op::ISTORE, t_lk),
            ]);
        }
        seq.extend([
            Insn::new(op::DUP),
            local(sh.load(), t_val),
            p,
            c,
            local(sh.load(), t_val),
        ]);
        e0(self.ed.insert_before(i, &seq, 3))?;
        self.unlock_after(i, locked)
    }

    pub(super) fn getstatic(&mut self, i: usize, sh: Shape, p: Insn, locked: bool) -> Res {
        let t_lk = self.t.lk;
        if !locked {
            let c = self.mcx.call(hook_name("sr", sh))?;
            return e0(self
                .ed
                .insert_after(i, &[Insn::new(sh.dup()), p, c], sh.size() + 1));
        }
        let (lks, c) = (self.mcx.call("lks")?, self.mcx.call(hook_name("srL", sh))?);
        e0(self
            .ed
            .insert_before(i, &[p.clone(), lks, local(op::ISTORE, t_lk)], 1))?;
        e0(self.ed.insert_after(
            i,
            &[Insn::new(sh.dup()), local(op::ILOAD, t_lk), p, c],
            sh.size() + 2,
        ))
    }

    pub(super) fn putstatic(&mut self, i: usize, sh: Shape, p: Insn, locked: bool) -> Res {
        let c = self.mcx.call(hook_name("sw", sh))?;
        let mut seq = Vec::new();
        if locked {
            seq.extend([
                p.clone(),
                self.mcx.call("lks")?,
                local(op::ISTORE, self.t.lk),
            ]);
        }
        seq.extend([Insn::new(sh.dup()), p, c]);
        e0(self.ed.insert_before(i, &seq, sh.size() + 1))?;
        self.unlock_after(i, locked)
    }

    /// `ul` of the stripe a locked write took, once it is done.
    pub(super) fn unlock_after(&mut self, i: usize, locked: bool) -> Res {
        if !locked {
            return Ok(());
        }
        let ul = self.mcx.call("ul")?;
        e0(self
            .ed
            .insert_after(i, &[local(op::ILOAD, self.t.lk), ul], 1))
    }
}
