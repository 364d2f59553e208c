//! `m2` against the brute-force oracle (`oracle::predictable_races`) on random tiny
//! traces: sound on every report, exact on two threads, exact whenever it claims
//! `complete: true`. Seeds are fixed; a failure names the seed and prints the trace
//! (`testing::random_trace(seed, &cfg)` regenerates it). Debug builds check fewer traces;
//! `cargo test --release -p jrace-analyzer --test it -- prop_m2::` checks more.

use jrace_analyzer::engine;
use jrace_analyzer::oracle::predictable_races;
use jrace_analyzer::testing::{random_trace, run_detector, sig_of, GenConfig};
use jrace_trace::MemSource;
use jrace_trace::Trace;
use std::collections::BTreeSet;

fn scale(n: u64) -> u64 {
    if cfg!(debug_assertions) {
        n
    } else {
        n * 8
    }
}

/// The detector under test: `m2` unless `JRACE_PROP_M2_AS` names another one (used to
/// check that these tests pin what m2 finds beyond shb).
fn det() -> String {
    std::env::var("JRACE_PROP_M2_AS").unwrap_or_else(|_| "m2".to_owned())
}

/// m2's signatures and its `complete` flag.
fn run_m2(trace: &Trace) -> (BTreeSet<String>, Option<bool>) {
    let d = jrace_analyzer::make_detector(&det())
        .unwrap_or_else(|| panic!("no {} in {:?}", det(), jrace_analyzer::detector_names()));
    let a = engine::run(&mut MemSource::new(trace), vec![d], &mut |_| {}).unwrap();
    let sigs = a.races.iter().map(|r| sig_of(&a.symbols, r)).collect();
    (sigs, a.runs[0].outcome.complete)
}

fn three_thread_cases() -> impl Iterator<Item = (u64, GenConfig)> {
    let small = GenConfig::default();
    let large = GenConfig {
        max_stmts: 5,
        max_events: 22,
        ..GenConfig::default()
    };
    (0..scale(4000))
        .map(move |s| (s, small.clone()))
        .chain((2_000_000..2_000_000 + scale(2000)).map(move |s| (s, large.clone())))
}

fn two_thread_cases() -> impl Iterator<Item = (u64, GenConfig)> {
    let cfg = GenConfig {
        max_threads: 2,
        max_stmts: 5,
        max_events: 18,
    };
    (3_000_000..3_000_000 + scale(4000)).map(move |s| (s, cfg.clone()))
}

/// (1) m2 never reports a signature the oracle rejects; (3) when it says complete, its
/// signatures are exactly the oracle's.
#[test]
fn m2_is_sound_and_its_complete_flag_is_right() {
    let (mut nonempty, mut complete, mut incomplete, mut beyond_shb) = (0, 0, 0, 0);
    for (seed, cfg) in three_thread_cases().chain(two_thread_cases()) {
        let (text, trace) = random_trace(seed, &cfg);
        let truth = predictable_races(&trace);
        let (got, flag) = run_m2(&trace);
        nonempty += usize::from(!got.is_empty());
        let bad: Vec<&String> = got.difference(&truth).collect();
        assert!(
            bad.is_empty(),
            "seed {seed}: {} reports {bad:?}, not predictable (oracle: {truth:?})\n{text}",
            det()
        );
        if flag == Some(true) {
            complete += 1;
            assert_eq!(
                got,
                truth,
                "seed {seed}: {} claims complete but misses {:?}\n{text}",
                det(),
                truth.difference(&got).collect::<Vec<_>>()
            );
        } else {
            incomplete += 1;
        }
        if !got.is_subset(&run_detector(&trace, "shb")) {
            beyond_shb += 1;
        }
    }
    eprintln!(
        "m2 soundness: {nonempty} traces with races, {complete} complete, {incomplete} not, \
         {beyond_shb} with races shb misses"
    );
    assert!(
        nonempty > 500,
        "too few racy traces ({nonempty}): weak test"
    );
    assert!(
        beyond_shb > 20,
        "m2 found races beyond shb in only {beyond_shb} traces"
    );
}

/// (2) With two threads (Thm 4.1) m2 reports exactly the predictable races, and says so.
#[test]
fn m2_is_exact_on_two_threads() {
    let mut beyond_shb = 0;
    for (seed, cfg) in two_thread_cases() {
        let (text, trace) = random_trace(seed, &cfg);
        let truth = predictable_races(&trace);
        let (got, flag) = run_m2(&trace);
        assert_eq!(
            got,
            truth,
            "seed {seed}: {} on two threads: extra {:?}, missing {:?}\n{text}",
            det(),
            got.difference(&truth).collect::<Vec<_>>(),
            truth.difference(&got).collect::<Vec<_>>()
        );
        assert_eq!(
            flag,
            Some(true),
            "seed {seed}: two threads, not complete\n{text}"
        );
        if truth != run_detector(&trace, "shb") {
            beyond_shb += 1;
        }
    }
    assert!(
        beyond_shb > 20,
        "only {beyond_shb} two-thread traces where the truth exceeds shb: weak test"
    );
}

/// (4) Every pair m2 reports carries its witness schedule ([`engine::DetectorRun::schedules`]),
/// which the witness validator accepts; without schedules (`run_with_schedules(.., false)`)
/// m2 reports the same pairs and attaches none.
#[test]
fn m2_schedules_are_witnesses() {
    if det() != "m2" {
        return;
    }
    let mut pairs = 0usize;
    for (seed, cfg) in three_thread_cases().chain(two_thread_cases()) {
        let (text, trace) = random_trace(seed, &cfg);
        let run = |schedules: bool| {
            let d = jrace_analyzer::make_detector("m2").unwrap();
            engine::run_with_schedules(&mut MemSource::new(&trace), vec![d], &mut |_| {}, schedules)
                .unwrap()
                .runs
                .remove(0)
        };
        let with = run(true);
        let without = run(false);
        assert_eq!(with.pairs, without.pairs, "seed {seed}\n{text}");
        assert!(without.schedules.is_empty(), "seed {seed}\n{text}");
        let facts = jrace_analyzer::witness::Facts::new(&trace);
        for p in &with.pairs {
            let s = with
                .schedules
                .get(&(p.first, p.second))
                .unwrap_or_else(|| panic!("seed {seed}: no schedule for {p:?}\n{text}"));
            let s: Vec<usize> = s.iter().map(|&i| i as usize).collect();
            if let Err(e) = facts.validate_race(p.first as usize, p.second as usize, &s) {
                panic!("seed {seed}: {p:?}: schedule {s:?}: {e}\n{text}");
            }
            pairs += 1;
        }
    }
    assert!(pairs > 1000, "weak test: only {pairs} m2 pairs");
}
