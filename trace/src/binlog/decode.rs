//! Thread logs decoded ahead of the merge, on threads of their own.
//!
//! Why: decompressing and decoding the thread logs is about half of what reading a trace
//! costs, and every log decodes on its own; only the merge into one global order is
//! sequential. Decoder threads (one per spare core, each owning some of the logs) keep a
//! few batches of decoded events ready per log, and the merge ([`super::reader`]) takes
//! them in order. The decoders start when the trace is opened, before its metadata is
//! decoded, so the two overlap.
//!
//! A batch never spans two chunks (byte positions are relative to its chunk's data) and
//! ends at the first record that fails to decode: the error travels with the events
//! before it and is reported only after they were merged, as a reader decoding one
//! record at a time would. The merge checks ids against the metadata itself, since the
//! decoders may run before the metadata is known.

use super::columns::{ColumnCursor, Columns};
use super::events::{decode, decode_fast, DeltaState};
use super::logread::{ChunkOrigin, LogReader};
use super::varint::Cursor;
use crate::error::TraceError;
use crate::model::*;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Events per batch.
const BATCH: usize = 4096;
/// Batches queued per log when there is room ([`BUDGET`]).
const DEPTH: usize = 4;
/// Events queued over all logs beyond the first batch of each: bounds memory when a trace
/// has hundreds of threads.
const BUDGET: usize = 1 << 20;

/// Decoded events of one log, in order.
pub(super) struct Batch {
    /// Each event with its stamp.
    pub events: Vec<(u64, Event)>,
    /// Byte position of each event's record in its chunk's data.
    pub pos: Vec<u32>,
    /// The chunk the events come from.
    pub origin: Option<Arc<ChunkOrigin>>,
    /// An error met at the record after the last event; the log ends there.
    pub err: Option<TraceError>,
    /// Nothing follows this batch.
    pub last: bool,
    /// With `last`: the log had no end frame ([`LogReader::unfinished`]).
    pub unfinished: bool,
}

impl Batch {
    /// No events yet: the merge's placeholder before a log's first batch.
    pub fn empty() -> Batch {
        Batch {
            last: false,
            ..Batch::end(None, false)
        }
    }

    pub fn end(err: Option<TraceError>, unfinished: bool) -> Batch {
        Batch {
            events: Vec::new(),
            pos: Vec::new(),
            origin: None,
            err,
            last: true,
            unfinished,
        }
    }
}

/// One log's decoding state.
struct LogDecoder {
    thread: ThreadId,
    log: LogReader,
    data: Vec<u8>,
    origin: Option<Arc<ChunkOrigin>>,
    pos: usize,
    records: u32,
    delta: DeltaState,
    last_stamp: u64,
    /// The chunk's columns when it was sealed as columns ([`ChunkOrigin::in_columns`]),
    /// read in place by `cursor`.
    cols: Columns,
    cursor: ColumnCursor,
}

impl LogDecoder {
    /// Decodes the next batch into `events`/`pos` (cleared first).
    fn next_batch(&mut self, mut events: Vec<(u64, Event)>, mut pos: Vec<u32>) -> Batch {
        events.clear();
        pos.clear();
        loop {
            match &self.origin {
                Some(o) if o.in_columns => {
                    if let Some(b) = self.columns_batch(&mut events, &mut pos) {
                        return b;
                    }
                }
                _ => {}
            }
            if let Some(o) = self.origin.clone().filter(|o| !o.in_columns) {
                let data = &self.data[..];
                let thread = self.thread;
                let mut at = self.pos;
                let mut delta = self.delta;
                let mut last = self.last_stamp;
                let mut err = None;
                let mut slot = (0u64, Event::new(thread, Kind::Branch, 0, 0));
                while events.len() < BATCH {
                    let next = match decode_fast(&mut delta, data, at, thread, &mut slot) {
                        Some(next) => next,
                        None => {
                            // (Never a zero tag: the fast path refuses it.) An open
                            // chunk ends at the first zero tag: anything after it is a
                            // record torn by a kill (or never written), and is dropped.
                            if at >= data.len() || (!o.sealed && data[at] == 0) {
                                break;
                            }
                            let mut c = Cursor::new(data, at);
                            match decode(&mut delta, &mut c, thread) {
                                Ok(r) => {
                                    slot = r;
                                    c.pos
                                }
                                Err(m) => {
                                    err = Some(o.err(at, m));
                                    break;
                                }
                            }
                        }
                    };
                    let stamp = delta.stamp;
                    if stamp < last {
                        err = Some(o.err(at, stamp_went_back(last, stamp)));
                        break;
                    }
                    last = stamp;
                    events.push(slot);
                    pos.push(at as u32);
                    at = next;
                }
                self.pos = at;
                self.delta = delta;
                self.last_stamp = last;
                if let Some(b) = self.end_of_run(&o, &mut events, &mut pos, err, at) {
                    return b;
                }
            }
            match self.log.next_chunk(&mut self.data) {
                Err(e) => return Batch::end(Some(e), false),
                Ok(None) => return Batch::end(None, self.log.unfinished()),
                Ok(Some(o)) => {
                    if o.in_columns {
                        // The reader's buffers for ours: each side reuses the other's.
                        std::mem::swap(self.log.columns(), &mut self.cols);
                        self.cursor = ColumnCursor::new(self.cols.pad());
                    }
                    self.origin = Some(Arc::new(o))
                }
            }
            self.pos = 0;
            self.records = 0;
            self.delta = DeltaState::default();
        }
    }
}

impl LogDecoder {
    /// The next batch of a chunk read as columns, `None` when the chunk has no records
    /// left (its record count checked).
    fn columns_batch(
        &mut self,
        events: &mut Vec<(u64, Event)>,
        pos: &mut Vec<u32>,
    ) -> Option<Batch> {
        let o = self.origin.clone()?;
        let mut err = None;
        let mut slot = (0u64, Event::new(self.thread, Kind::Branch, 0, 0));
        while events.len() < BATCH {
            match self.cursor.done() {
                Ok(false) => {}
                Ok(true) => break,
                Err(m) => {
                    err = Some(o.err(self.cursor.at(), m));
                    break;
                }
            }
            let at = self.cursor.at();
            if let Err(m) = self
                .cursor
                .next(&self.cols, &mut self.delta, self.thread, &mut slot)
            {
                err = Some(o.err(at, m));
                break;
            }
            if slot.0 < self.last_stamp {
                err = Some(o.err(at, stamp_went_back(self.last_stamp, slot.0)));
                break;
            }
            self.last_stamp = slot.0;
            events.push(slot);
            pos.push(at as u32);
        }
        let at = self.cursor.at();
        self.end_of_run(&o, events, pos, err, at)
    }

    /// What a run of a chunk's records decoded into `events` ends with: a batch of them
    /// (with `err`, met after them), else, the chunk having no records left, an error at
    /// `at` when its frame header counted other records; `None` to go on with the next
    /// chunk.
    fn end_of_run(
        &mut self,
        o: &Arc<ChunkOrigin>,
        events: &mut Vec<(u64, Event)>,
        pos: &mut Vec<u32>,
        err: Option<TraceError>,
        at: usize,
    ) -> Option<Batch> {
        self.records += events.len() as u32;
        if err.is_some() || !events.is_empty() {
            return Some(Batch {
                events: std::mem::take(events),
                pos: std::mem::take(pos),
                origin: Some(o.clone()),
                last: err.is_some(),
                err,
                unfinished: false,
            });
        }
        if o.sealed && self.records != o.records {
            let m = format!(
                "expected {} records (frame header), found {}",
                o.records, self.records
            );
            return Some(Batch::end(Some(o.err(at, m)), false));
        }
        None
    }
}

/// The error of a record whose stamp is below the one before it in its thread's log.
fn stamp_went_back(last: u64, stamp: u64) -> String {
    format!("expected a stamp of at least {last} (stamps never decrease within a thread), found {stamp}")
}

/// A batch's buffers, kept for the next batch.
type Buffers = (Vec<(u64, Event)>, Vec<u32>);

/// What the merge and the decoders share.
struct State {
    queues: Vec<VecDeque<Batch>>,
    /// The log's last batch was queued.
    ended: Vec<bool>,
    /// The log the merge waits for.
    wanted: Option<usize>,
    /// Events queued over all logs.
    queued: usize,
    /// Buffers of batches the merge is done with.
    spare: Vec<Buffers>,
    stop: bool,
    /// A decoder thread panicked (a bug): the merge reports it instead of waiting.
    failed: bool,
}

struct Shared {
    state: Mutex<State>,
    /// A batch was queued (the merge waits on it).
    ready: Condvar,
    /// A queue has room, or the merge wants a log, or stop (decoders wait on it).
    room: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The decoder threads of one trace and the queues they fill.
pub(super) struct Decoders {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
}

impl Decoders {
    /// Starts decoding `logs` (log `i` is queue `i`) on `threads` threads (at least one,
    /// at most one per log).
    pub fn start(logs: Vec<(ThreadId, LogReader)>, threads: usize) -> Decoders {
        let n = logs.len();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queues: (0..n).map(|_| VecDeque::new()).collect(),
                ended: vec![false; n],
                wanted: None,
                queued: 0,
                spare: Vec::new(),
                stop: false,
                failed: false,
            }),
            ready: Condvar::new(),
            room: Condvar::new(),
        });
        let threads = threads.clamp(1, n.max(1));
        let mut owned: Vec<Vec<(usize, LogDecoder)>> = (0..threads).map(|_| Vec::new()).collect();
        for (i, (thread, log)) in logs.into_iter().enumerate() {
            owned[i % threads].push((
                i,
                LogDecoder {
                    thread,
                    log,
                    data: Vec::new(),
                    origin: None,
                    pos: 0,
                    records: 0,
                    delta: DeltaState::default(),
                    last_stamp: 0,
                    cols: Columns::default(),
                    cursor: ColumnCursor::default(),
                },
            ));
        }
        let mut handles = Vec::new();
        let mut spawned_all = true;
        for mine in owned.into_iter().filter(|o| !o.is_empty()) {
            let sh = shared.clone();
            match std::thread::Builder::new()
                .name("jrace-decode".into())
                .spawn(move || run(&sh, mine))
            {
                Ok(h) => handles.push(h),
                Err(_) => spawned_all = false,
            }
        }
        // Logs without a decoder would never fill: the merge reports it instead of waiting.
        if !spawned_all {
            shared.lock().failed = true;
        }
        Decoders { shared, handles }
    }

    /// The next batch of log `i`, handing back `done`'s buffers. Waits while the decoders
    /// have not got there; must not be called after log `i`'s last batch.
    pub fn take(&self, i: usize, done: Option<Batch>) -> Batch {
        let mut st = self.shared.lock();
        if let Some(b) = done {
            if b.events.capacity() > 0 {
                st.spare.push((b.events, b.pos));
            }
        }
        loop {
            if let Some(b) = st.queues[i].pop_front() {
                st.queued -= b.events.len();
                if st.wanted == Some(i) {
                    st.wanted = None;
                }
                drop(st);
                self.shared.room.notify_all();
                return b;
            }
            if st.failed || st.ended[i] {
                let msg = "the thread decoding this log stopped (a bug in jrace)";
                return Batch::end(
                    Some(TraceError::Other {
                        path: Default::default(),
                        msg: msg.into(),
                    }),
                    false,
                );
            }
            st.wanted = Some(i);
            self.shared.room.notify_all();
            st = self
                .shared
                .ready
                .wait(st)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for Decoders {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.room.notify_all();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// A decoder thread: fills the queues of its logs until each has ended.
fn run(sh: &Shared, mut mine: Vec<(usize, LogDecoder)>) {
    let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decode_loop(sh, &mut mine)));
    if ok.is_err() {
        sh.lock().failed = true;
        sh.ready.notify_all();
    }
}

fn decode_loop(sh: &Shared, mine: &mut [(usize, LogDecoder)]) {
    let mut left = mine.len();
    loop {
        let (k, bufs) = {
            let mut st = sh.lock();
            loop {
                if st.stop || left == 0 {
                    return;
                }
                if let Some(k) = pick(&st, mine) {
                    break (k, st.spare.pop());
                }
                st = sh.room.wait(st).unwrap_or_else(|e| e.into_inner());
            }
        };
        let (events, pos) =
            bufs.unwrap_or_else(|| (Vec::with_capacity(256), Vec::with_capacity(256)));
        let (i, dec) = &mut mine[k];
        let b = dec.next_batch(events, pos);
        let mut st = sh.lock();
        if b.last {
            st.ended[*i] = true;
            left -= 1;
        }
        st.queued += b.events.len();
        st.queues[*i].push_back(b);
        drop(st);
        sh.ready.notify_one();
    }
}

/// Which of `mine` to decode next: the log the merge waits for, else the one with the
/// fewest batches queued that has room; `None` when none has.
fn pick(st: &State, mine: &[(usize, LogDecoder)]) -> Option<usize> {
    let open = |i: usize| !st.ended[i];
    if let Some(w) = st.wanted {
        if let Some(k) = mine.iter().position(|&(i, _)| i == w) {
            if open(w) && st.queues[w].is_empty() {
                return Some(k);
            }
        }
    }
    mine.iter()
        .enumerate()
        .filter(|&(_, &(i, _))| {
            let q = st.queues[i].len();
            open(i) && (q == 0 || (q < DEPTH && st.queued < BUDGET))
        })
        .min_by_key(|&(_, &(i, _))| st.queues[i].len())
        .map(|(k, _)| k)
}
