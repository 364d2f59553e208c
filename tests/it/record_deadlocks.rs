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

use crate::common;
use crate::harness;

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
                    .map(|t| {
                        // Where each thread took and requests its locks, with the stack.
                        for site in ["held_at", "requested_at"] {
                            let top = t[site]["stack"][0].as_str().unwrap_or("");
                            assert!(
                                top.contains(&format!("({program}.java:")),
                                "{main}: {site} stack {}",
                                t[site]["stack"]
                            );
                        }
                        t["requested_at"]["location"].as_str().unwrap().to_owned()
                    })
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

/// Replays per program with a deadlock; at least [`REPLAYS_NEEDED`] must deadlock.
const REPLAYS: usize = 5;
const REPLAYS_NEEDED: usize = 4;

/// `jrace replay --deadlock 1` drives a new run of `program` into its deadlock: the
/// verdict is `deadlocked`, the JVM's own thread dump shows it, and the program is ended.
fn replays(program: &str) {
    if !harness::java_ready("deadlocks/TwoLocks.class") {
        return;
    }
    let main = format!("deadlocks.{program}");
    let dir = scratch(&format!("{program}-replay"));
    let trace = dir.join("trace");
    let out = record(&trace, &[], &main, &[]);
    assert!(
        out.status.success(),
        "recording {main}: {}",
        text(&out.stderr)
    );
    let threads: Vec<String> = {
        let a = jrace(&[
            "analyze",
            trace.to_str().unwrap(),
            "-d",
            "deadlock",
            "--format",
            "json",
        ]);
        let doc: Value = serde_json::from_slice(&a.stdout).unwrap();
        doc["deadlocks"][0]["threads"]
            .as_array()
            .expect("one deadlock")
            .iter()
            .map(|t| t["thread"].as_str().unwrap().to_owned())
            .collect()
    };
    let cp = harness::classes();
    let mut verdicts = Vec::new();
    for run in 0..REPLAYS {
        let out_dir = dir.join(format!("replay-{run}"));
        let r = jrace(&[
            "replay",
            trace.to_str().unwrap(),
            "--deadlock",
            "1",
            "-o",
            out_dir.to_str().unwrap(),
            "--",
            "java",
            "-cp",
            cp.to_str().unwrap(),
            &main,
        ]);
        let verdict = text(&r.stdout).lines().last().unwrap_or("").to_owned();
        if verdict.starts_with("deadlocked:") {
            assert_eq!(r.status.code(), Some(0), "{verdict}");
            let dump = std::fs::read_to_string(out_dir.join("thread-dump.txt")).unwrap();
            assert!(dump.contains("Java-level deadlock"), "{dump}");
            for t in &threads {
                assert!(
                    dump.contains(&format!("\"{t}\"")),
                    "{t} not in the dump:\n{dump}"
                );
            }
        } else {
            assert_eq!(r.status.code(), Some(1), "{verdict}");
        }
        verdicts.push(verdict);
    }
    let reached = verdicts
        .iter()
        .filter(|v| v.starts_with("deadlocked:"))
        .count();
    assert!(
        reached >= REPLAYS_NEEDED,
        "{main}: {reached} of {REPLAYS} replays deadlocked: {verdicts:?}"
    );
}

#[test]
fn replay_reaches_the_deadlocks() {
    for p in ["TwoLocks", "ThreeCycle", "Mixed", "Reordered"] {
        replays(p);
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
    let this =
        std::fs::read_to_string(common::root().join("tests/it/record_deadlocks.rs")).unwrap();
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
