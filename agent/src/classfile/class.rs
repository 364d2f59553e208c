//! The class file as a whole (JVMS §4.1): parse and write.

use super::attributes::{AttrInfo, Attribute, Code, Place};
use super::constpool::{Constant, ConstantPool};
use super::reader::Reader;
use super::{Error, Result};

#[derive(Clone, Debug, PartialEq)]
pub struct ClassFile {
    pub minor_version: u16,
    pub major_version: u16,
    pub constant_pool: ConstantPool,
    pub access_flags: u16,
    pub this_class: u16,
    pub super_class: u16,
    pub interfaces: Vec<u16>,
    pub fields: Vec<Member>,
    pub methods: Vec<Member>,
    pub attributes: Vec<Attribute>,
}

/// A field or a method.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub access_flags: u16,
    pub name_index: u16,
    pub descriptor_index: u16,
    pub attributes: Vec<Attribute>,
}

pub const ACC_STATIC: u16 = 0x0008;

impl Member {
    /// The decoded Code attribute, if any.
    pub fn code(&self) -> Option<&Code> {
        self.attributes.iter().find_map(|a| match &a.info {
            AttrInfo::Code(c) => Some(&**c),
            _ => None,
        })
    }
    pub fn code_mut(&mut self) -> Option<&mut Code> {
        self.attributes.iter_mut().find_map(|a| match &mut a.info {
            AttrInfo::Code(c) => Some(&mut **c),
            _ => None,
        })
    }
}

impl ClassFile {
    /// Parses a class file. Any malformation is an [`Error`] naming the byte offset.
    pub fn parse(bytes: &[u8]) -> Result<ClassFile> {
        let mut r = Reader::new(bytes, 0);
        let magic = r.u32("magic")?;
        if magic != 0xCAFE_BABE {
            return Err(Error::new(
                0,
                format!("magic 0xCAFEBABE, found {magic:#010X}"),
            ));
        }
        let minor_version = r.u16("minor_version")?;
        let major_version = r.u16("major_version")?;
        if !(45..=200).contains(&major_version) {
            return Err(Error::new(
                6,
                format!("a major_version from 45 up, found {major_version}"),
            ));
        }
        let constant_pool = ConstantPool::parse(&mut r)?;
        let access_flags = r.u16("access_flags")?;
        let this_class = r.u16("this_class")?;
        let super_class = r.u16("super_class")?;
        let n = r.u16("interfaces_count")?;
        let mut interfaces = Vec::with_capacity(n as usize);
        for _ in 0..n {
            interfaces.push(r.u16("interface index")?);
        }
        let fields = parse_members(&mut r, &constant_pool, Place::Field)?;
        let methods = parse_members(&mut r, &constant_pool, Place::Method)?;
        let attributes = Attribute::parse_list(&mut r, &constant_pool, Place::Class)?;
        if r.remaining() != 0 {
            return Err(r.err(format!(
                "the end of the class file ({} extra bytes follow)",
                r.remaining()
            )));
        }
        Ok(ClassFile {
            minor_version,
            major_version,
            constant_pool,
            access_flags,
            this_class,
            super_class,
            interfaces,
            fields,
            methods,
            attributes,
        })
    }

    /// Writes the class file. An unmodified parsed class gives back the identical bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4096);
        out.extend_from_slice(&0xCAFE_BABEu32.to_be_bytes());
        out.extend_from_slice(&self.minor_version.to_be_bytes());
        out.extend_from_slice(&self.major_version.to_be_bytes());
        self.constant_pool.write(&mut out);
        for x in [self.access_flags, self.this_class, self.super_class] {
            out.extend_from_slice(&x.to_be_bytes());
        }
        out.extend_from_slice(&(self.interfaces.len() as u16).to_be_bytes());
        for i in &self.interfaces {
            out.extend_from_slice(&i.to_be_bytes());
        }
        for list in [&self.fields, &self.methods] {
            out.extend_from_slice(&(list.len() as u16).to_be_bytes());
            for m in list.iter() {
                for x in [m.access_flags, m.name_index, m.descriptor_index] {
                    out.extend_from_slice(&x.to_be_bytes());
                }
                Attribute::write_list(&m.attributes, &mut out);
            }
        }
        Attribute::write_list(&self.attributes, &mut out);
        out
    }

    /// This class's internal name (`java/util/ArrayList`).
    pub fn name(&self) -> Option<String> {
        self.constant_pool.class_name(self.this_class)
    }

    /// The SourceFile attribute's file name, if present.
    pub fn source_file(&self) -> Option<String> {
        self.attributes.iter().find_map(|a| match a.info {
            AttrInfo::SourceFile(i) => self.constant_pool.utf8(i),
            _ => None,
        })
    }

    pub fn method_name(&self, m: &Member) -> String {
        self.constant_pool.utf8(m.name_index).unwrap_or_default()
    }
    pub fn method_descriptor(&self, m: &Member) -> String {
        self.constant_pool
            .utf8(m.descriptor_index)
            .unwrap_or_default()
    }

    /// Index of the Utf8 entry `name`, added if absent (for new attributes).
    pub fn utf8_index(&mut self, name: &str) -> Result<u16> {
        self.constant_pool.add_utf8(name)
    }

    /// True when `index` is a Utf8 entry equal to `s`.
    pub fn utf8_is(&self, index: u16, s: &str) -> bool {
        matches!(self.constant_pool.get(index), Some(Constant::Utf8(b)) if b == s.as_bytes())
    }
}

fn parse_members(r: &mut Reader, cp: &ConstantPool, place: Place) -> Result<Vec<Member>> {
    let n = r.u16(if place == Place::Field {
        "fields_count"
    } else {
        "methods_count"
    })?;
    let mut v = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let access_flags = r.u16("access_flags")?;
        let name_index = r.u16("name_index")?;
        let descriptor_index = r.u16("descriptor_index")?;
        let attributes = Attribute::parse_list(r, cp, place)?;
        v.push(Member {
            access_flags,
            name_index,
            descriptor_index,
            attributes,
        });
    }
    Ok(v)
}
