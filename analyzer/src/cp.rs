//! Placeholder: being written.

use crate::detector::{Detector, Outcome, RaceSink};
use jrace_trace::Event;

#[derive(Default)]
pub struct CpDetector;

impl Detector for CpDetector {
    fn name(&self) -> &'static str {
        "cp"
    }
    fn on_event(&mut self, _idx: u64, _e: &Event, _races: &mut RaceSink) {}
    fn finish(&mut self, _races: &mut RaceSink) -> Outcome {
        Outcome::default()
    }
}
