//! The one `Detector` shell of the solver detectors: it buffers the trace (the encodings
//! need it whole) and hands it to [`super::run`] with the detector's [`Policy`]. `mcm` and
//! `said` differ only in that policy, and `rdit` also takes the trace's reachable sets;
//! their modules state what each promises.

use super::driver::{run_trace, synthetic_trace};
use super::{Options, Policy, Stats};
use crate::detector::{Detector, Outcome, Progress, RaceSink};
use crate::facts::barrier::ObjectIndex;
use jrace_trace::Event;

pub struct CausalDetector {
    policy: Policy,
    events: Vec<Event>,
    pub options: Options,
    /// Statistics of the last `finish`.
    pub stats: Stats,
    /// Static name of each variable, from [`Detector::set_symbols`].
    statics: Option<Vec<u32>>,
    /// `rdit`: the objects of the reachable sets, from [`Detector::set_symbols`].
    objects: Option<ObjectIndex>,
    progress: Option<std::sync::Arc<dyn Progress>>,
}

impl CausalDetector {
    pub fn new(policy: Policy, options: Options) -> CausalDetector {
        CausalDetector {
            policy,
            events: Vec::new(),
            options,
            stats: Stats::default(),
            statics: None,
            objects: None,
            progress: None,
        }
    }
}

impl Detector for CausalDetector {
    fn name(&self) -> &'static str {
        match self.policy {
            Policy::Mcm => "mcm",
            Policy::Said => "said",
            Policy::Rdit => "rdit",
        }
    }

    fn on_event(&mut self, _idx: u64, e: &Event, _races: &mut RaceSink) {
        self.events.push(*e);
    }

    fn on_batch(&mut self, _first_idx: u64, events: &[Event], _races: &mut RaceSink) {
        self.events.extend_from_slice(events);
    }

    fn set_symbols(&mut self, symbols: &jrace_trace::Symbols) {
        self.statics = Some(symbols.var_static.clone());
        if self.policy == Policy::Rdit {
            self.objects = Some(ObjectIndex::new(symbols));
        }
    }

    fn set_branches_complete(&mut self, complete: bool) {
        self.options.branches = Some(complete);
    }

    fn set_progress(&mut self, progress: std::sync::Arc<dyn Progress>) {
        self.progress = Some(progress);
    }

    fn finish(&mut self, races: &mut RaceSink) -> Outcome {
        let trace = synthetic_trace(std::mem::take(&mut self.events), self.options.branches);
        let statics = self.statics.take();
        let objects = self.objects.take();
        self.stats = run_trace(
            &trace,
            self.policy,
            &self.options,
            statics.as_deref(),
            objects.as_ref(),
            self.progress.as_deref(),
            races,
        );
        Outcome {
            unknown: Some(self.stats.unknown),
            complete: None,
            warnings_only: false,
            ..Outcome::default()
        }
    }
}
