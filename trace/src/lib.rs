//! jrace's trace model and formats, shared by the agent and the analyzer.
//!
//! - [`model`]: events and interned names (docs/EVENTS.md).
//! - [`wellformed`]: the rules every trace must follow, checked while reading.
//! - [`std_format`]: the `.std` text format (docs/STD_FORMAT.md), parser and printer.
//! - [`binlog`]: the binary trace directory the agent writes (see `FORMAT.md`).
//! - [`source`]: one streaming interface over both formats ([`open`] picks the format).
//! - [`schedule`]: the schedule and result files of `jrace replay`.
//! - [`tree`]: the TREE redundant-access filter, shared by the agent and the analyzer.

pub mod binlog;
pub mod error;
pub mod interner;
pub mod model;
pub mod schedule;
pub mod source;
pub mod std_format;
pub mod tree;
pub mod wellformed;

pub use error::TraceError;
pub use model::*;
pub use source::{read_all, CutReason, EventSource, MemSource, Truncation};

use std::path::Path;

/// Opens a trace: a directory is an agent trace directory, anything else a `.std` file.
pub fn open(path: &Path) -> Result<Box<dyn EventSource>, TraceError> {
    if path.is_dir() {
        Ok(Box::new(binlog::TraceReader::open(path)?))
    } else {
        Ok(Box::new(std_format::StdReader::open(path)?))
    }
}

/// Loads a trace file or directory into memory.
pub fn load(path: &Path) -> Result<Trace, TraceError> {
    let mut src = open(path)?;
    read_all(src.as_mut())
}
