//! Placeholder: being written.

use crate::detector::{Detector, Outcome, RaceSink};
use jrace_trace::Event;

#[derive(Default)]
pub struct ShbDetector;

impl Detector for ShbDetector {
    fn name(&self) -> &'static str {
        "shb"
    }
    fn on_event(&mut self, _idx: u64, _e: &Event, _races: &mut RaceSink) {}
    fn finish(&mut self, _races: &mut RaceSink) -> Outcome {
        Outcome::default()
    }
}
