//! Runs several detectors over one pass of a trace, then folds their per-variable races
//! into race signatures (docs/REPORT.md): the variable's static name plus the unordered
//! pair of locations. Each signature keeps its first pair (earliest second event, then
//! earliest first event) as the representative shown in reports, and race ids follow that
//! order.

use crate::detector::{Detector, Outcome, RacePair, RaceSink, Schedule};
use jrace_trace::{Event, EventSource, LocId, Symbols, TraceError};
use std::collections::HashMap;
use std::time::Instant;

/// One detector's result.
#[derive(Debug)]
pub struct DetectorRun {
    pub name: &'static str,
    pub pairs: Vec<RacePair>,
    /// Schedules the detector built for some of its pairs, by (first, second)
    /// ([`RaceSink::report_with_schedule`]); unvalidated, tried first by
    /// [`crate::witness::witness_analysis`]. Empty for detectors that build none.
    pub schedules: rustc_hash::FxHashMap<(u64, u64), Schedule>,
    pub outcome: Outcome,
    pub seconds: f64,
}

/// A race signature: static variable id, locations (low, high).
pub type SigKey = (u32, LocId, LocId);

/// A race as reported: the signature, its representative pair, and which detectors found it.
#[derive(Clone, Debug)]
pub struct SigRace {
    pub id: u64,
    pub key: SigKey,
    pub pair: RacePair,
    /// Indices into [`Analysis::runs`].
    pub detectors: Vec<usize>,
}

#[derive(Debug)]
pub struct Analysis {
    pub symbols: Symbols,
    pub events: u64,
    pub has_branches: bool,
    pub runs: Vec<DetectorRun>,
    pub races: Vec<SigRace>,
}

/// Called every `PROGRESS_EVERY` events with the number of events done.
pub const PROGRESS_EVERY: u64 = 1 << 20;

/// Streams `src` once through every detector and collects signatures.
///
/// Per-detector time is measured around that detector's own calls, so the figure for
/// one detector does not include parsing or the other detectors.
///
/// Detector-built schedules are kept ([`DetectorRun::schedules`]); see
/// [`run_with_schedules`] to drop them.
pub fn run(
    src: &mut dyn EventSource,
    detectors: Vec<Box<dyn Detector>>,
    progress: &mut dyn FnMut(u64),
) -> Result<Analysis, TraceError> {
    run_with_schedules(src, detectors, progress, true)
}

/// [`run`], keeping detector-built schedules only when `schedules` is true (without
/// them, detectors such as m2 skip building schedules for Lemma 5.1 races).
pub fn run_with_schedules(
    src: &mut dyn EventSource,
    mut detectors: Vec<Box<dyn Detector>>,
    progress: &mut dyn FnMut(u64),
    schedules: bool,
) -> Result<Analysis, TraceError> {
    let n = detectors.len();
    let mut sinks: Vec<RaceSink> = (0..n)
        .map(|_| {
            if schedules {
                RaceSink::new()
            } else {
                RaceSink::without_schedules()
            }
        })
        .collect();
    let mut nanos = vec![0u128; n];
    let mut idx: u64 = 0;
    // Batch events so the per-detector timer is read once per batch, not per event.
    let mut batch: Vec<Event> = Vec::with_capacity(4096);
    loop {
        batch.clear();
        while batch.len() < batch.capacity() {
            match src.next_event()? {
                Some(e) => batch.push(e),
                None => break,
            }
        }
        if batch.is_empty() {
            break;
        }
        for (i, d) in detectors.iter_mut().enumerate() {
            let t0 = Instant::now();
            d.on_batch(idx, &batch, &mut sinks[i]);
            nanos[i] += t0.elapsed().as_nanos();
        }
        let before = idx;
        idx += batch.len() as u64;
        if before / PROGRESS_EVERY != idx / PROGRESS_EVERY {
            progress(idx);
        }
    }
    let mut runs = Vec::with_capacity(n);
    for (i, d) in detectors.iter_mut().enumerate() {
        let t0 = Instant::now();
        d.set_symbols(src.symbols());
        let outcome = d.finish(&mut sinks[i]);
        nanos[i] += t0.elapsed().as_nanos();
        runs.push(DetectorRun {
            name: d.name(),
            pairs: sinks[i].pairs(),
            schedules: sinks[i].take_schedules(),
            outcome,
            seconds: nanos[i] as f64 / 1e9,
        });
    }
    let symbols = src.symbols().clone();
    let races = signatures(&symbols, &runs);
    Ok(Analysis {
        symbols,
        events: idx,
        has_branches: src.has_branches(),
        runs,
        races,
    })
}

/// Folds every run's pairs into signatures and numbers them.
pub fn signatures(sym: &Symbols, runs: &[DetectorRun]) -> Vec<SigRace> {
    let mut by_key: HashMap<SigKey, SigRace> = HashMap::new();
    for (di, run) in runs.iter().enumerate() {
        for p in &run.pairs {
            let key = sig_key(sym, p);
            let r = by_key.entry(key).or_insert(SigRace {
                id: 0,
                key,
                pair: *p,
                detectors: vec![],
            });
            if (p.second, p.first) < (r.pair.second, r.pair.first) {
                r.pair = *p;
            }
            if !r.detectors.contains(&di) {
                r.detectors.push(di);
            }
        }
    }
    let mut races: Vec<SigRace> = by_key.into_values().collect();
    races.sort_by_key(|r| (r.pair.second, r.pair.first, r.key));
    for (i, r) in races.iter_mut().enumerate() {
        r.id = i as u64 + 1;
        r.detectors.sort_unstable();
    }
    races
}

fn sig_key(sym: &Symbols, p: &RacePair) -> SigKey {
    (
        sym.static_of(p.var),
        p.first_loc.min(p.second_loc),
        p.first_loc.max(p.second_loc),
    )
}
