//! Every test vector in `tests/vectors/` (docs/DETECTORS.md#test-vectors) against the
//! `# expect DET:` lines it carries, for every detector that exists.

use jrace_analyzer::testing::vector_files;
use jrace_analyzer::testing::{expectations, run_detector};
use jrace_analyzer::{make_detector, registry};

#[test]
fn every_vector_matches_its_expectations() {
    let files = vector_files();
    assert!(!files.is_empty(), "no vectors found");
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let trace = jrace_trace::std_format::parse_str(&text, &f.display().to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        for (det, want) in expectations(&text) {
            // Expectations for detectors not built yet (mcm, said, rdit, truth) wait; a
            // registered detector that cannot be made is a registry bug, not a skip.
            if registry::info(&det).is_none() {
                continue;
            }
            assert!(
                make_detector(&det).is_some(),
                "{det} is in the registry but make_detector fails"
            );
            checked += 1;
            let got = run_detector(&trace, &det);
            if got != want {
                failures.push(format!(
                    "{} {det}: got {:?}, want {:?}",
                    f.file_name().unwrap().to_string_lossy(),
                    got,
                    want
                ));
            }
        }
    }
    assert!(checked > 0);
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
