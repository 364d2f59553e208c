//! One method's rewrite: [`instrument_method`] decides what the method gets ([`Facts`]),
//! then applies one rule per instruction kind ([`Rewrite`]): field accesses, array
//! accesses, monitors, ordered `Unsafe` calls, `System.arraycopy`, BarrierPair calls,
//! modelled calls, branches and returns, and last the method's exception handlers.

use super::barrier::{bp_call, Barrier, BpCall, BpDecision};
use super::emit::MethodCx;
use super::scan::*;
use super::shape::*;
use super::{Ctx, Options};
use crate::classfile::attributes::{AttrInfo, ExceptionEntry, VType};
use crate::classfile::class::ACC_STATIC;
use crate::classfile::edit::CodeEditor;
use crate::classfile::insn::{op, Insn};
use crate::classfile::ClassFile;
use crate::sites::{SiteKind, SiteSink};
use std::collections::{HashMap, HashSet};

mod calls;
mod fields;

const ACC_VOLATILE: u16 = 0x0040;
const ACC_SYNCHRONIZED: u16 = 0x0020;

/// How a field access is instrumented.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum FieldPlan {
    /// Not at all (JDK classes: plain fields).
    Skip,
    /// The plain access hooks (`rd*`, `wr*`, `sr*`, `sw*`).
    Plain,
    /// Possibly volatile: the stripe lock is taken before the access (`lk`/`lks`, which
    /// decide at run time from the field's flags) and released after it was recorded.
    Locked,
}

type Res = Result<(), String>;

fn e0(r: crate::classfile::Result<()>) -> Res {
    r.map_err(|e| e.to_string())
}

/// What [`instrument_method`] did.
pub(super) struct Done {
    pub(super) changed: bool,
    pub(super) sync_skipped: bool,
    pub(super) bp_sites: u32,
    pub(super) bp_skipped_empty: u32,
}

/// What one method gets, decided before anything is inserted.
struct Facts {
    is_static: bool,
    is_init: bool,
    is_clinit: bool,
    /// A JDK class of [`crate::jdksync`] ([`Options::jdk`]).
    jdk: bool,
    /// Synchronization hooks only (a second try, or a quiet-only JDK class).
    sync_only: bool,
    /// `senter`/`sexit`/`sthrow` for a synchronized method.
    sync: bool,
    /// Synchronized, but without those hooks ([`super::Outcome::sync_skipped`]).
    sync_skipped: bool,
    /// A quiet JDK method ([`crate::jdksync::quiet_method`]): `qenter`/`qexit`.
    quiet: bool,
    /// `run()`/`call()` of a task: `tenter`/`texit`.
    task: bool,
    /// In a constructor, the first instruction whose field accesses may be hooked.
    fields_from: usize,
    this_class: u16,
    insns: Vec<(u32, Insn)>,
    exception_table: Vec<ExceptionEntry>,
    /// Jump targets and handler starts ([`entry_points`]).
    entries: HashSet<u32>,
    /// Ordered `Unsafe` accesses and BarrierPair calls, by instruction index.
    ordered: HashMap<usize, crate::unsafe_ops::Method>,
    bp_calls: HashMap<usize, BpCall>,
    bp_skipped_empty: u32,
}

/// Temporary locals, above the method's own: the object, receiver or array (`obj`), the
/// index (`idx`), a value (`val`, two slots), call arguments from `args`; the stripe a
/// possibly volatile access took (`lk`); the frame's BarrierPair depth (`tok`, -1 until
/// its first `bpenter`).
struct Temps {
    obj: u16,
    idx: u16,
    val: u16,
    args: u16,
    lk: u16,
    tok: Option<u16>,
}

pub(super) fn instrument_method(
    cf: &mut ClassFile,
    mi: usize,
    opts: &Options,
    bp: Option<&Barrier>,
    sync_only: bool,
    ctx: &mut Ctx<'_>,
    sink: &mut dyn SiteSink,
) -> Result<Done, String> {
    let m = &cf.methods[mi];
    let name = cf.method_name(m);
    let code = m.code().ok_or("a method with code")?;
    let lines = line_table(code);
    let max_locals = code.max_locals;
    let mut ed = CodeEditor::new(code).map_err(|e| e.to_string())?;
    let Some(f) = facts(cf, mi, &ed, opts, bp, sync_only, ctx)? else {
        return Ok(Done {
            changed: false,
            sync_skipped: false,
            bp_sites: 0,
            bp_skipped_empty: 0,
        });
    };
    let t = temps(cf, &mut ed, &f, opts, max_locals)?;
    let mcx = MethodCx {
        cf,
        ctx,
        sink,
        method: name.into(),
        lines,
    };
    let mut rw = Rewrite {
        ed,
        mcx,
        f: &f,
        t,
        opts,
    };
    rw.prologue()?;
    for (i, (bci, ins)) in f.insns.iter().enumerate() {
        rw.instruction(i, *bci, ins)?;
    }
    rw.caught_handlers()?;
    rw.catch_all()?;
    let Rewrite { ed, mcx, .. } = rw;
    let changed = ed.is_modified();
    if changed {
        ed.apply(mcx.cf, mi).map_err(|e| e.to_string())?;
    }
    Ok(Done {
        changed,
        sync_skipped: f.sync_skipped,
        bp_sites: if changed { f.bp_calls.len() as u32 } else { 0 },
        bp_skipped_empty: f.bp_skipped_empty,
    })
}

/// (start pc, line) of the method's line number tables, sorted.
fn line_table(code: &crate::classfile::Code) -> Vec<(u16, u16)> {
    let mut lines: Vec<(u16, u16)> = code
        .attributes
        .iter()
        .filter_map(|a| match &a.info {
            AttrInfo::LineNumberTable(v) => Some(v.iter().map(|l| (l.start_pc, l.line))),
            _ => None,
        })
        .flatten()
        .collect();
    lines.sort_unstable();
    lines
}

/// What method `mi` gets; `None` when it gets nothing (a quiet-only JDK class's other
/// methods).
fn facts(
    cf: &ClassFile,
    mi: usize,
    ed: &CodeEditor,
    opts: &Options,
    bp: Option<&Barrier>,
    sync_only: bool,
    ctx: &Ctx<'_>,
) -> Result<Option<Facts>, String> {
    let m = &cf.methods[mi];
    let name = cf.method_name(m);
    let desc = cf.method_descriptor(m);
    let flags = m.access_flags;
    let is_static = flags & ACC_STATIC != 0;
    let code = m.code().ok_or("a method with code")?;
    let insns = ed.instructions().to_vec();
    let (param_shapes, _) =
        params(&desc).ok_or_else(|| format!("a method descriptor, found {desc}"))?;
    let this_ok = !is_static && local0_is_this(code, &insns, param_shapes.len());
    let is_init = name == "<init>";
    let is_clinit = name == "<clinit>";
    let fields_from = if is_init {
        after_super_call(cf, &insns).unwrap_or(usize::MAX)
    } else {
        0
    };
    let sync_wanted = flags & ACC_SYNCHRONIZED != 0 && !is_init && !is_clinit;
    let sync = sync_wanted
        && if is_static {
            cf.major_version >= 49
        } else {
            this_ok
        };
    let jdk = opts.jdk;
    let quiet = jdk && crate::jdksync::quiet_method(&ctx.class_internal, &name) && !is_init;
    if jdk && opts.quiet_only && !quiet {
        return Ok(None);
    }
    let task = opts.tasks
        && !jdk
        && !is_static
        && this_ok
        && ((name == "run" && desc == "()V") || (name == "call" && desc == "()Ljava/lang/Object;"));
    // Ordered Unsafe accesses (see crate::unsafe_ops), then BarrierPair calls.
    let ordered: HashMap<usize, crate::unsafe_ops::Method> = insns
        .iter()
        .enumerate()
        .filter(|_| !opts.quiet_only)
        .filter_map(|(i, (_, ins))| Some((i, ordered_unsafe(cf, ins)?)))
        .collect();
    let mut bp_calls = HashMap::new();
    let mut bp_skipped_empty = 0u32;
    if let Some(bp) = bp {
        for (i, (_, ins)) in insns.iter().enumerate() {
            if ordered.contains_key(&i) {
                continue;
            }
            match bp_call(cf, ctx, bp, ins) {
                BpDecision::No => {}
                BpDecision::Empty => bp_skipped_empty += 1,
                BpDecision::Call(c) => {
                    bp_calls.insert(i, c);
                }
            }
        }
    }
    let exception_table = code.exception_table.clone();
    let handler_pcs: Vec<u16> = exception_table.iter().map(|x| x.handler_pc).collect();
    Ok(Some(Facts {
        is_static,
        is_init,
        is_clinit,
        jdk,
        // A quiet-only class gets its brackets and nothing else.
        sync_only: sync_only || (jdk && opts.quiet_only),
        sync: sync && !opts.quiet_only,
        sync_skipped: sync_wanted && !sync,
        quiet,
        task,
        fields_from,
        this_class: cf.this_class,
        entries: entry_points(&insns, &handler_pcs),
        insns,
        exception_table,
        ordered,
        bp_calls,
        bp_skipped_empty,
    }))
}

/// Declares the temporaries the method's rules need.
fn temps(
    cf: &ClassFile,
    ed: &mut CodeEditor,
    f: &Facts,
    opts: &Options,
    max_locals: u16,
) -> Result<Temps, String> {
    let mut arg_slots = 0u16;
    if opts.calls {
        for (_, ins) in &f.insns {
            if let Some((_, sh)) = modelled(cf, ins, f.jdk) {
                arg_slots = arg_slots.max(sh.iter().map(|s| s.size()).sum());
            }
        }
        // System.arraycopy's five arguments.
        if !f.jdk && f.insns.iter().any(|(_, ins)| is_arraycopy(cf, ins)) {
            arg_slots = arg_slots.max(5);
        }
    }
    for c in f.bp_calls.values() {
        arg_slots = arg_slots.max(c.shapes.iter().map(|s| s.size()).sum());
    }
    let needed = 4u16.max(1 + arg_slots);
    if max_locals as u32 + needed as u32 + 2 > 65535 {
        return Err("room for temporary locals".into());
    }
    let t = ed.add_locals(max_locals, needed);
    let lk = ed.add_locals(max_locals, 1);
    let tok = if f.bp_calls.is_empty() {
        None
    } else {
        let tok = ed.add_locals(max_locals, 1);
        e0(ed.declare_local(tok, VType::Integer))?;
        e0(ed.insert_prologue(&[Insn::new(op::ICONST_M1), local(op::ISTORE, tok)], 1))?;
        Some(tok)
    };
    Ok(Temps {
        obj: t,
        idx: t + 1,
        val: t + 2,
        args: t + 1,
        lk,
        tok,
    })
}

/// One method being rewritten: the editor, sites and hooks, and what the rules read.
struct Rewrite<'a, 'f, 'x> {
    ed: CodeEditor,
    mcx: MethodCx<'a, 'f>,
    f: &'x Facts,
    t: Temps,
    opts: &'x Options,
}

impl Rewrite<'_, '_, '_> {
    /// The `this`-or-class push of the sync hooks.
    fn monitor(&self) -> Insn {
        if self.f.is_static {
            ldc(self.f.this_class)
        } else {
            Insn::new(op::ALOAD_0)
        }
    }

    /// Method entry: `qenter`, `senter`, `tenter`; and in each exception handler, first,
    /// the end of the BarrierPairs this frame opened.
    fn prologue(&mut self) -> Res {
        if self.f.quiet {
            let seq = self.mcx.hook(SiteKind::Quiet, 0, "qenter")?;
            e0(self.ed.insert_prologue(&seq, 1))?;
        }
        if self.f.sync {
            let kind = SiteKind::SyncMethod {
                is_static: self.f.is_static,
            };
            let [p, c] = self.mcx.hook(kind, 0, "senter")?;
            let mo = self.monitor();
            e0(self.ed.insert_prologue(&[mo, p, c], 2))?;
        }
        if self.f.task {
            let [p, c] = self.mcx.hook(SiteKind::Task, 0, "tenter")?;
            e0(self.ed.insert_prologue(&[Insn::new(op::ALOAD_0), p, c], 2))?;
        }
        if let Some(tok) = self.t.tok {
            for (h, i) in self.handler_starts(|_| true) {
                let [p, c] = self.mcx.hook(SiteKind::BarrierUnwind, h, "bpunwind")?;
                e0(self.ed.insert_before(i, &[local(op::ILOAD, tok), p, c], 2))?;
            }
        }
        Ok(())
    }

    /// The rule for instruction `i` at offset `bci`.
    fn instruction(&mut self, i: usize, bci: u32, ins: &Insn) -> Res {
        let (f, opts, opc) = (self.f, self.opts, ins.op);
        let returns = (op::IRETURN..=op::RETURN).contains(&opc);
        if f.jdk && opts.quiet_only && !returns {
            return Ok(());
        }
        let invoke = matches!(
            opc,
            op::INVOKEVIRTUAL | op::INVOKEINTERFACE | op::INVOKESPECIAL | op::INVOKESTATIC
        );
        match opc {
            op::GETFIELD | op::PUTFIELD | op::GETSTATIC | op::PUTSTATIC => {
                self.field_access(i, bci, ins)
            }
            op::INVOKEVIRTUAL if f.ordered.contains_key(&i) => self.ordered_call(i, bci),
            0x2e..=0x35 if !f.sync_only && (!f.jdk || self.mcx.ctx.fenced) => {
                self.array_load(i, bci, opc)
            }
            // In a JDK class too: the JDK stores into an array plainly (under a lock) and
            // reads it with an ordered access elsewhere (a fork/join queue's slots).
            0x4f..=0x56 if !f.sync_only => self.array_store(i, bci, opc),
            op::MONITORENTER => self.monitor_enter(i, bci),
            op::MONITOREXIT => self.monitor_exit(i, bci),
            op::INVOKESTATIC
                if opts.calls && !f.sync_only && !f.jdk && is_arraycopy(self.mcx.cf, ins) =>
            {
                self.arraycopy(i, bci)
            }
            _ if invoke && f.bp_calls.contains_key(&i) => self.barrier_call(i, bci),
            op::NEW | op::INVOKESTATIC if !f.sync_only && !f.jdk => self.class_use(i, bci, ins),
            op::INVOKEVIRTUAL | op::INVOKEINTERFACE | op::INVOKESPECIAL if opts.calls => {
                self.modelled_call(i, bci, ins)
            }
            _ if opts.branches
                && !f.sync_only
                && !f.jdk
                && (ins.is_conditional_branch()
                    || opc == op::TABLESWITCH
                    || opc == op::LOOKUPSWITCH) =>
            {
                let seq = self.mcx.hook(SiteKind::Branch, bci, "br")?;
                e0(self.ed.insert_before(i, &seq, 1))
            }
            _ if returns => self.method_return(i, bci),
            _ => Ok(()),
        }
    }

    /// An ordered Unsafe access: the wrapper of U does it under the stripe lock and
    /// records it (the site is pushed after the arguments).
    fn ordered_call(&mut self, i: usize, bci: u32) -> Res {
        let Some(m) = self.f.ordered.get(&i) else {
            return Ok(());
        };
        let kind = SiteKind::Ordered {
            owner: m.owner.to_string(),
            name: m.name.clone(),
            desc: m.desc.clone(),
        };
        let s = self.mcx.site(kind, bci);
        let p = self.mcx.push(s)?;
        let w = self.mcx.call_wrapper(&m.name, &m.wrapper_desc())?;
        e0(self.ed.insert_before(i, &[p], 1))?;
        e0(self.ed.replace(i, w))
    }

    fn array_load(&mut self, i: usize, bci: u32, opc: u8) -> Res {
        let Some((elem, sh)) = array_elem(opc) else {
            return Ok(());
        };
        let (t_obj, t_idx) = (self.t.obj, self.t.idx);
        let kind = SiteKind::ArrayRead { elem: elem.into() };
        let [p, c] = self.mcx.hook(kind, bci, hook_name("ar", sh))?;
        e0(self.ed.insert_before(
            i,
            &[
                Insn::new(op::DUP2),
                local(op::ISTORE, t_idx),
                local(op::ASTORE, t_obj),
            ],
            2,
        ))?;
        e0(self.ed.insert_after(
            i,
            &[
                Insn::new(sh.dup()),
                local(op::ALOAD, t_obj),
                local(op::ILOAD, t_idx),
                p,
                c,
            ],
            sh.size() + 3,
        ))
    }

    fn array_store(&mut self, i: usize, bci: u32, opc: u8) -> Res {
        let Some((elem, sh)) = array_elem(opc) else {
            return Ok(());
        };
        let t_val = self.t.val;
        let kind = SiteKind::ArrayWrite { elem: elem.into() };
        let [p, c] = self.mcx.hook(kind, bci, hook_name("aw", sh))?;
        e0(self.ed.insert_before(
            i,
            &[
                local(sh.store(), t_val),
                Insn::new(op::DUP2),
                local(sh.load(), t_val),
                p,
                c,
                local(sh.load(), t_val),
            ],
            3,
        ))
    }

    fn monitor_enter(&mut self, i: usize, bci: u32) -> Res {
        let t_obj = self.t.obj;
        let via = stack_top_source(self.mcx.cf, &self.f.insns, i, &self.f.entries);
        let [p, c] = self
            .mcx
            .hook(SiteKind::MonitorEnter { via }, bci, "menter")?;
        e0(self
            .ed
            .insert_before(i, &[Insn::new(op::DUP), local(op::ASTORE, t_obj)], 1))?;
        // Inside the handler that releases the monitor, or the JIT never compiles the
        // method.
        e0(self
            .ed
            .insert_after_in_next_ranges(i, &[local(op::ALOAD, t_obj), p, c], 2))
    }

    fn monitor_exit(&mut self, i: usize, bci: u32) -> Res {
        let [p, c] = self.mcx.hook(SiteKind::MonitorExit, bci, "mexit")?;
        e0(self.ed.insert_before(i, &[Insn::new(op::DUP), p, c], 2))
    }

    /// Before a return: `texit`, `qexit`, `sexit`, `clinit` as they apply.
    fn method_return(&mut self, i: usize, bci: u32) -> Res {
        let f = self.f;
        if f.task {
            let [p, c] = self.mcx.hook(SiteKind::Task, bci, "texit")?;
            e0(self.ed.insert_before(i, &[Insn::new(op::ALOAD_0), p, c], 2))?;
        }
        if f.quiet {
            let seq = self.mcx.hook(SiteKind::Quiet, bci, "qexit")?;
            e0(self.ed.insert_before(i, &seq, 1))?;
        }
        if f.sync {
            let kind = SiteKind::SyncMethod {
                is_static: f.is_static,
            };
            let [p, c] = self.mcx.hook(kind, bci, "sexit")?;
            let mo = self.monitor();
            e0(self.ed.insert_before(i, &[mo, p, c], 2))?;
        }
        if f.is_clinit && !f.jdk {
            let seq = self.mcx.hook(SiteKind::ClassInit, bci, "clinit")?;
            e0(self.ed.insert_before(i, &seq, 1))?;
        }
        Ok(())
    }

    /// Handlers that may catch an InterruptedException: catching one is how a thread
    /// "determines that it has been interrupted" (JLS 17.4.4), which orders it after the
    /// interrupt(). The hook gets the exception (`before(exc, site)`; the runtime checks
    /// its class).
    fn caught_handlers(&mut self) -> Res {
        if !self.opts.calls || self.f.sync_only || self.f.jdk {
            return Ok(());
        }
        let cp = &self.mcx.cf.constant_pool;
        let handlers = self.handler_starts(|x| {
            x.catch_type == 0
                || matches!(
                    cp.class_name(x.catch_type).as_deref(),
                    Some(
                        "java/lang/InterruptedException"
                            | "java/lang/Exception"
                            | "java/lang/Throwable"
                    )
                )
        });
        for (h, i) in handlers {
            let kind = SiteKind::Call {
                owner: "$handler".into(),
                name: "$caught".into(),
                desc: "(Ljava/lang/Throwable;)V".into(),
                via: None,
            };
            let [p, c] = self.mcx.hook(kind, h, "before")?;
            e0(self.ed.insert_before(i, &[Insn::new(op::DUP), p, c], 2))?;
        }
        Ok(())
    }

    /// The start offsets of the exception handlers `keep` selects, once each, in order,
    /// with their instruction indices.
    fn handler_starts(&self, keep: impl Fn(&ExceptionEntry) -> bool) -> Vec<(u32, usize)> {
        let mut pcs: Vec<u16> = (self.f.exception_table.iter())
            .filter(|x| keep(x))
            .map(|x| x.handler_pc)
            .collect();
        pcs.sort_unstable();
        pcs.dedup();
        pcs.into_iter()
            .filter_map(|h| Some((h as u32, self.ed.index_at(h as u32)?)))
            .collect()
    }

    /// The catch-all handler: BarrierPairs of this frame end (before the monitor of a
    /// synchronized method is released), then the exception goes on.
    fn catch_all(&mut self) -> Res {
        let f = self.f;
        let mut seq = Vec::new();
        if let Some(tok) = self.t.tok {
            let [p, c] = self.mcx.hook(SiteKind::BarrierUnwind, 0, "bpunwind")?;
            seq.extend([local(op::ILOAD, tok), p, c]);
        }
        if f.sync {
            let kind = SiteKind::SyncMethod {
                is_static: f.is_static,
            };
            seq.extend(self.mcx.hook(kind, 0, "sthrow")?);
        }
        if f.quiet {
            seq.extend(self.mcx.hook(SiteKind::Quiet, 0, "qexit")?);
        }
        if seq.is_empty() {
            return Ok(());
        }
        if f.is_init {
            // Only after this(...)/super(...): a BarrierPair opened before it is closed by
            // a later unwind below it (see [`Barrier`]).
            if f.fields_from < f.insns.len() {
                e0(self.ed.add_catch_all_handler_from(f.fields_from, &seq, 3))?;
            }
            return Ok(());
        }
        e0(self.ed.add_catch_all_handler(&seq, 3))
    }
}
