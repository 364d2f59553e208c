//! The TREE filter in the recorder, end to end: family programs (java-harness/src/families/)
//! recorded with `jrace record --tree` (agent option `tree=hb`) and without, analyzed by hb
//! and lockset.
//!
//! - the filtered recording is smaller, says so (`filtered = tree-hb`, record.log's count)
//!   and refuses the detectors that need every access;
//! - hb and lockset report the same signatures on both recordings. Two runs may schedule
//!   differently, and lockset's Eraser states depend on the schedule, so lockset is
//!   compared over a few attempts (hb's signatures do not depend on the schedule here);
//! - on the unfiltered recording, `analyze --tree` (the same filter as a pre-pass) keeps
//!   every hb and lockset signature exactly.
//!
//! Needs `java` (the tests pass with a note without it) and the agent next to `jrace`.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common;
use common::jrace;

fn classes() -> PathBuf {
    PathBuf::from(env!("JRACE_HARNESS_CLASSES"))
}

fn java_ready() -> bool {
    let ok = Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("note: `java` not found: skipping the TREE recording tests");
        return false;
    }
    assert!(classes().join("families/Fields.class").is_file());
    true
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir()
        .join(format!("jrace-record-tree-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.parent().unwrap()).unwrap();
    d
}

fn record(dir: &Path, tree: bool, main: &str) {
    let cp = classes();
    let mut args = vec!["record", "-o", dir.to_str().unwrap()];
    if tree {
        args.push("--tree");
    }
    args.extend(["--", "java", "-cp", cp.to_str().unwrap(), main]);
    let out = jrace(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
}

/// (detector, variable, sorted locations) of every race `analyze` reports.
fn sigs(dir: &Path, extra: &[&str]) -> BTreeSet<(String, String, String)> {
    let mut args = vec!["analyze", dir.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let out = jrace(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut set = BTreeSet::new();
    for r in doc["races"].as_array().unwrap() {
        let acc = r["accesses"].as_array().unwrap();
        let mut locs = [
            acc[0]["location"].as_str().unwrap(),
            acc[1]["location"].as_str().unwrap(),
        ];
        locs.sort();
        for d in r["detectors"].as_array().unwrap() {
            set.insert((
                d.as_str().unwrap().to_owned(),
                r["variable"].as_str().unwrap().to_owned(),
                format!("({},{})", locs[0], locs[1]),
            ));
        }
    }
    set
}

fn of(set: &BTreeSet<(String, String, String)>, det: &str) -> BTreeSet<(String, String)> {
    set.iter()
        .filter(|s| s.0 == det)
        .map(|s| (s.1.clone(), s.2.clone()))
        .collect()
}

fn events(dir: &Path) -> u64 {
    let out = jrace(&["stats", dir.to_str().unwrap()]);
    let s = text(&out.stdout);
    s.lines()
        .find_map(|l| l.strip_prefix("events:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no event count in {s}"))
}

fn check(program: &str) {
    if !java_ready() {
        return;
    }
    let main = format!("families.{program}");
    // Which of a racy pair lockset reports depends on which access comes first (an
    // Eraser-style state machine), and each recording has its own schedule: the lockset
    // signatures of some recording with the filter must equal those of some without it.
    let (mut with, mut without) = (Vec::new(), Vec::new());
    let mut lockset_matched = false;
    for attempt in 0..12 {
        let whole = scratch(&format!("{program}-{attempt}-whole"));
        let filtered = scratch(&format!("{program}-{attempt}-tree"));
        record(&whole, false, &main);
        record(&filtered, true, &main);
        let (a, b) = (
            sigs(&whole, &["-d", "hb,lockset"]),
            sigs(&filtered, &["-d", "hb,lockset"]),
        );
        assert_eq!(
            of(&a, "hb"),
            of(&b, "hb"),
            "{program}: hb with and without tree=hb"
        );
        assert!(!of(&a, "hb").is_empty(), "{program}: hb finds its races");
        // The pre-pass on the very same recording: exactly the same signatures.
        assert_eq!(
            sigs(&whole, &["--tree", "-d", "hb,lockset"]),
            a,
            "{program}"
        );
        if attempt == 0 {
            let (n, m) = (events(&whole), events(&filtered));
            assert!(m < n, "{program}: {m} events with the filter, {n} without");
            let stats = text(&jrace(&["stats", filtered.to_str().unwrap()]).stdout);
            assert!(
                stats.contains("recorded with the TREE filter: mode hb"),
                "{stats}"
            );
            let log = std::fs::read_to_string(filtered.join("record.log")).unwrap();
            assert!(log.contains(",tree=hb"), "{log}");
            assert!(log.contains("tree filter: mode hb, "), "{log}");
            // Default detectors on a filtered recording: the ones it allows.
            let d = filtered.to_str().unwrap();
            let out = jrace(&["analyze", d]);
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
            let out = jrace(&["analyze", d, "-d", "hb,wcp"]);
            assert_eq!(out.status.code(), Some(2));
            assert!(
                text(&out.stderr).contains("wcp needs"),
                "{}",
                text(&out.stderr)
            );
        }
        without.push(of(&a, "lockset"));
        with.push(of(&b, "lockset"));
        if with.iter().any(|w| without.contains(w)) {
            lockset_matched = true;
            break;
        }
    }
    assert!(
        lockset_matched,
        "{program}: lockset never reported the same signatures with and without tree=hb: \
         {with:?} with, {without:?} without"
    );
}

#[test]
fn fields_recorded_with_tree() {
    check("Fields");
}

#[test]
fn arrays_recorded_with_tree() {
    check("Arrays");
}
