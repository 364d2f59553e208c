//! The class-file layer the instrumenter stands on: parse and write class files with full
//! fidelity, decode bytecode, insert instructions and write the method back with every
//! offset remapped. No crate does this well enough: nothing in Rust computes stack-map
//! frames, and `ristretto_classfile` corrupts about 3% of real StackMapTables. So this
//! module never computes frames from scratch; it keeps the compiler's frames valid by
//! construction.
//!
//! # Pieces and why they exist
//!
//! * [`ClassFile::parse`] / [`ClassFile::to_bytes`] ([`class`], [`constpool`],
//!   [`attributes`]): versions 45 and up, every constant-pool tag (Long/Double take two
//!   slots). Attributes are raw bytes except the ones the rewriter must keep consistent when
//!   code moves — Code (exception table, nested attributes), StackMapTable, LineNumberTable,
//!   LocalVariableTable, LocalVariableTypeTable — and SourceFile, which reports need for
//!   `File.java:LINE`. Decoded forms keep every encoding choice (frame kinds, Utf8 bytes),
//!   so an unmodified class writes back byte-identically; the tests check this for every
//!   class of the JDK. Malformed input is an [`Error`] with the byte offset and what was
//!   expected there, never a panic (the tests fuzz it).
//! * [`summary`]: a class's name, super class, interfaces and fields without the rest;
//!   [`descriptor`]: method descriptors' parts.
//! * [`insn`]: decoding a code array into instructions with offsets (all opcodes, `wide`,
//!   switch padding relative to the method start, jsr/ret, goto_w/jsr_w) and encoding them.
//! * [`edit::CodeEditor`]: insertions, then [`edit::CodeEditor::apply`] re-lays the method
//!   out and remaps branch targets (switch defaults and tables included), switch padding,
//!   the exception table, LineNumberTable, LocalVariable(Type)Table, StackMapTable offset
//!   deltas (a `same` frame whose delta no longer fits becomes `same_frame_extended`) and
//!   `Uninitialized(offset)` types (which keep naming the `new` instruction itself), and
//!   raises max_stack by the caller's stated need. Two additions for method boundaries: a
//!   *prologue* ([`edit::CodeEditor::insert_prologue`]) that runs once per call even when
//!   offset 0 is a loop head, and a *catch-all handler*
//!   ([`edit::CodeEditor::add_catch_all_handler`]) after the last instruction, covering
//!   the original code, listed last in the exception table, with the one new frame it
//!   needs (no locals, stack `[java/lang/Throwable]`, always valid) — how the instrumenter
//!   sees an exception leave a synchronized method.
//!
//! # The frame-boundary rule
//!
//! Code inserted **before** instruction `i` ([`edit::CodeEditor::insert_before`]) becomes
//! part of `i`: every branch, switch case, exception handler (`handler_pc`, and `start_pc`
//! of a range starting at `i`), line number and stack map frame that pointed at `i` now
//! points at the first inserted instruction. The stack map frame at `i` therefore describes
//! the state *before* the inserted code, so that code must be **stack-neutral** (it may
//! push temporaries but must leave the operand stack and the declared locals as it found
//! them) and must not branch, switch, return or throw explicitly (no new frames are
//! needed). Code inserted **after** `i` ([`edit::CodeEditor::insert_after`]) is reached
//! only by falling through from `i`; a jump to `i + 1` skips it. Ranges that end at `i`
//! (exception ranges, local variable scopes) end where the original `i - 1` ends: they
//! cover neither the code inserted after `i - 1` nor the code inserted before `i`.
//!
//! Because inserted code is stack-neutral and frame boundaries move with their
//! instructions, every existing frame stays true, and the only new frames ever needed are
//! copies of existing ones (trampolines, below).
//!
//! # Long branches
//!
//! A `goto`/`jsr` whose offset no longer fits in 16 bits becomes `goto_w`/`jsr_w`. A
//! conditional branch cannot be widened, and the usual fix (invert it around a `goto_w`)
//! would need a new frame for the fall-through, whose types only a data-flow analysis
//! knows. Instead the branch is pointed at a *trampoline*, a `goto_w` to the real target
//! placed right after the closest unconditional instruction (nothing falls into it) outside
//! every exception range (no handler has to accept it), whose frame is a copy of the
//! target's frame. When that happens, the method's StackMapTable is written with full
//! frames only, so no frame is read relative to a different predecessor.
//!
//! # What is refused
//!
//! [`edit::CodeEditor::apply`] returns an error and leaves the class unchanged (including
//! the constant pool) when: the code would exceed 65535 bytes; a conditional branch needs a
//! trampoline and no unconditional instruction lies within 32 KB outside exception ranges;
//! a frame, line number, local variable range, exception range or `Uninitialized` offset
//! does not fall on an instruction boundary (or a `new`); a class of version ≥ 50 needs a
//! trampoline but the method has no StackMapTable. [`edit::CodeEditor::new`] refuses
//! bytecode that does not decode (invalid opcodes, truncated instructions, jumps into the
//! middle of an instruction). Inserted sequences with control flow are refused at insertion.
//!
//! Code-level `RuntimeVisibleTypeAnnotations`/`RuntimeInvisibleTypeAnnotations` hold
//! bytecode offsets this module does not remap; a rewritten method drops them (they are
//! not visible through reflection). Other unknown Code attributes are kept as they are.
//!
//! # Not for the instrumenter to touch
//!
//! HotSpot crashes at startup when `java.lang.Object`'s methods differ from what it
//! expects (found by the JDK test), so Object must never be rewritten. The JDK test
//! instruments the rest of `java.base` and verifies it under `-Xverify:all`.
pub mod attributes;
pub mod class;
pub mod constpool;
pub mod descriptor;
pub mod edit;
pub mod insn;
mod reader;
pub mod summary;

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
