//! The JVMTI agent (libjrace_agent.so) that records Java programs into trace directories
//! (issue 3).
//!
//! * [`classfile`] reads and writes class files byte-identically and inserts code around
//!   instructions with every offset remapped.
//! * [`sites`] is the contract between the instrumenter and the runtime: what each
//!   instrumented instruction is, by a small integer.
//! * [`instrument`] rewrites a class to call the hooks of `jrace.rt.R`.

pub mod classfile;
pub mod instrument;
pub mod sites;
