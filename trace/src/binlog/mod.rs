//! The binary trace directory the agent writes (layout and encoding: `trace/FORMAT.md`).
//!
//! Why it looks the way it does:
//! - **Per-thread logs, no shared state on the hot path.** Each recording thread owns a
//!   [`ThreadLog`]; appending an event touches only that thread's memory map. A global
//!   order is recovered by the reader from a per-record ordering stamp (merge by
//!   `(stamp, thread)`), so the recorder never needs a shared counter per event.
//! - **Survives `kill -9`.** Records are written into a memory-mapped *open chunk* file;
//!   a record's first (tag) byte is stored last, so a record whose tag is zero was torn
//!   and is dropped, never misread. Full chunks are sealed: zstd-compressed, framed with
//!   a CRC and appended to the log; the open chunk is reset only after the sealed frame is
//!   complete, and chunk numbers tell the reader which copy is current.
//! - **Compact.** Small interned ids, varints, stamp and location deltas, and a tag byte
//!   that carries the kind and flags, then zstd: about 1–3 bytes per event on disk.
//! - **Names as they are interned.** Metadata (names, thread table, key/value facts) goes
//!   through the same chunked log, so a killed JVM's trace still names its files and lines.
//!
//! Modules: [`varint`] (integer coding), `chunklog` (the crash-safe chunked log writer),
//! `logread` (reading one log back chunk by chunk), `events` and `meta` (record codecs),
//! `writer` ([`TraceWriter`], [`ThreadLog`], [`write_trace`]), `reader` ([`TraceReader`])
//! and [`heap`] (reachable sets recorded as roots plus snapshots, expanded while reading).

mod chunklog;
mod columns;
mod decode;
mod events;
pub mod heap;
mod logread;
mod meta;
mod reader;
pub mod varint;
mod writer;

pub use reader::TraceReader;
pub use writer::{
    write_trace, write_trace_stamped, write_trace_with, Table, ThreadLog, TraceWriter,
    WriterOptions,
};

/// Stem of the metadata log: `meta.jrl` (+ `meta.open` while a writer runs).
pub const META_STEM: &str = "meta";

/// Whether `dir` holds a trace the recorder wrote (its metadata log, sealed or still open).
pub fn is_trace_dir(dir: &std::path::Path) -> bool {
    chunklog::sealed_path(dir, META_STEM).exists() || chunklog::open_path(dir, META_STEM).exists()
}
/// Metadata key the agent writes when it stops recording while the program goes on:
/// `max_mb` (the size limit; `1` in older traces) or `write_error`.
pub const META_CUT: &str = "cut";
/// Metadata key with the agent's words about the cut (its agent.log line).
pub const META_CUT_DETAIL: &str = "cut_detail";

/// Metadata key `daemon.ID`, `1` for a thread the agent saw was a daemon thread (one the JVM
/// does not wait for at exit).
pub fn meta_daemon(t: crate::model::ThreadId) -> String {
    format!("daemon.{t}")
}
/// Extension of a log's sealed part.
pub const SEALED_EXT: &str = "jrl";
/// Extension of a log's memory-mapped open chunk.
pub const OPEN_EXT: &str = "open";

/// File name stem of thread `t`'s log: `t<ID>`.
pub fn thread_stem(t: crate::model::ThreadId) -> String {
    format!("t{t}")
}

/// Format version written in every file header.
pub const VERSION: u32 = 1;
/// Log id written in the headers of the metadata log (thread logs carry their thread id).
pub const META_LOG_ID: u32 = u32::MAX;
