//! Bytecode instructions (JVMS §6.5): decoding a code array into instructions with their
//! offsets, and encoding them back. Every opcode 0x00–0xC9 is handled, with `wide`,
//! `tableswitch`/`lookupswitch` (whose padding depends on the instruction's offset from
//! the start of the method), `jsr`/`ret` and `goto_w`/`jsr_w`.
//!
//! Decoded jump targets are *absolute byte offsets* in the original code; the editor
//! ([`super::edit`]) turns them into instruction indices before moving code around.

use super::{Error, Result};

pub mod op {
    pub const NOP: u8 = 0x00;
    pub const ACONST_NULL: u8 = 0x01;
    pub const ICONST_M1: u8 = 0x02;
    pub const ICONST_0: u8 = 0x03;
    pub const BIPUSH: u8 = 0x10;
    pub const SIPUSH: u8 = 0x11;
    pub const LDC: u8 = 0x12;
    pub const LDC_W: u8 = 0x13;
    pub const LDC2_W: u8 = 0x14;
    pub const ILOAD: u8 = 0x15;
    pub const ALOAD: u8 = 0x19;
    pub const ALOAD_0: u8 = 0x2a;
    pub const ISTORE: u8 = 0x36;
    pub const ASTORE: u8 = 0x3a;
    pub const AASTORE: u8 = 0x53;
    pub const POP: u8 = 0x57;
    pub const POP2: u8 = 0x58;
    pub const DUP: u8 = 0x59;
    pub const DUP2: u8 = 0x5c;
    pub const SWAP: u8 = 0x5f;
    pub const IINC: u8 = 0x84;
    pub const IFEQ: u8 = 0x99;
    pub const IF_ACMPNE: u8 = 0xa6;
    pub const GOTO: u8 = 0xa7;
    pub const JSR: u8 = 0xa8;
    pub const RET: u8 = 0xa9;
    pub const TABLESWITCH: u8 = 0xaa;
    pub const LOOKUPSWITCH: u8 = 0xab;
    pub const IRETURN: u8 = 0xac;
    pub const RETURN: u8 = 0xb1;
    pub const GETSTATIC: u8 = 0xb2;
    pub const PUTSTATIC: u8 = 0xb3;
    pub const GETFIELD: u8 = 0xb4;
    pub const PUTFIELD: u8 = 0xb5;
    pub const INVOKEVIRTUAL: u8 = 0xb6;
    pub const INVOKESPECIAL: u8 = 0xb7;
    pub const INVOKESTATIC: u8 = 0xb8;
    pub const INVOKEINTERFACE: u8 = 0xb9;
    pub const INVOKEDYNAMIC: u8 = 0xba;
    pub const NEW: u8 = 0xbb;
    pub const NEWARRAY: u8 = 0xbc;
    pub const ANEWARRAY: u8 = 0xbd;
    pub const ATHROW: u8 = 0xbf;
    pub const CHECKCAST: u8 = 0xc0;
    pub const INSTANCEOF: u8 = 0xc1;
    pub const MONITORENTER: u8 = 0xc2;
    pub const MONITOREXIT: u8 = 0xc3;
    pub const WIDE: u8 = 0xc4;
    pub const MULTIANEWARRAY: u8 = 0xc5;
    pub const IFNULL: u8 = 0xc6;
    pub const IFNONNULL: u8 = 0xc7;
    pub const GOTO_W: u8 = 0xc8;
    pub const JSR_W: u8 = 0xc9;
}

/// One instruction: its opcode and operands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Insn {
    pub op: u8,
    pub arg: Arg,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    None,
    /// `bipush`
    I8(i8),
    /// `sipush`
    I16(i16),
    /// `newarray` element type code
    U8(u8),
    /// xload/xstore/ret; `wide` says whether the `wide` prefix is used (it is kept as found).
    Local {
        index: u16,
        wide: bool,
    },
    Iinc {
        index: u16,
        delta: i16,
        wide: bool,
    },
    /// A constant-pool index: `ldc` (one byte), `ldc_w`, `ldc2_w`, field and method
    /// instructions except invokeinterface/invokedynamic, new, anewarray, checkcast,
    /// instanceof.
    Cp(u16),
    InvokeInterface {
        index: u16,
        count: u8,
    },
    InvokeDynamic(u16),
    MultiANewArray {
        index: u16,
        dims: u8,
    },
    /// if*, goto, jsr (16-bit) and goto_w, jsr_w (32-bit): the target offset.
    Jump(u32),
    TableSwitch {
        default: u32,
        low: i32,
        targets: Vec<u32>,
    },
    LookupSwitch {
        default: u32,
        pairs: Vec<(i32, u32)>,
    },
}

/// The operand shape of each opcode.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    None,
    I8,
    I16,
    U8,
    Local,
    Iinc,
    Cp8,
    Cp16,
    InvokeInterface,
    InvokeDynamic,
    MultiANewArray,
    Jump16,
    Jump32,
    TableSwitch,
    LookupSwitch,
    Wide,
    Invalid,
}

fn shape(op: u8) -> Shape {
    match op {
        0x00..=0x0f => Shape::None,
        0x10 => Shape::I8,
        0x11 => Shape::I16,
        0x12 => Shape::Cp8,
        0x13 | 0x14 => Shape::Cp16,
        0x15..=0x19 => Shape::Local,
        0x1a..=0x35 => Shape::None,
        0x36..=0x3a => Shape::Local,
        0x3b..=0x83 => Shape::None,
        0x84 => Shape::Iinc,
        0x85..=0x98 => Shape::None,
        0x99..=0xa8 => Shape::Jump16,
        0xa9 => Shape::Local,
        0xaa => Shape::TableSwitch,
        0xab => Shape::LookupSwitch,
        0xac..=0xb1 => Shape::None,
        0xb2..=0xb8 => Shape::Cp16,
        0xb9 => Shape::InvokeInterface,
        0xba => Shape::InvokeDynamic,
        0xbb => Shape::Cp16,
        0xbc => Shape::U8,
        0xbd => Shape::Cp16,
        0xbe | 0xbf => Shape::None,
        0xc0 | 0xc1 => Shape::Cp16,
        0xc2 | 0xc3 => Shape::None,
        0xc4 => Shape::Wide,
        0xc5 => Shape::MultiANewArray,
        0xc6 | 0xc7 => Shape::Jump16,
        0xc8 | 0xc9 => Shape::Jump32,
        _ => Shape::Invalid,
    }
}

impl Insn {
    pub fn new(op: u8) -> Insn {
        Insn { op, arg: Arg::None }
    }
    pub fn with(op: u8, arg: Arg) -> Insn {
        Insn { op, arg }
    }

    /// Conditional branches: if*, if_icmp*, if_acmp*, ifnull, ifnonnull.
    pub fn is_conditional_branch(&self) -> bool {
        matches!(self.op, 0x99..=0xa6 | 0xc6 | 0xc7)
    }
    /// Instructions after which control never falls through to the next instruction.
    pub fn is_unconditional(&self) -> bool {
        matches!(
            self.op,
            op::GOTO | op::GOTO_W | op::RET | op::TABLESWITCH | op::LOOKUPSWITCH | op::ATHROW
        ) || (op::IRETURN..=op::RETURN).contains(&self.op)
    }
    /// Anything that transfers control other than falling through (branches, switches,
    /// jsr/ret, returns, athrow).
    pub fn is_control_flow(&self) -> bool {
        self.is_unconditional() || matches!(self.arg, Arg::Jump(_)) || self.op == op::JSR
    }

    /// The encoded length of this instruction when it starts at byte `offset`.
    pub fn len_at(&self, offset: u32) -> u32 {
        match &self.arg {
            Arg::None => 1,
            Arg::I8(_) | Arg::U8(_) => 2,
            Arg::I16(_) => 3,
            Arg::Local { wide, .. } => {
                if *wide {
                    4
                } else {
                    2
                }
            }
            Arg::Iinc { wide, .. } => {
                if *wide {
                    6
                } else {
                    3
                }
            }
            Arg::Cp(_) => {
                if self.op == op::LDC {
                    2
                } else {
                    3
                }
            }
            Arg::InvokeInterface { .. } | Arg::InvokeDynamic(_) => 5,
            Arg::MultiANewArray { .. } => 4,
            Arg::Jump(_) => {
                if self.op == op::GOTO_W || self.op == op::JSR_W {
                    5
                } else {
                    3
                }
            }
            Arg::TableSwitch { targets, .. } => 1 + pad(offset) + 12 + 4 * targets.len() as u32,
            Arg::LookupSwitch { pairs, .. } => 1 + pad(offset) + 8 + 8 * pairs.len() as u32,
        }
    }

    /// Appends the encoding of this instruction, which starts at `out.len()` minus
    /// `method_start` (the offset of the code array's first byte in `out`). Jump targets
    /// are absolute offsets in the code array.
    pub fn encode(&self, out: &mut Vec<u8>, method_start: usize) -> Result<()> {
        let at = (out.len() - method_start) as u32;
        let bad = |what: &str| Err(Error::new(at as usize, what.to_string()));
        let sh = shape(self.op);
        let rel = |t: u32| t as i64 - at as i64;
        match (&self.arg, sh) {
            (Arg::None, Shape::None) => out.push(self.op),
            (Arg::I8(v), Shape::I8) => out.extend_from_slice(&[self.op, *v as u8]),
            (Arg::U8(v), Shape::U8) => out.extend_from_slice(&[self.op, *v]),
            (Arg::I16(v), Shape::I16) => {
                out.push(self.op);
                out.extend_from_slice(&v.to_be_bytes());
            }
            (Arg::Local { index, wide }, Shape::Local) => {
                if *wide {
                    out.extend_from_slice(&[op::WIDE, self.op]);
                    out.extend_from_slice(&index.to_be_bytes());
                } else if *index > 255 {
                    return bad("a local index ≤ 255 without `wide`");
                } else {
                    out.extend_from_slice(&[self.op, *index as u8]);
                }
            }
            (Arg::Iinc { index, delta, wide }, Shape::Iinc) => {
                if *wide {
                    out.extend_from_slice(&[op::WIDE, self.op]);
                    out.extend_from_slice(&index.to_be_bytes());
                    out.extend_from_slice(&delta.to_be_bytes());
                } else if *index > 255 || !(-128..=127).contains(delta) {
                    return bad("an iinc index ≤ 255 and delta in -128..=127 without `wide`");
                } else {
                    out.extend_from_slice(&[self.op, *index as u8, *delta as i8 as u8]);
                }
            }
            (Arg::Cp(i), Shape::Cp8) => {
                if *i > 255 {
                    return bad("an ldc constant index ≤ 255 (use ldc_w)");
                }
                out.extend_from_slice(&[self.op, *i as u8]);
            }
            (Arg::Cp(i), Shape::Cp16) => {
                out.push(self.op);
                out.extend_from_slice(&i.to_be_bytes());
            }
            (Arg::InvokeInterface { index, count }, Shape::InvokeInterface) => {
                out.push(self.op);
                out.extend_from_slice(&index.to_be_bytes());
                out.extend_from_slice(&[*count, 0]);
            }
            (Arg::InvokeDynamic(i), Shape::InvokeDynamic) => {
                out.push(self.op);
                out.extend_from_slice(&i.to_be_bytes());
                out.extend_from_slice(&[0, 0]);
            }
            (Arg::MultiANewArray { index, dims }, Shape::MultiANewArray) => {
                out.push(self.op);
                out.extend_from_slice(&index.to_be_bytes());
                out.push(*dims);
            }
            (Arg::Jump(t), Shape::Jump16) => {
                let d = rel(*t);
                if d < i16::MIN as i64 || d > i16::MAX as i64 {
                    return bad("a branch offset that fits in 16 bits");
                }
                out.push(self.op);
                out.extend_from_slice(&(d as i16).to_be_bytes());
            }
            (Arg::Jump(t), Shape::Jump32) => {
                out.push(self.op);
                out.extend_from_slice(&(rel(*t) as i32).to_be_bytes());
            }
            (
                Arg::TableSwitch {
                    default,
                    low,
                    targets,
                },
                Shape::TableSwitch,
            ) => {
                if targets.is_empty() || (*low as i64 + targets.len() as i64 - 1) > i32::MAX as i64
                {
                    return bad("a tableswitch with 1 or more targets and high ≤ 2^31-1");
                }
                out.push(self.op);
                out.extend(std::iter::repeat_n(0, pad(at) as usize));
                out.extend_from_slice(&(rel(*default) as i32).to_be_bytes());
                out.extend_from_slice(&low.to_be_bytes());
                let high = (*low as i64 + targets.len() as i64 - 1) as i32;
                out.extend_from_slice(&high.to_be_bytes());
                for t in targets {
                    out.extend_from_slice(&(rel(*t) as i32).to_be_bytes());
                }
            }
            (Arg::LookupSwitch { default, pairs }, Shape::LookupSwitch) => {
                out.push(self.op);
                out.extend(std::iter::repeat_n(0, pad(at) as usize));
                out.extend_from_slice(&(rel(*default) as i32).to_be_bytes());
                out.extend_from_slice(&(pairs.len() as i32).to_be_bytes());
                for (k, t) in pairs {
                    out.extend_from_slice(&k.to_be_bytes());
                    out.extend_from_slice(&(rel(*t) as i32).to_be_bytes());
                }
            }
            _ => return bad(&format!("operands matching opcode {:#04x}", self.op)),
        }
        Ok(())
    }
}

/// Padding after a switch opcode at `offset` so that its operands start at a multiple of 4.
fn pad(offset: u32) -> u32 {
    (4 - (offset + 1) % 4) % 4
}

/// Decodes a whole code array into `(offset, instruction)` pairs. Errors name the offset in
/// the code array: truncated instructions, invalid opcodes, `wide` before an opcode it cannot
/// modify, jump targets outside the code or not at the start of an instruction.
pub fn decode(code: &[u8]) -> Result<Vec<(u32, Insn)>> {
    let mut v = Vec::new();
    let mut starts = vec![false; code.len() + 1];
    let mut pc = 0usize;
    while pc < code.len() {
        let (insn, len) = decode_one(code, pc)?;
        starts[pc] = true;
        v.push((pc as u32, insn));
        pc += len;
    }
    for (at, i) in &v {
        let check = |t: u32| -> Result<()> {
            if (t as usize) < code.len() && starts[t as usize] {
                Ok(())
            } else {
                Err(Error::new(
                    *at as usize,
                    format!("a jump target at the start of an instruction, found {t}"),
                ))
            }
        };
        match &i.arg {
            Arg::Jump(t) => check(*t)?,
            Arg::TableSwitch {
                default, targets, ..
            } => {
                check(*default)?;
                for t in targets {
                    check(*t)?;
                }
            }
            Arg::LookupSwitch { default, pairs } => {
                check(*default)?;
                for (_, t) in pairs {
                    check(*t)?;
                }
            }
            _ => {}
        }
    }
    Ok(v)
}

fn decode_one(code: &[u8], pc: usize) -> Result<(Insn, usize)> {
    let need = |n: usize| -> Result<()> {
        if pc + n <= code.len() {
            Ok(())
        } else {
            Err(Error::new(
                pc,
                format!(
                    "{n} bytes of instruction, but the code ends at {}",
                    code.len()
                ),
            ))
        }
    };
    let u16_at = |i: usize| u16::from_be_bytes([code[i], code[i + 1]]);
    let i32_at = |i: usize| i32::from_be_bytes([code[i], code[i + 1], code[i + 2], code[i + 3]]);
    let target = |d: i64| -> Result<u32> {
        let t = pc as i64 + d;
        if t < 0 || t >= code.len() as i64 {
            Err(Error::new(
                pc,
                format!("a jump target inside the code, found {t}"),
            ))
        } else {
            Ok(t as u32)
        }
    };
    let opc = code[pc];
    let sh = shape(opc);
    let (arg, len) = match sh {
        Shape::None => (Arg::None, 1),
        Shape::I8 => {
            need(2)?;
            (Arg::I8(code[pc + 1] as i8), 2)
        }
        Shape::U8 => {
            need(2)?;
            (Arg::U8(code[pc + 1]), 2)
        }
        Shape::I16 => {
            need(3)?;
            (Arg::I16(u16_at(pc + 1) as i16), 3)
        }
        Shape::Local => {
            need(2)?;
            (
                Arg::Local {
                    index: code[pc + 1] as u16,
                    wide: false,
                },
                2,
            )
        }
        Shape::Iinc => {
            need(3)?;
            (
                Arg::Iinc {
                    index: code[pc + 1] as u16,
                    delta: code[pc + 2] as i8 as i16,
                    wide: false,
                },
                3,
            )
        }
        Shape::Cp8 => {
            need(2)?;
            (Arg::Cp(code[pc + 1] as u16), 2)
        }
        Shape::Cp16 => {
            need(3)?;
            (Arg::Cp(u16_at(pc + 1)), 3)
        }
        Shape::InvokeInterface => {
            need(5)?;
            if code[pc + 4] != 0 {
                return Err(Error::new(
                    pc + 4,
                    "a zero fourth operand byte of invokeinterface",
                ));
            }
            (
                Arg::InvokeInterface {
                    index: u16_at(pc + 1),
                    count: code[pc + 3],
                },
                5,
            )
        }
        Shape::InvokeDynamic => {
            need(5)?;
            if code[pc + 3] != 0 || code[pc + 4] != 0 {
                return Err(Error::new(
                    pc + 3,
                    "two zero operand bytes of invokedynamic",
                ));
            }
            (Arg::InvokeDynamic(u16_at(pc + 1)), 5)
        }
        Shape::MultiANewArray => {
            need(4)?;
            (
                Arg::MultiANewArray {
                    index: u16_at(pc + 1),
                    dims: code[pc + 3],
                },
                4,
            )
        }
        Shape::Jump16 => {
            need(3)?;
            (Arg::Jump(target(u16_at(pc + 1) as i16 as i64)?), 3)
        }
        Shape::Jump32 => {
            need(5)?;
            (Arg::Jump(target(i32_at(pc + 1) as i64)?), 5)
        }
        Shape::TableSwitch => {
            let p = pad(pc as u32) as usize;
            need(1 + p + 12)?;
            let b = pc + 1 + p;
            let default = target(i32_at(b) as i64)?;
            let low = i32_at(b + 4);
            let high = i32_at(b + 8);
            if high < low {
                return Err(Error::new(
                    b + 8,
                    format!("tableswitch high ≥ low ({low}), found {high}"),
                ));
            }
            let n = (high as i64 - low as i64 + 1) as usize;
            if n > code.len() {
                return Err(Error::new(
                    b + 4,
                    format!("a tableswitch that fits in the code, found {n} entries"),
                ));
            }
            need(1 + p + 12 + 4 * n)?;
            let mut targets = Vec::with_capacity(n);
            for k in 0..n {
                targets.push(target(i32_at(b + 12 + 4 * k) as i64)?);
            }
            (
                Arg::TableSwitch {
                    default,
                    low,
                    targets,
                },
                1 + p + 12 + 4 * n,
            )
        }
        Shape::LookupSwitch => {
            let p = pad(pc as u32) as usize;
            need(1 + p + 8)?;
            let b = pc + 1 + p;
            let default = target(i32_at(b) as i64)?;
            let n = i32_at(b + 4);
            if n < 0 || n as usize > code.len() {
                return Err(Error::new(
                    b + 4,
                    format!("a lookupswitch npairs that fits in the code, found {n}"),
                ));
            }
            let n = n as usize;
            need(1 + p + 8 + 8 * n)?;
            let mut pairs = Vec::with_capacity(n);
            for k in 0..n {
                pairs.push((
                    i32_at(b + 8 + 8 * k),
                    target(i32_at(b + 12 + 8 * k) as i64)?,
                ));
            }
            (Arg::LookupSwitch { default, pairs }, 1 + p + 8 + 8 * n)
        }
        Shape::Wide => {
            need(2)?;
            let m = code[pc + 1];
            match shape(m) {
                Shape::Local => {
                    need(4)?;
                    return Ok((
                        Insn {
                            op: m,
                            arg: Arg::Local {
                                index: u16_at(pc + 2),
                                wide: true,
                            },
                        },
                        4,
                    ));
                }
                Shape::Iinc => {
                    need(6)?;
                    let arg = Arg::Iinc {
                        index: u16_at(pc + 2),
                        delta: u16_at(pc + 4) as i16,
                        wide: true,
                    };
                    return Ok((Insn { op: m, arg }, 6));
                }
                _ => {
                    return Err(Error::new(
                        pc + 1,
                        format!("a load, store, ret or iinc after wide, found opcode {m:#04x}"),
                    ))
                }
            }
        }
        Shape::Invalid => {
            return Err(Error::new(
                pc,
                format!("an opcode (0x00-0xc9), found {opc:#04x}"),
            ))
        }
    };
    Ok((Insn { op: opc, arg }, len))
}

/// Encodes decoded instructions at their own offsets (no moves): the inverse of [`decode`].
pub fn encode_all(insns: &[(u32, Insn)]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for (at, i) in insns {
        if out.len() != *at as usize {
            return Err(Error::new(
                out.len(),
                format!("instruction offsets in order, found {at}"),
            ));
        }
        i.encode(&mut out, 0)?;
    }
    Ok(out)
}
