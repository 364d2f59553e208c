//! One streaming interface over every trace format, so detectors never care whether a
//! trace came from a `.std` file or an agent's trace directory.

use crate::error::TraceError;
use crate::model::*;
use std::path::Path;

/// Events in the recorded global order, one at a time. Names are interned into
/// [`EventSource::symbols`] as they are met, so an id in an event is always resolvable by
/// the time the event is returned.
pub trait EventSource {
    /// The next event, already checked by [`crate::wellformed::Checker`].
    fn next_event(&mut self) -> Result<Option<Event>, TraceError>;
    fn symbols(&self) -> &Symbols;
    /// Whether the trace carries branch events. For a `.std` file this is known only
    /// once it has been read to the end.
    fn has_branches(&self) -> bool;
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
}

/// Opens a trace: a directory is an agent trace directory, anything else a `.std` file.
pub fn open(path: &Path) -> Result<Box<dyn EventSource>, TraceError> {
    if path.is_dir() {
        Ok(Box::new(crate::binlog::TraceReader::open(path)?))
    } else {
        Ok(Box::new(crate::std_format::StdReader::open(path)?))
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
        has_branches: src.has_branches(),
    })
}

/// Loads a trace file or directory into memory.
pub fn load(path: &Path) -> Result<Trace, TraceError> {
    let mut src = open(path)?;
    read_all(src.as_mut())
}
