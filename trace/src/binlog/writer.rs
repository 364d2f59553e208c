//! Writing a trace directory: [`TraceWriter`] (the directory and its metadata log),
//! [`ThreadLog`] (one per recording thread, lock-free append), and [`write_trace`] for
//! an in-memory [`Trace`] (used by `jrace convert` and tests).
//!
//! The contract for a recorder: a name (metadata record) must be written before the first
//! event that uses its id is appended, so that whatever a kill leaves is resolvable.

use super::chunklog::ChunkLog;
use super::events::{encode, DeltaState, ENCODE_BUF, MAX_EVENT_RECORD};
use super::meta::*;
use super::{thread_stem, META_LOG_ID, META_STEM};
use crate::model::*;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Tuning of a writer.
#[derive(Clone, Copy, Debug)]
pub struct WriterOptions {
    /// Bytes of raw records per chunk (the size of each `.open` memory map). Larger
    /// chunks compress better; a reader holds one decompressed chunk per thread.
    pub chunk_bytes: usize,
    /// zstd level for sealed chunks.
    pub zstd_level: i32,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            chunk_bytes: 256 * 1024,
            zstd_level: 3,
        }
    }
}

/// Tables whose records are just `(id, name)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Thread,
    /// Static (signature) names of variables: the field, or the array element at a site.
    Static,
    Lock,
    Method,
    Object,
}

struct MetaLog {
    log: ChunkLog,
    buf: Vec<u8>,
}

/// Bytes the metadata log keeps free for [`TraceWriter::set_meta_reserved`].
const META_RESERVE: usize = 1024;

/// `s` cut to at most `max` bytes, at a character boundary.
fn cut_str(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A trace directory being written. Share it between threads (it is `Sync`): metadata
/// records go through one mutex (names are interned rarely); events go through
/// [`ThreadLog`]s, which share nothing.
pub struct TraceWriter {
    dir: PathBuf,
    opts: WriterOptions,
    meta: Mutex<MetaLog>,
}

impl TraceWriter {
    /// Creates the directory (with parents) and its metadata log. Fails if `dir` already
    /// holds a trace.
    pub fn create(dir: &Path) -> io::Result<TraceWriter> {
        TraceWriter::create_with(dir, WriterOptions::default())
    }

    pub fn create_with(dir: &Path, opts: WriterOptions) -> io::Result<TraceWriter> {
        std::fs::create_dir_all(dir)?;
        let mut log = ChunkLog::create(
            dir,
            META_STEM,
            META_LOG_ID,
            opts.chunk_bytes,
            opts.zstd_level,
        )?;
        log.set_reserve(META_RESERVE);
        Ok(TraceWriter {
            dir: dir.to_owned(),
            opts,
            meta: Mutex::new(MetaLog {
                log,
                buf: Vec::new(),
            }),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Opens the log of thread `thread` (`t<ID>.jrl`). One per thread; fails if it exists.
    pub fn thread_log(&self, thread: ThreadId) -> io::Result<ThreadLog> {
        let mut log = ChunkLog::create(
            &self.dir,
            &thread_stem(thread),
            thread,
            self.opts.chunk_bytes,
            self.opts.zstd_level,
        )?;
        log.seal_as_event_columns();
        Ok(ThreadLog {
            thread,
            log,
            delta: DeltaState::default(),
            last: 0,
            events: 0,
        })
    }

    fn meta(&self) -> MutexGuard<'_, MetaLog> {
        // A panic while holding the lock cannot leave a half-written record (records are
        // committed by their tag byte), so a poisoned lock is still usable.
        self.meta.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, f: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        let mut m = self.meta();
        let m = &mut *m;
        m.buf.clear();
        f(&mut m.buf);
        m.log.append(&m.buf)
    }

    /// Names id `id` of `table`.
    pub fn name(&self, table: Table, id: u32, name: &str) -> io::Result<()> {
        let tag = match table {
            Table::Thread => M_THREAD,
            Table::Static => M_STATIC,
            Table::Lock => M_LOCK,
            Table::Method => M_METHOD,
            Table::Object => M_OBJECT,
        };
        self.record(|b| name_record(b, tag, id, name))
    }

    /// Names variable `id` (e.g. `12.account.Account.balance`) and gives its static name id.
    pub fn var(&self, id: VarId, static_id: u32, name: &str) -> io::Result<()> {
        self.record(|b| var_record(b, id, static_id, name))
    }

    /// Names variable `id` by what it is: field `static_id` of object `obj` (0: the static
    /// field) or, with `elem`, element `elem` of array `obj`. Readers name it as [`var`]
    /// would (`12.account.Account.balance`, `12[3]`); the recorder formats nothing.
    ///
    /// [`var`]: TraceWriter::var
    pub fn object_var(
        &self,
        id: VarId,
        static_id: u32,
        obj: u64,
        elem: Option<u32>,
    ) -> io::Result<()> {
        self.record(|b| obj_var_record(b, id, static_id, obj, elem))
    }

    /// Names location `id` by its display token, with details when known.
    pub fn loc(&self, id: LocId, token: &str, detail: Option<&LocDetail>) -> io::Result<()> {
        self.record(|b| loc_record(b, id, token, detail))
    }

    /// Records reachable set `id` of an `enter` event (objects named with [`Table::Object`]).
    pub fn objset(&self, id: ObjSetId, set: &ObjSet) -> io::Result<()> {
        self.record(|b| objset_record(b, id, set))
    }

    /// Records reachable set `id` of an `enter` as its roots (object ids) plus object-table
    /// names always in it; readers expand it (see [`super::heap`]).
    pub fn roots(&self, id: ObjSetId, roots: &[u64], names: &[u32]) -> io::Result<()> {
        self.record(|b| roots_record(b, id, roots, names))
    }

    /// Records object `obj`'s reference slots (their targets' object ids) read at `stamp`.
    pub fn snapshot(&self, stamp: u64, obj: u64, targets: &[u64]) -> io::Result<()> {
        self.record(|b| snap_record(b, stamp, obj, targets))
    }

    /// Records a traced reference write `from.f = to` into a snapshotted object.
    pub fn edge(&self, stamp: u64, from: u64, to: u64) -> io::Result<()> {
        self.record(|b| edge_record(b, stamp, from, to))
    }

    /// Records that object `obj` is the `Thread` of trace thread `thread`.
    pub fn thread_object(&self, obj: u64, thread: ThreadId) -> io::Result<()> {
        self.record(|b| thread_object_record(b, obj, thread))
    }

    /// Records the call stack (frames as locations, innermost first) with which `thread`
    /// first ran the access at `loc`.
    pub fn stack(&self, thread: ThreadId, loc: LocId, frames: &[LocId]) -> io::Result<()> {
        self.record(|b| stack_record(b, thread, loc, frames))
    }

    /// Records a key/value fact (`branches=1`, `cut=1`, `uninstrumented_classes=3`, ...).
    /// A later value for the same key replaces the earlier one.
    pub fn set_meta(&self, key: &str, value: &str) -> io::Result<()> {
        self.record(|b| kv_record(b, key, value))
    }

    /// [`TraceWriter::set_meta`] for the last facts of a trace whose disk may be full (why
    /// recording stopped): written into room the metadata log keeps for them, so it lands
    /// even when nothing can be sealed any more. Key and value are cut to fit.
    pub fn set_meta_reserved(&self, key: &str, value: &str) -> io::Result<()> {
        let mut m = self.meta();
        let m = &mut *m;
        m.buf.clear();
        kv_record(
            &mut m.buf,
            cut_str(key, 64),
            cut_str(value, META_RESERVE / 4),
        );
        m.log.append_reserved(&m.buf)
    }

    /// Seals the metadata log's open chunk (compresses what was written so far).
    pub fn seal_meta(&self) -> io::Result<()> {
        self.meta().log.seal()
    }

    /// Seals the metadata log and writes its end frame, for a writer that cannot be
    /// consumed (the agent keeps it in a global). Later metadata records fail.
    pub fn finish_meta(&self) -> io::Result<()> {
        self.meta().log.finish()
    }

    /// Seals and closes the metadata log. Thread logs are finished by their owners
    /// ([`ThreadLog::finish`], or when dropped).
    pub fn finish(self) -> io::Result<()> {
        let mut m = self.meta.into_inner().unwrap_or_else(|p| p.into_inner());
        m.log.finish()
    }
}

/// The event log of one thread. Owned by that thread: appending takes no lock and
/// touches no shared memory.
pub struct ThreadLog {
    thread: ThreadId,
    log: ChunkLog,
    delta: DeltaState,
    last: u64,
    events: u64,
}

impl ThreadLog {
    pub fn thread(&self) -> ThreadId {
        self.thread
    }

    /// Bytes of this log so far (sealed, compressed frames plus the raw open chunk).
    pub fn bytes(&self) -> u64 {
        self.log.bytes()
    }

    /// Events appended so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Appends `e` (its `thread` is ignored: this log's thread is the event's thread) at
    /// ordering stamp `stamp`, which must not be below the previous one. Only
    /// `FLAG_VALUE` of `e.flags` is stored; the targets of begin, end and branch are not.
    #[inline]
    pub fn append(&mut self, stamp: u64, e: &Event) -> io::Result<()> {
        if stamp < self.last {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "stamp {stamp} is below the previous stamp {} of thread {}",
                    self.last, self.thread
                ),
            ));
        }
        if self.log.remaining() < MAX_EVENT_RECORD {
            self.seal()?;
        }
        let mut buf = [0u8; ENCODE_BUF];
        let fields = encode(&mut self.delta, stamp, e, &mut buf);
        self.log.write_event(&buf, fields)?;
        self.last = stamp;
        self.events += 1;
        Ok(())
    }

    /// Seals the open chunk now (normally done when it is full).
    pub fn seal(&mut self) -> io::Result<()> {
        self.log.seal()?;
        self.delta = DeltaState::default();
        Ok(())
    }

    /// Seals, writes the end frame and removes the `.open` file.
    pub fn finish(mut self) -> io::Result<()> {
        self.log.finish()
    }
}

/// Writes an in-memory trace as a trace directory. Stamps are the events' global
/// indices, so reading it back yields the same events in the same order; names keep
/// their ids. Sets `branches` from [`Trace::has_branches`].
pub fn write_trace(trace: &Trace, dir: &Path) -> io::Result<()> {
    write_trace_with(trace, dir, WriterOptions::default())
}

/// [`write_trace`] with explicit options.
pub fn write_trace_with(trace: &Trace, dir: &Path, opts: WriterOptions) -> io::Result<()> {
    let stamps: Vec<u64> = (0..trace.events.len() as u64).collect();
    write_events(trace, &stamps, &[], dir, opts)
}

/// Writes an in-memory trace with the given stamp per event (non-decreasing within each
/// thread) and metadata, as a recorder with a clock would: to test how the reader merges
/// such stamps (FORMAT.md §7).
pub fn write_trace_stamped(
    trace: &Trace,
    stamps: &[u64],
    meta: &[(&str, &str)],
    dir: &Path,
) -> io::Result<()> {
    write_events(trace, stamps, meta, dir, WriterOptions::default())
}

fn write_events(
    trace: &Trace,
    stamps: &[u64],
    meta: &[(&str, &str)],
    dir: &Path,
    opts: WriterOptions,
) -> io::Result<()> {
    let w = TraceWriter::create_with(dir, opts)?;
    let s = &trace.symbols;
    w.set_meta("branches", if trace.has_branches { "1" } else { "0" })?;
    for (k, v) in meta {
        w.set_meta(k, v)?;
    }
    let tables = [
        (Table::Thread, &s.threads),
        (Table::Static, &s.statics),
        (Table::Lock, &s.locks),
        (Table::Method, &s.methods),
        (Table::Object, &s.objects),
    ];
    for (table, interner) in tables {
        for (id, name) in interner.names().iter().enumerate() {
            w.name(table, id as u32, name)?;
        }
    }
    for (id, name) in s.vars.names().iter().enumerate() {
        w.var(id as u32, s.var_static.get(id).copied().unwrap_or(0), name)?;
    }
    for (id, token) in s.locs.names().iter().enumerate() {
        w.loc(
            id as u32,
            token,
            s.loc_detail.get(id).and_then(Option::as_ref),
        )?;
    }
    for (id, set) in s.objsets.iter().enumerate() {
        w.objset(id as u32, set)?;
    }
    let mut logs: HashMap<ThreadId, ThreadLog> = HashMap::new();
    for (i, e) in trace.events.iter().enumerate() {
        let log = match logs.entry(e.thread) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => v.insert(w.thread_log(e.thread)?),
        };
        log.append(stamps[i], e)?;
    }
    for (_, log) in logs {
        log.finish()?;
    }
    w.finish()
}
