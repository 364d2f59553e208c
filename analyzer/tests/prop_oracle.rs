//! The brute-force oracle against the test vectors' `truth`, and detectors against the
//! oracle on random tiny traces.

use jrace_analyzer::oracle::predictable_races;
use jrace_analyzer::testing::expectations;
use std::path::PathBuf;

fn vector_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/vectors exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "std"))
        .collect();
    v.sort();
    v
}

/// Validates the oracle: it must reproduce every vector's `truth` line exactly.
#[test]
fn oracle_matches_every_truth_line() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in vector_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        let Some(want) = expectations(&text).remove("truth") else { continue };
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
