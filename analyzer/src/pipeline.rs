//! One trace from its events to a report: the detectors over one pass (behind the TREE
//! filter when asked), race signatures, witnesses when asked, and the facts the report
//! names about each access. The command line opens the trace, picks the detectors and
//! shows progress; everything in between is here, behind one [`Request`].

use crate::facts::{annotate, JournaledSource, LockJournal, JOURNAL_CAP};
use crate::report::{self, Report};
use crate::{engine, witness, DetectorOptions, Progress};
use jrace_trace::tree::{FilteredSource, Mode};
use jrace_trace::{EventSource, MemSource, Trace, TraceError};
use std::sync::Arc;

/// What to analyze and how.
pub struct Request<'a> {
    /// The detectors, by registry name.
    pub detectors: &'a [&'static str],
    pub options: &'a DetectorOptions,
    /// Read the trace whole and validate a witness for each race.
    pub witness: bool,
    /// The TREE filter in front of the detectors (`--tree`).
    pub prepass: Option<Mode>,
    /// With `witness`: build only this race's witness, minimized if the flag says so
    /// (`jrace witness`, `jrace replay`).
    pub only_race: Option<(u64, bool)>,
    /// Where the solver detectors report progress.
    pub progress: Option<Arc<dyn Progress>>,
    /// Lock changes the journal keeps before the report falls back to a second pass
    /// ([`JOURNAL_CAP`]).
    pub journal_cap: usize,
    /// Races the report describes at most (the first ones by id); the others are
    /// counted ([`report::Omitted`]).
    pub max_races: usize,
}

impl<'a> Request<'a> {
    /// `detectors` with default options, no witnesses, no filter.
    pub fn new(detectors: &'a [&'static str], options: &'a DetectorOptions) -> Self {
        Request {
            detectors,
            options,
            witness: false,
            prepass: None,
            only_race: None,
            progress: None,
            journal_cap: JOURNAL_CAP,
            max_races: usize::MAX,
        }
    }
}

/// What the TREE filter in front of the detectors dropped.
#[derive(Clone, Copy, Debug)]
pub struct TreeDropped {
    pub mode: Mode,
    pub dropped: u64,
    pub read: u64,
    pub fraction: f64,
}

/// The result of [`analyze`].
pub struct Analyzed {
    pub report: Report,
    /// The trace read whole (with `witness`).
    pub trace: Option<Trace>,
    pub tree: Option<TreeDropped>,
    /// Ids of races a detector that is sound for every race reported but that got no
    /// validated witness: a bug in jrace, to be reported.
    pub missing_witnesses: Vec<u64>,
}

/// Analyzes the trace `first` streams (from its first event), as `req` says. `reopen`
/// opens the trace again for the report's second pass, needed only when the lock journal
/// overflows. `on_events` is called with the number of events read so far, every
/// [`engine::PROGRESS_EVERY`] events. Race events are numbered in the whole trace, with
/// or without the filter.
pub fn analyze(
    mut first: Box<dyn EventSource>,
    reopen: &dyn Fn() -> Result<Box<dyn EventSource>, TraceError>,
    req: &Request,
    on_events: &mut dyn FnMut(u64),
) -> Result<Analyzed, TraceError> {
    let mut detectors = req
        .detectors
        .iter()
        .map(|n| {
            crate::make_detector_with(n, req.options).ok_or_else(|| TraceError::Other {
                path: Default::default(),
                msg: format!("a detector name, found {n}"),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(p) = &req.progress {
        for d in &mut detectors {
            d.set_progress(p.clone());
        }
    }
    // Witnesses need the whole trace in memory; otherwise it is streamed once.
    let trace = if req.witness {
        Some(jrace_trace::read_all(first.as_mut())?)
    } else {
        None
    };
    // Whether the trace was cut short, known once its source has been read through.
    let mut cut = trace.as_ref().and(first.truncation());
    let mut mem;
    let whole: &mut dyn EventSource = match &trace {
        Some(t) => {
            mem = MemSource::new(t);
            &mut mem
        }
        None => first.as_mut(),
    };
    // The locks each thread holds, kept while the detectors read (before any filter),
    // so that the report needs no second pass.
    let mut journaled = JournaledSource::new(whole, LockJournal::with_cap(req.journal_cap));
    let mut filtered = None;
    let src: &mut dyn EventSource = match req.prepass {
        Some(m) => filtered.insert(FilteredSource::new(&mut journaled, m)),
        None => &mut journaled,
    };
    // Detector-built schedules (m2's) are kept only when witnesses are asked for.
    let mut analysis = engine::run_with_schedules(src, detectors, on_events, req.witness)?;
    if trace.is_none() {
        cut = src.truncation();
    }
    let mut tree = None;
    if let Some(f) = &filtered {
        // Back to positions in the whole trace (a monotone map: race ids keep their order).
        for run in &mut analysis.runs {
            for p in &mut run.pairs {
                p.first = f.original_index(p.first);
                p.second = f.original_index(p.second);
            }
            run.schedules.clear();
        }
        for r in &mut analysis.races {
            r.pair.first = f.original_index(r.pair.first);
            r.pair.second = f.original_index(r.pair.second);
        }
        analysis.events = f.events_read();
        let t = f.filter();
        tree = Some(TreeDropped {
            mode: t.mode(),
            dropped: t.dropped,
            read: f.events_read(),
            fraction: t.fraction(),
        });
    }
    drop(filtered);
    let omitted = report::omit_beyond(&mut analysis, req.max_races);
    // May change a race's representative pair to one that has a witness.
    let witnesses = trace.as_ref().map(|t| {
        let (only, minimize) = req.only_race.map_or((None, false), |(r, m)| (Some(r), m));
        witness::witness_races(t, &mut analysis, only, minimize)
    });
    // The detectors' own schedules are in the witnesses now (each can be most of the
    // trace long).
    for run in &mut analysis.runs {
        run.schedules = Default::default();
    }
    let journal = journaled.into_journal();
    let facts = match journal.facts(analysis.races.iter().map(|r| &r.pair)) {
        Some(facts) => facts,
        // More lock changes than the journal keeps: a second pass.
        None => {
            let needed = report::needed_events(&analysis);
            match &trace {
                Some(t) => annotate(&mut MemSource::new(t), &needed)?,
                None => annotate(reopen()?.as_mut(), &needed)?,
            }
        }
    };
    let mut rep = report::build(&analysis, &facts);
    rep.omitted = omitted;
    rep.recount_detector_races();
    rep.trace.truncated =
        cut.map(|c| report::Truncated::new(&c, analysis.events, &analysis.symbols));
    let mut missing_witnesses = Vec::new();
    if let (Some(t), Some(ws)) = (&trace, witnesses) {
        missing_witnesses = ws.missing.clone();
        for (r, w) in rep.races.iter_mut().zip(ws.witnesses) {
            r.witness = Some(w.map(|w| witness::steps(t, &w)));
        }
    }
    if let (Some(t), Some(ds)) = (&trace, rep.deadlocks.as_mut()) {
        let found = analysis.runs.iter().find(|r| r.name == "deadlock");
        for (d, f) in ds
            .iter_mut()
            .zip(found.into_iter().flat_map(|r| &r.outcome.deadlocks))
        {
            d.witness = f
                .schedule
                .as_deref()
                .map(|s| crate::report::deadlock::steps(t, s));
        }
    }
    drop_aside(analysis);
    Ok(Analyzed {
        report: rep,
        trace,
        tree,
        missing_witnesses,
    })
}

/// Drops `v` on a thread of its own: freeing a large trace's names and the detectors'
/// results takes a noticeable time, which the report's output (or the process's exit)
/// need not wait for.
fn drop_aside<T: Send + 'static>(v: T) {
    // If no thread can be started, the closure, and `v` with it, is dropped right here.
    let _ = std::thread::Builder::new()
        .name("jrace-drop".into())
        .spawn(move || drop(v));
}
