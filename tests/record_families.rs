//! The recorder end to end, one Java program per event family
//! (java-harness/src/families/, issue 3 "Tests"): each program is recorded with
//! `jrace record`, analyzed with the sound detectors, and checked against the truth written
//! in its source (java-harness/README.md): every RACE reported by the detectors that must
//! find it, nothing reported on a NORACE, nothing unlisted reported by a detector that is
//! sound for every report, the program's output unchanged by the agent, and no VerifyError
//! under `-Xverify:all`. Then crash safety (`kill -9`), `System.exit` with threads still
//! running, and `jrace record`'s exit status.
//!
//! Needs `java` on the PATH (the tests print a note and pass without it), javac at build
//! time (build.rs), and the agent built next to the jrace binary:
//! `cargo build --release --workspace && cargo test --release --test record_families`.

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
#[path = "common/truth.rs"]
mod truth;

use common::{jrace, root};
use truth::Truth;

/// Recorder gaps known to make a specific check fail: (program, check). A check is the
/// truth line it concerns (`RACE: ...` / `NORACE: ...` as written in the source),
/// `UNLISTED: VARIABLE LOC LOC`, `OUTPUT`, `VERIFY`, `RECORD` or `ANALYZE`; a check about
/// detectors' reports may end in ` [DET]` to cover one detector only. A listed check that
/// fails is printed and tolerated; a listed check that passes fails the test, so that the
/// entry is removed once the recorder is fixed.
const KNOWN_RECORDER_GAPS: &[(&str, &str)] = &[];

/// The detectors run on every program: all sound for their first race per variable.
const DETECTORS: &str = "hb,shb,wcp,cp,m2,mcm,said";
/// Detectors sound for every race they report: any report of theirs must be a listed RACE.
const SOUND_FOR_EVERY_RACE: &[&str] = &["shb", "m2", "mcm", "said"];

fn classes() -> PathBuf {
    PathBuf::from(env!("JRACE_HARNESS_CLASSES"))
}

fn families_src() -> PathBuf {
    root().join("java-harness/src/families")
}

/// `false` (with a note) when there is no `java` to run; panics when java is there but the
/// harness or the agent is missing, since the tests must then run.
fn java_ready() -> bool {
    if Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_err()
    {
        eprintln!("note: `java` not found: skipping the recorder's end-to-end tests");
        return false;
    }
    assert!(
        classes().join("families/Fields.class").is_file(),
        "{} has no families/Fields.class: javac failed at build time (see the build warnings)",
        classes().display()
    );
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_jrace"));
    let agent = exe.with_file_name("libjrace_agent.so");
    assert!(
        agent.is_file() || std::env::var_os("JRACE_AGENT").is_some(),
        "{} is missing: build the agent first (cargo build --release --workspace)",
        agent.display()
    );
    true
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir()
        .join(format!("jrace-families-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn java_plain(main: &str, args: &[&str]) -> Output {
    Command::new("java")
        .arg("-cp")
        .arg(classes())
        .arg(main)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("java runs")
}

/// `jrace record -o DIR -- java JVM_OPTS -cp CLASSES MAIN ARGS`.
fn record(dir: &Path, jvm_opts: &[&str], main: &str, args: &[&str]) -> Output {
    let cp = classes();
    let mut a: Vec<&str> = vec!["record", "-o", dir.to_str().unwrap(), "--", "java"];
    a.extend_from_slice(jvm_opts);
    a.extend_from_slice(&["-cp", cp.to_str().unwrap(), main]);
    a.extend_from_slice(args);
    jrace(&a)
}

fn analyze(dir: &Path, detectors: &str) -> Result<Value, String> {
    let out = jrace(&[
        "analyze",
        dir.to_str().unwrap(),
        "-d",
        detectors,
        "--format",
        "json",
    ]);
    if out.status.code() != Some(0) {
        return Err(format!(
            "jrace analyze exited with {:?}: {}",
            out.status.code(),
            text(&out.stderr)
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("analyze wrote invalid JSON: {e}"))
}

/// One reported race: variable, the two locations, the detectors that reported it.
struct Reported {
    variable: String,
    a: String,
    b: String,
    detectors: Vec<String>,
}

fn reported(doc: &Value) -> Vec<Reported> {
    doc["races"]
        .as_array()
        .expect("races[]")
        .iter()
        .map(|r| {
            let acc = r["accesses"].as_array().expect("accesses[]");
            assert_eq!(acc.len(), 2, "a race has two accesses");
            Reported {
                variable: r["variable"].as_str().unwrap().to_string(),
                a: acc[0]["location"].as_str().unwrap().to_string(),
                b: acc[1]["location"].as_str().unwrap().to_string(),
                detectors: r["detectors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_str().unwrap().to_string())
                    .collect(),
            }
        })
        .collect()
}

/// A failed check: its key (see [`KNOWN_RECORDER_GAPS`]) and what happened.
struct Failure {
    check: String,
    /// The detector at fault, for checks about one detector's report.
    detector: Option<String>,
    detail: String,
}

impl Failure {
    /// Whether the KNOWN_RECORDER_GAPS entry `gap` covers this failure: `CHECK` covers it
    /// for every detector, `CHECK [DET]` for detector DET only.
    fn covered_by(&self, gap: &str) -> bool {
        gap == self.check
            || self
                .detector
                .as_ref()
                .is_some_and(|d| gap == format!("{} [{d}]", self.check))
    }

    fn key(&self) -> String {
        match &self.detector {
            Some(d) => format!("{} [{d}]", self.check),
            None => self.check.clone(),
        }
    }
}

/// Records, analyzes and checks one family program; returns the failed checks.
fn check_family(name: &str) -> Vec<Failure> {
    let src = families_src().join(format!("{name}.java"));
    let truth = Truth::parse_file(&src).unwrap_or_else(|e| panic!("bad truth: {e}"));
    assert!(
        !truth.races.is_empty(),
        "{name}: a family program has a RACE line"
    );
    assert!(
        !truth.noraces.is_empty(),
        "{name}: a family program has a NORACE line"
    );
    let dir = scratch(name);
    let trace = dir.join("trace");
    let mut fails = Vec::new();
    let mut fail_by = |check: &str, detector: Option<&str>, detail: String| {
        fails.push(Failure {
            check: check.to_string(),
            detector: detector.map(str::to_string),
            detail,
        })
    };
    macro_rules! fail {
        ($check:expr, $detail:expr $(,)?) => {
            fail_by($check, None, $detail)
        };
    }

    let plain = java_plain(&truth.main_class, &[]);
    assert!(
        plain.status.success(),
        "{name} fails without the agent: {}",
        text(&plain.stderr)
    );
    let rec = record(&trace, &[], &truth.main_class, &[]);
    if rec.status.code() != plain.status.code()
        || rec.stdout != plain.stdout
        || rec.stderr != plain.stderr
    {
        fail!(
            "OUTPUT",
            format!(
                "without the agent: status {:?}, stdout {:?}, stderr {:?}; recorded: status {:?}, stdout {:?}, stderr {:?}",
                plain.status.code(),
                text(&plain.stdout),
                text(&plain.stderr),
                rec.status.code(),
                text(&rec.stdout),
                text(&rec.stderr)
            ),
        );
    }
    if !rec.status.success() {
        fail!(
            "RECORD",
            format!("jrace record exited with {:?}", rec.status.code())
        );
    }

    // -Xverify:all with the agent, as a separate run.
    let ver = record(
        &dir.join("verify"),
        &["-Xverify:all"],
        &truth.main_class,
        &[],
    );
    let verr = text(&ver.stderr);
    if !ver.status.success() || verr.contains("VerifyError") || ver.stdout != plain.stdout {
        fail!(
            "VERIFY",
            format!(
                "under -Xverify:all: status {:?}, stdout {:?}, stderr {verr}",
                ver.status.code(),
                text(&ver.stdout)
            ),
        );
    }

    let doc = match analyze(&trace, DETECTORS) {
        Ok(d) => d,
        Err(e) => {
            fail!("ANALYZE", e);
            return fails;
        }
    };
    let names: Vec<&str> = doc["detectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names.join(","),
        DETECTORS,
        "{name}: the requested detectors ran"
    );
    let races = reported(&doc);

    for r in &truth.races {
        let by: BTreeSet<&str> = races
            .iter()
            .filter(|x| r.matches(&x.variable, &x.a, &x.b))
            .flat_map(|x| x.detectors.iter().map(String::as_str))
            .collect();
        for d in r.by.iter().filter(|d| !by.contains(d.as_str())) {
            fail_by(
                &r.spec,
                Some(d),
                format!(
                    "{} {} {}: missed (reported by {:?})",
                    r.variable, r.locations[0], r.locations[1], by
                ),
            );
        }
    }
    for x in &races {
        let sig = format!("{} {} {}", x.variable, x.a, x.b);
        if let Some(nr) = truth
            .noraces
            .iter()
            .find(|nr| nr.violated_by(&x.variable, &x.a, &x.b))
        {
            for d in &x.detectors {
                fail_by(&nr.spec, Some(d), format!("reported {sig}"));
            }
            continue;
        }
        if truth
            .races
            .iter()
            .any(|r| r.matches(&x.variable, &x.a, &x.b))
        {
            continue;
        }
        // Not a listed signature. hb, wcp and cp are sound for the first race of a variable
        // only: an extra pair on a RACE variable may be one of their later false alarms.
        for d in &x.detectors {
            if SOUND_FOR_EVERY_RACE.contains(&d.as_str()) || !truth.race_variable(&x.variable) {
                fail_by(
                    &format!("UNLISTED: {sig}"),
                    Some(d),
                    format!("neither RACE nor NORACE in {}", truth.file),
                );
            } else {
                eprintln!("{name}: note: {sig} reported by {d} (a later race on a RACE variable)");
            }
        }
    }
    if fails.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        eprintln!("{name}: trace kept in {}", trace.display());
    }
    fails
}

/// Runs one family and applies [`KNOWN_RECORDER_GAPS`].
fn family(name: &str) {
    if !java_ready() {
        return;
    }
    let t0 = Instant::now();
    let fails = check_family(name);
    let gaps: Vec<&str> = KNOWN_RECORDER_GAPS
        .iter()
        .filter(|(p, _)| *p == name)
        .map(|(_, c)| *c)
        .collect();
    let mut errors = Vec::new();
    for f in &fails {
        if gaps.iter().any(|g| f.covered_by(g)) {
            eprintln!("{name}: KNOWN RECORDER GAP `{}`: {}", f.key(), f.detail);
        } else {
            errors.push(format!("`{}`: {}", f.key(), f.detail));
        }
    }
    for g in gaps {
        if !fails.iter().any(|f| f.covered_by(g)) {
            errors.push(format!(
                "`{g}` passes now: remove it from KNOWN_RECORDER_GAPS"
            ));
        }
    }
    eprintln!("{name}: {:.1} s", t0.elapsed().as_secs_f64());
    assert!(errors.is_empty(), "{name}:\n  {}", errors.join("\n  "));
}

macro_rules! families {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                family($name);
            }
        )*
        /// Every program under families/ with a truth has a test here.
        const FAMILIES: &[&str] = &[$($name),*];
    };
}

families! {
    family_fields => "Fields",
    family_statics => "Statics",
    family_arrays => "Arrays",
    family_monitors => "Monitors",
    family_sync_methods => "SyncMethods",
    family_juc_locks => "JucLocks",
    family_wait_notify => "WaitNotify",
    family_fork_join => "ForkJoin",
    family_volatile_publication => "VolatilePub",
    family_class_init => "ClassInit",
    family_executor_handoff => "Executor",
    family_concurrent_map_publication => "ConcurrentMapPub",
    family_count_down_latch => "Latch",
    family_atomics => "Atomics",
    family_reentrancy => "Reentrancy",
    family_exceptions => "Exceptions",
    family_util_collections => "UtilCollections",
    family_conditions => "Conditions",
    family_blocking_queue_handoff => "QueueHandoff",
    family_barrier_and_semaphore => "Barriers",
    family_object_identity => "Identity",
    family_var_handles => "VarHandles",
    family_completable_futures => "CompletableFutures",
    family_interrupts => "Interrupts",
}

#[test]
fn every_family_program_has_a_test_and_a_valid_truth() {
    let mut found = BTreeSet::new();
    for e in std::fs::read_dir(families_src()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "java") {
            let text = std::fs::read_to_string(&p).unwrap();
            if Truth::has_truth(&text) {
                let t = Truth::parse_file(&p).unwrap_or_else(|e| panic!("{e}"));
                assert!(!t.noraces.is_empty(), "{}: no NORACE line", t.file);
                found.insert(p.file_stem().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let listed: BTreeSet<String> = FAMILIES.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        found, listed,
        "families with a truth vs families tested here"
    );
    for (p, c) in KNOWN_RECORDER_GAPS {
        assert!(
            listed.contains(*p),
            "KNOWN_RECORDER_GAPS names unknown program {p}"
        );
        assert!(!c.is_empty());
    }
}

fn open_logs(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".open"))
        .collect()
}

fn line_of(file: &str, label: &str) -> String {
    let t = std::fs::read_to_string(families_src().join(file)).unwrap();
    let n = t
        .lines()
        .position(|l| l.contains(&format!("// @{label}")))
        .unwrap_or_else(|| panic!("{file} has no @{label}"));
    format!("{file}:{}", n + 1)
}

fn has_race(doc: &Value, variable: &str, a: &str, b: &str) -> bool {
    reported(doc)
        .iter()
        .any(|r| r.variable == variable && ((r.a == a && r.b == b) || (r.a == b && r.b == a)))
}

/// `kill -9` of a recording JVM: what was logged is still analyzable.
#[test]
fn killed_jvm_leaves_an_analyzable_trace() {
    if !java_ready() {
        return;
    }
    let dir = scratch("killed");
    let trace = dir.join("trace");
    let cp = classes();
    let mut child = Command::new(env!("CARGO_BIN_EXE_jrace"))
        .args(["record", "-o", trace.to_str().unwrap(), "--", "java", "-cp"])
        .arg(&cp)
        .arg("families.Spin")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("jrace record runs");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let pid: u32 = first.trim().parse().unwrap_or_else(|_| {
        let _ = child.kill();
        panic!("Spin prints its pid first, got {first:?}")
    });
    std::thread::sleep(Duration::from_millis(1000));
    let k = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(k.success(), "kill -9 {pid}");
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(128 + 9),
        "jrace record exits with 128+SIGKILL"
    );
    let doc = analyze(&trace, "hb,shb").unwrap_or_else(|e| panic!("{e}"));
    assert!(
        doc["trace"]["events"].as_u64().unwrap() > 100,
        "{}",
        doc["trace"]
    );
    assert!(
        has_race(
            &doc,
            "families.Spin.counter",
            &line_of("Spin.java", "spinA"),
            &line_of("Spin.java", "spinB")
        ),
        "the race of the killed program is found: {:#}",
        doc["races"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// System.exit while two threads (daemon and not) still run: every log sealed.
#[test]
fn system_exit_with_running_threads_seals_every_log() {
    if !java_ready() {
        return;
    }
    let dir = scratch("exit-running");
    let trace = dir.join("trace");
    let out = record(&trace, &[], "families.ExitWhileRunning", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "exiting\n");
    assert_eq!(open_logs(&trace), Vec::<String>::new(), "logs left open");
    let doc = analyze(&trace, "hb,shb").unwrap_or_else(|e| panic!("{e}"));
    assert!(
        doc["trace"]["threads"].as_u64().unwrap() >= 3,
        "{}",
        doc["trace"]
    );
    let races = reported(&doc);
    assert!(
        races
            .iter()
            .any(|r| r.variable == "families.ExitWhileRunning.shared"),
        "the running threads' events are in the trace"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `jrace record` exits with the program's status, and 2 for its own usage errors.
#[test]
fn record_exit_status() {
    if !java_ready() {
        return;
    }
    let dir = scratch("exit-status");
    let t3 = dir.join("t3");
    let out = record(&t3, &[], "families.ExitStatus", &["3"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "exit 3\n",
        "the program's output passes through"
    );
    assert_eq!(open_logs(&t3), Vec::<String>::new(), "logs left open");
    analyze(&t3, "hb").unwrap_or_else(|e| panic!("{e}"));
    let out = record(&dir.join("t0"), &[], "families.ExitStatus", &["0"]);
    assert_eq!(out.status.code(), Some(0));

    // jrace's own usage errors: 2, and the program does not run.
    let d = dir.join("usage");
    let d = d.to_str().unwrap();
    for args in [
        &[
            "record",
            "--no-such-option",
            "-o",
            d,
            "--",
            "java",
            "-version",
        ][..],
        &["record", "-o", d][..],
        &["record", "-o", d, "--"][..],
    ] {
        let out = jrace(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(!text(&out.stderr).is_empty(), "{args:?} says what is wrong");
    }
    assert!(
        !Path::new(d).exists(),
        "no trace directory for a usage error"
    );

    // The agent loaded by hand with an unknown option: the JVM refuses to start (the
    // JVM's own status for a failed agent) and the message names the option.
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_jrace"));
    let agent = std::env::var_os("JRACE_AGENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| exe.with_file_name("libjrace_agent.so"));
    let out = Command::new("java")
        .arg(format!(
            "-agentpath:{}=out={},bogus=1",
            agent.display(),
            dir.join("bogus").display()
        ))
        .arg("-cp")
        .arg(classes())
        .args(["families.ExitStatus", "0"])
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "an unknown agent option stops the JVM"
    );
    assert!(
        text(&out.stderr).contains("unknown option `bogus`"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !text(&out.stdout).contains("exit 0"),
        "the program did not run: {}",
        text(&out.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
