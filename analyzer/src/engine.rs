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

/// Events per batch handed from the reading thread to the detectors.
const BATCH: usize = 4096;

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
    // Each detector runs on a thread of its own, fed the batches this thread reads
    // (decompressing, decoding, merging the threads' logs): on two cores, reading and
    // the detectors overlap, and the slowest detector sets the pace.
    std::thread::scope(|scope| -> Result<(), TraceError> {
        let mut feeds = Vec::with_capacity(n);
        let mut workers = Vec::with_capacity(n);
        for (d, sink) in detectors.iter_mut().zip(sinks.iter_mut()) {
            let (tx, rx) = std::sync::mpsc::sync_channel::<std::sync::Arc<Vec<Event>>>(8);
            feeds.push(tx);
            workers.push(scope.spawn(move || {
                let (mut nanos, mut at) = (0u128, 0u64);
                for batch in rx {
                    let t0 = Instant::now();
                    d.on_batch(at, &batch, sink);
                    nanos += t0.elapsed().as_nanos();
                    at += batch.len() as u64;
                }
                nanos
            }));
        }
        let mut read = Ok(());
        // Batches handed out, oldest first: one every worker is done with is reused.
        let mut lent: std::collections::VecDeque<std::sync::Arc<Vec<Event>>> = Default::default();
        loop {
            let mut batch = match lent.front().map(std::sync::Arc::strong_count) {
                Some(1) => {
                    let mut b = std::sync::Arc::try_unwrap(lent.pop_front().expect("a front"))
                        .unwrap_or_else(|_| Vec::with_capacity(BATCH));
                    b.clear();
                    b
                }
                _ => Vec::with_capacity(BATCH),
            };
            if let Err(e) = src.next_batch(&mut batch, BATCH) {
                read = Err(e);
            }
            if batch.is_empty() {
                break;
            }
            let before = idx;
            idx += batch.len() as u64;
            let batch = std::sync::Arc::new(batch);
            for feed in &feeds {
                // A worker only stops early by panicking, which `join` re-raises below.
                let _ = feed.send(batch.clone());
            }
            lent.push_back(batch);
            if before / PROGRESS_EVERY != idx / PROGRESS_EVERY {
                progress(idx);
            }
            if read.is_err() {
                break;
            }
        }
        drop(feeds);
        for (i, w) in workers.into_iter().enumerate() {
            nanos[i] = match w.join() {
                Ok(ns) => ns,
                Err(panic) => std::panic::resume_unwind(panic),
            };
        }
        read
    })?;
    let symbols = src.take_symbols();
    let mut runs = Vec::with_capacity(n);
    for (i, d) in detectors.iter_mut().enumerate() {
        let t0 = Instant::now();
        d.set_symbols(&symbols);
        d.set_branches_complete(src.branches_complete());
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
    let races = signatures(&symbols, &runs);
    Ok(Analysis {
        symbols,
        events: idx,
        has_branches: src.branches_complete(),
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
