//! Attributes. Those the instrumenter must understand or keep consistent when code moves
//! are decoded (Code with its exception table and nested attributes, StackMapTable,
//! LineNumberTable, LocalVariableTable, LocalVariableTypeTable, SourceFile); every other
//! attribute is kept as raw bytes. An attribute is decoded only where the JVMS puts it
//! (SourceFile on the class, Code on a method, the tables inside Code), and the decoded
//! forms keep every choice the compiler made (frame kinds, order) so that writing them
//! back is byte-identical.

use super::constpool::ConstantPool;
use super::reader::Reader;
use super::{Error, Result};

/// Where an attribute sits, which decides which names are decoded.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Place {
    Class,
    Field,
    Method,
    Code,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    /// Index of the Utf8 name in the constant pool.
    pub name_index: u16,
    pub info: AttrInfo,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AttrInfo {
    Raw(Vec<u8>),
    Code(Box<Code>),
    StackMapTable(Vec<Frame>),
    LineNumberTable(Vec<LineNumber>),
    LocalVariableTable(Vec<LocalVar>),
    LocalVariableTypeTable(Vec<LocalVar>),
    SourceFile(u16),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Code {
    pub max_stack: u16,
    pub max_locals: u16,
    /// The bytecode, undecoded; see [`super::insn::decode`] and [`super::edit::CodeEditor`].
    pub code: Vec<u8>,
    pub exception_table: Vec<ExceptionEntry>,
    pub attributes: Vec<Attribute>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExceptionEntry {
    pub start_pc: u16,
    pub end_pc: u16,
    pub handler_pc: u16,
    /// 0 for `finally` (any exception).
    pub catch_type: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineNumber {
    pub start_pc: u16,
    pub line: u16,
}

/// An entry of LocalVariableTable (descriptor) or LocalVariableTypeTable (signature).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalVar {
    pub start_pc: u16,
    pub length: u16,
    pub name_index: u16,
    /// Descriptor (LVT) or signature (LVTT) index.
    pub descriptor_index: u16,
    pub index: u16,
}

/// A verification type (JVMS §4.7.4). Long and Double are one entry (two local slots).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VType {
    Top,
    Integer,
    Float,
    Double,
    Long,
    Null,
    UninitializedThis,
    /// A CONSTANT_Class index.
    Object(u16),
    /// The bytecode offset of the `new` instruction that created the object.
    Uninitialized(u16),
}

/// A stack map frame as written, with its offset delta and the form the compiler chose.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub offset_delta: u16,
    pub kind: FrameKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FrameKind {
    /// `same_frame` (types 0–63); written as `same_frame_extended` when the delta is ≥ 64.
    Same,
    SameExtended,
    /// `same_locals_1_stack_item_frame` (64–127); written extended when the delta is ≥ 64.
    SameLocals1(VType),
    SameLocals1Extended(VType),
    /// `chop_frame`: the last k (1–3) locals are absent.
    Chop(u8),
    /// `append_frame`: 1–3 more locals.
    Append(Vec<VType>),
    Full {
        locals: Vec<VType>,
        stack: Vec<VType>,
    },
}

impl Attribute {
    pub(crate) fn parse_list(
        r: &mut Reader,
        cp: &ConstantPool,
        place: Place,
    ) -> Result<Vec<Attribute>> {
        let n = r.u16("attributes_count")?;
        let mut v = Vec::with_capacity(n as usize);
        for _ in 0..n {
            v.push(Attribute::parse(r, cp, place)?);
        }
        Ok(v)
    }

    fn parse(r: &mut Reader, cp: &ConstantPool, place: Place) -> Result<Attribute> {
        let at = r.offset();
        let name_index = r.u16("attribute_name_index")?;
        let name = cp.utf8_bytes(name_index).ok_or_else(|| {
            Error::new(
                at,
                format!("attribute_name_index naming a Utf8 entry, found {name_index}"),
            )
        })?;
        let len = r.u32("attribute_length")? as usize;
        let body_at = r.offset();
        let body = r.bytes(len, "attribute body")?;
        let mut b = Reader::new(body, body_at);
        let info = match (place, name) {
            (Place::Method, b"Code") => AttrInfo::Code(Box::new(Code::parse(&mut b, cp)?)),
            (Place::Code, b"StackMapTable") => AttrInfo::StackMapTable(parse_frames(&mut b)?),
            (Place::Code, b"LineNumberTable") => {
                let n = b.u16("line_number_table_length")?;
                let mut v = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    v.push(LineNumber {
                        start_pc: b.u16("start_pc")?,
                        line: b.u16("line_number")?,
                    });
                }
                AttrInfo::LineNumberTable(v)
            }
            (Place::Code, b"LocalVariableTable") => {
                AttrInfo::LocalVariableTable(parse_lvt(&mut b)?)
            }
            (Place::Code, b"LocalVariableTypeTable") => {
                AttrInfo::LocalVariableTypeTable(parse_lvt(&mut b)?)
            }
            (Place::Class, b"SourceFile") => AttrInfo::SourceFile(b.u16("sourcefile_index")?),
            _ => {
                return Ok(Attribute {
                    name_index,
                    info: AttrInfo::Raw(body.to_vec()),
                })
            }
        };
        if b.remaining() != 0 {
            return Err(b.err(format!(
                "the end of the {} attribute (attribute_length {len} leaves {} bytes unread)",
                String::from_utf8_lossy(name),
                b.remaining()
            )));
        }
        Ok(Attribute { name_index, info })
    }

    pub(crate) fn write_list(list: &[Attribute], out: &mut Vec<u8>) {
        out.extend_from_slice(&(list.len() as u16).to_be_bytes());
        for a in list {
            a.write(out);
        }
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.name_index.to_be_bytes());
        let len_at = out.len();
        out.extend_from_slice(&[0; 4]);
        match &self.info {
            AttrInfo::Raw(b) => out.extend_from_slice(b),
            AttrInfo::Code(c) => c.write(out),
            AttrInfo::StackMapTable(f) => write_frames(f, out),
            AttrInfo::LineNumberTable(v) => {
                put16(out, v.len() as u16);
                for l in v {
                    put16(out, l.start_pc);
                    put16(out, l.line);
                }
            }
            AttrInfo::LocalVariableTable(v) | AttrInfo::LocalVariableTypeTable(v) => {
                put16(out, v.len() as u16);
                for l in v {
                    for x in [
                        l.start_pc,
                        l.length,
                        l.name_index,
                        l.descriptor_index,
                        l.index,
                    ] {
                        put16(out, x);
                    }
                }
            }
            AttrInfo::SourceFile(i) => put16(out, *i),
        }
        let len = (out.len() - len_at - 4) as u32;
        out[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    }
}

pub(crate) fn put16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

fn parse_lvt(b: &mut Reader) -> Result<Vec<LocalVar>> {
    let n = b.u16("local_variable_table_length")?;
    let mut v = Vec::with_capacity(n as usize);
    for _ in 0..n {
        v.push(LocalVar {
            start_pc: b.u16("start_pc")?,
            length: b.u16("length")?,
            name_index: b.u16("name_index")?,
            descriptor_index: b.u16("descriptor_index")?,
            index: b.u16("index")?,
        });
    }
    Ok(v)
}

impl Code {
    fn parse(r: &mut Reader, cp: &ConstantPool) -> Result<Code> {
        let max_stack = r.u16("max_stack")?;
        let max_locals = r.u16("max_locals")?;
        let len_at = r.offset();
        let len = r.u32("code_length")? as usize;
        if len == 0 || len > 65535 {
            return Err(Error::new(
                len_at,
                format!("code_length in 1..=65535, found {len}"),
            ));
        }
        let code = r.bytes(len, "code")?.to_vec();
        let n = r.u16("exception_table_length")?;
        let mut exception_table = Vec::with_capacity(n as usize);
        for _ in 0..n {
            exception_table.push(ExceptionEntry {
                start_pc: r.u16("start_pc")?,
                end_pc: r.u16("end_pc")?,
                handler_pc: r.u16("handler_pc")?,
                catch_type: r.u16("catch_type")?,
            });
        }
        let attributes = Attribute::parse_list(r, cp, Place::Code)?;
        Ok(Code {
            max_stack,
            max_locals,
            code,
            exception_table,
            attributes,
        })
    }

    fn write(&self, out: &mut Vec<u8>) {
        put16(out, self.max_stack);
        put16(out, self.max_locals);
        out.extend_from_slice(&(self.code.len() as u32).to_be_bytes());
        out.extend_from_slice(&self.code);
        put16(out, self.exception_table.len() as u16);
        for e in &self.exception_table {
            for x in [e.start_pc, e.end_pc, e.handler_pc, e.catch_type] {
                put16(out, x);
            }
        }
        Attribute::write_list(&self.attributes, out);
    }
}

fn parse_vtype(b: &mut Reader) -> Result<VType> {
    let at = b.offset();
    Ok(match b.u8("verification_type_info tag")? {
        0 => VType::Top,
        1 => VType::Integer,
        2 => VType::Float,
        3 => VType::Double,
        4 => VType::Long,
        5 => VType::Null,
        6 => VType::UninitializedThis,
        7 => VType::Object(b.u16("Object_variable_info cpool_index")?),
        8 => VType::Uninitialized(b.u16("Uninitialized_variable_info offset")?),
        t => {
            return Err(Error::new(
                at,
                format!("a verification type tag 0-8, found {t}"),
            ))
        }
    })
}

fn write_vtype(v: &VType, out: &mut Vec<u8>) {
    match v {
        VType::Top => out.push(0),
        VType::Integer => out.push(1),
        VType::Float => out.push(2),
        VType::Double => out.push(3),
        VType::Long => out.push(4),
        VType::Null => out.push(5),
        VType::UninitializedThis => out.push(6),
        VType::Object(i) => {
            out.push(7);
            put16(out, *i);
        }
        VType::Uninitialized(o) => {
            out.push(8);
            put16(out, *o);
        }
    }
}

fn parse_frames(b: &mut Reader) -> Result<Vec<Frame>> {
    let n = b.u16("number_of_entries")?;
    let mut v = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let at = b.offset();
        let t = b.u8("stack map frame type")?;
        let f = match t {
            0..=63 => Frame {
                offset_delta: t as u16,
                kind: FrameKind::Same,
            },
            64..=127 => Frame {
                offset_delta: (t - 64) as u16,
                kind: FrameKind::SameLocals1(parse_vtype(b)?),
            },
            247 => {
                let d = b.u16("offset_delta")?;
                Frame {
                    offset_delta: d,
                    kind: FrameKind::SameLocals1Extended(parse_vtype(b)?),
                }
            }
            248..=250 => Frame {
                offset_delta: b.u16("offset_delta")?,
                kind: FrameKind::Chop(251 - t),
            },
            251 => Frame {
                offset_delta: b.u16("offset_delta")?,
                kind: FrameKind::SameExtended,
            },
            252..=254 => {
                let d = b.u16("offset_delta")?;
                let mut l = Vec::new();
                for _ in 0..(t - 251) {
                    l.push(parse_vtype(b)?);
                }
                Frame {
                    offset_delta: d,
                    kind: FrameKind::Append(l),
                }
            }
            255 => {
                let d = b.u16("offset_delta")?;
                let nl = b.u16("number_of_locals")?;
                let mut locals = Vec::new();
                for _ in 0..nl {
                    locals.push(parse_vtype(b)?);
                }
                let ns = b.u16("number_of_stack_items")?;
                let mut stack = Vec::new();
                for _ in 0..ns {
                    stack.push(parse_vtype(b)?);
                }
                Frame {
                    offset_delta: d,
                    kind: FrameKind::Full { locals, stack },
                }
            }
            _ => {
                return Err(Error::new(
                    at,
                    format!("a stack map frame type (0-127, 247-255), found reserved type {t}"),
                ))
            }
        };
        v.push(f);
    }
    Ok(v)
}

/// Writes frames in their recorded form; `Same`/`SameLocals1` frames whose delta no longer
/// fits in 0–63 are written in their extended forms.
fn write_frames(frames: &[Frame], out: &mut Vec<u8>) {
    put16(out, frames.len() as u16);
    for f in frames {
        let d = f.offset_delta;
        match &f.kind {
            FrameKind::Same if d < 64 => out.push(d as u8),
            FrameKind::Same | FrameKind::SameExtended => {
                out.push(251);
                put16(out, d);
            }
            FrameKind::SameLocals1(v) if d < 64 => {
                out.push(64 + d as u8);
                write_vtype(v, out);
            }
            FrameKind::SameLocals1(v) | FrameKind::SameLocals1Extended(v) => {
                out.push(247);
                put16(out, d);
                write_vtype(v, out);
            }
            FrameKind::Chop(k) => {
                out.push(251 - k);
                put16(out, d);
            }
            FrameKind::Append(l) => {
                out.push(251 + l.len() as u8);
                put16(out, d);
                for v in l {
                    write_vtype(v, out);
                }
            }
            FrameKind::Full { locals, stack } => {
                out.push(255);
                put16(out, d);
                put16(out, locals.len() as u16);
                for v in locals {
                    write_vtype(v, out);
                }
                put16(out, stack.len() as u16);
                for v in stack {
                    write_vtype(v, out);
                }
            }
        }
    }
}
