//! BarrierPairs end to end (issue 6): java-harness/src/rdit/Pipeline.java recorded with
//! `jrace record --barrier-pairs --exclude 'rdit.lib.*'` under `-Xverify:all`. Its
//! excluded library (rdit.lib.Handoff) synchronizes internally with a private monitor:
//! handing `Mail.body` over through it is a false race for hb (and mcm), and the same
//! library used on two disjoint handoffs leaves a real race on `Counter.hits`.
//!
//! Checked: the program's output is unchanged; the trace's `enter`/`exit` events pair up
//! (also when the call throws); the reachable sets hold the expected objects, named as the
//! analyzer relies on (object ids as in variable names, a thread by its name, the
//! `--bp-globals` classes); hb reports both races and rdit exactly the real one.
//!
//! Needs `java` on the PATH (the test prints a note and passes without it), javac at build
//! time, and the agent next to the jrace binary (`cargo build --release`).

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common;

use common::jrace;

fn classes() -> PathBuf {
    PathBuf::from(env!("JRACE_HARNESS_CLASSES"))
}

fn java_ready() -> bool {
    if Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_err()
    {
        eprintln!("note: `java` not found: skipping the BarrierPair end-to-end test");
        return false;
    }
    assert!(
        classes().join("rdit/Pipeline.class").is_file(),
        "{} has no rdit/Pipeline.class: javac failed at build time",
        classes().display()
    );
    true
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("jrace-rdit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn java_cmd() -> Vec<String> {
    vec![
        "java".into(),
        "-Xverify:all".into(),
        "-cp".into(),
        classes().display().to_string(),
        "rdit.Pipeline".into(),
    ]
}

fn record(dir: &Path, extra: &[&str]) -> Output {
    let trace = dir.join("trace");
    let mut args: Vec<String> = vec![
        "record".into(),
        "-o".into(),
        trace.display().to_string(),
        "--barrier-pairs".into(),
        "--exclude".into(),
        "rdit.lib.*".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("--".into());
    args.extend(java_cmd());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    jrace(&a)
}

/// One `.std` event line: (thread, op, location).
fn events(std: &str) -> Vec<(String, String, String)> {
    std.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut p = l.splitn(3, '|');
            (
                p.next().unwrap().to_string(),
                p.next().unwrap().to_string(),
                p.next().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// `enter(M;O1,O2)` -> (M, {O1, O2}); `*` as the single entry `*`.
fn enter(op: &str) -> Option<(String, BTreeSet<String>)> {
    let inner = op.strip_prefix("enter(")?.strip_suffix(')')?;
    let (m, objs) = inner.split_once(';')?;
    let set = objs
        .split(',')
        .filter(|o| !o.is_empty())
        .map(String::from)
        .collect();
    Some((m.to_string(), set))
}

/// The object id of the first write to a variable of this field (`12.pkg.C.f` -> `12`).
fn object_of(evs: &[(String, String, String)], field: &str) -> String {
    evs.iter()
        .find_map(|(_, op, _)| {
            let v = op.strip_prefix("w(")?.split(',').next()?;
            let (obj, f) = v.split_once('.')?;
            (f == field).then(|| obj.to_string())
        })
        .unwrap_or_else(|| panic!("no write of {field}"))
}

fn races(trace: &Path, detectors: &str) -> Vec<(String, Vec<String>)> {
    let out = jrace(&[
        "analyze",
        trace.to_str().unwrap(),
        "-d",
        detectors,
        "--format",
        "json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "analyze -d {detectors}: {stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    v["races"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["variable"].as_str().unwrap().to_string(),
                r["detectors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn barrier_pairs_let_rdit_see_through_an_excluded_library() {
    if !java_ready() {
        return;
    }
    let dir = scratch("pipeline");
    let plain = Command::new("java")
        .args(&java_cmd()[1..])
        .output()
        .expect("java runs");
    assert!(plain.status.success());
    let out = record(&dir, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("VerifyError"), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&plain.stdout),
        "the program prints something else under the agent"
    );
    let trace = dir.join("trace");
    let log = std::fs::read_to_string(trace.join("agent.log")).unwrap_or_default();
    assert!(!log.contains("left uninstrumented"), "{log}");

    // The trace as text, with the expanded reachable sets.
    let std_file = dir.join("trace.std");
    let text = common::convert_to_std(&trace, &std_file);
    let evs = events(&text);
    let bps = |thread: &str, method: &str| -> Vec<BTreeSet<String>> {
        evs.iter()
            .filter(|(t, _, _)| t == thread)
            .filter_map(|(_, op, _)| enter(op))
            .filter(|(m, _)| m == method)
            .map(|(_, d)| d)
            .collect()
    };

    // Every enter is closed by an exit of the same method, innermost first, per thread.
    let mut open: std::collections::HashMap<String, Vec<String>> = Default::default();
    for (t, op, loc) in &evs {
        if let Some((m, _)) = enter(op) {
            open.entry(t.clone()).or_default().push(m);
        } else if let Some(m) = op.strip_prefix("exit(").and_then(|s| s.strip_suffix(')')) {
            let top = open.get_mut(t).and_then(|s| s.pop());
            assert_eq!(top.as_deref(), Some(m), "{t}|{op}|{loc}: unmatched exit");
        }
    }
    assert!(open.values().all(|s| s.is_empty()), "left open: {open:?}");

    // 1. The handoff: publish (main) and await (consumer) reach the same handoff (and its
    //    lock), not the mail.
    let mail = object_of(&evs, "rdit.Pipeline$Mail.body");
    let publish = bps("main", "rdit.lib.Handoff.publish");
    let await_c = bps("consumer", "rdit.lib.Handoff.await");
    assert_eq!(publish.len(), 2, "{text}");
    assert_eq!(await_c.len(), 1, "{text}");
    assert_eq!(publish[0], await_c[0], "{text}");
    assert_eq!(publish[0].len(), 2, "the handoff and its lock: {text}");
    assert!(!publish[0].contains(&mail));
    // new Thread(lambda, "consumer"): the arguments only (the lambda and what it
    // captured: the mail and the handoff), never the uninitialized thread.
    let init = bps("main", "java.lang.Thread.<init>");
    assert_eq!(init.len(), 2, "{text}");
    assert!(init[0].contains(&mail), "{text}");
    assert!(publish[0].is_subset(&init[0]), "{text}");
    // A Thread in a reachable set is named by its thread's name.
    assert_eq!(
        bps("main", "rdit.lib.Handoff.finished"),
        vec![BTreeSet::from(["consumer".to_string()])],
        "{text}"
    );
    // A call that throws still ends: its exit follows at once, at the handler's line.
    let k = evs
        .iter()
        .position(|(t, op, _)| t == "main" && op.starts_with("enter(rdit.lib.Handoff.check;"))
        .expect("check's enter");
    let next = evs[k + 1..].iter().find(|(t, _, _)| t == "main").unwrap();
    assert_eq!(next.1, "exit(rdit.lib.Handoff.check)");
    assert_ne!(next.2, evs[k].2, "the exit is at the handler");

    // A reference stored into an array after a call reached it: the next call's set has
    // the target too (`w(SLOT[0],MAIL)` carries the stored object's id).
    let inspect = bps("main", "rdit.lib.Handoff.inspect");
    assert_eq!(inspect.len(), 2, "{text}");
    let (slot, stored) = evs
        .iter()
        .find_map(|(t, op, _)| {
            let v = op.strip_prefix("w(")?.strip_suffix(')')?;
            let (var, val) = v.split_once(',')?;
            let arr = var.strip_suffix("[0]")?;
            (t == "main").then(|| (arr.to_string(), val.to_string()))
        })
        .expect("the array store");
    assert_eq!(inspect[0], BTreeSet::from([slot.clone()]), "{text}");
    assert_eq!(inspect[1], BTreeSet::from([slot, stored]), "{text}");

    // 2. Disjoint handoffs: nothing in common, and the counter in neither.
    let counter = object_of(&evs, "rdit.Pipeline$Counter.hits");
    let h1 = &publish[1];
    let h2 = &bps("worker", "rdit.lib.Handoff.publish")[0];
    assert!(h1.is_disjoint(h2), "{h1:?} {h2:?}");
    assert!(!h1.contains(&counter) && !h2.contains(&counter));
    assert_eq!(bps("worker", "rdit.lib.Handoff.await"), vec![h2.clone()]);

    // The recorder's counts.
    let stats = jrace(&["stats", trace.to_str().unwrap()]);
    let stats = String::from_utf8_lossy(&stats.stdout);
    let enters = evs
        .iter()
        .filter(|(_, op, _)| op.starts_with("enter("))
        .count();
    assert!(
        stats.contains(&format!("barrier pairs: {enters} recorded, 0 widened to *")),
        "{stats}"
    );

    // hb: both races; rdit: exactly the real one.
    let body = "rdit.Pipeline$Mail.body".to_string();
    let hits = "rdit.Pipeline$Counter.hits".to_string();
    let by = |rs: &[(String, Vec<String>)], det: &str| -> BTreeSet<String> {
        rs.iter()
            .filter(|(_, d)| d.iter().any(|x| x == det))
            .map(|(v, _)| v.clone())
            .collect()
    };
    let rs = races(&trace, "hb,rdit");
    assert_eq!(
        by(&rs, "hb"),
        BTreeSet::from([body, hits.clone()]),
        "{rs:?}"
    );
    assert_eq!(by(&rs, "rdit"), BTreeSet::from([hits]), "{rs:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bp_globals_are_in_every_reachable_set() {
    if !java_ready() {
        return;
    }
    let dir = scratch("globals");
    let out = record(&dir, &["--bp-globals", "rdit.lib.Handoff,rdit.Pipeline"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = dir.join("trace");
    let evs = events(&common::convert_to_std(&trace, &dir.join("trace.std")));
    let sets: Vec<BTreeSet<String>> = evs
        .iter()
        .filter_map(|(_, op, _)| enter(op))
        .map(|(_, d)| d)
        .collect();
    assert!(sets.len() > 10);
    for d in &sets {
        assert!(
            d.contains("rdit.lib.Handoff") && d.contains("rdit.Pipeline"),
            "{d:?}"
        );
    }
    // The class name covers the class's statics (Pipeline.seen is written by "worker").
    assert!(evs
        .iter()
        .any(|(_, op, _)| op.starts_with("w(rdit.Pipeline.seen,")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `bp_walk=1` (the reachable set walked at every call) gives sets of the same sizes, call
/// by call in each thread, as the default snapshots expanded by the reader, and the same
/// verdicts.
#[test]
fn the_per_call_walk_and_the_snapshots_agree() {
    if !java_ready() {
        return;
    }
    let dir = scratch("walk");
    let agent = std::env::var_os("JRACE_AGENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_BIN_EXE_jrace")).with_file_name("libjrace_agent.so")
        });
    let sets = |trace: &Path| -> Vec<(String, String, usize)> {
        events(&common::convert_to_std(trace, &trace.with_extension("std")))
            .into_iter()
            .filter_map(|(t, op, _)| enter(&op).map(|(m, d)| (t, m, d.len())))
            .collect()
    };
    let walk = dir.join("walk");
    let out = Command::new("java")
        .arg(format!(
            "-agentpath:{}=out={},exclude=rdit.lib.*,barrier=1,bp_walk=1",
            agent.display(),
            walk.display()
        ))
        .args(&java_cmd()[1..])
        .output()
        .expect("java runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(record(&dir, &[]).status.success());
    let snap = dir.join("trace");
    // Call by call in each thread (threads interleave differently from run to run).
    let sorted = |mut v: Vec<(String, String, usize)>| {
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    assert_eq!(sorted(sets(&walk)), sorted(sets(&snap)));
    assert_eq!(races(&walk, "hb,rdit"), races(&snap, "hb,rdit"));
    let _ = std::fs::remove_dir_all(&dir);
}
