//! The TREE filter (`jrace_trace::tree`) never changes the race signatures of the
//! detectors allowed to read its output: hb and lockset for mode `hb`, lockset for modes
//! `hybrid` and `lockset`. Random traces from the shared generator
//! (`testing::random_trace_text`: 2–4 threads, nested and re-entrant locks, volatiles,
//! fork/join, wait/notify; 4,000 of up to 40 events and 1,000 of up to 120), with
//! locations drawn from a small pool so that a thread repeats accesses the filter can drop.

use jrace_analyzer::testing::{random_trace_text, run_detector, GenConfig};
use jrace_trace::tree::{filter_trace, Mode};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The generator's trace with each location replaced by one of `pool` tokens.
fn with_few_locations(text: &str, seed: u64) -> String {
    let mut rng = SmallRng::seed_from_u64(jrace_analyzer::testing::prop_seed(seed ^ 0x7ee));
    let pool = rng.gen_range(1..=4u32);
    let mut out = String::new();
    for line in text.lines() {
        let (head, _) = line.rsplit_once('|').expect("THREAD|OP|LOC");
        out.push_str(&format!("{head}|{}\n", rng.gen_range(1..=pool)));
    }
    out
}

#[test]
fn filtered_traces_keep_every_consumer_signature() {
    let short = GenConfig {
        max_threads: 4,
        max_stmts: 6,
        max_events: 40,
    };
    let long = GenConfig {
        max_threads: 4,
        max_stmts: 16,
        max_events: 120,
    };
    let (mut events, mut dropped, mut traces) = ([0u64; 3], [0u64; 3], [0u64; 3]);
    for seed in 0..5000u64 {
        let cfg = if seed < 4000 { &short } else { &long };
        let text = with_few_locations(&random_trace_text(seed, cfg), seed);
        let trace = jrace_trace::std_format::parse_str(&text, "random.std")
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        for (i, mode) in Mode::ALL.into_iter().enumerate() {
            let (filtered, f) = filter_trace(&trace, mode);
            events[i] += trace.events.len() as u64;
            dropped[i] += f.dropped;
            traces[i] += u64::from(f.dropped > 0);
            for det in mode.consumers() {
                let (full, part) = (run_detector(&trace, det), run_detector(&filtered, det));
                assert_eq!(
                    full,
                    part,
                    "seed {seed}, mode {mode}, detector {det}: the filter dropped {:?}\n{text}",
                    drop_lines(&trace, mode)
                );
            }
        }
    }
    // The property is not vacuous: every mode drops a fair share of these traces.
    for (i, mode) in Mode::ALL.into_iter().enumerate() {
        let share = dropped[i] as f64 / events[i] as f64;
        eprintln!(
            "mode {mode}: dropped {} of {} events ({:.1}%), in {} traces",
            dropped[i],
            events[i],
            100.0 * share,
            traces[i]
        );
        assert!(
            share > 0.01 && traces[i] > 500,
            "mode {mode}: too few drops"
        );
    }
}

/// The 1-based event numbers the filter drops, for failure messages.
fn drop_lines(trace: &jrace_trace::Trace, mode: Mode) -> Vec<usize> {
    let mut f = jrace_trace::tree::TraceFilter::new(mode);
    (1..=trace.events.len())
        .filter(|&i| !f.keep(&trace.events[i - 1]))
        .collect()
}
