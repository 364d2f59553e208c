//! `said`: Said, Wang, Yang, Sakallah's SMT encoding of data-race witnesses (NFM 2011),
//! the comparison baseline for `mcm` (docs/DETECTORS.md#said).
//!
//! **The race notion.** A conflicting pair of plain accesses races when some ordering of
//! the *whole window* keeps every read's recorded value (possibly from another write of
//! the same value), respects program order, fork/join, lock exclusion and wait/notify,
//! and has both accesses enabled at one point (Said's Eq. 3, with the fork of a thread
//! whose first event races). Branches are ignored (every read keeps its value anyway).
//! Volatile accesses take part in read consistency and are never reported.
//!
//! **Promises.**
//! - *Sound*: every read before the pair keeps its value, so each thread runs as
//!   recorded up to the pair. Every report carries the model's witness (events before
//!   the earlier of the two, then the pair), validated by [`crate::witness`] in model
//!   value; said is in [`crate::registry::must_witness`]. Timeouts are counted in
//!   [`crate::detector::Outcome::unknown`] and never reported.
//! - *Not maximal*: it misses races that need a read to change (V1, V9b), and races
//!   after which the window cannot complete (a deadlock or a lost notification: V5,
//!   V11). On every trace `said ⊆ mcm` (tests/it/prop_mcm.rs).
//!
//! A query's window is the pair-centered part of the window mcm uses too (1,000 events
//! either side, the events before it fixed as recorded). Its constraints are asserted in
//! a base scope (shared by the queries that span a whole window); each pair is a
//! `push`/`check`/`pop` (Said's "retractable assertions"). Queries are not sliced
//! further: the whole query window must stay completable, which is what makes said
//! slower than mcm.

use crate::causal::{CausalDetector, Options, Policy};

/// The `said` detector.
pub fn detector(options: Options) -> CausalDetector {
    CausalDetector::new(Policy::Said, options)
}
