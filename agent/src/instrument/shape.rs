//! Value shapes (I, J, F, D, A) of descriptors and array instructions, the instructions
//! that load and store them, and the hook named for each.

use crate::classfile::descriptor::method_parts;
use crate::classfile::insn::{op, Arg, Insn};

/// The value shape of a field descriptor or array element: I, J, F, D or A.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Shape {
    I,
    J,
    F,
    D,
    A,
}

impl Shape {
    pub(super) fn of_desc(d: &str) -> Option<Shape> {
        Self::of_first(*d.as_bytes().first()?)
    }
    pub(super) fn of_first(c: u8) -> Option<Shape> {
        Some(match c {
            b'Z' | b'B' | b'C' | b'S' | b'I' => Shape::I,
            b'J' => Shape::J,
            b'F' => Shape::F,
            b'D' => Shape::D,
            b'L' | b'[' => Shape::A,
            _ => return None,
        })
    }
    pub(super) fn size(self) -> u16 {
        match self {
            Shape::J | Shape::D => 2,
            _ => 1,
        }
    }
    pub(super) fn load(self) -> u8 {
        match self {
            Shape::I => 0x15,
            Shape::J => 0x16,
            Shape::F => 0x17,
            Shape::D => 0x18,
            Shape::A => 0x19,
        }
    }
    pub(super) fn store(self) -> u8 {
        self.load() + 0x21
    }
    pub(super) fn dup(self) -> u8 {
        if self.size() == 2 {
            op::DUP2
        } else {
            op::DUP
        }
    }
}

/// (element descriptor, shape) of an array load (0x2e–0x35) or store (0x4f–0x56).
pub(super) fn array_elem(opc: u8) -> Option<(&'static str, Shape)> {
    let k = match opc {
        0x2e..=0x35 => opc - 0x2e,
        0x4f..=0x56 => opc - 0x4f,
        _ => return None,
    };
    Some(match k {
        0 => ("I", Shape::I),
        1 => ("J", Shape::J),
        2 => ("F", Shape::F),
        3 => ("D", Shape::D),
        4 => ("Ljava/lang/Object;", Shape::A),
        5 => ("B", Shape::I),
        6 => ("C", Shape::I),
        _ => ("S", Shape::I),
    })
}

pub(super) fn local(opc: u8, index: u16) -> Insn {
    Insn::with(
        opc,
        Arg::Local {
            index,
            wide: index > 255,
        },
    )
}

pub(super) fn ldc(index: u16) -> Insn {
    if index <= 255 {
        Insn::with(op::LDC, Arg::Cp(index))
    } else {
        Insn::with(op::LDC_W, Arg::Cp(index))
    }
}

/// Parameter shapes of a method descriptor, in order, and the return shape (`None`:
/// void).
pub(super) fn params(desc: &str) -> Option<(Vec<Shape>, Option<Shape>)> {
    let (params, ret) = method_parts(desc)?;
    let shapes = params
        .iter()
        .map(|p| Shape::of_desc(p))
        .collect::<Option<Vec<_>>>()?;
    let ret = if ret == "V" {
        None
    } else {
        Some(Shape::of_desc(ret)?)
    };
    Some((shapes, ret))
}

pub(super) fn hook_name(prefix: &str, s: Shape) -> &'static str {
    // Every combination, so that hook names can be &'static.
    const NAMES: [[&str; 5]; 8] = [
        ["rdI", "rdJ", "rdF", "rdD", "rdA"],
        ["wrI", "wrJ", "wrF", "wrD", "wrA"],
        ["srI", "srJ", "srF", "srD", "srA"],
        ["swI", "swJ", "swF", "swD", "swA"],
        ["arI", "arJ", "arF", "arD", "arA"],
        ["awI", "awJ", "awF", "awD", "awA"],
        ["rdIL", "rdJL", "rdFL", "rdDL", "rdAL"],
        ["srIL", "srJL", "srFL", "srDL", "srAL"],
    ];
    let row = ["rd", "wr", "sr", "sw", "ar", "aw", "rdL", "srL"]
        .iter()
        .position(|p| *p == prefix)
        .unwrap_or(0);
    NAMES[row][s as usize]
}
