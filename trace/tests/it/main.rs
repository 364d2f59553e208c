//! The trace crate's integration tests (the binary log, a writer killed mid-write), one
//! test binary with a module per area.

mod binlog;
mod killed_writer;
