//! jrace's analyzer: one detector per module over one event model, and reports.
//!
//! Every detector implements [`detector::Detector`]; [`engine`] runs several over one
//! pass of a trace and folds their races into signatures for [`report`].

pub mod cp;
pub mod detector;
pub mod engine;
pub mod hb;
mod history;
pub mod lockset;
pub mod m2;
pub mod oracle;
pub mod report;
pub mod shb;
pub mod sync;
pub mod testing;
pub mod vc;
pub mod wcp;
pub mod witness;
pub mod witness_view;

pub use detector::{Detector, Outcome, RacePair, RaceSink};

/// Every detector name, in the order reports list them.
pub const DETECTORS: &[&str] = &["hb", "lockset", "cp", "wcp", "shb", "m2"];

/// Names accepted by `-d` that later work will provide.
pub const PLANNED: &[&str] = &["mcm", "said", "rdit"];

/// The default set: sound on every report (shb) plus the fast classics.
pub const DEFAULT_DETECTORS: &[&str] = &["hb", "shb", "wcp"];

/// A fresh detector by name.
pub fn make_detector(name: &str) -> Option<Box<dyn Detector>> {
    Some(match name {
        "hb" => Box::new(hb::HbDetector::default()),
        "lockset" => Box::new(lockset::LocksetDetector::default()),
        "cp" => Box::new(cp::CpDetector::default()),
        "wcp" => Box::new(wcp::WcpDetector::default()),
        "shb" => Box::new(shb::ShbDetector::default()),
        "m2" => Box::new(m2::M2Detector::default()),
        _ => return None,
    })
}
