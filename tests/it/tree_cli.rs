//! `jrace analyze --tree`, `jrace stats` and traces recorded with the TREE filter, through
//! the command line: same signatures with and without the filter, reports that name the
//! recorded events, and the detectors that may not read a filtered trace refused.

use crate::common;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{jrace, root};
use jrace_analyzer::testing::vector_files;
use jrace_trace::tree::Mode;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("jrace-tree-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// (detector, signature, event pair) of every race the report lists.
fn races(path: &Path, extra: &[&str]) -> BTreeSet<(String, String, u64, u64)> {
    let mut args = vec!["analyze", path.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let out = jrace(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut set = BTreeSet::new();
    for r in doc["races"].as_array().unwrap() {
        let acc = r["accesses"].as_array().unwrap();
        let mut locs = [
            acc[0]["location"].as_str().unwrap(),
            acc[1]["location"].as_str().unwrap(),
        ];
        locs.sort();
        let sig = format!(
            "{}:({},{})",
            r["variable"].as_str().unwrap(),
            locs[0],
            locs[1]
        );
        for d in r["detectors"].as_array().unwrap() {
            set.insert((
                d.as_str().unwrap().to_owned(),
                sig.clone(),
                acc[0]["event"].as_u64().unwrap(),
                acc[1]["event"].as_u64().unwrap(),
            ));
        }
    }
    set
}

fn sigs(r: &BTreeSet<(String, String, u64, u64)>) -> BTreeSet<(String, String)> {
    r.iter()
        .map(|(d, s, _, _)| (d.clone(), s.clone()))
        .collect()
}

#[test]
fn prepass_keeps_signatures_of_every_vector() {
    let mut files = vector_files();
    files.push(root().join("examples/bank.std"));
    for f in files {
        let whole = races(&f, &["-d", "hb,lockset"]);
        for (mode, dets) in [("hb", "hb,lockset"), ("lockset", "lockset")] {
            let filtered = races(&f, &[&format!("--tree={mode}"), "-d", dets]);
            let want: BTreeSet<_> = sigs(&whole)
                .into_iter()
                .filter(|(d, _)| dets.split(',').any(|x| x == d))
                .collect();
            assert_eq!(sigs(&filtered), want, "{} --tree={mode}", f.display());
        }
    }
}

const TV1: &str = "T0|fork(T1)|\nT0|fork(T2)|\nT0|fork(T3)|\n\
    T0|acq(L1)|\nT0|w(x)|1\nT0|rel(L1)|\nT0|r(x)|2\n\
    T0|acq(L2)|\nT0|w(x)|1\nT0|rel(L2)|\nT0|r(x)|2\n\
    T0|acq(L3)|\nT0|w(x)|1\nT0|rel(L3)|\nT0|r(x)|2\n\
    T1|acq(L1)|\nT1|w(x)|3\nT1|rel(L1)|\nT1|w(x)|4\n\
    T2|acq(L2)|\nT2|w(x)|3\nT2|rel(L2)|\nT2|w(x)|4\n\
    T3|acq(L3)|\nT3|w(x)|3\nT3|rel(L3)|\nT3|w(x)|4\n";

#[test]
fn tv1_through_the_command_line() {
    let p = tmp("tv1.std");
    std::fs::write(&p, TV1).unwrap();
    // Default detectors under --tree are the ones the mode allows.
    let out = jrace(&["analyze", p.to_str().unwrap(), "--tree=lockset"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("dropped 2 of 27 events"));
    assert!(text(&out.stdout).contains("lockset: 7 warnings"));
    assert!(!text(&out.stdout).contains("hb:"));
    // Events are numbered as in the whole trace, and filtered-out reads never show.
    let filtered = races(&p, &["--tree=lockset"]);
    assert!(filtered.iter().all(|r| r.2 != 11 && r.2 != 15));
    assert!(filtered.iter().any(|r| r.1 == "x:(2,3)" && r.2 == 7));
    assert_eq!(sigs(&filtered), sigs(&races(&p, &["-d", "lockset"])));

    // Witnesses are found in the whole trace, for the reported (whole-trace) events.
    let out = jrace(&[
        "analyze",
        p.to_str().unwrap(),
        "--tree=lockset",
        "--witness",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in doc["races"].as_array().unwrap() {
        let w = r["witness"].as_array().expect("a witness");
        let tail: Vec<u64> = w[w.len() - 2..]
            .iter()
            .map(|s| s["event"].as_u64().unwrap())
            .collect();
        let acc: Vec<u64> = r["accesses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["event"].as_u64().unwrap())
            .collect();
        assert_eq!(tail, acc);
    }

    let out = jrace(&["stats", p.to_str().unwrap()]);
    let s = text(&out.stdout);
    assert!(
        s.contains("tree filter, mode hb:      would drop 0 of 27 events (0.0%)"),
        "{s}"
    );
    assert!(
        s.contains("tree filter, mode lockset: would drop 2 of 27 events (7.4%)"),
        "{s}"
    );
}

#[test]
fn detectors_that_need_every_access_are_refused() {
    let p = tmp("tv1-refuse.std");
    std::fs::write(&p, TV1).unwrap();
    for (args, needle) in [
        (vec!["--tree", "-d", "hb,wcp"], "wcp needs"),
        (vec!["--tree=lockset", "-d", "hb"], "only lockset may"),
        (vec!["--tree=hybrid", "-d", "all"], "only lockset may"),
        (vec!["--tree=bogus"], "expected hb, hybrid or lockset"),
    ] {
        let mut a = vec!["analyze", p.to_str().unwrap()];
        a.extend(args);
        let out = jrace(&a);
        assert_eq!(out.status.code(), Some(2), "{a:?}");
        assert!(
            text(&out.stderr).contains(needle),
            "{a:?}: {}",
            text(&out.stderr)
        );
    }
}

/// A trace directory holding `std` with the metadata of a recording filtered in `mode`.
fn recorded_filtered(std: &str, mode: Mode, dir: &Path) {
    common::binary_trace(std, Some(mode), dir);
}

#[test]
fn traces_recorded_with_the_filter_say_so_and_refuse_other_detectors() {
    let dir = tmp("filtered.trace");
    recorded_filtered(TV1, Mode::Hb, &dir);
    let d = dir.to_str().unwrap();
    // Default detectors: the ones the recording allows.
    let out = jrace(&["analyze", d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("hb: 7 races"));
    for args in [
        vec!["analyze", d, "-d", "hb,shb"],
        vec!["analyze", d, "-d", "mcm"],
        vec!["analyze", d, "-d", "hb", "--witness"],
        vec!["witness", d, "--race", "1", "-d", "hb"],
    ] {
        let out = jrace(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains("recorded with the TREE filter in mode hb"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let out = jrace(&["stats", d]);
    let s = text(&out.stdout);
    assert!(s.contains("recorded with the TREE filter: mode hb"), "{s}");
    // Converting keeps a note of it in the text and warns that the flag is lost.
    let std = tmp("filtered.std");
    let out = jrace(&["convert", d, "--to", "std", "-o", std.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("warning"));
    assert!(std::fs::read_to_string(&std)
        .unwrap()
        .starts_with("# recorded with the TREE filter (filtered=tree-hb)"));
}
