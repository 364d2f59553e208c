//! Recording a Java harness program and judging the detectors' report against the truth
//! written in its source (java-harness/README.md), shared by `tests/it/record_families.rs`
//! and `tests/it/record_classic.rs`.
//!
//! Declared once in tests/it/main.rs, next to `common` and `truth`.
#![allow(dead_code)] // not every test binary uses every helper

use crate::common::jrace;
use crate::truth::Truth;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

/// Detectors sound for every race they report: any report of theirs must be a listed RACE.
pub const SOUND_FOR_EVERY_RACE: &[&str] = &["shb", "m2", "mcm", "said"];

/// Where build.rs put the compiled harness.
pub fn classes() -> PathBuf {
    PathBuf::from(env!("JRACE_HARNESS_CLASSES"))
}

/// `false` (with a note) when there is no `java` to run; panics when java is there but the
/// harness class `probe` (`families/Fields.class`) or the agent is missing, since the tests
/// must then run.
pub fn java_ready(probe: &str) -> bool {
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
        classes().join(probe).is_file(),
        "{} has no {probe}: javac failed at build time (see the build warnings)",
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

/// A fresh scratch directory `name` for one test of the suite `suite`.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir()
        .join(format!("jrace-{suite}-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `java JVM_OPTS -cp CLASSES MAIN ARGS` without the agent.
pub fn java_plain(jvm_opts: &[&str], main: &str, args: &[&str]) -> Output {
    java_plain_with("java", jvm_opts, main, args)
}

/// [`java_plain`] with another `java`.
pub fn java_plain_with(java: &str, jvm_opts: &[&str], main: &str, args: &[&str]) -> Output {
    Command::new(java)
        .args(jvm_opts)
        .arg("-cp")
        .arg(classes())
        .arg(main)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("java runs")
}

/// `jrace record -o DIR -- java JVM_OPTS -cp CLASSES MAIN ARGS`.
pub fn record(dir: &Path, jvm_opts: &[&str], main: &str, args: &[&str]) -> Output {
    record_with("java", dir, jvm_opts, main, args)
}

/// [`record`] with another `java`.
pub fn record_with(java: &str, dir: &Path, jvm_opts: &[&str], main: &str, args: &[&str]) -> Output {
    let cp = classes();
    let mut a: Vec<&str> = vec!["record", "-o", dir.to_str().unwrap(), "--", java];
    a.extend_from_slice(jvm_opts);
    a.extend_from_slice(&["-cp", cp.to_str().unwrap(), main]);
    a.extend_from_slice(args);
    jrace(&a)
}

pub fn analyze(dir: &Path, detectors: &str) -> Result<Value, String> {
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
pub struct Reported {
    pub variable: String,
    pub a: String,
    pub b: String,
    pub detectors: Vec<String>,
}

pub fn reported(doc: &Value) -> Vec<Reported> {
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

/// A failed check: its key (see [`Suite::gaps`]) and what happened.
pub struct Failure {
    pub check: String,
    /// The detector at fault, for checks about one detector's report.
    pub detector: Option<String>,
    pub detail: String,
}

impl Failure {
    /// Whether the gap entry `gap` covers this failure: `CHECK` covers it for every
    /// detector, `CHECK [DET]` for detector DET only.
    pub fn covered_by(&self, gap: &str) -> bool {
        gap == self.check
            || self
                .detector
                .as_ref()
                .is_some_and(|d| gap == format!("{} [{d}]", self.check))
    }

    pub fn key(&self) -> String {
        match &self.detector {
            Some(d) => format!("{} [{d}]", self.check),
            None => self.check.clone(),
        }
    }
}

/// How a suite of harness programs is recorded and judged.
pub struct Suite {
    /// Names the scratch directories (`jrace-SUITE-PID`).
    pub name: &'static str,
    /// The programs' sources (`java-harness/src/families`).
    pub src: PathBuf,
    /// The detectors judged against the truth; all sound for their first race per variable.
    pub detectors: &'static str,
    /// Detectors also run, whose reports are only printed (`lockset`).
    pub informative: &'static str,
    /// Record under `-Xverify:all` and analyze that trace (one recording), instead of
    /// recording plainly and checking `-Xverify:all` in a second run.
    pub verify_in_recording: bool,
    /// Known gaps: (program, check). A check is the truth line it concerns (`RACE: ...` /
    /// `NORACE: ...` as written in the source), `UNLISTED: VARIABLE LOC LOC`, `OUTPUT`,
    /// `VERIFY`, `RECORD` or `ANALYZE`; a check about detectors' reports may end in
    /// ` [DET]` to cover one detector only. A listed check that fails is printed and
    /// tolerated.
    pub gaps: &'static [(&'static str, &'static str)],
    /// Whether a listed gap that does not show fails the test (so that the entry is
    /// removed once fixed); false for gaps that depend on the schedule.
    pub gaps_must_show: bool,
    /// The `java` that runs the programs (`java` on the PATH when `None`).
    pub java: Option<PathBuf>,
}

impl Suite {
    fn java(&self) -> &str {
        self.java
            .as_deref()
            .map_or("java", |p| p.to_str().expect("a UTF-8 path to java"))
    }

    /// Records, analyzes and checks one program; returns the failed checks.
    pub fn check(&self, name: &str) -> Vec<Failure> {
        self.check_runs(name, 1)
    }

    /// [`Suite::check`] with `runs` recordings of the program (its plain run and its
    /// `-Xverify:all` check once): a failure of any recording is a failure, reported with
    /// the number of recordings it showed in.
    pub fn check_runs(&self, name: &str, runs: u32) -> Vec<Failure> {
        let src = self.src.join(format!("{name}.java"));
        let truth = Truth::parse_file(&src).unwrap_or_else(|e| panic!("bad truth: {e}"));
        assert!(
            !truth.races.is_empty(),
            "{name}: a harness program has a RACE line"
        );
        assert!(
            !truth.noraces.is_empty(),
            "{name}: a harness program has a NORACE line"
        );
        let dir = scratch(self.name, name);
        let mut fails = Vec::new();
        let opts: &[&str] = if self.verify_in_recording {
            &["-Xverify:all"]
        } else {
            &[]
        };
        let plain = java_plain_with(self.java(), opts, &truth.main_class, &[]);
        assert!(
            plain.status.success(),
            "{name} fails without the agent: {}",
            text(&plain.stderr)
        );
        if !self.verify_in_recording {
            // -Xverify:all with the agent, as a separate run.
            let ver = record_with(
                self.java(),
                &dir.join("verify"),
                &["-Xverify:all"],
                &truth.main_class,
                &[],
            );
            let verr = text(&ver.stderr);
            if !ver.status.success() || verr.contains("VerifyError") || ver.stdout != plain.stdout {
                fails.push(Failure {
                    check: "VERIFY".into(),
                    detector: None,
                    detail: format!(
                        "under -Xverify:all: status {:?}, stdout {:?}, stderr {verr}",
                        ver.status.code(),
                        text(&ver.stdout)
                    ),
                });
            }
        }
        let mut seen: Vec<(Failure, u32)> = Vec::new();
        for run in 0..runs {
            let trace = if runs == 1 {
                dir.join("trace")
            } else {
                dir.join(format!("trace-{run}"))
            };
            let these = self.record_and_judge(name, &truth, &trace, opts, &plain);
            if these.is_empty() {
                let _ = std::fs::remove_dir_all(&trace);
            } else {
                eprintln!("{name}: trace kept in {}", trace.display());
            }
            for f in these {
                match seen.iter_mut().find(|(g, _)| g.key() == f.key()) {
                    Some((_, n)) => *n += 1,
                    None => seen.push((f, 1)),
                }
            }
        }
        for (mut f, n) in seen {
            if runs > 1 {
                f.detail = format!("{} (in {n} of {runs} recordings)", f.detail);
            }
            fails.push(f);
        }
        if fails.is_empty() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        fails
    }

    /// Records the program once into `trace`, analyzes it and judges the report.
    fn record_and_judge(
        &self,
        name: &str,
        truth: &Truth,
        trace: &Path,
        opts: &[&str],
        plain: &Output,
    ) -> Vec<Failure> {
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
        let rec = record_with(self.java(), trace, opts, &truth.main_class, &[]);

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
        if self.verify_in_recording && text(&rec.stderr).contains("VerifyError") {
            fail!(
                "VERIFY",
                format!("under -Xverify:all: stderr {}", text(&rec.stderr))
            );
        }
        let requested = if self.informative.is_empty() {
            self.detectors.to_string()
        } else {
            format!("{},{}", self.detectors, self.informative)
        };
        let doc = match analyze(trace, &requested) {
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
            requested,
            "{name}: the requested detectors ran"
        );
        for d in doc["detectors"].as_array().unwrap() {
            if d.get("unknown").and_then(Value::as_u64).unwrap_or(0) > 0 {
                eprintln!("{name}: note: {d}");
            }
        }
        let judged: Vec<&str> = self.detectors.split(',').collect();
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
            let (judge, inform): (Vec<&String>, Vec<&String>) = x
                .detectors
                .iter()
                .partition(|d| judged.contains(&d.as_str()));
            if !inform.is_empty()
                && !truth
                    .races
                    .iter()
                    .any(|r| r.matches(&x.variable, &x.a, &x.b))
            {
                eprintln!("{name}: informative: {sig} reported by {inform:?}");
            }
            if let Some(nr) = truth
                .noraces
                .iter()
                .find(|nr| nr.violated_by(&x.variable, &x.a, &x.b))
            {
                for d in judge {
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
            // Not a listed signature. hb, wcp and cp are sound for the first race of a
            // variable only: an extra pair on a RACE variable may be one of their later
            // false alarms.
            for d in judge {
                if SOUND_FOR_EVERY_RACE.contains(&d.as_str()) || !truth.race_variable(&x.variable) {
                    fail_by(
                        &format!("UNLISTED: {sig}"),
                        Some(d),
                        format!("neither RACE nor NORACE in {}", truth.file),
                    );
                } else {
                    eprintln!(
                        "{name}: note: {sig} reported by {d} (a later race on a RACE variable)"
                    );
                }
            }
        }
        fails
    }

    /// Runs one program, applies [`Suite::gaps`], and fails the test on any other failure.
    pub fn run(&self, name: &str, probe: &str) {
        self.run_n(name, probe, 1)
    }

    /// [`Suite::run`] with `runs` recordings ([`Suite::check_runs`]).
    pub fn run_n(&self, name: &str, probe: &str, runs: u32) {
        if !java_ready(probe) {
            return;
        }
        let t0 = Instant::now();
        let fails = self.check_runs(name, runs);
        let gaps: Vec<&str> = self
            .gaps
            .iter()
            .filter(|(p, _)| *p == name)
            .map(|(_, c)| *c)
            .collect();
        let mut errors = Vec::new();
        for f in &fails {
            if gaps.iter().any(|g| f.covered_by(g)) {
                eprintln!("{name}: KNOWN GAP `{}`: {}", f.key(), f.detail);
            } else {
                errors.push(format!("`{}`: {}", f.key(), f.detail));
            }
        }
        for g in gaps {
            if !fails.iter().any(|f| f.covered_by(g)) {
                if self.gaps_must_show {
                    errors.push(format!("`{g}` passes now: remove it from the known gaps"));
                } else {
                    eprintln!("{name}: known gap `{g}` did not show in this run");
                }
            }
        }
        eprintln!("{name}: {:.1} s", t0.elapsed().as_secs_f64());
        assert!(errors.is_empty(), "{name}:\n  {}", errors.join("\n  "));
    }

    /// The programs under [`Suite::src`] that state a truth (file stems), checking that
    /// each truth parses and has a NORACE line.
    pub fn programs_with_truth(&self) -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        for e in std::fs::read_dir(&self.src).unwrap() {
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
        found
    }
}
