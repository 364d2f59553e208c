//! What is known about a trace beyond its events, below both the detectors and the
//! witnesses, which read it: [`Facts`] (threads, forks, reads-from, notify/wake matching,
//! value keys: `trace.rs`, `values.rs`), the objects calls into excluded code may touch
//! and the order they impose (`barrier.rs`), and the locks held at each racing access for
//! the reports (`locks.rs`).

pub mod barrier;
mod locks;
mod trace;
pub mod values;

pub use locks::*;
pub use trace::Facts;

/// "No event": an index that is not one.
pub const NONE: u32 = u32::MAX;
