//! End-to-end tests of the `jrace` command line: the test vectors (`tests/vectors/`)
//! through `jrace analyze --format json`, the JSON and SARIF contracts, exit codes and
//! errors.

use crate::common;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{jrace, root};
use jrace_analyzer::testing::{expectations, sig_string as sig, vector_files as vectors};

const ALL: &str = "hb,shb,wcp,cp,lockset";

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("jrace-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn analyze_json(path: &Path, dets: &str) -> Value {
    let out = jrace(&[
        "analyze",
        path.to_str().unwrap(),
        "-d",
        dets,
        "--format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

/// Checks the JSON report's shape (docs/REPORT.md), and returns detector -> signatures.
fn check_schema(doc: &Value, requested: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    assert_eq!(doc["version"], 1);
    for k in ["events", "threads", "variables", "locks"] {
        assert!(doc["trace"][k].is_u64(), "trace.{k}");
    }
    let dets = doc["detectors"].as_array().unwrap();
    let names: Vec<&str> = dets.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, requested);
    for d in dets {
        assert!(d["races"].is_u64() && d["seconds"].is_number());
    }
    let mut by_det: BTreeMap<String, BTreeSet<String>> = requested
        .iter()
        .map(|d| (d.to_string(), BTreeSet::new()))
        .collect();
    let races = doc["races"].as_array().unwrap();
    let mut last = (0u64, 0u64);
    for (i, r) in races.iter().enumerate() {
        assert_eq!(r["id"].as_u64().unwrap(), i as u64 + 1);
        let acc = r["accesses"].as_array().unwrap();
        assert_eq!(acc.len(), 2);
        let (e1, e2) = (
            acc[0]["event"].as_u64().unwrap(),
            acc[1]["event"].as_u64().unwrap(),
        );
        assert!(e1 < e2, "accesses in trace order");
        assert!((e2, e1) > last, "ids ordered by second event, then first");
        last = (e2, e1);
        for a in acc {
            for k in ["thread", "op", "location"] {
                assert!(a[k].is_string(), "access.{k}");
            }
            assert!(a["locks"].is_array());
            assert!(matches!(a["op"].as_str().unwrap(), "read" | "write"));
        }
        assert_eq!(
            r["kind"].as_str().unwrap(),
            format!(
                "{}-{}",
                acc[0]["op"].as_str().unwrap(),
                acc[1]["op"].as_str().unwrap()
            )
        );
        let s = sig(
            r["variable"].as_str().unwrap(),
            acc[0]["location"].as_str().unwrap(),
            acc[1]["location"].as_str().unwrap(),
        );
        let found_by = r["detectors"].as_array().unwrap();
        assert!(!found_by.is_empty());
        for d in found_by {
            by_det
                .get_mut(d.as_str().unwrap())
                .expect("requested detector")
                .insert(s.clone());
        }
    }
    for d in dets {
        let n = by_det[d["name"].as_str().unwrap()].len() as u64;
        assert_eq!(d["races"].as_u64().unwrap(), n, "detector race count");
    }
    by_det
}

#[test]
fn every_vector_gives_the_expected_races_through_the_cli() {
    let requested: Vec<&str> = ALL.split(',').collect();
    let mut failures = Vec::new();
    for f in vectors() {
        let text = std::fs::read_to_string(&f).unwrap();
        let want = expectations(&text);
        let doc = analyze_json(&f, ALL);
        let got = check_schema(&doc, &requested);
        for d in &requested {
            if let Some(w) = want.get(*d) {
                if &got[*d] != w {
                    failures.push(format!(
                        "{} {d}: got {:?} want {:?}",
                        f.display(),
                        got[*d],
                        w
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The locks, threads and operations a report names come from the lock journal kept
/// during the detectors' pass; the second pass over the trace, used when the journal
/// would grow too large, must say the same (also with the TREE filter in front).
#[test]
fn reports_from_the_lock_journal_equal_the_second_pass() {
    let mut files = vectors();
    files.push(root().join("examples/bank.std"));
    let mut held = 0;
    for f in files {
        for extra in [&["-d", ALL][..], &["-d", "hb,lockset", "--tree=hb"][..]] {
            let run = |cap: Option<&str>| {
                let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_jrace"));
                cmd.args(["analyze", f.to_str().unwrap(), "--format", "json"]);
                cmd.args(extra);
                if let Some(c) = cap {
                    cmd.env("JRACE_TEST_JOURNAL_CAP", c);
                }
                let out = cmd.output().unwrap();
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(
                    out.status.code().is_some_and(|c| c <= 1),
                    "{}: {err}",
                    f.display()
                );
                let mut doc: Value = serde_json::from_slice(&out.stdout).unwrap();
                for d in doc["detectors"].as_array_mut().unwrap() {
                    d["seconds"] = Value::Null;
                }
                doc
            };
            let journal = run(None);
            assert_eq!(journal, run(Some("0")), "{} {extra:?}", f.display());
            held += journal["races"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|r| r["accesses"].as_array().unwrap().clone())
                .filter(|a| !a["locks"].as_array().unwrap().is_empty())
                .count();
        }
    }
    assert!(held > 10, "only {held} racing accesses under a lock");
}

#[test]
fn json_names_threads_locations_and_locks() {
    let doc = analyze_json(&root().join("examples/bank.std"), "hb,wcp");
    let races = doc["races"].as_array().unwrap();
    let r = races
        .iter()
        .find(|r| r["variable"] == "Bank.lastTeller")
        .expect("wcp finds the lastTeller race");
    assert_eq!(r["detectors"], serde_json::json!(["wcp"]));
    assert_eq!(r["kind"], "write-read");
    assert_eq!(r["accesses"][0]["thread"], "teller-1");
    assert_eq!(r["accesses"][0]["location"], "Bank.java:26");
    assert_eq!(r["accesses"][0]["locks"], serde_json::json!([]));
    assert_eq!(r["accesses"][1]["thread"], "teller-2");
    assert_eq!(r["accesses"][1]["locks"], serde_json::json!(["audit"]));
    assert_eq!(doc["trace"]["threads"], 4);
}

#[test]
fn malformed_input_exits_2_with_a_located_message() {
    let cases: &[(&str, &str)] = &[
        (
            "t1|w(x)|1\nt1|bogus(x)|2\n",
            ":2: unknown operation `bogus`",
        ),
        ("t1|w(x,1.5)|1\n", ":1: value `1.5`"),
        (
            "t1|acq(l)|1\nt2|rel(l)|2\n",
            ":2: release of lock l that thread t2 does not hold",
        ),
        (
            "t1|fork(t2)|1\nt1|join(t2)|2\nt2|r(x)|3\n",
            ":3: thread t2 has an event after it was joined",
        ),
        ("only-a-thread\n", ":1: expected THREAD|OP|LOCATION"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let p = tmp(&format!("bad{i}.std"));
        std::fs::write(&p, text).unwrap();
        for cmd in ["analyze", "stats"] {
            let out = jrace(&[cmd, p.to_str().unwrap()]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd} {text:?}: {err}");
            assert!(
                err.contains(&format!("bad{i}.std{want}")),
                "{cmd} {text:?}: {err}"
            );
            assert!(out.stdout.is_empty(), "no partial report on stdout");
        }
    }
    let out = jrace(&["analyze", "/nonexistent/trace.std"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/trace.std"));
}

#[test]
fn bad_usage_exits_2() {
    let bank = root().join("examples/bank.std");
    let b = bank.to_str().unwrap();
    for args in [
        vec!["analyze", b, "-d", "nosuch"],
        vec!["analyze", b, "--format", "xml"],
        vec!["analyze"],
        vec!["frobnicate"],
    ] {
        let out = jrace(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
    let out = jrace(&["analyze", b, "-d", "nosuch"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown detector `nosuch`"));
}

#[test]
fn fail_on_race_sets_exit_status() {
    let racy = root().join("examples/bank.std");
    let out = jrace(&["analyze", racy.to_str().unwrap(), "--fail-on-race"]);
    assert_eq!(out.status.code(), Some(1));
    let clean = tmp("clean.std");
    std::fs::write(
        &clean,
        "t1|acq(l)|1\nt1|w(x)|2\nt1|rel(l)|3\nt2|acq(l)|4\nt2|r(x)|5\nt2|rel(l)|6\n",
    )
    .unwrap();
    let out = jrace(&["analyze", clean.to_str().unwrap(), "--fail-on-race"]);
    assert_eq!(out.status.code(), Some(0));
}

/// `--max-races N` describes N races, the sound detectors' first, and counts the rest per
/// detector (JSON `omitted`, the text report, SARIF); detectors' counts stay whole, and
/// left-out races fail --fail-on-race (no rule or baseline ever saw them).
#[test]
fn max_races_describes_that_many_and_counts_the_rest() {
    // Lockset warns on every pair of t1's and t2's writes of `x` (no common lock; it
    // ignores the volatile), hb only on t1's last write against t2's two.
    let f = tmp("many.std");
    let mut text = String::new();
    for s in 0..6 {
        text += &format!("t1|w(x)|a{s}\n");
    }
    text += "t1|vw(v)|f\nt2|vr(v)|g\nt2|w(x)|b0\nt2|w(x)|b1\nt1|w(x)|c0\n";
    std::fs::write(&f, text).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["analyze", f.to_str().unwrap(), "-d", "hb,lockset"];
        args.extend_from_slice(extra);
        jrace(&args)
    };
    let all: Value = serde_json::from_slice(&run(&["--format", "json"]).stdout).unwrap();
    assert!(all.get("omitted").is_none());
    let count = |doc: &Value, d: &str| {
        doc["detectors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == d)
            .unwrap()["races"]
            .as_u64()
            .unwrap()
    };
    let (hb, lockset) = (count(&all, "hb"), count(&all, "lockset"));
    assert!(hb >= 1 && lockset > hb + 2, "hb {hb}, lockset {lockset}");
    let total = all["races"].as_array().unwrap().len() as u64;

    let capped: Value =
        serde_json::from_slice(&run(&["--format", "json", "--max-races", "2"]).stdout).unwrap();
    let races = capped["races"].as_array().unwrap();
    assert_eq!(races.len(), 2);
    // hb's races come first, whatever their ids.
    let hb_shown = races
        .iter()
        .filter(|r| r["detectors"].as_array().unwrap().contains(&"hb".into()))
        .count() as u64;
    assert_eq!(hb_shown, hb.min(2));
    assert_eq!(capped["omitted"]["count"], total - 2);
    assert_eq!(capped["omitted"]["max_races"], 2);
    assert_eq!(
        (count(&capped, "hb"), count(&capped, "lockset")),
        (hb, lockset)
    );

    let text = String::from_utf8(run(&["--max-races", "2"]).stdout).unwrap();
    assert!(
        text.contains(&format!("{} more races not shown", total - 2)),
        "{text}"
    );
    let html = String::from_utf8(run(&["--format", "html", "--max-races", "2"]).stdout).unwrap();
    assert!(html.contains(&format!("{} more races not shown", total - 2)));
    let sarif: Value =
        serde_json::from_slice(&run(&["--format", "sarif", "--max-races", "2"]).stdout).unwrap();
    assert_eq!(
        sarif["runs"][0]["invocations"][0]["properties"]["omittedRaces"],
        total - 2
    );
    // 0: no limit.
    let unlimited: Value =
        serde_json::from_slice(&run(&["--format", "json", "--max-races", "0"]).stdout).unwrap();
    assert_eq!(unlimited["races"].as_array().unwrap().len() as u64, total);
    // Races left out fail --fail-on-race even when every described one is suppressed.
    let rules = tmp("all.supp");
    std::fs::write(&rules, "race:*\n").unwrap();
    let supp = rules.to_str().unwrap();
    let out = run(&["--fail-on-race", "--suppressions", supp]);
    assert_eq!(out.status.code(), Some(0));
    let out = run(&["--fail-on-race", "--suppressions", supp, "--max-races", "2"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn sarif_has_one_result_per_race_with_both_locations() {
    let bank = root().join("examples/bank.std");
    let json = analyze_json(&bank, ALL);
    let out = jrace(&[
        "analyze",
        bank.to_str().unwrap(),
        "-d",
        ALL,
        "--format",
        "sarif",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["version"], "2.1.0");
    let results = s["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), json["races"].as_array().unwrap().len());
    for r in results {
        let locs = r["locations"].as_array().unwrap();
        assert_eq!(locs.len(), 2);
        for l in locs {
            assert_eq!(
                l["physicalLocation"]["artifactLocation"]["uri"],
                "Bank.java"
            );
            assert!(
                l["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap()
                    > 0
            );
        }
    }
}

#[test]
fn text_report_and_output_file() {
    let bank = root().join("examples/bank.std");
    let out_file = tmp("report.txt");
    let out = jrace(&[
        "analyze",
        bank.to_str().unwrap(),
        "-o",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let text = std::fs::read_to_string(&out_file).unwrap();
    assert!(text.contains("Data race #1 on "), "{text}");
    assert!(text.contains("locks held: "));
    for d in ["hb:", "shb:", "wcp:"] {
        assert!(text.contains(d), "summary line for {d}");
    }
}

#[test]
fn stats_counts_events() {
    let bank = root().join("examples/bank.std");
    let out = jrace(&["stats", bank.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("events:     47"), "{s}");
    assert!(s.contains("threads:    4"), "{s}");
    assert!(s.contains("fork       3"), "{s}");
}

/// `stats` counts the reads no traced write explains (`witness::UnexplainedCounter`): here
/// t2 reads 7 from `x` after t1 wrote 1 (missing code wrote 7), and reads `y`'s initial
/// value 0 twice (explained).
#[test]
fn stats_counts_reads_no_write_explains() {
    let p = tmp("unexplained.std");
    std::fs::write(
        &p,
        "t1|w(x,1)|A.java:1\nt2|r(x,7)|B.java:2\nt2|r(y,0)|B.java:3\nt1|r(y,0)|A.java:4\n",
    )
    .unwrap();
    let out = jrace(&["stats", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("reads no traced write explains: 1 of 3 reads with values"),
        "{s}"
    );
}

#[test]
fn convert_round_trips_and_binary_traces_analyze_the_same() {
    for f in vectors()
        .into_iter()
        .chain([root().join("examples/bank.std")])
    {
        let std_out = tmp("rt.std");
        common::convert(&f, "std", &std_out);
        let bin_out = tmp(&format!(
            "{}.trace",
            f.file_stem().unwrap().to_string_lossy()
        ));
        let _ = std::fs::remove_dir_all(&bin_out);
        common::convert(&f, "bin", &bin_out);
        let mut reports = Vec::new();
        for p in [&f, &std_out, &bin_out] {
            let mut doc = analyze_json(p, ALL);
            for d in doc["detectors"].as_array_mut().unwrap() {
                d["seconds"] = Value::Null;
            }
            reports.push(doc);
        }
        assert_eq!(reports[0], reports[1], "{}: std round trip", f.display());
        assert_eq!(reports[0], reports[2], "{}: binary round trip", f.display());
    }
}

#[test]
fn demo_prints_a_report() {
    let out = jrace(&["demo"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("Data race #1"), "{s}");
    assert!(s.contains("Bank.transfers"));
}

#[test]
fn stats_of_a_trace_directory_shows_recorder_facts_and_size() {
    let dir = tmp("stats.trace");
    let _ = std::fs::remove_dir_all(&dir);
    let bank = root().join("examples/bank.std");
    let out = jrace(&[
        "convert",
        bank.to_str().unwrap(),
        "--to",
        "bin",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let out = jrace(&["stats", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("events:     47"), "{s}");
    assert!(s.contains("recorder: branches = 1"), "{s}");
    assert!(s.contains("bytes/event"), "{s}");
}

/// On a terminal, the solver detectors show a bar of windows with their queries and
/// races; elsewhere (a pipe, CI) nothing is written to stderr.
#[test]
fn solver_progress_shows_on_a_terminal_only() {
    let bank = root().join("examples/bank.std");
    let bin = env!("CARGO_BIN_EXE_jrace");
    let cmd = format!(
        "{bin} analyze {} -d mcm --window 4 -o /dev/null",
        bank.to_str().unwrap()
    );
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no `script` to give jrace a terminal");
        return;
    }
    let out = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("mcm ") && shown.contains(" windows ["),
        "{shown}"
    );
    let piped = jrace(&[
        "analyze",
        bank.to_str().unwrap(),
        "-d",
        "mcm",
        "--window",
        "4",
        "-o",
        "/dev/null",
    ]);
    assert_eq!(piped.status.code(), Some(0));
    assert!(
        piped.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
}

/// A text report with very many races stays readable: at most 100 blocks, two per
/// variable and one line for the rest of a variable's pairs, and a last line saying what
/// was left out; the JSON report keeps every race.
#[test]
fn a_long_text_report_is_capped_and_grouped() {
    let mut text = String::new();
    for v in 0..150 {
        for (t, line) in [("t1", 10), ("t2", 20), ("t3", 30)] {
            text.push_str(&format!("{t}|w(V{v}.x,1)|F.java:{}\n", line + v * 100));
        }
    }
    let path = tmp("many.std");
    std::fs::write(&path, text).unwrap();
    let out = jrace(&["analyze", path.to_str().unwrap(), "-d", "hb"]);
    assert_eq!(out.status.code(), Some(0));
    let report = String::from_utf8_lossy(&out.stdout);
    let blocks =
        report.matches("\nData race #").count() + usize::from(report.starts_with("Data race #"));
    assert_eq!(blocks, 100, "{report}");
    assert!(report.contains("... and 1 more on V0.x: "), "{report}");
    assert!(
        report.contains(
            "450 races in all; 100 shown in full above, 300 more on 100 other variables not listed"
        ),
        "{report}"
    );
    let doc = analyze_json(&path, "hb");
    assert_eq!(doc["races"].as_array().unwrap().len(), 450);
}

/// `--format html`: one self-contained page with every race (both accesses, locks,
/// detectors, fingerprint, the witness command), whose script sorts and filters the races
/// in a real browser without an error.
#[test]
fn html_report_lists_every_race_and_runs_in_a_browser() {
    let bank = root().join("examples/bank.std");
    let bank = bank.to_str().unwrap();
    // `jrace analyze TRACE -d hb,wcp,m2 --witness --format html -o PAGE`: the page.
    let html_of = |trace: &str, page: &Path| -> String {
        let out = jrace(&[
            "analyze",
            trace,
            "-d",
            "hb,wcp,m2",
            "--witness",
            "--format",
            "html",
            "-o",
            page.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{out:?}");
        assert!(out.stdout.is_empty(), "the page goes to -o only");
        std::fs::read_to_string(page).unwrap()
    };
    let page = tmp("report.html");
    let html = html_of(bank, &page);
    let doc = analyze_json(&root().join("examples/bank.std"), "hb,wcp,m2");
    let races = doc["races"].as_array().unwrap();
    assert_eq!(races.len(), 3);
    assert_eq!(html.matches("<details class=\"race").count(), races.len());
    for r in races {
        for field in [
            &r["variable"],
            &r["fingerprint"],
            &r["accesses"][0]["location"],
            &r["accesses"][1]["location"],
        ] {
            assert!(html.contains(field.as_str().unwrap()), "{field} missing");
        }
        let id = r["id"].as_u64().unwrap();
        assert!(
            html.contains(&format!("jrace witness {bank} --race {id} ")),
            "no witness command for race {id}"
        );
    }
    assert!(html.contains("<span class=\"lock\">audit</span>"));
    assert!(html.contains("Witness: a schedule of "));
    // With --witness, each race's block embeds its witness view.
    assert_eq!(
        html.matches("<iframe title=\"witness of race").count(),
        races.len()
    );
    // Self-contained: nothing is fetched.
    for s in ["src=\"http", "href=\"http", "<link", "@import"] {
        assert!(!html.contains(s), "the page refers to {s}");
    }
    let Some((dom, err)) = common::chromium_dom(&page, &tmp("chromium-profile")) else {
        return;
    };
    assert!(!err.contains("Uncaught"), "script error: {err}");
    assert!(
        dom.contains("data-sorted=\"id\""),
        "the script sorted the races: {dom}"
    );
    assert!(dom.contains(">variable</button>"), "{dom}");
    assert_eq!(dom.matches("<details class=\"race").count(), 3, "{dom}");
    assert_eq!(dom.matches("<iframe").count(), 3, "{dom}");

    // A directory holding one trace (as `out=DIR/%p` leaves after one JVM) is that trace:
    // the page's commands and embedded views name the trace itself.
    let dir = tmp("one-jvm");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let one = dir.join("4242");
    let out = jrace(&["convert", bank, "--to", "bin", "-o", one.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let html = html_of(dir.to_str().unwrap(), &tmp("one-jvm.html"));
    assert!(
        html.contains(&format!("jrace witness {} --race 1 ", one.display())),
        "{html}"
    );
    assert_eq!(html.matches("<iframe title=\"witness of race").count(), 3);
}

/// A recording of java-harness's stress.RwLocks (three threads contending on a
/// ReentrantReadWriteLock and a StampedLock, one plain race), kept in
/// tests/fixtures/said/: said's queries on whole 10,000-event windows of it all timed out
/// (0 races, 1 undecided, a minute); on pair-centered query windows it finds the race
/// mcm finds, with nothing undecided.
#[test]
fn said_decides_contended_read_write_locks() {
    let trace = common::root().join("tests/fixtures/said/rwlocks");
    let doc = analyze_json(&trace, "said,mcm");
    for d in doc["detectors"].as_array().unwrap() {
        assert_eq!(d["unknown"], 0, "{d}");
        assert_eq!(d["races"], 1, "{d}");
    }
    let races = doc["races"].as_array().unwrap();
    assert_eq!(races.len(), 1, "{races:?}");
    assert_eq!(races[0]["variable"], "stress.RwLocks.racy", "{races:?}");
    let by: Vec<&str> = races[0]["detectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(by, ["said", "mcm"]);
}

/// A trace with more thread logs than the analyzer may open files (tens of thousands of
/// virtual threads): the reader keeps no log file open between chunks, so it reads.
#[test]
fn a_trace_of_more_threads_than_open_files_is_read() {
    let n = 300;
    let mut std = String::new();
    for k in 0..n {
        std += &format!("main|fork(v{k})|M.java:1\nv{k}|w(slot{k})|V.java:2\n");
    }
    std += "v0|w(shared)|V.java:3\n";
    for k in 1..n {
        std += &format!("main|join(v{k})|M.java:4\n");
    }
    std += "main|r(shared)|M.java:5\n";
    let dir = tmp("many-threads.trace");
    common::binary_trace(&std, None, &dir);
    assert!(std::fs::read_dir(&dir).unwrap().count() > n);
    let script = format!(
        "ulimit -n 64 && exec {} analyze {} -d hb",
        env!("CARGO_BIN_EXE_jrace"),
        dir.display()
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(&format!("{} threads", n + 1)), "{stdout}");
    // v0 is never joined: its write of `shared` races with main's read.
    assert!(stdout.contains("hb: 1 race"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}
