//! [`TraceReader`]: streams the events of all thread logs merged into one global order.
//!
//! Metadata is loaded whole at open (names are needed to resolve ids anyway); events are
//! not: decoder threads ([`super::decode`]) keep a few decoded batches of each thread log
//! ready, and a heap merges the threads by `(stamp, thread id)`. Every event is
//! range-checked against the metadata and run through [`Checker`] before it is returned.

use super::decode::{Batch, Decoders};
use super::heap::HeapReplay;
use super::logread::LogReader;
use super::meta::{BuiltVars, MetaTables, VarNames};
use super::varint::Cursor;
use super::{
    meta_daemon, thread_stem, META_CUT, META_CUT_DETAIL, META_LOG_ID, META_STEM, OPEN_EXT,
    SEALED_EXT,
};
use crate::error::TraceError;
use crate::model::*;
use crate::source::{CutReason, EventSource, Truncation};
use crate::wellformed::Checker;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::path::{Path, PathBuf};

/// Id bounds from the metadata, for the range check of every event
/// ([`check_ids`] phrases the error).
struct Limits {
    /// Bound of `target` per kind (`usize::MAX`: not an id).
    target: [usize; 17],
    locs: usize,
    objsets: i64,
}

impl Limits {
    /// `vars`: the number of variables (the symbols may not have their names yet).
    fn new(s: &Symbols, vars: usize) -> Limits {
        let mut target = [usize::MAX; 17];
        for k in Kind::ALL {
            target[k as usize] = match k {
                k if k.is_access() => vars,
                k if k.has_lock() => s.locks.len(),
                k if k.has_thread() => s.threads.len(),
                k if k.has_method() => s.methods.len(),
                _ => usize::MAX,
            };
        }
        Limits {
            target,
            locs: s.locs.len(),
            objsets: s.objsets.len() as i64,
        }
    }

    #[inline(always)]
    fn ok(&self, e: &Event) -> bool {
        (e.target as usize) < self.target[e.kind as usize]
            && (e.loc as usize) < self.locs
            && (e.kind != Kind::Enter || (0..self.objsets).contains(&e.value))
    }
}

/// The merge's side of one thread log: the batch being merged.
struct Stream {
    thread: ThreadId,
    batch: Batch,
    bi: usize,
    /// `batch.events[..good]` passed the id check; if `good` is short of the batch, the
    /// one event after them (the batch's last) did not, and `bad` is the error to report
    /// when the merge reaches it.
    good: usize,
    bad: Option<TraceError>,
    /// The log ended without its end frame (known once its last batch was taken).
    unfinished: bool,
    /// `bi` of a read held back once until the write it saw ([`TraceReader::future_write`]),
    /// `NONE` if none.
    held: usize,
}

impl Stream {
    fn new(thread: ThreadId) -> Stream {
        Stream {
            thread,
            batch: Batch::empty(),
            bi: 0,
            good: 0,
            bad: None,
            unfinished: false,
            held: NONE,
        }
    }

    /// The decoded events still to be merged that passed the id check.
    fn next(&self) -> &[(u64, Event)] {
        let end = self.good;
        &self.batch.events[self.bi.min(end)..end]
    }

    /// Takes log `i`'s next batch from the decoders (the current one must be used up);
    /// returns whether it has events. An error the decoder met after the events of the
    /// batch before is returned now, once they have been merged.
    fn refill(&mut self, i: usize, dec: &Decoders, lim: &Limits) -> Result<bool, TraceError> {
        if let Some(e) = self.batch.err.take() {
            self.batch.last = true;
            return Err(e);
        }
        if self.batch.last {
            return Ok(false);
        }
        let done = std::mem::replace(&mut self.batch, Batch::empty());
        self.batch = dec.take(i, Some(done));
        let b = &mut self.batch;
        self.bi = 0;
        self.held = NONE;
        self.good = b.events.len();
        self.bad = None;
        if b.last {
            self.unfinished = b.unfinished;
        }
        if let Some(k) = b.events.iter().position(|(_, e)| !lim.ok(e)) {
            // Nothing after an event with a bad id is merged.
            let m = check_ids(lim, &b.events[k].1).err().unwrap_or_default();
            let at = b.pos[k] as usize;
            self.bad = Some(match &b.origin {
                Some(o) => o.err(at, m),
                None => TraceError::Other {
                    path: Default::default(),
                    msg: m,
                },
            });
            self.good = k;
            b.events.truncate(k + 1);
            b.last = true;
            b.err = None;
        }
        if b.events.is_empty() {
            b.last = true;
            return match b.err.take() {
                Some(e) => Err(e),
                None => Ok(false),
            };
        }
        Ok(true)
    }
}

/// Streams a trace directory's events in the global order (FORMAT.md, "Global order").
///
/// The merge keeps the stream of the last event returned apart from the heap: while its
/// next event still sorts before the heap's smallest head it is returned straight away,
/// which is most events, since threads run in bursts. Otherwise the current stream goes
/// into the heap and the smallest head comes out. The order is `(stamp, thread)`, except
/// for the plain reads [`StaleReads`] moves before a write they did not see.
pub struct TraceReader {
    dir: PathBuf,
    /// Without the variables' names and static names while `vars` builds them.
    symbols: Symbols,
    /// The variables' names, built on a thread of their own while the events are merged
    /// (a trace names millions of variables; nothing needs their names before the end):
    /// joined by [`EventSource::symbols`] and [`EventSource::take_symbols`].
    vars: Option<std::thread::JoinHandle<Option<BuiltVars>>>,
    /// Per location: in a JDK class (its events get [`FLAG_JDK`]).
    jdk_locs: Vec<bool>,
    limits: Limits,
    meta: BTreeMap<String, String>,
    streams: Vec<Stream>,
    decoders: Decoders,
    /// Heads of every stream with events left except `cur`: `(stamp, thread, stream)`.
    heap: BinaryHeap<Reverse<(u64, ThreadId, usize)>>,
    /// The stream events are being taken from (`NONE`: take one from the heap).
    cur: usize,
    /// Key `(stamp << 32) | thread` of the heap's smallest head (`u128::MAX`: empty).
    bound: u128,
    checker: Checker,
    events: u64,
    saw_branch: bool,
    last_stamp: u64,
    /// Reachable sets recorded as roots, expanded at each `enter` (see [`super::heap`]).
    replay: Option<HeapReplay>,
    stale: StaleReads,
    /// What each synchronizing variable holds after the events returned so far
    /// ([`TraceReader::keep_sync`]), and the JDK reads dropped.
    sync_values: rustc_hash::FxHashMap<u32, i64>,
    jdk_reads_dropped: u64,
    /// The metadata log had no end frame: the recorder never finished the trace.
    meta_unfinished: bool,
}

const NONE: usize = usize::MAX;

/// Plain reads stamped after a write they did not see. A read's hook runs after the load,
/// so another thread's write can land between the load and the stamp (a thread paused
/// there by the JVM, say): by stamps the read then follows a write whose value it does
/// not have. When the merge is about to return a plain write of `x`, and another thread's
/// next event is a plain read of `x` that has the value `x` holds now but not the write's
/// (before any write or read of `x`: the value 0, the JVM's initial value of every field
/// and element), that read is returned first; so are the branches and volatile reads
/// just before such a read (a class's initialization marker, [`StaleReads::lead`]), and
/// a `begin` whose `fork` was returned (a thread's first read also writes its `begin`).
/// Only those next events of that thread move, and only before events of other threads,
/// so each thread's order and every synchronization order stay as recorded: the result
/// is an interleaving of the same per-thread runs in which that read returns the value it
/// recorded, as in the run itself. A read no such move explains stays where its stamp
/// puts it. Only for traces the agent recorded (metadata `recorder=jrace-agent`), whose
/// stamps are clocks; other writers' stamps are the order they mean.
#[derive(Default)]
struct StaleReads {
    on: bool,
    /// Per variable id, the value it holds after the events returned so far (its last
    /// write's, or its first read's while it has no write), when `known` says so.
    value: Vec<i64>,
    known: Vec<u64>,
    /// The streams in the heap whose next event is such a read (or a branch or `begin`
    /// and then one), by the read's variable; and per stream, the variable it is listed
    /// under.
    heads: rustc_hash::FxHashMap<u32, Vec<usize>>,
    listed: rustc_hash::FxHashMap<usize, u32>,
    /// Threads whose `fork` was returned.
    forked: rustc_hash::FxHashSet<ThreadId>,
    /// Reads moved so far (before a write, or held back until one).
    moved: u64,
}

impl StaleReads {
    #[inline]
    fn get(&self, x: u32) -> Option<i64> {
        let i = x as usize;
        let set = self
            .known
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1);
        set.then(|| self.value[i])
    }

    #[inline]
    fn set(&mut self, x: u32, v: i64) {
        let i = x as usize;
        if i >= self.value.len() {
            let n = (i + 1).next_power_of_two();
            self.value.resize(n, 0);
            self.known.resize(n.div_ceil(64), 0);
        }
        self.value[i] = v;
        self.known[i / 64] |= 1 << (i % 64);
    }

    /// Updates the variable's value for event `e`, about to be returned.
    #[inline(always)]
    fn returned(&mut self, e: &Event) {
        if self.on {
            self.returned_on(e);
        }
    }

    #[inline]
    fn returned_on(&mut self, e: &Event) {
        match e.kind {
            Kind::Write | Kind::VWrite if e.has_value() => self.set(e.target, e.value),
            Kind::Read if e.has_value() && self.get(e.target).is_none() => {
                self.set(e.target, e.value)
            }
            Kind::Fork => {
                self.forked.insert(e.target);
            }
            _ => {}
        }
    }

    /// The read a stream whose next events are `next` would move for: the first of them,
    /// or the first after up to three of a `begin`, branches and volatile reads (a
    /// thread's first access to a class's field reads the class's initialization marker
    /// first, and branches on it: [`StaleReads`] moves those too, before a plain write of
    /// another variable, which orders nothing they touch).
    fn lead(next: &[(u64, Event)]) -> Option<&Event> {
        let skip = next
            .iter()
            .take(3)
            .take_while(|(_, h)| matches!(h.kind, Kind::Branch | Kind::Begin | Kind::VRead))
            .count();
        next.get(skip)
            .map(|(_, e)| e)
            .filter(|e| e.kind == Kind::Read && e.has_value())
    }

    /// Stream `i`, whose next events are `next`, went into the heap (or its head moved).
    #[inline]
    fn pushed(&mut self, i: usize, next: &[(u64, Event)]) {
        if !self.on {
            return;
        }
        if let Some(r) = Self::lead(next) {
            self.heads.entry(r.target).or_default().push(i);
            self.listed.insert(i, r.target);
        }
    }

    /// Stream `i` left the heap, or its head moved.
    #[inline]
    fn left(&mut self, i: usize) {
        if self.listed.is_empty() {
            return;
        }
        if let Some(x) = self.listed.remove(&i) {
            if let Some(v) = self.heads.get_mut(&x) {
                v.retain(|&j| j != i);
                if v.is_empty() {
                    self.heads.remove(&x);
                }
            }
        }
    }
}

#[inline(always)]
fn key(stamp: u64, thread: ThreadId) -> u128 {
    ((stamp as u128) << 32) | thread as u128
}

fn check_ids(lim: &Limits, e: &Event) -> Result<(), String> {
    let table = match e.kind {
        k if k.is_access() => "variable",
        k if k.has_lock() => "lock",
        k if k.has_thread() => "thread",
        k if k.has_method() => "method",
        _ => "",
    };
    let len = lim.target[e.kind as usize];
    if e.target as usize >= len {
        return Err(format!(
            "expected a {table} id below {len} (named in the metadata), found {}",
            e.target
        ));
    }
    if e.loc as usize >= lim.locs {
        return Err(format!(
            "expected a location id below {} (named in the metadata), found {}",
            lim.locs, e.loc
        ));
    }
    if e.kind == Kind::Enter && !(0..lim.objsets).contains(&e.value) {
        return Err(format!(
            "expected a reachable-set id below {}, found {}",
            lim.objsets, e.value
        ));
    }
    Ok(())
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

/// Threads decoding thread logs by default: one per core beyond the merge's, at least one.
fn default_decode_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
}

impl TraceReader {
    /// Opens a trace directory; its thread logs are decoded on one thread per spare core.
    pub fn open(dir: &Path) -> Result<TraceReader, TraceError> {
        Self::open_with(dir, default_decode_threads())
    }

    /// Opens a trace directory with `decode_threads` threads decoding its thread logs
    /// (the events and errors returned are the same for any number).
    pub fn open_with(dir: &Path, decode_threads: usize) -> Result<TraceReader, TraceError> {
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
        if !super::is_trace_dir(dir) {
            return Err(TraceError::Other {
                path: dir.to_owned(),
                msg: format!("not a jrace trace directory: no {META_STEM}.{SEALED_EXT}"),
            });
        }
        // The thread logs start decoding now, while the metadata is read. Errors are
        // reported in the order of a reader doing one thing after the other: the
        // metadata's, then per thread log its opening's and its first records'.
        let mut logs = Vec::new();
        let mut open_err = None;
        for &t in &threads {
            match LogReader::open(dir, &thread_stem(t), t) {
                Ok(log) => logs.push((t, log)),
                Err(e) => {
                    open_err = Some(e);
                    break;
                }
            }
        }
        let opened: Vec<ThreadId> = logs.iter().map(|&(t, _)| t).collect();
        let decoders = Decoders::start(logs, decode_threads);

        let mut tables = MetaTables::default();
        let mut log = LogReader::open(dir, META_STEM, META_LOG_ID)?;
        let mut buf = Vec::new();
        while let Some(o) = log.next_chunk(&mut buf)? {
            if o.in_columns {
                return Err(o.err(
                    0,
                    "expected metadata records, found a chunk of event columns",
                ));
            }
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
        let meta_unfinished = log.unfinished();
        let meta = std::mem::take(&mut tables.kv);
        let replay = HeapReplay::new(std::mem::take(&mut tables.heap));
        let min_threads = threads.iter().next_back().map_or(0, |&t| t + 1);
        let (mut symbols, names) = tables.into_symbols_apart(min_threads);
        let limits = Limits::new(&symbols, names.len());
        // Should no thread start, the names are built here.
        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(names)));
        let take = |s: &std::sync::Mutex<Option<VarNames>>| {
            s.lock().unwrap_or_else(|p| p.into_inner()).take()
        };
        let vars = std::thread::Builder::new()
            .name("jrace-names".into())
            .spawn({
                let slot = slot.clone();
                move || take(&slot).map(VarNames::build)
            })
            .ok();
        if vars.is_none() {
            if let Some(n) = take(&slot) {
                n.build().install(&mut symbols);
            }
        }
        let jdk_locs = symbols
            .loc_detail
            .iter()
            .map(|d| d.as_ref().is_some_and(|d| d.in_jdk()))
            .collect();
        let mut r = TraceReader {
            dir: dir.to_owned(),
            vars,
            jdk_locs,
            symbols,
            limits,
            meta,
            streams: Vec::new(),
            decoders,
            heap: BinaryHeap::new(),
            cur: NONE,
            bound: u128::MAX,
            checker: Checker::new(),
            events: 0,
            saw_branch: false,
            last_stamp: 0,
            replay,
            stale: StaleReads::default(),
            sync_values: Default::default(),
            jdk_reads_dropped: 0,
            meta_unfinished,
        };
        r.stale.on = r.recorded_by_agent();
        for (i, t) in opened.into_iter().enumerate() {
            let mut s = Stream::new(t);
            if s.refill(i, &r.decoders, &r.limits)? {
                r.heap.push(Reverse((s.batch.events[0].0, t, i)));
                r.stale.pushed(i, s.next());
            }
            r.streams.push(s);
        }
        match open_err {
            Some(e) => Err(e),
            None => Ok(r),
        }
    }

    /// Key/value metadata (`branches`, `cut`, counters, ...): the last value written wins.
    pub fn meta(&self) -> &BTreeMap<String, String> {
        &self.meta
    }

    /// Reachable sets expanded so far from roots: (largest set, sets that became every
    /// object); `None` when the trace recorded its sets expanded.
    pub fn expanded(&self) -> Option<(usize, u64)> {
        self.replay.as_ref().map(|h| (h.max_d, h.top))
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
}

impl TraceReader {
    /// Waits for the variables' names ([`TraceReader::vars`]) and puts them in the
    /// symbols.
    fn join_vars(&mut self) {
        if let Some(h) = self.vars.take() {
            match h.join() {
                Ok(Some(b)) => b.install(&mut self.symbols),
                Ok(None) => {}
                Err(p) => std::panic::resume_unwind(p),
            }
        }
    }

    /// A stream in the heap whose next event is a plain read of `w`'s variable that has
    /// the value the variable holds now (0 if nothing was returned of it yet) and not
    /// `w`'s, after only branches, its `begin` and volatile reads of what was already
    /// written ([`StaleReads`]).
    fn stale_read_before(&self, w: &Event) -> Option<usize> {
        let heads = self.stale.heads.get(&w.target)?;
        let now = self.stale.get(w.target);
        heads.iter().copied().find(|&j| {
            let next = self.streams[j].next();
            StaleReads::lead(next).is_some_and(|r| {
                r.target == w.target
                    && r.value != w.value
                    && now.map_or(r.value == 0, |v| v == r.value)
                    && r.thread != w.thread
                    && (next[0].1.kind != Kind::Begin || self.stale.forked.contains(&r.thread))
                    // A volatile read moved with it read a write already returned.
                    && next.iter().take_while(|(_, h)| h.kind != Kind::Read).all(|(_, h)| {
                        h.kind != Kind::VRead || self.sync_values.get(&h.target) == Some(&h.value)
                    })
            })
        })
    }

    /// Reads stamped before the write they saw. A plain read does not take the stripe lock
    /// that orders a compare-and-set or an ordered put with its record, so it can see the
    /// new value before that operation is recorded (a lock-free map whose slots are
    /// compare-and-set through `Unsafe` and read plainly): by stamps the read comes before
    /// the write whose value it has. When the merge is about to return such a read
    /// (`r`, at `stamp`, of stream `c`: its variable holds another value now), and another
    /// thread's next few events hold a write of that value to it, the read waits until
    /// that write has been returned: the stamp of the write, if `c`'s events up to it are
    /// plain reads and branches only (moving them after other threads' events then changes
    /// no order any other event depends on).
    fn future_write(&self, c: usize, stamp: u64, r: &Event) -> Option<u64> {
        const LOOK: usize = 8;
        let mut best: Option<u64> = None;
        for (j, s) in self.streams.iter().enumerate() {
            if j == c || s.thread == r.thread {
                continue;
            }
            let w = s.next().iter().take(LOOK).find(|(_, w)| {
                matches!(w.kind, Kind::Write | Kind::VWrite) && w.target == r.target
            });
            if let Some(&(ws, w)) = w {
                if w.has_value() && w.value == r.value && ws > stamp {
                    best = Some(best.map_or(ws, |b: u64| b.min(ws)));
                }
            }
        }
        let ws = best?;
        let mine = self.streams[c].next();
        let upto = mine.iter().position(|(st, _)| *st > ws)?;
        mine[1..upto]
            .iter()
            .all(|(_, h)| matches!(h.kind, Kind::Read | Kind::Branch))
            .then_some(ws)
    }

    /// Counts, checks and returns event `e` (at `stamp`) of stream `i`.
    #[inline(always)]
    fn emit(&mut self, i: usize, stamp: u64, mut e: Event) -> Result<Option<Event>, TraceError> {
        self.events += 1;
        if self.jdk_locs.get(e.loc as usize) == Some(&true) {
            e.flags |= FLAG_JDK;
        }
        if e.kind == Kind::Enter {
            if let Some(h) = self.replay.as_mut().filter(|h| h.is_roots(e.value)) {
                e.value = h.expand(stamp, e.value as u32, &mut self.symbols) as i64;
            }
        }
        if let Err(msg) = self.checker.check(&mut e, &self.symbols) {
            let s = &self.streams[i];
            return Err(TraceError::Event {
                path: s
                    .batch
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
}

impl TraceReader {
    /// Whether to return a synchronizing access (tracking what each synchronizing variable
    /// holds): a read of the JDK's own synchronization ([`FLAG_JDK`]) whose value is not
    /// what the variable holds is dropped. Its writer was not recorded (code the JDK runs
    /// quietly, such as class loading; the JDK's events inside a lock's call, which the
    /// lock's model replaces), and what it read only decided JDK code the trace does not
    /// show: it can neither order nor constrain anything. (FORMAT.md §7.)
    #[inline]
    fn keep_sync(&mut self, e: &Event) -> bool {
        match e.kind {
            Kind::VWrite => {
                if e.has_value() {
                    self.sync_values.insert(e.target, e.value);
                } else {
                    self.sync_values.remove(&e.target);
                }
                true
            }
            Kind::VRead if e.has_value() => match self.sync_values.get(&e.target) {
                Some(&v) if v != e.value && e.is_jdk() => {
                    self.jdk_reads_dropped += 1;
                    false
                }
                Some(_) => true,
                None => {
                    self.sync_values.insert(e.target, e.value);
                    true
                }
            },
            _ => true,
        }
    }
}

impl EventSource for TraceReader {
    #[inline]
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        loop {
            match self.next_merged()? {
                Some(e) if !self.keep_sync(&e) => continue,
                r => return Ok(r),
            }
        }
    }

    fn symbols(&mut self) -> &Symbols {
        self.join_vars();
        &self.symbols
    }

    fn take_symbols(&mut self) -> Symbols {
        self.join_vars();
        std::mem::take(&mut self.symbols)
    }

    /// Plain reads returned before a write their stamp follows ([`StaleReads`]).
    fn reads_moved(&self) -> u64 {
        self.stale.moved
    }

    /// The JDK's reads dropped because their writer was not recorded
    /// ([`TraceReader::keep_sync`]).
    fn jdk_reads_dropped(&self) -> u64 {
        self.jdk_reads_dropped
    }

    /// From the metadata (`cut`, written when the agent stopped recording), logs without
    /// their end frame (the JVM died first), and non-daemon threads that had not ended (an
    /// exit with threads running; agent traces only, whose non-daemon threads all end in a
    /// run that ends by itself).
    fn truncation(&self) -> Option<Truncation> {
        let unfinished = self.meta_unfinished || self.streams.iter().any(|s| s.unfinished);
        let reason = match self.meta.get(META_CUT).map(String::as_str) {
            Some("write_error") => CutReason::WriteError,
            Some("internal_error") => CutReason::InternalError,
            Some(_) => CutReason::SizeLimit,
            None if unfinished => CutReason::Killed,
            None => {
                // Daemon threads may run at a normal exit (idle pool workers); a
                // non-daemon thread still running means the JVM exited under it.
                let agent = self.meta.get("recorder").map(String::as_str) == Some("jrace-agent");
                let daemon = |&t: &ThreadId| self.meta.contains_key(&meta_daemon(t));
                if !agent || self.checker.running().iter().all(daemon) {
                    return None;
                }
                CutReason::Exit
            }
        };
        Some(Truncation {
            reason,
            detail: self.meta.get(META_CUT_DETAIL).cloned(),
            running: self.checker.running(),
        })
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

    /// A recording of a Java program (`recorder=jrace-agent`) has the branches of the
    /// program's own conditional jumps, not every control decision.
    fn branches_complete(&self) -> bool {
        self.has_branches() && !self.recorded_by_agent()
    }
}

impl TraceReader {
    /// Whether jrace's recorder wrote the trace (its stamps are clocks, its branches are
    /// the program's conditional jumps).
    fn recorded_by_agent(&self) -> bool {
        self.meta.get("recorder").map(String::as_str) == Some("jrace-agent")
    }

    /// Stream `i`, out of the heap, is the one events are taken from, until the heap's
    /// smallest head comes first.
    #[inline]
    fn take_current(&mut self, i: usize) {
        self.stale.left(i);
        self.cur = i;
        self.bound = self
            .heap
            .peek()
            .map_or(u128::MAX, |Reverse((st, t, _))| key(*st, *t));
    }

    /// The next event of the merged streams.
    #[inline]
    fn next_merged(&mut self) -> Result<Option<Event>, TraceError> {
        loop {
            let c = self.cur;
            if c == NONE {
                let Some(Reverse((_, _, i))) = self.heap.pop() else {
                    return Ok(None);
                };
                self.take_current(i);
                continue;
            }
            let s = &mut self.streams[c];
            if s.bi < s.batch.events.len() {
                let (stamp, e) = s.batch.events[s.bi];
                if key(stamp, s.thread) > self.bound {
                    // Another stream's head comes first: it becomes the current stream and
                    // this one takes its place at the top of the heap (one sift down, where
                    // a push and a pop were two sifts: on a trace whose threads interleave
                    // event by event, every event switches).
                    let next = s.next();
                    let mut top = self.heap.peek_mut().expect("a finite bound is a head");
                    let Reverse((_, _, i)) =
                        std::mem::replace(&mut *top, Reverse((stamp, s.thread, c)));
                    drop(top);
                    self.stale.pushed(c, next);
                    self.take_current(i);
                    continue;
                }
                if s.bi >= s.good {
                    s.bi += 1;
                    let err = s.bad.take().unwrap_or_else(|| TraceError::Other {
                        path: self.dir.clone(),
                        msg: "expected an event with ids named in the metadata".into(),
                    });
                    return Err(err);
                }
                if e.kind == Kind::Write && !self.stale.heads.is_empty() && e.has_value() {
                    if let Some(j) = self.stale_read_before(&e) {
                        // Stream j's next event (the read, or the branch or `begin`
                        // before it, and the read at the next call) goes first. j stays
                        // in the heap under its old key, which now sorts too early: the
                        // merge takes it out, sees its real head, and puts it back.
                        let t = &mut self.streams[j];
                        let (hs, h) = t.batch.events[t.bi];
                        t.bi += 1;
                        t.held = NONE;
                        self.stale.left(j);
                        if h.kind == Kind::Read {
                            self.stale.moved += 1;
                        } else {
                            self.stale.pushed(j, t.next());
                        }
                        self.stale.returned(&h);
                        return self.emit(j, hs, h);
                    }
                }
                if e.kind == Kind::Read && self.stale.on && e.has_value() {
                    let s = &self.streams[c];
                    if s.held == s.bi {
                        self.streams[c].held = NONE;
                        self.stale.moved += 1;
                    } else if self.stale.get(e.target).is_some_and(|v| v != e.value) {
                        if let Some(after) = self.future_write(c, stamp, &e) {
                            // Back into the heap, keyed after every event stamped
                            // like the write.
                            let s = &mut self.streams[c];
                            s.held = s.bi;
                            self.heap.push(Reverse((after, ThreadId::MAX, c)));
                            self.stale.pushed(c, self.streams[c].next());
                            self.cur = NONE;
                            continue;
                        }
                    }
                }
                let s = &mut self.streams[c];
                s.bi += 1;
                self.stale.returned(&e);
                return self.emit(c, stamp, e);
            }
            let more = s.refill(c, &self.decoders, &self.limits);
            match more {
                Ok(true) => {}
                Ok(false) => self.cur = NONE,
                Err(e) => {
                    self.cur = NONE;
                    return Err(e);
                }
            }
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
