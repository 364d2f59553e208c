//! Errors while reading a trace. Every variant says where: file plus line (text) or
//! byte offset (binary), and what was expected.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A `.std` line that does not parse, or that breaks a well-formedness rule.
    #[error("{}:{line}: {msg}", path.display())]
    Line {
        path: PathBuf,
        line: u64,
        msg: String,
    },
    /// A binary trace file with bad content at a byte offset.
    #[error("{}: at byte {offset}: {msg}", path.display())]
    Binary {
        path: PathBuf,
        offset: u64,
        msg: String,
    },
    /// A binary trace whose events break a well-formedness rule.
    #[error("{}: event {event} (thread {thread}): {msg}", path.display())]
    Event {
        path: PathBuf,
        event: u64,
        thread: String,
        msg: String,
    },
    #[error("{}: {msg}", path.display())]
    Other { path: PathBuf, msg: String },
}

impl TraceError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> TraceError {
        TraceError::Io {
            path: path.into(),
            source,
        }
    }
}
