//! One streaming interface over every trace format, so detectors never care whether a
//! trace came from a `.std` file or an agent's trace directory.

use crate::error::TraceError;
use crate::model::*;

/// Events in the recorded global order, one at a time. Names are interned into
/// [`EventSource::symbols`] as they are met, so an id in an event is always resolvable by
/// the time the event is returned.
pub trait EventSource {
    /// The next event, already checked by [`crate::wellformed::Checker`].
    fn next_event(&mut self) -> Result<Option<Event>, TraceError>;
    /// Appends the next events to `out`, at most `max`, and none only at the end of the
    /// source; an error comes after the events before it were appended. The analysis
    /// reads a trace this way: a call through the trait per event (and per wrapper) was
    /// about a fifth of reading a binary trace, where this default is compiled for each
    /// source with its `next_event` inlined. Wrappers that change what `next_event`
    /// returns must override it as well or keep this default
    /// ([`forward_source_methods`] does not forward it).
    fn next_batch(&mut self, out: &mut Vec<Event>, max: usize) -> Result<(), TraceError> {
        for _ in 0..max {
            match self.next_event()? {
                Some(e) => out.push(e),
                None => break,
            }
        }
        Ok(())
    }
    /// The trace's names. A binary trace's variable names may still be being built when
    /// the events start: this waits for them.
    fn symbols(&mut self) -> &Symbols;
    /// Whether the trace carries branch events. For a `.std` file this is known only
    /// once it has been read to the end.
    fn has_branches(&self) -> bool;
    /// Whether its branches are every control decision of the run, as the predictive
    /// detectors' branch model assumes (a read's value matters only to what follows a
    /// branch). A `.std` trace with branches says so by having them; a recording of a
    /// Java program does not: a virtual call picks its method by the receiver read, and
    /// a value returned by the JDK's code (`Optional.get()`, `Integer.intValue()`) may
    /// pick the next access's address, with no branch recorded. Such a trace is analyzed
    /// as one without branches (every read counts as followed by a branch).
    fn branches_complete(&self) -> bool {
        self.has_branches()
    }
    /// Plain reads returned before a write their stamp follows so far (FORMAT.md §7:
    /// agent traces only).
    fn reads_moved(&self) -> u64 {
        0
    }
    /// Reads of the JDK's own synchronization dropped because their writer was not
    /// recorded (FORMAT.md §7: agent traces only).
    fn jdk_reads_dropped(&self) -> u64 {
        0
    }
    /// Whether the trace ends before the program's run did, and where. Known once the
    /// source has been read to its end (`None` before, and for formats that cannot tell).
    fn truncation(&self) -> Option<Truncation> {
        None
    }
    /// The names, moved out once the source has been read to its end: a large trace's
    /// names are much of the analyzer's memory, and a copy would double it. The source's
    /// own [`EventSource::symbols`] may be empty afterwards; the default copies them.
    fn take_symbols(&mut self) -> Symbols {
        self.symbols().clone()
    }
}

/// The [`EventSource`] methods a wrapper (a filter, a journal) passes straight to the
/// source it wraps, in its field `$inner`: every method but `next_event` and `next_batch`
/// (which must return what the wrapper's `next_event` does), so that a method added to
/// the trait is forwarded by every wrapper.
#[macro_export]
macro_rules! forward_source_methods {
    ($inner:ident) => {
        fn symbols(&mut self) -> &$crate::Symbols {
            self.$inner.symbols()
        }
        fn has_branches(&self) -> bool {
            self.$inner.has_branches()
        }
        fn branches_complete(&self) -> bool {
            self.$inner.branches_complete()
        }
        fn reads_moved(&self) -> u64 {
            self.$inner.reads_moved()
        }
        fn jdk_reads_dropped(&self) -> u64 {
            self.$inner.jdk_reads_dropped()
        }
        fn truncation(&self) -> Option<$crate::Truncation> {
            self.$inner.truncation()
        }
        fn take_symbols(&mut self) -> $crate::Symbols {
            self.$inner.take_symbols()
        }
    };
}

/// An [`EventSource`] over a trace already in memory (its events already checked): a
/// trace read whole for witnesses, or a test's trace.
pub struct MemSource<'a> {
    trace: &'a Trace,
    next: usize,
}

impl<'a> MemSource<'a> {
    pub fn new(trace: &'a Trace) -> Self {
        MemSource { trace, next: 0 }
    }
}

impl EventSource for MemSource<'_> {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        let e = self.trace.events.get(self.next).copied();
        self.next += 1;
        Ok(e)
    }
    fn symbols(&mut self) -> &Symbols {
        &self.trace.symbols
    }
    fn has_branches(&self) -> bool {
        self.trace.has_branches
    }
}

/// A trace that ends before the run it records did: recording stopped (a size limit, a
/// write that failed), the JVM died before the recorder finished, or it exited while
/// threads were still running. Such a trace is analyzed like any other (locks held and
/// threads running at its end are normal); reports say it was cut, why, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncation {
    pub reason: CutReason,
    /// The recorder's own words about it, when it left any.
    pub detail: Option<String>,
    /// Threads with events in the trace that had not ended when it ends.
    pub running: Vec<ThreadId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutReason {
    /// The trace reached the recorder's size limit (`max_mb`).
    SizeLimit,
    /// The recorder could not write (a full disk, a file it could not create or grow).
    WriteError,
    /// The recorder never finished the trace: the JVM was killed or crashed.
    Killed,
    /// The JVM exited (`System.exit`, or the last non-daemon thread ended) while these
    /// threads were still running: their events after that point are not in the trace.
    Exit,
    /// The recorder stopped on an error of its own (events it would have written out of
    /// order).
    InternalError,
}

impl CutReason {
    /// The name used in JSON reports.
    pub fn name(self) -> &'static str {
        match self {
            CutReason::SizeLimit => "max_mb",
            CutReason::WriteError => "write_error",
            CutReason::Killed => "killed",
            CutReason::Exit => "exit",
            CutReason::InternalError => "internal_error",
        }
    }

    /// What happened, for a reader of the report.
    pub fn describe(self) -> &'static str {
        match self {
            CutReason::SizeLimit => {
                "recording stopped at the size limit (max_mb); the program went on unrecorded"
            }
            CutReason::WriteError => {
                "recording stopped because the recorder could not write its logs (a full disk?)"
            }
            CutReason::Killed => {
                "the JVM ended before the recorder finished the trace (killed or crashed)"
            }
            CutReason::Exit => "the JVM exited while threads were still running",
            CutReason::InternalError => {
                "recording stopped on an internal error of the recorder (a bug in jrace: please report it)"
            }
        }
    }
}

/// Reads a whole trace into memory.
pub fn read_all(src: &mut dyn EventSource) -> Result<Trace, TraceError> {
    let mut events = Vec::new();
    while let Some(e) = src.next_event()? {
        events.push(e);
    }
    Ok(Trace {
        symbols: src.symbols().clone(),
        events,
        has_branches: src.branches_complete(),
    })
}
