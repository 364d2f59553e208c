//! The solver-backed detectors' shared machinery (`mcm`, `said`, `rdit`): window
//! facts, one constraint builder, z3, and the driver that ties them together.
//!
//! - [`barrier`]: `rdit`'s BarrierPair edges, added to ≺ (everything else is mcm's).
//! - [`window`]: per-trace facts, the state carried into a window, and per-window
//!   tables (≺ as vector clocks, lock regions, sources of reads).
//! - [`formula`]: the solver-independent constraint builder: the cut encoding of `mcm`
//!   on a pair's slice, and `said`'s whole-window encoding.
//! - [`solve`]: translation to z3 (the only module that names z3).
//! - [`latch`]: variables used as locks by value (an owner field set and cleared under
//!   a monitor), whose spans refute pairs in the quick check.
//! - [`driver`]: windows, quick check, rounds of parallel queries, witnesses.
//!
//! **Slicing** (why a query may leave events out). An event without an order variable
//! is treated as after the cut. For the pair (a, b), [`formula::slice`] keeps a
//! ≺-closed set S of events that contains the strict ≺-predecessors of a and b and is
//! closed under: (1) the reads that some guard in S needs (M5; in conservative mode the
//! reads before a po-successor in S, and before a and b), and the reads before their
//! source writes, bring in all their sources (Src, rule-pruned) with the sources'
//! ≺-predecessors; (2) when two threads both enter regions of one lock in S, the
//! releases of those regions. Events after a or b are never added. Soundness: S is
//! ≺-closed, so events outside it can all follow the cut, and the formula on S is the
//! full formula with those events out. Completeness: from any witness prefix P, P ∩ S
//! is one too: it is ≺-closed; every guard in it is in S, so the reads it needs are,
//! and each reads from a source in S (or the initial value) with no more interference
//! than in P; a lock region entered before another one in P ends in P, and that
//! release is in S by (2).
//!
//! **Query windows.** Inside a window, each query (mcm, rdit, said) only sees the pair-centered part
//! `[first − margin, second + margin]` ([`driver::Options::margin`], 1,000 events);
//! the window's events before it join its fixed past. This bounds the query size on
//! long windows (z3 time grows about quadratically with it). Reads whose value cannot
//! change in the query (their own thread's latest write, or the initial value, with no
//! write of the query able to come in between) get no definition (`c_r = true`).
//!
//! **Windowing** (docs/DETECTORS.md#windows-and-solver-limits). Windows of N events start every N/2 events; a pair is
//! checked in the first window that contains both of its events. Everything before a
//! window is its fixed past: the values last written ([`window::Carry`]), the locks held
//! (regions with an acquire before the window), waits whose wake is in the window, and
//! threads forked or ended before it. What windowing can still miss:
//! - pairs more than N/2 events apart, unless some window happens to contain both (any
//!   pair more than N events apart is never checked);
//! - races whose witness must move an event of the fixed past, e.g. a critical section
//!   that ends just before the window, or a read before the window that must return
//!   another value (the past is exactly as recorded); for a query, the fixed past
//!   extends to `margin` events before its pair;
//! - races whose witness needs an event after the window's end, or more than `margin`
//!   events after the pair (a source write of the same value recorded later, the release
//!   of a region that ends later).
//!
//! With a window and margin covering the trace (tiny traces, the tests) nothing is lost:
//! `mcm` then reports exactly the races of the maximal causal model, relative to the
//! recorded notify pairing (tests/it/prop_mcm.rs).
//!
//! None of this is unsound: every report carries a witness validated against the whole
//! trace ([`crate::witness`], model cf for mcm, value for said).
//!
//! **Witness size.** A race found in a window starting at event s carries the schedule
//! "events 0..s as recorded, then the model's prefix, then the pair" (docs/REPORT.md#witnesses:
//! witnesses are listed in full). Schedules are only built when the sink wants them
//! ([`crate::RaceSink::wants_schedules`], `--witness`); then memory grows with races ×
//! trace length (on the 10 M-event benchmark trace, more than 24 GB), which is the cost
//! of that format, not of the analysis.
//!
//! **Deduplication.** Pairs are grouped by race signature (static name from
//! [`crate::Detector::set_symbols`], and the location pair); a signature is done at
//! its first validated race and skipped in later windows. Without names (detectors
//! driven by hand), each variable is its own static name.
//!
//! Also bounded, for cost, and sound: per window at most
//! [`driver::Options::max_pairs_per_signature`] pairs of one race signature
//! are tried, over the whole run at most [`driver::Options::max_queries_per_signature`]
//! (64; a signature still undecided then counts as `unknown`), and each access is paired
//! with at most [`driver::Options::max_scan`] earlier accesses of its variable. Before
//! any of that, the quick check drops pairs ordered by ≺ strengthened with the single
//! sources of guarding reads ([`window::Window::compute_forced`]), which no feasible
//! prefix can make adjacent: on the H2 trace this leaves 18 of 3,959 queries.
//!
//! **Where the time goes.** `JRACE_DEBUG=1` prints the run's [`Stats`] every 500 windows
//! and the query counts of the most-queried signatures; `JRACE_DEBUG=2` also one line per
//! solver query (the pair, its variable and locations, the slice size, the verdict). On
//! Derby (14.9 M events) almost every query refutes a pair on a page's
//! `ArrayInputStream`, ordered by Derby's page latch: a `synchronized` flag handed over
//! with `wait`/`notifyAll`, whose `null` value many releases write, so no single source
//! forces the order and only the solver sees it.

pub mod detector;
pub mod driver;
pub mod formula;
pub mod latch;
pub mod solve;
pub mod window;

pub use detector::CausalDetector;
pub use driver::{run, run_with_objects, Options, Policy, Stats};
