//! `jrace stats`: what a trace holds (events by kind, names, reads no write explains,
//! BarrierPairs, what the TREE filter would drop, the recorder's counters).

use crate::{engine, open_first, progress_bar, witness};
use anyhow::Result;
use jrace_analyzer::report;
use jrace_trace::tree::{self, Mode};
use jrace_trace::Kind;
use std::path::Path;
use std::process::ExitCode;

pub(crate) fn stats(path: &Path) -> Result<ExitCode> {
    let (mut src, recorded) = open_first(path)?;
    let mut counts = jrace_trace::Counts::default();
    let mut bps = BarrierCounts::default();
    // What the TREE filter would drop, in the modes for hb (and lockset) and for lockset.
    let mut trees = [Mode::Hb, Mode::Lockset].map(tree::TraceFilter::new);
    let mut unexplained = witness::UnexplainedCounter::default();
    let pb = progress_bar("reading");
    while let Some(e) = src.next_event()? {
        counts.add(&e);
        unexplained.add(&e);
        bps.add(&e, src.symbols());
        for t in &mut trees {
            t.keep(&e);
        }
        if counts.events % engine::PROGRESS_EVERY == 0 {
            if let Some(pb) = &pb {
                pb.set_position(counts.events);
            }
        }
    }
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let names = src.take_symbols();
    let sym = &names;
    let mut s = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(s, "trace:      {}", path.display());
    let _ = writeln!(s, "events:     {}", counts.events);
    let _ = writeln!(s, "threads:    {}", sym.threads.len());
    let _ = writeln!(
        s,
        "variables:  {} ({} static names)",
        sym.vars.len(),
        sym.statics.len()
    );
    let _ = writeln!(s, "locks:      {}", sym.locks.len());
    let _ = writeln!(s, "locations:  {}", sym.locs.len());
    let _ = writeln!(
        s,
        "branches recorded: {}",
        if src.has_branches() { "yes" } else { "no" }
    );
    if unexplained.reads > 0 {
        let _ = writeln!(
            s,
            "reads no traced write explains: {} of {} reads with values (written by code the \
             trace does not show: excluded or native code, or before recording)",
            unexplained.unexplained, unexplained.reads
        );
    }
    if src.reads_moved() > 0 {
        let _ = writeln!(
            s,
            "reads moved to the write they saw: {} (returned before a write their stamp \
             follows, or held until a write of the value they have: a read's hook is \
             stamped after its load, a compare-and-set's record after the store)",
            src.reads_moved()
        );
    }
    if src.jdk_reads_dropped() > 0 {
        let _ = writeln!(
            s,
            "JDK reads dropped: {} (the JDK's own synchronization read a value whose writer was \
             not recorded: class loading's, or a modelled lock call's)",
            src.jdk_reads_dropped()
        );
    }
    if let Some(t) = src.truncation() {
        let t = report::Truncated::new(&t, counts.events, sym);
        let _ = writeln!(s, "{}", t.line());
    }
    if let Some(m) = recorded {
        let _ = writeln!(
            s,
            "recorded with the TREE filter: mode {m} (redundant accesses dropped; only {} may analyze it)",
            m.consumers().join(",")
        );
    }
    for t in &trees {
        let _ = writeln!(
            s,
            "tree filter, mode {:<8} would drop {} of {} events ({:.1}%)",
            format!("{}:", t.mode()),
            t.dropped,
            counts.events,
            100.0 * t.fraction()
        );
    }
    // What the agent counted about BarrierPairs (recorded with --barrier-pairs).
    let bp_meta = if path.is_dir() {
        let reader = jrace_trace::binlog::TraceReader::open(path)?;
        let m = reader.meta();
        m.contains_key("bp_recorded").then(|| m.clone())
    } else {
        None
    };
    if path.is_dir() {
        // What the recorder noted about the run (branches recorded, cut at a size limit,
        // classes left uninstrumented, ...).
        let reader = jrace_trace::binlog::TraceReader::open(path)?;
        for (k, v) in reader.meta() {
            let _ = writeln!(s, "recorder: {k} = {v}");
        }
        let bytes = dir_size(path);
        let per = if counts.events > 0 {
            bytes as f64 / counts.events as f64
        } else {
            0.0
        };
        let _ = writeln!(s, "size on disk: {bytes} bytes ({per:.2} bytes/event)");
    }
    if bps.recorded > 0 || bp_meta.is_some() {
        let m = bp_meta.unwrap_or_default();
        let get = |k: &str| m.get(k).map_or("-".to_string(), |v| v.to_string());
        let _ = writeln!(
            s,
            "barrier pairs: {} recorded, {} widened to * (every object), max |D| {}, {} \
             calls skipped (reachable set statically empty); snapshots: {} objects, {} edges",
            bps.recorded,
            bps.top,
            bps.max_d,
            get("bp_skipped_empty"),
            get("bp_snapshot_objects"),
            get("bp_snapshot_edges"),
        );
    }
    let _ = writeln!(s, "events by kind:");
    for k in Kind::ALL {
        let n = counts.of(k);
        if n > 0 {
            let _ = writeln!(s, "  {:<10} {n}", k.name());
        }
    }
    print!("{s}");
    Ok(ExitCode::SUCCESS)
}

/// BarrierPairs of a trace, for `jrace stats`: `enter` events, those whose reachable set
/// is every object, and the largest set.
#[derive(Default)]
struct BarrierCounts {
    recorded: u64,
    top: u64,
    max_d: usize,
}

impl BarrierCounts {
    fn add(&mut self, e: &jrace_trace::Event, sym: &jrace_trace::Symbols) {
        if e.kind != Kind::Enter {
            return;
        }
        self.recorded += 1;
        match sym.objsets.get(e.value as usize) {
            Some(jrace_trace::ObjSet::Objects(v)) => self.max_d = self.max_d.max(v.len()),
            _ => self.top += 1,
        }
    }
}

fn dir_size(p: &Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}
