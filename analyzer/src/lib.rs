//! jrace's analyzer: one detector per module over one event model, and reports.
//!
//! Every detector implements [`detector::Detector`] (one module each under [`detectors`]);
//! [`engine`] runs several over one pass of a trace and folds their races into signatures
//! for [`report`], [`pipeline`] takes one trace from its events to a report.

pub mod causal;
pub mod detector;
pub mod detectors;
pub mod engine;
pub mod facts;
mod history;
#[cfg(any(test, feature = "testing"))]
pub mod oracle;
pub mod pipeline;
pub mod registry;
pub mod report;
pub mod sync;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod vc;
pub mod witness;
pub mod witness_view;

pub use detector::{Detector, Outcome, Progress, RaceAccess, RacePair, RaceSink};
// Each detector also at the crate's root (`jrace_analyzer::hb`, ...).
pub use detectors::{cp, deadlock, hb, lockset, m2, mcm, rdit, said, shb, wcp};

/// Every detector name, in the order reports list them ([`registry::REGISTRY`]).
pub fn detector_names() -> Vec<&'static str> {
    registry::names().collect()
}

/// Names accepted by `-d` that later work will provide.
pub const PLANNED: &[&str] = &[];

/// The default set: sound on every report (shb) plus the fast classics.
pub const DEFAULT_DETECTORS: &[&str] = &["hb", "shb", "wcp"];

/// Construction parameters of detectors (`jrace analyze --window N --solver-timeout
/// SECS`). Detectors that have no such knob ignore them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DetectorOptions {
    /// Window size in events for the solver detectors (mcm, said, rdit); `None`: 10,000.
    /// Windows overlap by half (see [`causal`]).
    pub window: Option<usize>,
    /// Per-query solver timeout; `None`: 10 s. A pair that times out is not reported
    /// and is counted in the detector's `unknown`.
    pub solver_timeout: Option<std::time::Duration>,
}

impl DetectorOptions {
    /// The solver detectors' options with these parameters applied.
    pub fn causal(&self) -> causal::Options {
        let mut o = causal::Options::default();
        if let Some(w) = self.window {
            o.window = w.max(2);
        }
        if let Some(t) = self.solver_timeout {
            o.timeout_ms = u32::try_from(t.as_millis()).unwrap_or(u32::MAX).max(1);
        }
        o
    }
}

/// A fresh detector by name, with default options.
pub fn make_detector(name: &str) -> Option<Box<dyn Detector>> {
    make_detector_with(name, &DetectorOptions::default())
}

/// A fresh detector by name, built with `opts`.
pub fn make_detector_with(name: &str, opts: &DetectorOptions) -> Option<Box<dyn Detector>> {
    registry::info(name).map(|d| (d.make)(opts))
}
