//! Writing an event: branch elimination, the TREE filter, stamps (the clock, and the
//! synchronization word for synchronization events), and the append to the thread's log
//! that cuts the recording when it fails.

use super::*;

impl Cx<'_> {
    pub(super) fn emit(
        &mut self,
        kind: Kind,
        target: u32,
        loc: u32,
        value: Option<i64>,
        sync: bool,
    ) {
        self.emit_one(kind, target, loc, value, sync);
    }

    pub(super) fn emit_one(
        &mut self,
        kind: Kind,
        target: u32,
        loc: u32,
        value: Option<i64>,
        sync: bool,
    ) {
        if !self.t.lazy_locks.is_empty() {
            self.write_lazy_locks();
        }
        self.settle_before(kind, loc);
        if !self.note_for_branches(kind, value) || self.tree_drops(kind, target, loc) {
            return;
        }
        let s = self.stamp(kind, sync);
        let mut e = Event::new(self.t.tid, kind, target, loc);
        match value {
            // An acquire's or a wake's value is a mark ([`jrace_trace::ACQUIRE_TRY`],
            // [`jrace_trace::WAKE_TIMED_OUT`]), not a value read.
            Some(v) if matches!(kind, Kind::Acquire | Kind::Wake) => e.value = v,
            Some(v) => e = e.with_value(v),
            None => {}
        }
        self.append(s, &e);
    }

    /// What must be in the log before any event of this thread: the end of modelled calls
    /// the program's code left (it is over, or calling back), a wake whose wait ended by
    /// an exception.
    #[inline]
    fn settle_before(&mut self, kind: Kind, loc: u32) {
        if !self.jdk && !self.t.open_calls.is_empty() {
            self.close_open_calls();
        }
        if let Some(l) = self.t.pending_wake {
            if kind != Kind::Wake {
                self.t.pending_wake = None;
                self.emit_one(Kind::Wake, l, loc, None, true);
            }
        }
    }

    /// Notes what a read can decide for the next branch; false for a branch that
    /// constrains nothing (no read since the last one), which is not written.
    #[inline]
    fn note_for_branches(&mut self, kind: Kind, value: Option<i64>) -> bool {
        match kind {
            Kind::Branch if !self.t.since_branch.any() => return false,
            Kind::Branch => self.t.since_branch.clear(),
            Kind::Read | Kind::VRead => {
                let sb = &mut self.t.since_branch;
                match value {
                    None => sb.any_address = true,
                    // A null read decides a branch as well as any value.
                    Some(0) if self.ref_value => sb.prim = true,
                    Some(v) if self.ref_value => sb.note_ref(v as u64),
                    Some(_) => sb.prim = true,
                }
            }
            _ => {}
        }
        true
    }

    /// With `tree=MODE`: whether the TREE filter drops this (redundant plain) access.
    /// Everything else about it (a pending wake, what it read for branches) happened as if
    /// it were written.
    #[inline]
    fn tree_drops(&mut self, kind: Kind, target: u32, loc: u32) -> bool {
        let Some(f) = self.t.tree.as_deref_mut() else {
            return false;
        };
        if !kind.is_plain_access() {
            f.sync(kind, target);
            return false;
        }
        let owners = self.a.tree.as_ref();
        let switches = owners.and_then(|o| o.touch(target, self.t.tid));
        if f.access(loc, target, kind == Kind::Write, switches) {
            return false;
        }
        self.t.tree_dropped += 1;
        true
    }

    /// The event's stamp. A loaded value and a lazily written `begin` observe what
    /// happened before the hook began; everything else is stamped now (a publishing event
    /// as late as possible, before its operation; an observation the hook makes itself,
    /// e.g. under a lock it takes, after all it may follow). A synchronization event comes
    /// after every synchronization event stamped before it, on any thread.
    #[inline]
    fn stamp(&mut self, kind: Kind, sync: bool) -> u64 {
        let a = self.a;
        let early =
            kind == Kind::Begin || (self.loaded && matches!(kind, Kind::Read | Kind::VRead));
        let now = if early && self.entry.now != 0 {
            self.entry.now
        } else {
            a.now()
        };
        let mut s = now.max(self.t.last);
        if sync {
            let base = match (kind, self.entry.sync) {
                (Kind::Begin, Some(w)) => w,
                _ => a.sync_clock.load(Ordering::Acquire),
            };
            s = s.max(base + 1);
            a.sync_clock.fetch_max(s, Ordering::AcqRel);
        }
        self.t.last = s;
        s
    }

    /// Writes one stamped event to the thread's log (and counts the trace's size).
    #[inline]
    pub(super) fn append(&mut self, s: u64, e: &Event) {
        let a = self.a;
        if let Some(log) = self.t.log.as_mut() {
            // After a cut (another thread's, or a metadata write that failed on this
            // one while naming what this event refers to) nothing more is written.
            if a.stopped.load(Ordering::Relaxed) {
                return;
            }
            if let Err(err) = log.append(s, e) {
                self.t.log = None;
                // The log refuses a stamp below its last only when the recorder wrote
                // its events out of order: its own bug, not the disk's.
                let reason = if err.kind() == std::io::ErrorKind::InvalidInput {
                    "internal_error"
                } else {
                    "write_error"
                };
                a.cut(
                    reason,
                    &format!(
                        "thread {}: {err}: recording stopped, the program goes on",
                        self.t.tid
                    ),
                );
                return;
            }
            let value = e.has_value().then_some(e.value);
            crate::replay::emitted(self.t.tid, e.kind, e.loc, value); // replay
            self.t.size.until_check -= 1;
            if self.t.size.until_check == 0 {
                self.t.size.until_check = SIZE_CHECK_EVERY;
                let now = log.bytes();
                self.count_size(now);
            }
        }
    }

    /// Adds this log's growth to the trace's size; cuts the trace at `max_mb`.
    fn count_size(&mut self, log_bytes: u64) {
        let a = self.a;
        let Some(max) = a.opts.max_bytes else { return };
        let grown = log_bytes - self.t.size.counted;
        self.t.size.counted = log_bytes;
        let total = a.bytes.fetch_add(grown, Ordering::Relaxed) + grown;
        if total >= max {
            a.cut(
                "max_mb",
                &format!(
                    "the trace reached {total} bytes (max_mb): recording stopped, the program goes on"
                ),
            );
        }
    }
}
