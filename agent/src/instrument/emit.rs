//! Per-method state while collecting insertions: site ids (with their locations) and the
//! constant-pool entries of the hooks of `jrace.rt.R` and the wrappers of `jrace.rt.U`.

use super::shape::ldc;
use super::Ctx;
use crate::classfile::insn::{op, Arg, Insn};
use crate::classfile::{ClassFile, Constant};
use crate::sites::{Location, Site, SiteKind, SiteSink};
use std::collections::HashMap;

pub(super) const R: &str = "jrace/rt/R";

/// Constant-pool entries added for the hooks so far (restored with the pool when a
/// method's rewrite is undone).
#[derive(Clone, Default)]
pub(super) struct Pool {
    /// Methodref index of each hook of R.
    pub(super) hooks: HashMap<&'static str, u16>,
    pub(super) r_class: Option<u16>,
    /// Utf8 index of each hook descriptor.
    pub(super) descs: HashMap<&'static str, u16>,
    /// Methodref index of each wrapper of U used, by name and descriptor.
    pub(super) wrappers: HashMap<(String, String), u16>,
    pub(super) u_class: Option<u16>,
}

/// Per-method state while collecting insertions.
pub(super) struct MethodCx<'a, 'f> {
    pub(super) cf: &'a mut ClassFile,
    pub(super) ctx: &'a mut Ctx<'f>,
    pub(super) sink: &'a mut dyn SiteSink,
    pub(super) method: std::sync::Arc<str>,
    pub(super) lines: Vec<(u16, u16)>,
}

impl MethodCx<'_, '_> {
    pub(super) fn site(&mut self, kind: SiteKind, bci: u32) -> i32 {
        let line = match self.lines.partition_point(|(pc, _)| *pc as u32 <= bci) {
            0 => None,
            k => Some(self.lines[k - 1].1 as u32),
        };
        self.sink.site(Site {
            kind,
            loc: Location {
                class: self.ctx.class_dotted.clone(),
                method: self.method.clone(),
                file: self.ctx.file.clone(),
                line,
                bci,
            },
            jdk: self.ctx.jdk,
            fenced: self.ctx.fenced,
        })
    }

    /// `invokestatic jrace/rt/U.name desc` (a wrapper of [`crate::unsafe_ops`]).
    pub(super) fn call_wrapper(&mut self, name: &str, desc: &str) -> Result<Insn, String> {
        let key = (name.to_string(), desc.to_string());
        if let Some(&i) = self.ctx.pool.wrappers.get(&key) {
            return Ok(Insn::with(op::INVOKESTATIC, Arg::Cp(i)));
        }
        let cp = &mut self.cf.constant_pool.entries;
        let pool = &mut self.ctx.pool;
        let class = class_entry(cp, &mut pool.u_class, "jrace/rt/U")?;
        let n = append(cp, Constant::Utf8(name.as_bytes().to_vec()))?;
        let d = append(cp, Constant::Utf8(desc.as_bytes().to_vec()))?;
        let i = method_entry(cp, class, n, d)?;
        pool.wrappers.insert(key, i);
        Ok(Insn::with(op::INVOKESTATIC, Arg::Cp(i)))
    }

    /// The instruction pushing site id `s`.
    pub(super) fn push(&mut self, s: i32) -> Result<Insn, String> {
        Ok(match s {
            0..=5 => Insn::new(op::ICONST_0 + s as u8),
            6..=127 => Insn::with(op::BIPUSH, Arg::I8(s as i8)),
            128..=32767 => Insn::with(op::SIPUSH, Arg::I16(s as i16)),
            _ => {
                // Site ids are unique: no point searching the pool for an equal entry.
                let e = &mut self.cf.constant_pool.entries;
                if e.len() >= 65535 {
                    return Err("room in the constant pool for a site id".into());
                }
                e.push(Constant::Integer(s as u32));
                ldc((e.len() - 1) as u16)
            }
        })
    }

    /// `invokestatic jrace/rt/R.hook` with the hook's descriptor ([`crate::hook_abi`]).
    pub(super) fn call(&mut self, hook: &'static str) -> Result<Insn, String> {
        if let Some(&i) = self.ctx.pool.hooks.get(hook) {
            return Ok(Insn::with(op::INVOKESTATIC, Arg::Cp(i)));
        }
        let cp = &mut self.cf.constant_pool.entries;
        let pool = &mut self.ctx.pool;
        let class = class_entry(cp, &mut pool.r_class, R)?;
        let d = crate::hook_abi::called(hook)
            .ok_or_else(|| format!("a hook of jrace.rt.R, found `{hook}`"))?;
        let desc = match pool.descs.get(d) {
            Some(i) => *i,
            None => {
                let i = append(cp, Constant::Utf8(d.as_bytes().to_vec()))?;
                pool.descs.insert(d, i);
                i
            }
        };
        let n = append(cp, Constant::Utf8(hook.as_bytes().to_vec()))?;
        let i = method_entry(cp, class, n, desc)?;
        pool.hooks.insert(hook, i);
        Ok(Insn::with(op::INVOKESTATIC, Arg::Cp(i)))
    }

    /// `S; invokestatic hook`.
    pub(super) fn hook(
        &mut self,
        kind: SiteKind,
        bci: u32,
        hook: &'static str,
    ) -> Result<[Insn; 2], String> {
        let s = self.site(kind, bci);
        Ok([self.push(s)?, self.call(hook)?])
    }
}

// The hooks' entries are appended without searching the pool for equal ones (which costs a
// scan of the whole pool per entry): a duplicate Utf8 or NameAndType is legal.

/// Appends a constant; its index.
fn append(cp: &mut Vec<Constant>, c: Constant) -> Result<u16, String> {
    if cp.len() >= 65535 {
        return Err("room in the constant pool for the hooks".into());
    }
    cp.push(c);
    Ok((cp.len() - 1) as u16)
}

/// The Class entry of `name`, appended once (`slot` remembers it).
fn class_entry(cp: &mut Vec<Constant>, slot: &mut Option<u16>, name: &str) -> Result<u16, String> {
    if let Some(c) = *slot {
        return Ok(c);
    }
    let n = append(cp, Constant::Utf8(name.as_bytes().to_vec()))?;
    let c = append(cp, Constant::Class(n))?;
    *slot = Some(c);
    Ok(c)
}

/// A Methodref of class `class`, with the name and descriptor at Utf8 indices `name` and
/// `desc`.
fn method_entry(cp: &mut Vec<Constant>, class: u16, name: u16, desc: u16) -> Result<u16, String> {
    let nt = append(cp, Constant::NameAndType(name, desc))?;
    append(cp, Constant::Methodref(class, nt))
}
