//! jrace's analyzer: one detector per module over one event model, and reports.
//!
//! Every detector implements [`detector::Detector`]; [`engine`] runs several over one
//! pass of a trace and folds their races into signatures for [`report`].

pub mod detector;
pub mod sync;
pub mod vc;

pub use detector::{Detector, Outcome, RacePair, RaceSink};
