//! placeholder
pub mod attributes;
pub mod class;
pub mod constpool;
pub mod edit;
pub mod insn;
mod reader;

pub use attributes::{
    AttrInfo, Attribute, Code, ExceptionEntry, Frame, FrameKind, LineNumber, LocalVar, VType,
};
pub use class::{ClassFile, Member};
pub use constpool::{Constant, ConstantPool};

/// A class-file error: the byte offset (from the start of the class file, or of the code
/// array for bytecode errors) and what was expected there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub offset: usize,
    pub message: String,
}

impl Error {
    pub(crate) fn new(offset: usize, what: impl Into<String>) -> Self {
        Error {
            offset,
            message: what.into(),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte {}: expected {}", self.offset, self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
