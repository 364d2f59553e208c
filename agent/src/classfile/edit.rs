//! Inserting instructions into a method and writing it back with every offset remapped.
//!
//! Size: one file, because the insertion bookkeeping and the re-layout that consumes it
//! share one representation (per-instruction insertions and the offset map).
//!
//! See the module documentation of [`super`] for the rules (frame boundaries, what is
//! refused). In short: code inserted *before* instruction `i` becomes part of `i` — every
//! jump, switch case, exception handler, line number and stack map frame that pointed at
//! `i` now points at the start of the inserted code; code inserted *after* `i` is reached
//! only by falling through from `i`. A prologue runs once at method entry, and a catch-all
//! handler (appended after the code) sees every exception that leaves the method.

use super::attributes::{AttrInfo, Attribute, Code, ExceptionEntry, Frame, FrameKind, VType};
use super::class::{ClassFile, ACC_STATIC};
use super::insn::{self, op, Arg, Insn};
use super::{Error, Result};
use std::collections::BTreeMap;

/// A method's decoded bytecode plus pending insertions. Build it with [`CodeEditor::new`],
/// add code with [`CodeEditor::insert_before`] / [`CodeEditor::insert_after`], and write it
/// with [`CodeEditor::apply`].
#[derive(Clone, Debug)]
pub struct CodeEditor {
    /// The original instructions with their original offsets; jump targets are original
    /// offsets.
    insns: Vec<(u32, Insn)>,
    code_len: u32,
    /// Instruction index at each original offset (`n` at `code_len`), `NONE` elsewhere.
    idx_of: Vec<u32>,
    before: Vec<Vec<Insn>>,
    after: Vec<Vec<Insn>>,
    /// Instructions whose after-code belongs to the exception ranges that start at the
    /// next instruction ([`CodeEditor::insert_after_in_next_ranges`]).
    after_in_next: Vec<bool>,
    /// Code at the very start of the method, run once per call (no jump lands in it).
    prologue: Vec<Insn>,
    /// A catch-all handler after the last instruction: its code (ending in `athrow`) and the
    /// stack depth it needs (the exception included).
    handler: Option<(Vec<Insn>, u16)>,
    /// First instruction the catch-all handler covers (0 = the whole original code).
    handler_from: usize,
    /// A local the inserted code keeps a value of one type in, declared in every stack
    /// map frame (see [`CodeEditor::declare_local`]).
    typed_local: Option<(u16, VType)>,
    extra_stack: u16,
    extra_locals: u16,
    /// An instruction was replaced ([`CodeEditor::replace`]).
    replaced: bool,
}

const NONE: u32 = u32::MAX;

thread_local! {
    /// Where [`CodeEditor::check_seq`] encodes an instruction to check it.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A stack map frame with absolute contents: (original offset, locals, stack).
type AbsFrame = (u32, Vec<VType>, Vec<VType>);

/// What [`CodeEditor::apply`] did, for statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApplyStats {
    pub old_len: u32,
    pub new_len: u32,
    /// `goto`/`jsr` turned into `goto_w`/`jsr_w`.
    pub widened: u32,
    /// Conditional branches redirected through a `goto_w` trampoline.
    pub trampolines: u32,
}

/// New positions of everything, for one choice of widenings and trampolines.
struct Layout {
    /// Start of the code inserted before instruction i (= where jumps to i land); `start[n]`
    /// is the end of the original code and its trampolines (where a catch-all handler goes).
    start: Vec<u32>,
    /// Offset of original instruction i.
    at: Vec<u32>,
    /// End of original instruction i (before its after-code).
    end: Vec<u32>,
    /// Offset of the trampoline of branch instruction i.
    tramp_at: BTreeMap<usize, u32>,
    /// Offset of the catch-all handler (= the end of everything else), if there is one.
    handler_at: Option<u32>,
    /// The new code length.
    total: u32,
}

impl CodeEditor {
    /// Decodes the method's code. Fails on bytecode that does not decode (the offsets in the
    /// error are in the code array).
    pub fn new(code: &Code) -> Result<CodeEditor> {
        let insns = insn::decode(&code.code)?;
        let code_len = code.code.len() as u32;
        let mut idx_of = vec![NONE; code.code.len() + 1];
        for (i, (at, _)) in insns.iter().enumerate() {
            idx_of[*at as usize] = i as u32;
        }
        idx_of[code.code.len()] = insns.len() as u32;
        let n = insns.len();
        Ok(CodeEditor {
            insns,
            code_len,
            idx_of,
            before: vec![Vec::new(); n],
            after: vec![Vec::new(); n],
            after_in_next: vec![false; n],
            prologue: Vec::new(),
            handler: None,
            handler_from: 0,
            typed_local: None,
            extra_stack: 0,
            extra_locals: 0,
            replaced: false,
        })
    }

    /// The original instructions with their original offsets (jump targets are original
    /// offsets too).
    pub fn instructions(&self) -> &[(u32, Insn)] {
        &self.insns
    }
    pub fn len(&self) -> usize {
        self.insns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }
    /// Index of the instruction at an original offset.
    pub fn index_at(&self, offset: u32) -> Option<usize> {
        match self.idx_of.get(offset as usize) {
            Some(&i) if i != NONE && (i as usize) < self.insns.len() => Some(i as usize),
            _ => None,
        }
    }
    /// True when something was inserted.
    pub fn is_modified(&self) -> bool {
        self.replaced
            || !self.prologue.is_empty()
            || self.handler.is_some()
            || self.before.iter().chain(&self.after).any(|v| !v.is_empty())
    }

    fn check_seq(&self, i: usize, seq: &[Insn]) -> Result<()> {
        if i >= self.insns.len() {
            return Err(Error::new(
                self.code_len as usize,
                format!("an instruction index below {}, found {i}", self.insns.len()),
            ));
        }
        for s in seq {
            if s.is_control_flow()
                || matches!(
                    s.arg,
                    Arg::Jump(_) | Arg::TableSwitch { .. } | Arg::LookupSwitch { .. }
                )
            {
                return Err(Error::new(
                    self.insns[i].0 as usize,
                    format!(
                        "inserted code without control flow, found opcode {:#04x}",
                        s.op
                    ),
                ));
            }
            // Encoding checks the operand's shape; one buffer serves every check (a
            // class's instrumentation inserts hundreds of thousands of instructions).
            SCRATCH.with(|b| {
                let mut b = b.borrow_mut();
                b.clear();
                s.encode(&mut b, 0)
            })?;
        }
        Ok(())
    }

    /// Inserts `seq` before instruction `i` (an index into [`Self::instructions`]). Jumps,
    /// handlers, line numbers and frames of instruction `i` move to the inserted code, so
    /// `seq` runs whenever `i` is reached and must leave the operand stack as it found it
    /// (stack-neutral) — the stack map frame at `i` describes the state before `seq`.
    /// `extra_stack` is the stack depth `seq` needs above what is already there. Several
    /// insertions at the same place run in the order they were made. `seq` may not
    /// contain jumps, switches, returns or `athrow`.
    pub fn insert_before(&mut self, i: usize, seq: &[Insn], extra_stack: u16) -> Result<()> {
        self.check_seq(i, seq)?;
        self.before[i].extend_from_slice(seq);
        self.extra_stack = self.extra_stack.max(extra_stack);
        Ok(())
    }

    /// Replaces instruction `i` by `ins`, which must encode to as many bytes and may not
    /// transfer control (an `invokevirtual` by an `invokestatic` of another method, say);
    /// everything that pointed at `i` points at `ins`. The caller keeps the stack right.
    pub fn replace(&mut self, i: usize, ins: Insn) -> Result<()> {
        self.check_seq(i, std::slice::from_ref(&ins))?;
        let (off, old) = &self.insns[i];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        old.encode(&mut a, *off as usize)?;
        ins.encode(&mut b, *off as usize)?;
        if a.len() != b.len() || old.is_control_flow() {
            return Err(Error::new(
                *off as usize,
                format!(
                    "a replacement of the same length, found {} bytes for {}",
                    b.len(),
                    a.len()
                ),
            ));
        }
        self.insns[i].1 = ins;
        self.replaced = true;
        Ok(())
    }

    /// Inserts `seq` after instruction `i`, reached only by falling through from `i` (a jump
    /// to `i + 1` skips it). `i` must not be an unconditional transfer (goto, return, athrow,
    /// switch, ret). The stack after `seq` must equal the stack after `i`.
    pub fn insert_after(&mut self, i: usize, seq: &[Insn], extra_stack: u16) -> Result<()> {
        self.check_seq(i, seq)?;
        if self.insns[i].1.is_unconditional()
            || self.insns[i].1.op == op::JSR
            || self.insns[i].1.op == op::JSR_W
        {
            return Err(Error::new(
                self.insns[i].0 as usize,
                "an instruction that falls through (code after an unconditional transfer is unreachable)",
            ));
        }
        self.after[i].extend_from_slice(seq);
        self.extra_stack = self.extra_stack.max(extra_stack);
        Ok(())
    }

    /// [`Self::insert_after`], with `seq` covered by the exception handlers whose ranges
    /// start at the next instruction. After a `monitorenter`, javac's handler that releases
    /// the monitor starts at the next instruction: code inserted after the `monitorenter`
    /// but outside that handler could leave the method by an exception with the monitor
    /// held, and HotSpot compiles no method whose monitors it cannot prove balanced (such
    /// a method runs interpreted for ever).
    pub fn insert_after_in_next_ranges(
        &mut self,
        i: usize,
        seq: &[Insn],
        extra_stack: u16,
    ) -> Result<()> {
        self.insert_after(i, seq, extra_stack)?;
        self.after_in_next[i] = true;
        Ok(())
    }

    /// Inserts `seq` at the very start of the method, ahead of the code inserted before
    /// instruction 0: it runs once per invocation, even when instruction 0 is the target of
    /// a jump (a loop at the start of the method), because jumps, handlers, line numbers and
    /// frames of instruction 0 land after it. It runs in the method's initial frame (the
    /// locals of the descriptor, an empty stack) and must be stack-neutral, with no control
    /// flow. Local variable ranges starting at 0 start after it. Several prologues run in
    /// the order they were added.
    pub fn insert_prologue(&mut self, seq: &[Insn], extra_stack: u16) -> Result<()> {
        self.check_seq(0, seq)?;
        self.prologue.extend_from_slice(seq);
        self.extra_stack = self.extra_stack.max(extra_stack);
        Ok(())
    }

    /// Adds an exception handler for any exception (`catch_type` 0) that covers all of the
    /// original code (not the prologue), placed after the last instruction, and listed last
    /// in the exception table so that every existing handler takes precedence. It runs
    /// `seq` with the exception on the stack and then `athrow`s it: `seq` must leave the
    /// stack as it found it, without control flow; `stack` is the depth it needs, the
    /// exception included. The handler gets a stack map frame with no locals and the stack
    /// `[java/lang/Throwable]` (a StackMapTable is created if the method has none; classes
    /// before version 50 get no frame). At most one per method. Not for constructors that
    /// may run code before their `this()`/`super()` call: a handler whose frame has no
    /// `uninitializedThis` cannot cover such code.
    pub fn add_catch_all_handler(&mut self, seq: &[Insn], stack: u16) -> Result<()> {
        if self.handler.is_some() {
            return Err(Error::new(0, "at most one catch-all handler per method"));
        }
        self.check_seq(0, seq)?;
        let mut code = seq.to_vec();
        code.push(Insn::new(op::ATHROW));
        self.handler = Some((code, stack.max(1)));
        Ok(())
    }

    /// [`Self::add_catch_all_handler`] covering the original code from instruction `from`
    /// on (code inserted before `from` included): for constructors, whose code before their
    /// `this()`/`super()` call no handler without `uninitializedThis` may cover.
    pub fn add_catch_all_handler_from(
        &mut self,
        from: usize,
        seq: &[Insn],
        stack: u16,
    ) -> Result<()> {
        if from >= self.insns.len() {
            return Err(Error::new(
                self.code_len as usize,
                format!(
                    "an instruction index below {}, found {from}",
                    self.insns.len()
                ),
            ));
        }
        self.add_catch_all_handler(seq, stack)?;
        self.handler_from = from;
        Ok(())
    }

    /// Declares that local `slot` (one of the slots added with [`Self::add_locals`]) holds
    /// a value of type `t` (`Integer`, `Float` or `Object`) everywhere after the prologue,
    /// which must store it: every stack map frame is rewritten as a full frame that lists
    /// it (padding the locals in between with `Top`), the catch-all handler's frame too, so
    /// that inserted code may load it after any branch target or in any handler.
    pub fn declare_local(&mut self, slot: u16, t: VType) -> Result<()> {
        if matches!(t, VType::Long | VType::Double | VType::Top) {
            return Err(Error::new(0, "a one-slot type for a declared local"));
        }
        self.typed_local = Some((slot, t));
        Ok(())
    }

    /// `locals` (a frame's list, where long and double take two slots) extended to list
    /// the declared local.
    fn with_typed_local(&self, mut locals: Vec<VType>) -> Vec<VType> {
        let Some((slot, t)) = self.typed_local else {
            return locals;
        };
        let mut slots: usize = locals
            .iter()
            .map(|v| {
                if matches!(v, VType::Long | VType::Double) {
                    2
                } else {
                    1
                }
            })
            .sum();
        // Trailing Tops of a frame may already reach it: trim them first.
        while slots > slot as usize && matches!(locals.last(), Some(VType::Top)) {
            locals.pop();
            slots -= 1;
        }
        if slots > slot as usize {
            return locals; // cannot happen for a slot above max_locals
        }
        while slots < slot as usize {
            locals.push(VType::Top);
            slots += 1;
        }
        locals.push(t);
        locals
    }

    /// Reserves `n` more local variable slots (max_locals grows by `n`); returns the first.
    pub fn add_locals(&mut self, current_max_locals: u16, n: u16) -> u16 {
        let first = current_max_locals + self.extra_locals;
        self.extra_locals += n;
        first
    }

    fn idx(&self, off: u32, what: &str) -> Result<usize> {
        match self.idx_of.get(off as usize) {
            Some(&i) if i != NONE => Ok(i as usize),
            _ => Err(Error::new(
                off as usize,
                format!("{what} at an instruction boundary, found offset {off}"),
            )),
        }
    }

    fn seq_len(seq: &[Insn]) -> u32 {
        seq.iter().map(|s| s.len_at(0)).sum()
    }

    fn effective(&self, i: usize, wide: &[bool]) -> Insn {
        let mut ins = self.insns[i].1.clone();
        if wide[i] {
            ins.op = if ins.op == op::JSR {
                op::JSR_W
            } else {
                op::GOTO_W
            };
        }
        ins
    }

    fn layout(&self, wide: &[bool], sites: &BTreeMap<usize, Vec<usize>>) -> Layout {
        let n = self.insns.len();
        let mut start = Vec::with_capacity(n + 1);
        let mut at = Vec::with_capacity(n);
        let mut end = Vec::with_capacity(n);
        let mut tramp_at = BTreeMap::new();
        let mut pos = Self::seq_len(&self.prologue);
        for i in 0..n {
            start.push(pos);
            pos += Self::seq_len(&self.before[i]);
            at.push(pos);
            // A widened goto or jsr is a goto_w or jsr_w: 5 bytes.
            pos += if wide[i] {
                5
            } else {
                self.insns[i].1.len_at(pos)
            };
            end.push(pos);
            pos += Self::seq_len(&self.after[i]);
            if let Some(list) = sites.get(&i) {
                for &b in list {
                    tramp_at.insert(b, pos);
                    pos += 5;
                }
            }
        }
        start.push(pos);
        let handler_at = self.handler.as_ref().map(|_| pos);
        if let Some((h, _)) = &self.handler {
            pos += Self::seq_len(h);
        }
        Layout {
            start,
            at,
            end,
            tramp_at,
            handler_at,
            total: pos,
        }
    }

    /// Where instruction-range ends (exclusive original offsets) go: the end of the last
    /// instruction inside the range, so neither the after-code of that instruction nor a
    /// trampoline behind it is covered.
    fn map_end(&self, l: &Layout, off: u32, what: &str) -> Result<u32> {
        let e = self.idx(off, what)?;
        Ok(if e == 0 { 0 } else { l.end[e - 1] })
    }

    /// Writes the edited code into method `method_index` of `class`: new code array, offsets
    /// remapped in the exception table, LineNumberTable, LocalVariable(Type)Table and
    /// StackMapTable, max_stack raised. On error `class` is left unchanged (constant-pool
    /// entries added on the way are removed again).
    pub fn apply(&self, class: &mut ClassFile, method_index: usize) -> Result<ApplyStats> {
        let cp_len = class.constant_pool.entries.len();
        let r = self.apply_inner(class, method_index);
        if r.is_err() {
            class.constant_pool.entries.truncate(cp_len);
        }
        r
    }

    #[allow(clippy::needless_range_loop)] // instruction indices address parallel vectors
    fn apply_inner(&self, class: &mut ClassFile, method_index: usize) -> Result<ApplyStats> {
        let method = class.methods.get(method_index).ok_or_else(|| {
            Error::new(0, format!("a method index below {}", class.methods.len()))
        })?;
        let old = method
            .code()
            .ok_or_else(|| Error::new(0, "a method with a Code attribute"))?;
        if old.code.len() as u32 != self.code_len {
            return Err(Error::new(
                0,
                "the same Code attribute the editor was built from",
            ));
        }
        let n = self.insns.len();
        let mut stats = ApplyStats {
            old_len: self.code_len,
            ..Default::default()
        };

        // 1. Choose widenings and trampolines until every branch fits.
        let mut wide = vec![false; n];
        let mut tramp: Vec<Option<usize>> = vec![None; n];
        let mut sites: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut layout = self.layout(&wide, &sites);
        let mut rounds = 0;
        loop {
            let mut changed = false;
            for i in 0..n {
                let ins = &self.insns[i].1;
                let Arg::Jump(t) = ins.arg else { continue };
                if ins.op == op::GOTO_W || ins.op == op::JSR_W || wide[i] {
                    continue;
                }
                let dest = match tramp[i] {
                    Some(_) => layout.tramp_at[&i],
                    None => layout.start[self.idx(t, "jump target")?],
                };
                let d = dest as i64 - layout.at[i] as i64;
                if (i16::MIN as i64..=i16::MAX as i64).contains(&d) {
                    continue;
                }
                changed = true;
                if ins.op == op::GOTO || ins.op == op::JSR {
                    wide[i] = true;
                    continue;
                }
                // A conditional branch: jump to a `goto_w target` placed after an
                // unconditional instruction close by.
                if let Some(s) = tramp[i].take() {
                    sites.get_mut(&s).unwrap().retain(|&b| b != i);
                }
                let site = self.pick_site(&layout, i, old)?;
                tramp[i] = Some(site);
                let list = sites.entry(site).or_default();
                list.push(i);
                list.sort_unstable();
            }
            if !changed {
                break;
            }
            rounds += 1;
            if rounds > 64 {
                return Err(Error::new(
                    0,
                    "branch layout to settle within 64 rounds (refused)",
                ));
            }
            layout = self.layout(&wide, &sites);
        }
        let new_len = layout.total;
        if new_len > 65535 {
            return Err(Error::new(
                self.code_len as usize,
                format!("code of at most 65535 bytes after insertion, but it would be {new_len} bytes (method refused)"),
            ));
        }
        stats.new_len = new_len;
        stats.widened = wide.iter().filter(|w| **w).count() as u32;
        stats.trampolines = tramp.iter().flatten().count() as u32;

        // 2. Encode.
        let target = |t: u32| -> Result<u32> { Ok(layout.start[self.idx(t, "jump target")?]) };
        let mut out = Vec::with_capacity(new_len as usize);
        for s in &self.prologue {
            s.encode(&mut out, 0)?;
        }
        for i in 0..n {
            for s in &self.before[i] {
                s.encode(&mut out, 0)?;
            }
            debug_assert_eq!(out.len() as u32, layout.at[i]);
            let mut ins = self.effective(i, &wide);
            ins.arg = match ins.arg {
                Arg::Jump(t) => Arg::Jump(match tramp[i] {
                    Some(_) => layout.tramp_at[&i],
                    None => target(t)?,
                }),
                Arg::TableSwitch {
                    default,
                    low,
                    targets,
                } => Arg::TableSwitch {
                    default: target(default)?,
                    low,
                    targets: targets.iter().map(|t| target(*t)).collect::<Result<_>>()?,
                },
                Arg::LookupSwitch { default, pairs } => Arg::LookupSwitch {
                    default: target(default)?,
                    pairs: pairs
                        .iter()
                        .map(|(k, t)| Ok((*k, target(*t)?)))
                        .collect::<Result<_>>()?,
                },
                a => a,
            };
            ins.encode(&mut out, 0)?;
            for s in &self.after[i] {
                s.encode(&mut out, 0)?;
            }
            if let Some(list) = sites.get(&i) {
                for &b in list {
                    let Arg::Jump(t) = self.insns[b].1.arg else {
                        unreachable!()
                    };
                    Insn::with(op::GOTO_W, Arg::Jump(target(t)?)).encode(&mut out, 0)?;
                }
            }
        }
        if let Some((h, _)) = &self.handler {
            for s in h {
                s.encode(&mut out, 0)?;
            }
        }
        debug_assert_eq!(out.len() as u32, new_len);

        // 3. The tables.
        let start_of =
            |o: u32, what: &str| -> Result<u16> { Ok(layout.start[self.idx(o, what)?] as u16) };
        // A range starting at instruction j starts at j's before-code, or earlier, at the
        // after-code of j - 1 when that belongs to it.
        let range_start = |o: u32| -> Result<u16> {
            let j = self.idx(o, "exception start_pc")?;
            Ok(if j > 0 && self.after_in_next[j - 1] {
                layout.end[j - 1] as u16
            } else {
                layout.start[j] as u16
            })
        };
        let mut exception_table = Vec::with_capacity(old.exception_table.len());
        for e in &old.exception_table {
            exception_table.push(ExceptionEntry {
                start_pc: range_start(e.start_pc as u32)?,
                end_pc: self.map_end(&layout, e.end_pc as u32, "exception end_pc")? as u16,
                handler_pc: start_of(e.handler_pc as u32, "exception handler_pc")?,
                catch_type: e.catch_type,
            });
        }
        if let Some(h) = layout.handler_at {
            exception_table.push(ExceptionEntry {
                start_pc: layout.start[self.handler_from] as u16,
                end_pc: h as u16,
                handler_pc: h as u16,
                catch_type: 0,
            });
        }
        let handler_stack = self.handler.as_ref().map_or(0, |h| h.1 as u32);
        let max_stack = (old.max_stack as u32 + self.extra_stack as u32).max(handler_stack);
        let max_locals = old.max_locals as u32 + self.extra_locals as u32;
        if max_stack > 65535 || max_locals > 65535 {
            return Err(Error::new(0, "max_stack and max_locals below 65536"));
        }
        let frames_abs = if tramp.iter().any(|t| t.is_some()) || self.typed_local.is_some() {
            Some(self.absolute_frames(class, method_index)?)
        } else {
            None
        };
        let handler_frame = match layout.handler_at {
            Some(h) if class.major_version >= 50 => Some((
                h,
                FrameKind::Full {
                    locals: self.with_typed_local(vec![]),
                    stack: vec![VType::Object(
                        class.constant_pool.add_class("java/lang/Throwable")?,
                    )],
                },
            )),
            _ => None,
        };
        let smt_name = if handler_frame.is_some() {
            Some(class.utf8_index("StackMapTable")?)
        } else {
            None
        };
        let old = class.methods[method_index].code().unwrap();
        let mut attributes = Vec::with_capacity(old.attributes.len() + 1);
        for a in &old.attributes {
            let info = match &a.info {
                AttrInfo::LineNumberTable(v) => {
                    let mut w = v.clone();
                    for l in &mut w {
                        l.start_pc = start_of(l.start_pc as u32, "LineNumberTable start_pc")?;
                    }
                    AttrInfo::LineNumberTable(w)
                }
                AttrInfo::LocalVariableTable(v) | AttrInfo::LocalVariableTypeTable(v) => {
                    let mut w = v.clone();
                    for l in &mut w {
                        let s = l.start_pc as u32;
                        let e = s + l.length as u32;
                        let ns = start_of(s, "local variable start_pc")?;
                        let ne = if l.length == 0 {
                            ns as u32
                        } else {
                            self.map_end(&layout, e, "local variable end")?
                        };
                        l.start_pc = ns;
                        l.length = ne.saturating_sub(ns as u32) as u16;
                    }
                    if matches!(a.info, AttrInfo::LocalVariableTable(_)) {
                        AttrInfo::LocalVariableTable(w)
                    } else {
                        AttrInfo::LocalVariableTypeTable(w)
                    }
                }
                AttrInfo::StackMapTable(frames) => AttrInfo::StackMapTable(self.remap_frames(
                    frames,
                    &layout,
                    frames_abs.as_ref(),
                    &tramp,
                    handler_frame.clone(),
                )?),
                AttrInfo::Raw(_)
                    if class.utf8_is(a.name_index, "RuntimeVisibleTypeAnnotations")
                        || class.utf8_is(a.name_index, "RuntimeInvisibleTypeAnnotations") =>
                {
                    // Their targets hold bytecode offsets we do not remap; they are not
                    // visible through reflection, so they are dropped.
                    continue;
                }
                other => other.clone(),
            };
            attributes.push(Attribute {
                name_index: a.name_index,
                info,
            });
        }
        if tramp.iter().any(|t| t.is_some())
            && !old
                .attributes
                .iter()
                .any(|a| matches!(a.info, AttrInfo::StackMapTable(_)))
            && class.major_version >= 50
        {
            return Err(Error::new(
                0,
                "a StackMapTable to take trampoline frames from (refused)",
            ));
        }
        if let (Some(f), Some(name_index)) = (&handler_frame, smt_name) {
            if !attributes
                .iter()
                .any(|a| matches!(a.info, AttrInfo::StackMapTable(_)))
            {
                attributes.push(Attribute {
                    name_index,
                    info: AttrInfo::StackMapTable(self.remap_frames(
                        &[],
                        &layout,
                        frames_abs.as_ref(),
                        &tramp,
                        Some(f.clone()),
                    )?),
                });
            }
        }
        let new_code = Code {
            max_stack: max_stack as u16,
            max_locals: max_locals as u16,
            code: out,
            exception_table,
            attributes,
        };
        *class.methods[method_index].code_mut().unwrap() = new_code;
        Ok(stats)
    }

    /// The closest place for a trampoline of branch `i`: right after an unconditional
    /// instruction (nothing falls into it), outside every exception range (so no handler
    /// has to accept the target's frame there).
    fn pick_site(&self, l: &Layout, i: usize, code: &Code) -> Result<usize> {
        let mut best: Option<(i64, usize)> = None;
        for (k, (_, ins)) in self.insns.iter().enumerate() {
            if !ins.is_unconditional() {
                continue;
            }
            let covered = code.exception_table.iter().any(|e| {
                let (s, t) = (
                    self.idx_of
                        .get(e.start_pc as usize)
                        .copied()
                        .unwrap_or(NONE),
                    self.idx_of.get(e.end_pc as usize).copied().unwrap_or(NONE),
                );
                (s as usize) <= k && k + 1 < t as usize
            });
            if covered {
                continue;
            }
            let pos = l.end[k] as i64 + Self::seq_len(&self.after[k]) as i64;
            let d = (pos - l.at[i] as i64).abs();
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, k));
            }
        }
        match best {
            Some((d, k)) if d < 32000 => Ok(k),
            _ => Err(Error::new(
                self.insns[i].0 as usize,
                "a place for a goto_w trampoline within 32 KB of this branch (method refused)",
            )),
        }
    }

    fn map_vtype(&self, v: &VType, l: &Layout) -> Result<VType> {
        Ok(match v {
            VType::Uninitialized(o) => {
                let i = self.idx(*o as u32, "Uninitialized(offset) of a `new`")?;
                if i >= self.insns.len() || self.insns[i].1.op != op::NEW {
                    return Err(Error::new(
                        *o as usize,
                        "Uninitialized(offset) naming a `new` instruction",
                    ));
                }
                VType::Uninitialized(l.at[i] as u16)
            }
            v => *v,
        })
    }

    fn remap_frames(
        &self,
        frames: &[Frame],
        l: &Layout,
        abs: Option<&Vec<AbsFrame>>,
        tramp: &[Option<usize>],
        last: Option<(u32, FrameKind)>,
    ) -> Result<Vec<Frame>> {
        let mv = |v: &[VType]| {
            v.iter()
                .map(|x| self.map_vtype(x, l))
                .collect::<Result<Vec<_>>>()
        };
        // (new offset, kind)
        let mut out: Vec<(u32, FrameKind)> = Vec::with_capacity(frames.len());
        match abs {
            None => {
                let mut off: i64 = -1;
                for f in frames {
                    off += f.offset_delta as i64 + 1;
                    let i = self.idx(off as u32, "stack map frame")?;
                    let kind = match &f.kind {
                        FrameKind::SameLocals1(v) => FrameKind::SameLocals1(self.map_vtype(v, l)?),
                        FrameKind::SameLocals1Extended(v) => {
                            FrameKind::SameLocals1Extended(self.map_vtype(v, l)?)
                        }
                        FrameKind::Append(v) => FrameKind::Append(mv(v)?),
                        FrameKind::Full { locals, stack } => FrameKind::Full {
                            locals: mv(locals)?,
                            stack: mv(stack)?,
                        },
                        k => k.clone(),
                    };
                    out.push((l.start[i], kind));
                }
            }
            Some(abs) => {
                // Trampolines add frames; every frame is written as a full frame so that
                // none is read relative to a different predecessor.
                let frame_at = |o: u32| abs.iter().find(|f| f.0 == o);
                for (o, locals, stack) in abs {
                    let i = self.idx(*o, "stack map frame")?;
                    out.push((
                        l.start[i],
                        FrameKind::Full {
                            locals: self.with_typed_local(mv(locals)?),
                            stack: mv(stack)?,
                        },
                    ));
                }
                for (b, t) in tramp.iter().enumerate() {
                    if t.is_none() {
                        continue;
                    }
                    let Arg::Jump(target) = self.insns[b].1.arg else {
                        unreachable!()
                    };
                    let (_, locals, stack) = frame_at(target).ok_or_else(|| {
                        Error::new(target as usize, "a stack map frame at a branch target")
                    })?;
                    out.push((
                        l.tramp_at[&b],
                        FrameKind::Full {
                            locals: self.with_typed_local(mv(locals)?),
                            stack: mv(stack)?,
                        },
                    ));
                }
                out.sort_by_key(|f| f.0);
            }
        }
        out.extend(last);
        let mut prev: i64 = -1;
        let mut res = Vec::with_capacity(out.len());
        for (o, kind) in out {
            let d = o as i64 - prev - 1;
            if d < 0 {
                return Err(Error::new(
                    o as usize,
                    "stack map frames at increasing offsets",
                ));
            }
            res.push(Frame {
                offset_delta: d as u16,
                kind,
            });
            prev = o as i64;
        }
        Ok(res)
    }

    /// The StackMapTable as absolute frames (original offset, locals, stack), starting from
    /// the implicit frame of the method descriptor. May add Class constants for parameter
    /// types.
    fn absolute_frames(&self, class: &mut ClassFile, mi: usize) -> Result<Vec<AbsFrame>> {
        let m = &class.methods[mi];
        let name = class.method_name(m);
        let desc = class.method_descriptor(m);
        let is_static = m.access_flags & ACC_STATIC != 0;
        let frames: Vec<Frame> = m
            .code()
            .and_then(|c| {
                c.attributes.iter().find_map(|a| match &a.info {
                    AttrInfo::StackMapTable(f) => Some(f.clone()),
                    _ => None,
                })
            })
            .unwrap_or_default();
        let mut locals = Vec::new();
        if !is_static {
            if name == "<init>" && class.name().as_deref() != Some("java/lang/Object") {
                locals.push(VType::UninitializedThis);
            } else {
                locals.push(VType::Object(class.this_class));
            }
        }
        let params = desc
            .strip_prefix('(')
            .and_then(|s| s.split_once(')'))
            .map(|(p, _)| p.to_string())
            .ok_or_else(|| Error::new(0, format!("a method descriptor, found {desc:?}")))?;
        let b = params.as_bytes();
        let mut k = 0;
        while k < b.len() {
            let s = k;
            while b[k] == b'[' {
                k += 1;
                if k >= b.len() {
                    return Err(Error::new(
                        0,
                        format!("a method descriptor, found {desc:?}"),
                    ));
                }
            }
            if b[k] == b'L' {
                k += params[k..]
                    .find(';')
                    .ok_or_else(|| Error::new(0, format!("a method descriptor, found {desc:?}")))?;
            }
            k += 1;
            let t = &params[s..k];
            locals.push(match t {
                "B" | "C" | "I" | "S" | "Z" => VType::Integer,
                "F" => VType::Float,
                "J" => VType::Long,
                "D" => VType::Double,
                _ if t.starts_with('L') => {
                    VType::Object(class.constant_pool.add_class(&t[1..t.len() - 1])?)
                }
                _ if t.starts_with('[') => VType::Object(class.constant_pool.add_class(t)?),
                _ => {
                    return Err(Error::new(
                        0,
                        format!("a method descriptor, found {desc:?}"),
                    ))
                }
            });
        }
        let mut res = Vec::with_capacity(frames.len());
        let mut off: i64 = -1;
        for f in &frames {
            off += f.offset_delta as i64 + 1;
            let stack = match &f.kind {
                FrameKind::Same | FrameKind::SameExtended => vec![],
                FrameKind::SameLocals1(v) | FrameKind::SameLocals1Extended(v) => vec![*v],
                FrameKind::Chop(c) => {
                    let c = *c as usize;
                    if c > locals.len() {
                        return Err(Error::new(
                            off as usize,
                            "a chop_frame with that many locals to chop",
                        ));
                    }
                    locals.truncate(locals.len() - c);
                    vec![]
                }
                FrameKind::Append(v) => {
                    locals.extend_from_slice(v);
                    vec![]
                }
                FrameKind::Full { locals: l, stack } => {
                    locals = l.clone();
                    stack.clone()
                }
            };
            res.push((off as u32, locals.clone(), stack));
        }
        Ok(res)
    }
}
