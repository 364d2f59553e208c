//! `mcm`: sound and maximal race prediction in RVPredict's maximal causal model with
//! branch events (Huang, Meredith, Roşu, PLDI 2014), solved with z3 (docs/DETECTORS.md#mcm).
//!
//! **The race notion** (docs/DETECTORS.md#words). A conflicting pair of plain accesses races when
//! some feasible prefix of a reordering ends with the two next to each other. Feasible
//! follows local determinism: a read may return another value than recorded, but then
//! its thread may not pass a branch (`br`, and conservatively `enter`/`exit`), and its
//! later writes carry unknown values. A trace without any `br` is analyzed in
//! conservative mode: every read counts as followed by a branch (docs/DETECTORS.md#branches-and-conservative-mode).
//! Volatile accesses are reads and writes for consistency and are never reported.
//!
//! **The encoding**: one order variable per event and a cut C, the pair at
//! the cut; MHB (program order, fork/join, matched notify → wake, pins of unmatched
//! wakes, and BarrierPair edges as `rdit` builds them with every reachable set taken as
//! `*`, which is conservative: [`crate::facts::barrier`]), lock exclusion of regions entered before the
//! cut, wait-before-notify for wakes before the cut, one memoized Boolean per read
//! "returns its recorded value" (initial-value case included), and every guard before
//! the cut feasible. Each query is sliced to the events that can matter for its pair
//! (see [`crate::causal`]); pairs come from the quick check (no common lock, not
//! MHB-ordered), one per race signature at a time, round-robin, solved in parallel
//! with a per-query timeout.
//!
//! **Promises.**
//! - *Sound*: every report carries the witness read from the model (events before the
//!   cut by order value, then the pair), validated by [`crate::witness`] in model cf
//!   before it is reported, and attached to the race
//!   ([`crate::detector::RaceSink::report_with_schedule`]); mcm is in
//!   [`crate::registry::must_witness`].
//!   A solver `unknown` (timeout) is never reported: such signatures are counted in
//!   [`crate::detector::Outcome::unknown`].
//! - *Maximal within a window, relative to the recorded notify pairing* (docs/DETECTORS.md#mcm):
//!   with one window covering the trace and no timeout, every race of the maximal causal
//!   model whose wakes keep their recorded notifies is reported (checked against a
//!   brute-force enumeration of feasible prefixes in `tests/it/prop_mcm.rs`). Windowing
//!   loses what [`crate::causal`] lists.

use crate::causal::{CausalDetector, Options, Policy};

/// The `mcm` detector.
pub fn detector(options: Options) -> CausalDetector {
    CausalDetector::new(Policy::Mcm, options)
}
