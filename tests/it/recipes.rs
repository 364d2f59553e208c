//! The README's recipes for loading the agent by hand, end to end: through
//! `JAVA_TOOL_OPTIONS` (one trace per JVM, `out=DIR/%p`), and through surefire's `argLine`
//! on a copy of java-harness/maven-example (skipped, with a note, when `mvn` is missing or
//! cannot reach Maven Central). Each checks that the program's race is reported.

use crate::common;

use common::{jrace, root};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn agent() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_jrace")).with_file_name("libjrace_agent.so")
}

fn have(cmd: &str, arg: &str) -> bool {
    let ok = Command::new(cmd)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !ok {
        eprintln!("note: `{cmd}` not found: skipping this recipe");
    }
    ok
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("jrace-recipes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The JSON report of `jrace analyze TRACE -d shb` (which must succeed).
fn shb_report(trace: &Path) -> serde_json::Value {
    let out = jrace(&[
        "analyze",
        trace.to_str().unwrap(),
        "-d",
        "shb",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The variables shb reports on a trace directory.
fn shb_variables(trace: &Path) -> Vec<String> {
    shb_report(trace)["races"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["variable"].as_str().unwrap().to_string())
        .collect()
}

/// The trace directories under `dir` (one per JVM).
fn traces(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

#[test]
fn java_tool_options_recipe_records_one_trace_per_jvm() {
    if !have("java", "-version") {
        return;
    }
    let dir = scratch("jto");
    let classes = env!("JRACE_HARNESS_CLASSES");
    let plain = Command::new("java")
        .args(["-cp", classes, "demo.Bank"])
        .output()
        .unwrap();
    let opts = format!("-agentpath:{}=out={}/%p", agent().display(), dir.display());
    // Two JVMs, as a build tool or a test runner starts them.
    for _ in 0..2 {
        let out = Command::new("java")
            .args(["-cp", classes, "demo.Bank"])
            .env("JAVA_TOOL_OPTIONS", &opts)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            out.stdout, plain.stdout,
            "the program's output is unchanged"
        );
    }
    let t = traces(&dir);
    assert_eq!(t.len(), 2, "one trace per JVM: {t:?}");
    for d in &t {
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.parse::<u32>().is_ok(),
            "%p became the process id: {name}"
        );
        let vars = shb_variables(d);
        assert!(vars.iter().any(|v| v == "demo.Bank.transfers"), "{vars:?}");
    }

    // Locks are named by the field the program reached them through, then the object:
    // also in a `.std` export, which reads back.
    let std_file = dir.join("bank.std");
    let text = common::convert_to_std(&t[0], &std_file);
    for lock in ["demo.Bank.bank", "demo.Bank.audit"] {
        assert!(
            text.contains(&format!("|acq({lock} [Object@")),
            "no acquire of {lock} named by its field"
        );
    }
    let out = jrace(&["analyze", std_file.to_str().unwrap(), "-d", "hb"]);
    assert!(out.status.success(), "{out:?}");
    std::fs::remove_file(&std_file).unwrap();

    // `jrace analyze DIR`: one report for both JVMs, the race listed once, seen in both.
    let rep = shb_report(&dir);
    let listed = rep["traces"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{rep}");
    let events: u64 = listed
        .iter()
        .map(|t| t["trace"]["events"].as_u64().unwrap())
        .sum();
    assert_eq!(rep["trace"]["events"].as_u64().unwrap(), events);
    let transfers: Vec<&serde_json::Value> = rep["races"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["variable"] == "demo.Bank.transfers")
        .collect();
    assert!(!transfers.is_empty(), "{rep}");
    let seen: Vec<&str> = transfers[0]["seen_in"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["trace"].as_str().unwrap())
        .collect();
    assert_eq!(seen.len(), 2, "{rep}");
    // Each trace's own race id leads `jrace witness` to the race in that trace.
    let first = &transfers[0]["seen_in"][1];
    let out = jrace(&[
        "witness",
        first["trace"].as_str().unwrap(),
        "-d",
        "shb",
        "--race",
        &first["id"].to_string(),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("demo.Bank.transfers"));
    let text = jrace(&["analyze", dir.to_str().unwrap(), "-d", "shb"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("seen in 2 traces: "), "{text}");
    assert!(text.contains("Traces: 2, "), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_name() == "target" {
            continue;
        }
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

#[test]
fn maven_surefire_recipe_reports_the_race() {
    if !have("java", "-version") || !have("mvn", "-v") {
        return;
    }
    let work = scratch("maven");
    let project = work.join("project");
    copy_dir(&root().join("java-harness/maven-example"), &project);
    let out_dir = work.join("traces");
    std::fs::create_dir_all(&out_dir).unwrap();
    // As in the README.
    let arg = format!(
        "-Djrace.argLine=-agentpath:{}=out={}/%p,exclude=org.junit.*;junit.*;org.apache.maven.*;org.hamcrest.*",
        agent().display(),
        out_dir.display()
    );
    let out = Command::new("mvn")
        .args(["-q", "-B", "test", &arg])
        .current_dir(&project)
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        let offline = [
            "Could not resolve",
            "Could not transfer",
            "UnknownHost",
            "Network is unreachable",
        ];
        if offline.iter().any(|s| log.contains(s)) {
            eprintln!("note: Maven cannot fetch junit/surefire (offline?): skipping\n{log}");
            let _ = std::fs::remove_dir_all(&work);
            return;
        }
        panic!("mvn test failed:\n{log}");
    }
    let t = traces(&out_dir);
    assert_eq!(t.len(), 2, "one trace per test class's JVM:\n{log}");
    // As in the README: one report for every test JVM, the race seen in both.
    let rep = shb_report(&out_dir);
    assert_eq!(rep["traces"].as_array().unwrap().len(), 2, "{rep}");
    let hits: Vec<&serde_json::Value> = rep["races"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["variable"] == "ex.Counter.hits")
        .collect();
    assert!(
        !hits.is_empty(),
        "ex.Counter.hits not reported in {t:?}: {rep}"
    );
    let seen: usize = hits
        .iter()
        .map(|r| r["seen_in"].as_array().unwrap().len())
        .max()
        .unwrap();
    assert_eq!(seen, 2, "ex.Counter.hits is seen in both test JVMs: {rep}");
    let _ = std::fs::remove_dir_all(&work);
}

/// The README's CI recipe ("Using jrace in CI"): a baseline from an earlier run, a later
/// run of a changed program (other thread names and event numbers, one access moved to
/// another line), suppressions from a file and from `JRACE_SUPPRESSIONS`, and
/// `--fail-on-race`, which then fails only on races that are new and not suppressed.
#[test]
fn ci_recipe_fails_only_on_new_unsuppressed_races() {
    let work = scratch("ci");
    let run1 = root().join("examples/bank.std");
    let text = std::fs::read_to_string(&run1).unwrap();
    // The changed program: the auditor's read of the balance moved from line 56 to 57;
    // the tellers are called clerks now.
    let run2 = work.join("run2.std");
    std::fs::write(
        &run2,
        text.replace(
            "auditor|r(Bank.balance,120)|Bank.java:56",
            "auditor|r(Bank.balance,120)|Bank.java:57",
        )
        .replace("teller-", "clerk-"),
    )
    .unwrap();
    let (run1, run2) = (run1.to_str().unwrap(), run2.to_str().unwrap());
    let baseline = work.join("jrace-baseline.json");
    let baseline = baseline.to_str().unwrap();
    let d = "hb,wcp";

    // Once, on main.
    let out = jrace(&["analyze", run1, "-d", d, "--format", "json", "-o", baseline]);
    assert!(out.status.success(), "{out:?}");
    let old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(baseline).unwrap()).unwrap();
    let fingerprints = |rep: &serde_json::Value| -> Vec<(String, String)> {
        rep["races"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["variable"].as_str().unwrap().to_string(),
                    r["fingerprint"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let old_fp = fingerprints(&old);
    assert_eq!(old_fp.len(), 3, "{old}");

    // On the change: the moved race is new, the others known (same fingerprints although
    // threads and events differ), and --fail-on-race fails.
    let json = |args: &[&str]| -> (Option<i32>, serde_json::Value, String) {
        let mut a = vec!["analyze", run2, "-d", d, "--format", "json"];
        a.extend_from_slice(args);
        let out = jrace(&a);
        let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
        (
            out.status.code(),
            v,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, rep, err) = json(&["--baseline", baseline, "--fail-on-race"]);
    assert_eq!(code, Some(1), "{err}");
    let marks: Vec<(String, String)> = rep["races"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["variable"].as_str().unwrap().to_string(),
                r["baseline"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        marks,
        [
            ("Bank.transfers".to_string(), "known".to_string()),
            ("Bank.lastTeller".to_string(), "known".to_string()),
            ("Bank.balance".to_string(), "new".to_string()),
        ],
        "{rep}"
    );
    assert_eq!(rep["baseline"]["new"], 1);
    assert_eq!(rep["baseline"]["known"], 2);
    for (v, fp) in fingerprints(&rep) {
        let was = old_fp.iter().any(|(_, f)| *f == fp);
        assert_eq!(was, v != "Bank.balance", "{v} {fp}");
    }

    // The team accepts the auditor's peek: suppressed, counted, and the build passes.
    let supp = work.join("jrace.supp");
    std::fs::write(&supp, "# the auditor only peeks\nrace:Bank.bal*\n").unwrap();
    let supp = supp.to_str().unwrap();
    let (code, rep, err) = json(&[
        "--suppressions",
        supp,
        "--baseline",
        baseline,
        "--fail-on-race",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(rep["races"].as_array().unwrap().len(), 2);
    assert_eq!(rep["suppressed"]["count"], 1);
    assert_eq!(rep["suppressed"]["rules"][0]["line"], 2);
    assert_eq!(rep["suppressed"]["rules"][0]["rule"], "race:Bank.bal*");

    // The same through the environment, in the text report.
    let out = Command::new(env!("CARGO_BIN_EXE_jrace"))
        .args([
            "analyze",
            run2,
            "-d",
            d,
            "--baseline",
            baseline,
            "--fail-on-race",
        ])
        .env("JRACE_SUPPRESSIONS", supp)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("suppressed: 1 race\n"), "{text}");
    assert!(
        text.contains("baseline ") && text.contains(": 0 new, 2 known"),
        "{text}"
    );
    assert!(text.contains("[known]"), "{text}");

    // The HTML page of the same run, as a build artifact.
    let page = work.join("jrace-report.html");
    let out = jrace(&[
        "analyze",
        run2,
        "-d",
        d,
        "--suppressions",
        supp,
        "--baseline",
        baseline,
        "--format",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<details class=\"race").count(), 2);
    assert!(html.contains("Suppressed: 1 race."), "{html}");
    assert!(html.contains(": 0 new, 2 known."), "{html}");

    // SARIF: fingerprints and baseline states for code-scanning services.
    let out = jrace(&[
        "analyze",
        run2,
        "-d",
        d,
        "--format",
        "sarif",
        "--baseline",
        baseline,
    ]);
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    for r in results {
        assert_eq!(
            r["partialFingerprints"]["jraceRace/v1"]
                .as_str()
                .unwrap()
                .len(),
            16
        );
        assert!(["new", "unchanged"].contains(&r["baselineState"].as_str().unwrap()));
    }

    // A bad suppression file or baseline is bad input: exit 2, naming the file and line.
    let bad = work.join("bad.supp");
    std::fs::write(&bad, "race:Bank.*\nBank.balance\n").unwrap();
    let (code, _, err) = json(&["--suppressions", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!("{}:2: expected KIND:PATTERN", bad.display())),
        "{err}"
    );
    let (code, _, err) = json(&["--baseline", supp]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("expected a jrace JSON report"), "{err}");
    let _ = std::fs::remove_dir_all(&work);
}
