//! `rdit`: race detection from incomplete traces (the BarrierPair model of Huang and
//! Rajagopalan, OOPSLA 2016; docs/DETECTORS.md#rdit), solved with z3 like `mcm`.
//!
//! **Why.** Excluded ("missing") code is not traced, so synchronization inside it is
//! invisible: hb and mcm that ignore it report false races, while treating each call as
//! a global barrier (what mcm and said do: every set taken as `*`) kills real ones. The agent records each
//! call into excluded code as `enter(M;D)`…`exit(M)`, with D the objects the callee can
//! reach; missing code is assumed to touch only D. rdit keeps the recorded order exactly
//! where that assumption says missing code could have synchronized: between BarrierPairs
//! whose sets meet, and between a BarrierPair and an observed event on an object of its
//! set (accesses, monitor operations, a thread's lifecycle when its `Thread` is in D).
//!
//! **Encoding.** mcm's, over a must-happen-before relation extended by those edges
//! ([`crate::facts::barrier`]): every BarrierPair constraint is a plain edge between two
//! events in trace order. `enter` and `exit` count as branches (the callee's behaviour may
//! depend on what it read). Read consistency, with the initial-value case, applies per
//! query to the reads the pair depends on, never globally (vector r14_prefix). A read whose
//! value only missing code can have written has no source, so it is never concrete and
//! queries that need it are unsatisfiable (sound; a maximality loss, vector
//! r08b_missingwrite).
//!
//! **Promises.** A race is reported only with a witness from the model, validated
//! against the trace including the BarrierPair edges (`W-BARRIER`) before it is
//! reported. Under the model's assumptions a reported race is real:
//! A1 missing code touches only objects in D (and class statics named in D, the agent's
//! `--bp-globals`); A2 D is a superset of what it can reach; A3 the recorded order is
//! one the run had; A4 branches were recorded, or the conservative reading is used.
//! Statics touched only inside missing code are the documented blind spot (R11).
//! rdit reports every race mcm reports (mcm's edges, with every set `*`, imply rdit's)
//! and never one that mcm without any BarrierPair edges would not; on a trace without
//! `enter` events it is mcm. Windowing loses what [`crate::causal`] lists;
//! BarrierPairs themselves are computed over the whole trace, so one that crosses a
//! window border keeps its set and its extent.

use crate::causal::{CausalDetector, Options, Policy};

/// The `rdit` detector.
pub fn detector(options: Options) -> CausalDetector {
    CausalDetector::new(Policy::Rdit, options)
}
