//! `jrace run` and `jrace demo` end to end on the bundled Bank program: the report names
//! the known races with their call stacks, `--fail-on-race` sets the exit status, and the
//! program's own output passes through. Skipped (with a note) without `java`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use common::jrace;

fn java() -> bool {
    let ok = Command::new("java").arg("-version").output().is_ok();
    if !ok {
        eprintln!("note: `java` not found: skipping the jrace run tests");
    }
    ok
}

fn classes() -> String {
    PathBuf::from(env!("JRACE_HARNESS_CLASSES"))
        .to_string_lossy()
        .into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("jrace-run-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `jrace run -o DIR OPTIONS -- java -cp CLASSES demo.Bank`.
fn run_bank(dir: &Path, options: &[&str]) -> std::process::Output {
    let cp = classes();
    let mut args = vec!["run", "-o", dir.to_str().unwrap()];
    args.extend_from_slice(options);
    args.extend_from_slice(&["--", "java", "-cp", &cp, "demo.Bank"]);
    jrace(&args)
}

#[test]
fn run_reports_bank_races_with_stacks() {
    if !java() {
        return;
    }
    let dir = scratch("bank");
    let report = dir.with_extension("json");
    let out = run_bank(
        &dir,
        &[
            "-d",
            "hb,shb,m2",
            "--format",
            "json",
            "--report",
            report.to_str().unwrap(),
            "--fail-on-race",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.trim(),
        "balance=120 transfers=2 log=2",
        "the program's output passes through untouched; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "races found with --fail-on-race"
    );
    let rep: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let races = rep["races"].as_array().unwrap();
    let vars: Vec<&str> = races
        .iter()
        .map(|r| r["variable"].as_str().unwrap())
        .collect();
    for v in [
        "demo.Bank.transfers",
        "demo.Bank.balance",
        "demo.Bank.lastTeller",
    ] {
        assert!(vars.contains(&v), "{v} is reported: {vars:?}");
    }
    let transfers = races
        .iter()
        .find(|r| r["variable"] == "demo.Bank.transfers")
        .unwrap();
    for a in transfers["accesses"].as_array().unwrap() {
        assert_eq!(a["location"], "Bank.java:24");
        let stack: Vec<&str> = a["stack"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        assert_eq!(
            stack.first().copied(),
            Some("demo.Bank.teller(Bank.java:24)"),
            "the stack's top frame is the access: {stack:?}"
        );
        assert!(
            stack
                .iter()
                .any(|f| f.starts_with("demo.Bank.lambda$main$")),
            "the stack shows the caller: {stack:?}"
        );
    }
    // Not races: balance between the tellers (always under the bank lock).
    for r in races {
        if r["variable"] == "demo.Bank.balance" {
            let threads: Vec<&str> = r["accesses"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["thread"].as_str().unwrap())
                .collect();
            assert!(
                threads.iter().any(|t| t.starts_with("auditor")),
                "balance races only with the auditor: {threads:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&report);
}

/// `jrace run --witness --format html`: the page embeds each race's witness view and names
/// monitors by their fields.
#[test]
fn run_writes_an_html_report_with_witness_views() {
    if !java() {
        return;
    }
    let dir = scratch("bank-html");
    let page = dir.with_extension("html");
    let out = run_bank(
        &dir,
        &[
            "-d",
            "hb,shb",
            "--witness",
            "--format",
            "html",
            "--report",
            page.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    let races = html.matches("<details class=\"race").count();
    assert!(races >= 2, "{html}");
    assert_eq!(
        html.matches("<iframe title=\"witness of race").count(),
        races
    );
    assert!(html.contains("demo.Bank.transfers"));
    assert!(
        html.contains("<span class=\"lock\">demo.Bank.bank [Object@"),
        "{html}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&page);
}

#[test]
fn demo_records_for_real() {
    if !java() {
        return;
    }
    let out = jrace(&["demo"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("cannot record here"),
        "the demo records under the agent: {stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Data race"), "{stdout}");
    assert!(stdout.contains("demo.Bank.transfers"), "{stdout}");
}

#[test]
fn record_refuses_bad_usage_with_status_2() {
    // --bp-globals needs --barrier-pairs.
    let out = jrace(&["record", "--bp-globals", "a.B", "--", "java", "-version"]);
    assert_eq!(out.status.code(), Some(2));
    let out = jrace(&["record"]);
    assert_eq!(out.status.code(), Some(2));
}
