//! The constant pool: every tag of JVMS §4.4 up to Java 21 (Module, Package, Dynamic
//! included). Long and Double take two slots; the second is [`Constant::Unusable`].
//! Utf8 entries keep their raw *modified UTF-8* bytes so that writing is byte-identical.
//!
//! The instrumenter needs to add references to its runtime class; the `add_*` methods
//! return the index of an existing equal entry or append a new one.

use super::reader::Reader;
use super::{Error, Result};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Constant {
    /// Index 0, and the slot after a Long or Double.
    Unusable,
    Utf8(Vec<u8>),
    Integer(u32),
    Float(u32),
    Long(u64),
    Double(u64),
    Class(u16),
    String(u16),
    Fieldref(u16, u16),
    Methodref(u16, u16),
    InterfaceMethodref(u16, u16),
    NameAndType(u16, u16),
    MethodHandle(u8, u16),
    MethodType(u16),
    Dynamic(u16, u16),
    InvokeDynamic(u16, u16),
    Module(u16),
    Package(u16),
}

impl Constant {
    pub fn tag(&self) -> u8 {
        match self {
            Constant::Unusable => 0,
            Constant::Utf8(_) => 1,
            Constant::Integer(_) => 3,
            Constant::Float(_) => 4,
            Constant::Long(_) => 5,
            Constant::Double(_) => 6,
            Constant::Class(_) => 7,
            Constant::String(_) => 8,
            Constant::Fieldref(..) => 9,
            Constant::Methodref(..) => 10,
            Constant::InterfaceMethodref(..) => 11,
            Constant::NameAndType(..) => 12,
            Constant::MethodHandle(..) => 15,
            Constant::MethodType(_) => 16,
            Constant::Dynamic(..) => 17,
            Constant::InvokeDynamic(..) => 18,
            Constant::Module(_) => 19,
            Constant::Package(_) => 20,
        }
    }
    fn is_wide(&self) -> bool {
        matches!(self, Constant::Long(_) | Constant::Double(_))
    }
}

/// The constant pool; `entries[0]` is [`Constant::Unusable`], so indices are the JVM's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstantPool {
    pub entries: Vec<Constant>,
}

impl ConstantPool {
    pub(crate) fn parse(r: &mut Reader) -> Result<Self> {
        let count = r.u16("constant_pool_count")? as usize;
        if count == 0 {
            return Err(Error::new(
                r.offset() - 2,
                "constant_pool_count of at least 1",
            ));
        }
        let mut entries = Vec::with_capacity(count);
        entries.push(Constant::Unusable);
        while entries.len() < count {
            let at = r.offset();
            let tag = r.u8("constant pool tag")?;
            let c = match tag {
                1 => {
                    let len = r.u16("Utf8 length")? as usize;
                    Constant::Utf8(r.bytes(len, "Utf8 bytes")?.to_vec())
                }
                3 => Constant::Integer(r.u32("Integer")?),
                4 => Constant::Float(r.u32("Float")?),
                5 => Constant::Long(r.u64("Long")?),
                6 => Constant::Double(r.u64("Double")?),
                7 => Constant::Class(r.u16("Class name_index")?),
                8 => Constant::String(r.u16("String string_index")?),
                9 => Constant::Fieldref(r.u16("class_index")?, r.u16("name_and_type_index")?),
                10 => Constant::Methodref(r.u16("class_index")?, r.u16("name_and_type_index")?),
                11 => Constant::InterfaceMethodref(
                    r.u16("class_index")?,
                    r.u16("name_and_type_index")?,
                ),
                12 => Constant::NameAndType(r.u16("name_index")?, r.u16("descriptor_index")?),
                15 => Constant::MethodHandle(r.u8("reference_kind")?, r.u16("reference_index")?),
                16 => Constant::MethodType(r.u16("descriptor_index")?),
                17 => Constant::Dynamic(
                    r.u16("bootstrap_method_attr_index")?,
                    r.u16("name_and_type_index")?,
                ),
                18 => Constant::InvokeDynamic(
                    r.u16("bootstrap_method_attr_index")?,
                    r.u16("name_and_type_index")?,
                ),
                19 => Constant::Module(r.u16("Module name_index")?),
                20 => Constant::Package(r.u16("Package name_index")?),
                t => {
                    return Err(Error::new(
                        at,
                        format!("a constant pool tag (1, 3-12, 15-20), found {t}"),
                    ))
                }
            };
            let wide = c.is_wide();
            entries.push(c);
            if wide {
                if entries.len() >= count {
                    return Err(Error::new(
                        at,
                        "a Long/Double entry whose second slot fits in constant_pool_count",
                    ));
                }
                entries.push(Constant::Unusable);
            }
        }
        Ok(ConstantPool { entries })
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.entries.len() as u16).to_be_bytes());
        for c in &self.entries[1..] {
            if let Constant::Unusable = c {
                continue;
            }
            out.push(c.tag());
            let u16s = |out: &mut Vec<u8>, a: u16, b: u16| {
                out.extend_from_slice(&a.to_be_bytes());
                out.extend_from_slice(&b.to_be_bytes());
            };
            match c {
                Constant::Unusable => {}
                Constant::Utf8(b) => {
                    out.extend_from_slice(&(b.len() as u16).to_be_bytes());
                    out.extend_from_slice(b);
                }
                Constant::Integer(v) | Constant::Float(v) => {
                    out.extend_from_slice(&v.to_be_bytes())
                }
                Constant::Long(v) | Constant::Double(v) => out.extend_from_slice(&v.to_be_bytes()),
                Constant::Class(i)
                | Constant::String(i)
                | Constant::MethodType(i)
                | Constant::Module(i)
                | Constant::Package(i) => out.extend_from_slice(&i.to_be_bytes()),
                Constant::Fieldref(a, b)
                | Constant::Methodref(a, b)
                | Constant::InterfaceMethodref(a, b)
                | Constant::NameAndType(a, b)
                | Constant::Dynamic(a, b)
                | Constant::InvokeDynamic(a, b) => u16s(out, *a, *b),
                Constant::MethodHandle(k, i) => {
                    out.push(*k);
                    out.extend_from_slice(&i.to_be_bytes());
                }
            }
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.len() <= 1
    }

    pub fn get(&self, index: u16) -> Option<&Constant> {
        self.entries.get(index as usize)
    }

    /// The raw modified-UTF-8 bytes of a Utf8 entry.
    pub fn utf8_bytes(&self, index: u16) -> Option<&[u8]> {
        match self.get(index)? {
            Constant::Utf8(b) => Some(b),
            _ => None,
        }
    }
    /// A Utf8 entry decoded to a Rust string (modified UTF-8: `C0 80` NUL and surrogate pairs).
    pub fn utf8(&self, index: u16) -> Option<String> {
        self.utf8_bytes(index).map(decode_modified_utf8)
    }
    /// The internal name (`java/lang/Object`, `[I`) of a Class entry.
    pub fn class_name(&self, index: u16) -> Option<String> {
        match self.get(index)? {
            Constant::Class(n) => self.utf8(*n),
            _ => None,
        }
    }
    /// (class, name, descriptor) of a Fieldref / Methodref / InterfaceMethodref.
    pub fn member_ref(&self, index: u16) -> Option<(String, String, String)> {
        let (c, nt) = match self.get(index)? {
            Constant::Fieldref(c, nt)
            | Constant::Methodref(c, nt)
            | Constant::InterfaceMethodref(c, nt) => (*c, *nt),
            _ => return None,
        };
        let (n, d) = match self.get(nt)? {
            Constant::NameAndType(n, d) => (*n, *d),
            _ => return None,
        };
        Some((self.class_name(c)?, self.utf8(n)?, self.utf8(d)?))
    }

    /// Index of an entry equal to `c`, or a new one appended. Errors when the pool is full.
    pub fn add(&mut self, c: Constant) -> Result<u16> {
        if let Some(i) = self.entries.iter().position(|e| *e == c) {
            if i != 0 {
                return Ok(i as u16);
            }
        }
        let need = if c.is_wide() { 2 } else { 1 };
        if self.entries.len() + need > 65535 {
            return Err(Error::new(
                0,
                "room in the constant pool (it has 65535 entries)",
            ));
        }
        let i = self.entries.len() as u16;
        let wide = c.is_wide();
        self.entries.push(c);
        if wide {
            self.entries.push(Constant::Unusable);
        }
        Ok(i)
    }
    pub fn add_utf8(&mut self, s: &str) -> Result<u16> {
        self.add(Constant::Utf8(encode_modified_utf8(s)))
    }
    pub fn add_class(&mut self, internal_name: &str) -> Result<u16> {
        let n = self.add_utf8(internal_name)?;
        self.add(Constant::Class(n))
    }
    pub fn add_string(&mut self, s: &str) -> Result<u16> {
        let n = self.add_utf8(s)?;
        self.add(Constant::String(n))
    }
    pub fn add_name_and_type(&mut self, name: &str, descriptor: &str) -> Result<u16> {
        let n = self.add_utf8(name)?;
        let d = self.add_utf8(descriptor)?;
        self.add(Constant::NameAndType(n, d))
    }
    pub fn add_fieldref(&mut self, class: &str, name: &str, descriptor: &str) -> Result<u16> {
        let c = self.add_class(class)?;
        let nt = self.add_name_and_type(name, descriptor)?;
        self.add(Constant::Fieldref(c, nt))
    }
    pub fn add_methodref(&mut self, class: &str, name: &str, descriptor: &str) -> Result<u16> {
        let c = self.add_class(class)?;
        let nt = self.add_name_and_type(name, descriptor)?;
        self.add(Constant::Methodref(c, nt))
    }
    pub fn add_interface_methodref(
        &mut self,
        class: &str,
        name: &str,
        descriptor: &str,
    ) -> Result<u16> {
        let c = self.add_class(class)?;
        let nt = self.add_name_and_type(name, descriptor)?;
        self.add(Constant::InterfaceMethodref(c, nt))
    }
}

/// Decodes modified UTF-8 (JVMS §4.4.7); malformed bytes become U+FFFD.
pub fn decode_modified_utf8(b: &[u8]) -> String {
    // Nearly every name is ASCII, which modified UTF-8 encodes as itself (NUL aside, which
    // it writes as C0 80).
    if b.iter().all(|&x| (1..0x80).contains(&x)) {
        return String::from_utf8(b.to_vec()).unwrap_or_default();
    }
    let mut units: Vec<u16> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let x = b[i] as u16;
        if x & 0x80 == 0 {
            units.push(x);
            i += 1;
        } else if x & 0xE0 == 0xC0 && i + 1 < b.len() {
            units.push(((x & 0x1F) << 6) | (b[i + 1] as u16 & 0x3F));
            i += 2;
        } else if x & 0xF0 == 0xE0 && i + 2 < b.len() {
            units.push(
                ((x & 0x0F) << 12) | ((b[i + 1] as u16 & 0x3F) << 6) | (b[i + 2] as u16 & 0x3F),
            );
            i += 3;
        } else {
            units.push(0xFFFD);
            i += 1;
        }
    }
    String::from_utf16_lossy(&units)
}

/// Encodes a string as modified UTF-8 (NUL as `C0 80`, supplementary characters as
/// surrogate pairs).
pub fn encode_modified_utf8(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for u in s.encode_utf16() {
        match u {
            1..=0x7F => out.push(u as u8),
            0 | 0x80..=0x7FF => {
                out.push(0xC0 | (u >> 6) as u8);
                out.push(0x80 | (u & 0x3F) as u8);
            }
            _ => {
                out.push(0xE0 | (u >> 12) as u8);
                out.push(0x80 | ((u >> 6) & 0x3F) as u8);
                out.push(0x80 | (u & 0x3F) as u8);
            }
        }
    }
    out
}
