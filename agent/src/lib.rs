//! The JVMTI agent (libjrace_agent.so). It records Java programs into trace directories;
//! until the recorder issue lands it is only this placeholder, so the workspace layout of
//! DESIGN.md §1 is in place.

pub mod classfile;
