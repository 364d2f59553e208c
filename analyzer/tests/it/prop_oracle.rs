//! The brute-force oracle against the test vectors' `truth`, and detectors against the
//! oracle on random tiny traces.

use jrace_analyzer::oracle::predictable_races;
use jrace_analyzer::testing::expectations;

/// Validates the oracle: it must reproduce every vector's `truth` line exactly.
#[test]
fn oracle_matches_every_truth_line() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in vector_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        let Some(want) = expectations(&text).remove("truth") else {
            continue;
        };
        let trace = jrace_trace::std_format::parse_str(&text, &f.display().to_string()).unwrap();
        let got = predictable_races(&trace);
        checked += 1;
        if got != want {
            failures.push(format!("{}: got {got:?}, want {want:?}", f.display()));
        }
    }
    assert!(checked >= 16, "only {checked} vectors with truth");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

use jrace_analyzer::oracle::{self, predictable_pairs};
use jrace_analyzer::testing::vector_files;
use jrace_analyzer::testing::{random_trace, run_detector, GenConfig};
use jrace_trace::MemSource;

/// Random traces checked per property: 3000 of the default shape and 2000 longer ones.
/// Seeds are fixed so that a failure is reproducible: the message names the seed and
/// prints the trace (`testing::random_trace(seed, &cfg)` regenerates it).
fn cases() -> impl Iterator<Item = (u64, GenConfig)> {
    let small = GenConfig::default();
    let large = GenConfig {
        max_stmts: 5,
        max_events: 22,
        ..GenConfig::default()
    };
    (0..3000)
        .map(move |s| (s, small.clone()))
        .chain((1_000_000..1_002_000).map(move |s| (s, large.clone())))
}

/// shb promises soundness for every race: it never reports a signature that no correct
/// reordering exhibits.
#[test]
fn shb_reports_only_predictable_races() {
    let mut nonempty = 0;
    for (seed, cfg) in cases() {
        let (text, trace) = random_trace(seed, &cfg);
        let truth = predictable_races(&trace);
        let shb = run_detector(&trace, "shb");
        nonempty += usize::from(!shb.is_empty());
        let bad: Vec<&String> = shb.difference(&truth).collect();
        assert!(
            bad.is_empty(),
            "seed {seed}: shb reports {bad:?}, not predictable (oracle: {truth:?})\n{text}"
        );
    }
    assert!(
        nonempty > 300,
        "too few traces with shb races ({nonempty}): weak test"
    );
}

/// wcp and cp are weakly sound: a pair they report whose second event is the earliest of
/// all their pairs is predictable, or the trace has a predictable deadlock. (wcp once
/// let a fork or a volatile write inside a critical section hand over less than the
/// sender was ordered after: a race no schedule reaches, `wcp` rule (d).)
#[test]
fn first_wcp_and_cp_races_are_predictable_or_a_deadlock() {
    let mut with_race = 0;
    for (seed, cfg) in cases() {
        let (text, trace) = random_trace(seed, &cfg);
        let mut truth = None;
        for name in ["wcp", "cp"] {
            let d = jrace_analyzer::make_detector(name).unwrap();
            let a = jrace_analyzer::engine::run(&mut MemSource::new(&trace), vec![d], &mut |_| {})
                .unwrap();
            let pairs = &a.runs[0].pairs;
            let Some(min) = pairs.iter().map(|p| p.second).min() else {
                continue;
            };
            with_race += 1;
            let (races, deadlocks) = truth.get_or_insert_with(|| {
                (
                    oracle::predictable_pairs_with_lost_notifications(&trace),
                    oracle::predictable_deadlocks(&trace),
                )
            });
            for p in pairs.iter().filter(|p| p.second == min) {
                assert!(
                    races.contains(&(p.first as usize, p.second as usize)) || !deadlocks.is_empty(),
                    "seed {seed}: {name}'s first race ({},{}) (events, 0-based) is not predictable and the trace has no deadlock (oracle: {races:?})\n{text}",
                    p.first,
                    p.second
                );
            }
        }
    }
    assert!(
        with_race > 600,
        "too few traces with wcp or cp races ({with_race}): weak test"
    );
}

/// hb is sound for its first race: every pair it reports whose second event is the
/// earliest of all its pairs is predictable.
#[test]
fn first_hb_race_is_predictable() {
    let mut with_race = 0;
    for (seed, cfg) in cases() {
        let (text, trace) = random_trace(seed, &cfg);
        let d = jrace_analyzer::make_detector("hb").unwrap();
        let a =
            jrace_analyzer::engine::run(&mut MemSource::new(&trace), vec![d], &mut |_| {}).unwrap();
        let pairs = &a.runs[0].pairs;
        let Some(min) = pairs.iter().map(|p| p.second).min() else {
            continue;
        };
        with_race += 1;
        let truth = predictable_pairs(&trace);
        for p in pairs.iter().filter(|p| p.second == min) {
            assert!(
                truth.contains(&(p.first as usize, p.second as usize)),
                "seed {seed}: hb's first race ({},{}) (events, 0-based) is not predictable \
                 (oracle: {truth:?})\n{text}",
                p.first,
                p.second
            );
        }
    }
    assert!(
        with_race > 300,
        "too few traces with hb races ({with_race}): weak test"
    );
}
