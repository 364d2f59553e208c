//! [`TraceReader`]: streams the events of all thread logs merged into one global order.
//!
//! Metadata is loaded whole at open (names are needed to resolve ids anyway); events are
//! not: each thread log keeps one decompressed chunk in memory, and a heap merges the
//! threads by `(stamp, thread id)`. Every event is range-checked against the metadata and
//! run through [`Checker`] before it is returned.

use super::events::{decode, DeltaState};
use super::logread::{ChunkOrigin, LogReader};
use super::meta::MetaTables;
use super::varint::Cursor;
use super::{thread_stem, META_LOG_ID, META_STEM, OPEN_EXT, SEALED_EXT};
use crate::error::TraceError;
use crate::model::*;
use crate::source::EventSource;
use crate::wellformed::Checker;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::path::{Path, PathBuf};

/// One thread's log, decoded record by record.
struct ThreadStream {
    thread: ThreadId,
    log: LogReader,
    data: Vec<u8>,
    origin: Option<ChunkOrigin>,
    pos: usize,
    records: u32,
    delta: DeltaState,
    last_stamp: u64,
    head: Option<Event>,
    /// Offset of `head`'s record in the current chunk, for errors about it.
    head_pos: usize,
}

impl ThreadStream {
    /// Decodes the next event of this thread into `head`; returns its stamp.
    fn advance(&mut self) -> Result<Option<u64>, TraceError> {
        loop {
            if let Some(o) = &self.origin {
                let at_end = self.pos >= self.data.len() || (!o.sealed && self.data[self.pos] == 0);
                if !at_end {
                    let mut c = Cursor::new(&self.data, self.pos);
                    let (stamp, e) = decode(&mut self.delta, &mut c, self.thread)
                        .map_err(|m| o.err(self.pos, m))?;
                    if stamp < self.last_stamp {
                        return Err(o.err(self.pos, format!("expected a stamp of at least {} (stamps never decrease within a thread), found {stamp}", self.last_stamp)));
                    }
                    self.head_pos = self.pos;
                    self.pos = c.pos;
                    self.records += 1;
                    self.last_stamp = stamp;
                    self.head = Some(e);
                    return Ok(Some(stamp));
                }
                // An open chunk ends at the first zero tag: anything after it is a record
                // torn by a kill (or never written), and is dropped.
                if o.sealed && self.records != o.records {
                    return Err(o.err(
                        self.pos,
                        format!(
                            "expected {} records (frame header), found {}",
                            o.records, self.records
                        ),
                    ));
                }
            }
            self.origin = self.log.next_chunk(&mut self.data)?;
            if self.origin.is_none() {
                return Ok(None);
            }
            self.pos = 0;
            self.records = 0;
            self.delta = DeltaState::default();
        }
    }
}

/// Streams a trace directory's events in the global order (FORMAT.md, "Global order").
pub struct TraceReader {
    dir: PathBuf,
    symbols: Symbols,
    meta: BTreeMap<String, String>,
    streams: Vec<ThreadStream>,
    heap: BinaryHeap<Reverse<(u64, ThreadId, usize)>>,
    /// Stream whose head was returned last and must be refilled before the next pop.
    refill: Option<usize>,
    checker: Checker,
    events: u64,
    saw_branch: bool,
    last_stamp: u64,
}

/// `t<ID>` → ID.
fn thread_of_stem(stem: &str) -> Option<ThreadId> {
    let digits = stem.strip_prefix('t')?;
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    digits.parse().ok()
}

impl TraceReader {
    pub fn open(dir: &Path) -> Result<TraceReader, TraceError> {
        let entries = std::fs::read_dir(dir).map_err(|e| TraceError::io(dir, e))?;
        let mut threads = BTreeSet::new();
        for ent in entries {
            let ent = ent.map_err(|e| TraceError::io(dir, e))?;
            let name = ent.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some((stem, ext)) = name.rsplit_once('.') else {
                continue;
            };
            if ext != SEALED_EXT && ext != OPEN_EXT {
                continue;
            }
            if let Some(t) = thread_of_stem(stem) {
                threads.insert(t);
            }
        }
        if !super::chunklog::sealed_path(dir, META_STEM).exists()
            && !super::chunklog::open_path(dir, META_STEM).exists()
        {
            return Err(TraceError::Other {
                path: dir.to_owned(),
                msg: format!("not a jrace trace directory: no {META_STEM}.{SEALED_EXT}"),
            });
        }

        let mut tables = MetaTables::default();
        let mut log = LogReader::open(dir, META_STEM, META_LOG_ID)?;
        let mut buf = Vec::new();
        while let Some(o) = log.next_chunk(&mut buf)? {
            let mut c = Cursor::new(&buf, 0);
            let mut n = 0u32;
            while !c.at_end() {
                if !o.sealed && buf[c.pos] == 0 {
                    break; // torn or unwritten tail of the open chunk
                }
                let at = c.pos;
                tables.decode(&mut c).map_err(|m| o.err(at, m))?;
                n += 1;
            }
            if o.sealed && n != o.records {
                return Err(o.err(
                    c.pos,
                    format!("expected {} records (frame header), found {n}", o.records),
                ));
            }
        }
        let meta = std::mem::take(&mut tables.kv);
        let min_threads = threads.iter().next_back().map_or(0, |&t| t + 1);
        let symbols = tables.into_symbols(min_threads);

        let mut r = TraceReader {
            dir: dir.to_owned(),
            symbols,
            meta,
            streams: Vec::new(),
            heap: BinaryHeap::new(),
            refill: None,
            checker: Checker::new(),
            events: 0,
            saw_branch: false,
            last_stamp: 0,
        };
        for t in threads {
            let log = LogReader::open(dir, &thread_stem(t), t)?;
            let mut s = ThreadStream {
                thread: t,
                log,
                data: Vec::new(),
                origin: None,
                pos: 0,
                records: 0,
                delta: DeltaState::default(),
                last_stamp: 0,
                head: None,
                head_pos: 0,
            };
            if let Some(stamp) = s.advance()? {
                r.heap.push(Reverse((stamp, t, r.streams.len())));
            }
            r.streams.push(s);
        }
        Ok(r)
    }

    /// Key/value metadata (`branches`, `cut`, counters, ...): the last value written wins.
    pub fn meta(&self) -> &BTreeMap<String, String> {
        &self.meta
    }

    /// The trace directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The well-formedness checker's state after the last event (locks held, ...).
    pub fn checker(&self) -> &Checker {
        &self.checker
    }

    /// Ordering stamp of the last event returned.
    pub fn last_stamp(&self) -> u64 {
        self.last_stamp
    }

    fn check_ids(&self, e: &Event) -> Result<(), String> {
        let s = &self.symbols;
        let (table, len) = match e.kind {
            k if k.is_access() => ("variable", s.vars.len()),
            k if k.has_lock() => ("lock", s.locks.len()),
            k if k.has_thread() => ("thread", s.threads.len()),
            k if k.has_method() => ("method", s.methods.len()),
            _ => ("", usize::MAX),
        };
        if e.target as usize >= len {
            return Err(format!(
                "expected a {table} id below {len} (named in the metadata), found {}",
                e.target
            ));
        }
        if e.loc as usize >= s.locs.len() {
            return Err(format!(
                "expected a location id below {} (named in the metadata), found {}",
                s.locs.len(),
                e.loc
            ));
        }
        if e.kind == Kind::Enter && !(0..s.objsets.len() as i64).contains(&e.value) {
            return Err(format!(
                "expected a reachable-set id below {}, found {}",
                s.objsets.len(),
                e.value
            ));
        }
        Ok(())
    }
}

impl EventSource for TraceReader {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        if let Some(i) = self.refill.take() {
            if let Some(stamp) = self.streams[i].advance()? {
                self.heap.push(Reverse((stamp, self.streams[i].thread, i)));
            }
        }
        let Some(Reverse((stamp, _, i))) = self.heap.pop() else {
            return Ok(None);
        };
        self.refill = Some(i);
        let Some(mut e) = self.streams[i].head.take() else {
            return Ok(None);
        };
        let s = &self.streams[i];
        if let Err(m) = self.check_ids(&e) {
            return Err(match &s.origin {
                Some(o) => o.err(s.head_pos, m),
                None => TraceError::Other {
                    path: self.dir.clone(),
                    msg: m,
                },
            });
        }
        self.events += 1;
        if let Err(msg) = self.checker.check(&mut e, &self.symbols) {
            let s = &self.streams[i];
            return Err(TraceError::Event {
                path: s
                    .origin
                    .as_ref()
                    .map_or_else(|| self.dir.clone(), |o| o.path.clone()),
                event: self.events,
                thread: self.symbols.thread_name(e.thread).to_owned(),
                msg,
            });
        }
        if e.kind == Kind::Branch {
            self.saw_branch = true;
        }
        self.last_stamp = stamp;
        Ok(Some(e))
    }

    fn symbols(&self) -> &Symbols {
        &self.symbols
    }

    /// The `branches` metadata key when present (`1`/`0`), else whether a branch event
    /// has been read so far.
    fn has_branches(&self) -> bool {
        match self.meta.get("branches").map(String::as_str) {
            Some("1") | Some("true") => true,
            Some(_) => false,
            None => self.saw_branch,
        }
    }
}

impl std::fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceReader")
            .field("dir", &self.dir)
            .field("threads", &self.streams.len())
            .field("events_read", &self.events)
            .field("meta", &self.meta)
            .finish()
    }
}
