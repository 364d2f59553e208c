//! The README's recipes for loading the agent by hand, end to end: through
//! `JAVA_TOOL_OPTIONS` (one trace per JVM, `out=DIR/%p`), and through surefire's `argLine`
//! on a copy of java-harness/maven-example (skipped, with a note, when `mvn` is missing or
//! cannot reach Maven Central). Each checks that the program's race is reported.

mod common;

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

/// The variables shb reports on a trace directory.
fn shb_variables(trace: &Path) -> Vec<String> {
    let out = jrace(&[
        "analyze",
        trace.to_str().unwrap(),
        "-d",
        "shb",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{out:?}");
    let rep: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    rep["races"]
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
    let t = traces(&dir);
    assert_eq!(t.len(), 1, "one trace for one JVM: {t:?}");
    let name = t[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.parse::<u32>().is_ok(),
        "%p became the process id: {name}"
    );
    let vars = shb_variables(&t[0]);
    assert!(vars.iter().any(|v| v == "demo.Bank.transfers"), "{vars:?}");
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
    assert!(!t.is_empty(), "no trace written:\n{log}");
    let found = t
        .iter()
        .any(|d| shb_variables(d).iter().any(|v| v == "ex.Counter.hits"));
    assert!(found, "ex.Counter.hits not reported in {t:?}");
    let _ = std::fs::remove_dir_all(&work);
}
