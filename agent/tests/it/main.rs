//! The agent's integration tests: class files read and written back, code inserted,
//! classes instrumented and run under `-Xverify:all` (test programs, all of java.base,
//! the Debian jars), BarrierPairs; one test binary with a module per area. One area:
//! `cargo test --release -p jrace-agent --test it -- instrument_jdk::`.

mod barrier_pairs;
mod classfile_insert;
mod classfile_roundtrip;
mod common;
mod instrument;
mod instrument_jdk;
