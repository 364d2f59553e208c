//! Predicted deadlocks end to end (java-harness/src/deadlocks/): each program is recorded
//! (several times: a schedule-dependent bug shows in one run of several), analyzed with
//! `-d deadlock --witness`, and checked against the truth in its source: a
//! `DEADLOCK: @label ...` line names the acquisitions that block (one `// @label` marker
//! per thread of the cycle), `NODEADLOCK` says no schedule deadlocks. The recorded run
//! itself never deadlocks (the programs order their threads by a channel the recorder
//! does not see), and its output is that of a run without the agent.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

mod common;
#[path = "common/harness.rs"]
mod harness;
#[path = "common/truth.rs"]
mod truth;

use common::jrace;
use harness::{java_plain, record, text};

/// Recordings per program.
const RUNS: usize = 3;

fn source(program: &str) -> String {
    let p = common::root().join(format!("java-harness/src/deadlocks/{program}.java"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `File.java:LINE` of the line carrying `// @label`.
fn labelled(program: &str, src: &str, label: &str) -> String {
    let marker = format!("// {label}");
    let line = src
        .lines()
        .position(|l| l.trim_end().ends_with(&marker))
        .unwrap_or_else(|| panic!("{program}.java has no `{marker}`"));
    format!("{program}.java:{}", line + 1)
}

/// The truth: the blocking acquisitions' locations of the one expected deadlock, or
/// `None` for NODEADLOCK.
fn truth(program: &str) -> Option<BTreeSet<String>> {
    let src = source(program);
    if src.lines().any(|l| l.trim() == "// NODEADLOCK") {
        return None;
    }
    let line = src
        .lines()
        .find_map(|l| l.trim().strip_prefix("// DEADLOCK:"))
        .unwrap_or_else(|| panic!("{program}.java has neither DEADLOCK: nor NODEADLOCK"));
    Some(
        line.split_whitespace()
            .map(|label| labelled(program, &src, label))
            .collect(),
    )
}

fn scratch(name: &str) -> PathBuf {
    harness::scratch("deadlocks", name)
}

fn check(program: &str) {
    if !harness::java_ready("deadlocks/TwoLocks.class") {
        return;
    }
    let want = truth(program);
    let main = format!("deadlocks.{program}");
    let plain = java_plain(&[], &main, &[]);
    assert!(
        plain.status.success(),
        "{main} without the agent: {}",
        text(&plain.stderr)
    );
    for run in 0..RUNS {
        let dir = scratch(&format!("{program}-{run}"));
        let trace = dir.join("trace");
        let out = record(&trace, &[], &main, &[]);
        assert!(
            out.status.success(),
            "recording {main}: {}",
            text(&out.stderr)
        );
        assert_eq!(
            text(&out.stdout),
            text(&plain.stdout),
            "{main}: output changed"
        );
        let a = jrace(&[
            "analyze",
            trace.to_str().unwrap(),
            "-d",
            "deadlock",
            "--witness",
            "--format",
            "json",
        ]);
        assert_eq!(a.status.code(), Some(0), "{}", text(&a.stderr));
        let doc: Value = serde_json::from_slice(&a.stdout).unwrap();
        let found = doc["deadlocks"].as_array().expect("a deadlocks array");
        let sites: Vec<BTreeSet<String>> = found
            .iter()
            .map(|d| {
                let threads = d["threads"].as_array().unwrap();
                // Every deadlock carries its validated schedule.
                let w = d["witness"].as_array().expect("a witness");
                assert_eq!(w.len() as u64, d["schedule_events"].as_u64().unwrap());
                threads
                    .iter()
                    .map(|t| t["requested_at"]["location"].as_str().unwrap().to_owned())
                    .collect()
            })
            .collect();
        match &want {
            None => assert!(
                sites.is_empty(),
                "{main} run {run}: no schedule deadlocks, jrace reports {sites:?}"
            ),
            Some(w) => assert_eq!(
                sites,
                vec![w.clone()],
                "{main} run {run}: expected the deadlock at {w:?}"
            ),
        }
    }
}

#[test]
fn classic_two_lock_inversion() {
    check("TwoLocks");
}

#[test]
fn three_thread_cycle() {
    check("ThreeCycle");
}

#[test]
fn inversion_under_a_common_guard_lock() {
    check("Guarded");
}

#[test]
fn inversion_ordered_by_join_and_wait_notify() {
    check("Ordered");
}

#[test]
fn reentrant_lock_and_monitor_mixed() {
    check("Mixed");
}

#[test]
fn try_lock_never_blocks() {
    check("TryLock");
}

#[test]
fn deadlock_only_another_schedule_reaches() {
    check("Reordered");
}

/// Every program in java-harness/src/deadlocks with a truth has a test above.
#[test]
fn every_program_has_a_truth_and_a_test() {
    let this = std::fs::read_to_string(common::root().join("tests/record_deadlocks.rs")).unwrap();
    let dir = common::root().join("java-harness/src/deadlocks");
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(program) = name.strip_suffix(".java") else {
            continue;
        };
        let src = source(program);
        if src.contains("DEADLOCK") {
            let _ = truth(program);
            assert!(
                this.contains(&format!("check(\"{program}\")")),
                "{program} has no test"
            );
        }
    }
}
