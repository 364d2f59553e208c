//! The JVMTI agent (libjrace_agent.so) that will record Java programs into trace
//! directories (issue 3).
//!
//! So far it holds the layer the recorder stands on: [`classfile`] reads and writes class
//! files byte-identically and inserts code around instructions with every offset
//! remapped, so that classes can be instrumented in ClassFileLoadHook. The JVMTI side
//! (loading, the hook, the runtime class and its natives, the per-thread logs) is not
//! written yet.

pub mod classfile;
