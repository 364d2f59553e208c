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
//! `cargo build --release --workspace && cargo test --release --test it -- record_families::`.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common;
use crate::harness;

use common::jrace;
use harness::{analyze, classes, record, reported, text, Suite};

/// Recorder gaps known to make a specific check fail: (program, check). A check is the
/// truth line it concerns (`RACE: ...` / `NORACE: ...` as written in the source),
/// `UNLISTED: VARIABLE LOC LOC`, `OUTPUT`, `VERIFY`, `RECORD` or `ANALYZE`; a check about
/// detectors' reports may end in ` [DET]` to cover one detector only. A listed check that
/// fails is printed and tolerated; a listed check that passes fails the test, so that the
/// entry is removed once the recorder is fixed.
const KNOWN_RECORDER_GAPS: &[(&str, &str)] = &[];

/// The detectors run on every program: all sound for their first race per variable.
const DETECTORS: &str = "hb,shb,wcp,cp,m2,mcm,said";

fn suite() -> Suite {
    Suite {
        name: "families",
        src: common::root().join("java-harness/src/families"),
        detectors: DETECTORS,
        informative: "",
        verify_in_recording: false,
        gaps: KNOWN_RECORDER_GAPS,
        gaps_must_show: true,
        java: None,
    }
}

fn families_src() -> PathBuf {
    common::root().join("java-harness/src/families")
}

fn java_ready() -> bool {
    harness::java_ready("families/Fields.class")
}

fn scratch(name: &str) -> PathBuf {
    harness::scratch("families", name)
}

/// Runs one family and applies [`KNOWN_RECORDER_GAPS`].
fn family(name: &str) {
    suite().run(name, "families/Fields.class");
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
    family_shutdown_hooks => "ShutdownHooks",
    family_cleaners => "Cleaners",
    family_pipes => "Pipes",
    family_sockets => "Sockets",
    family_finalizers => "Finalizers",
    family_runner_subclasses => "Runners",
    family_fences => "Fences",
    family_off_heap => "OffHeap",
    family_class_loaders => "ClassLoaders",
    family_nested_calls_from_callbacks => "Callbacks",
    family_jdk_monitors => "JdkMonitors",
    family_thread_states => "ThreadStates",
    family_plain_queues => "PlainQueues",
}

/// ThreadStates's observers poll from before the worker starts: whether one sees the
/// worker not alive yet after its start was recorded depends on the schedule (the
/// recorder once took that for the worker's end, and the trace was refused about half of
/// the time).
#[test]
fn family_thread_states_five_times() {
    // A scratch directory of its own: the single run of the program runs beside it.
    let repeated = Suite {
        name: "families-repeated",
        ..suite()
    };
    repeated.run_n("ThreadStates", "families/Fields.class", 5);
}

#[test]
fn every_family_program_has_a_test_and_a_valid_truth() {
    let found = suite().programs_with_truth();
    let listed: std::collections::BTreeSet<String> =
        FAMILIES.iter().map(|s| s.to_string()).collect();
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
    assert_eq!(
        doc["trace"]["truncated"]["reason"], "killed",
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

/// A plain read is stamped when its hook begins: a thread's first read, whose hook also
/// sets up the thread's log, sorts before a write it did not see. Stamped after that
/// set-up, the read of 0 sorted after the other thread's write of 1 in nine rounds of ten
/// (a trace its own values contradict, on which mcm lost races m2 found). What is left
/// (two accesses closer than the hook's own start) the reader puts in order: it returns
/// such a read before the write (trace/FORMAT.md §7), so no read stays unexplained.
#[test]
fn a_first_read_sorts_before_the_write_it_did_not_see() {
    if !java_ready() {
        return;
    }
    let rounds = 200;
    let dir = scratch("first-reads");
    let trace = dir.join("trace");
    let cp = classes();
    let out = jrace(&[
        "record",
        "--exclude",
        "families.signal.*",
        "-o",
        trace.to_str().unwrap(),
        "--",
        "java",
        "-cp",
        cp.to_str().unwrap(),
        "families.FirstReads",
        &rounds.to_string(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let zeros: u32 = text(&out.stdout)
        .trim()
        .strip_prefix("zeros=")
        .and_then(|z| z.parse().ok())
        .unwrap_or_else(|| panic!("FirstReads prints zeros=N: {}", text(&out.stdout)));
    assert!(
        zeros >= rounds / 10,
        "only {zeros} of {rounds} reads loaded 0 before the write: the test did not exercise the case"
    );
    let stats = jrace(&["stats", trace.to_str().unwrap()]);
    let stats = text(&stats.stdout);
    let count = |prefix: &str| -> Option<u32> {
        stats
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.trim_end_matches(',').parse().ok())
    };
    let unexplained = count("reads no traced write explains: ")
        .unwrap_or_else(|| panic!("jrace stats counts unexplained reads: {stats}"));
    let moved = count("reads moved to the write they saw: ").unwrap_or(0);
    assert!(
        moved <= rounds / 4,
        "{moved} of {zeros} reads of 0 were stamped after the write of 1 (the recorder's \
         stamps), at most {} expected",
        rounds / 4
    );
    assert!(
        unexplained <= rounds / 20,
        "{unexplained} reads of 0 sort after the write of 1 in the trace read back: {stats}"
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
    // The report says the trace ends with the two threads running.
    let cut = &doc["trace"]["truncated"];
    assert_eq!(cut["reason"], "exit", "{}", doc["trace"]);
    let mut running: Vec<&str> = cut["running"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    running.sort();
    assert_eq!(running, ["busy-daemon", "busy-user"], "{}", doc["trace"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A small file system mounted for a test, unmounted when dropped.
struct SmallFs(PathBuf);

impl SmallFs {
    /// A tmpfs of `size` (`600k`) at `at`, or `None` when mounting is not allowed here.
    fn mount(at: &Path, size: &str) -> Option<SmallFs> {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallFs(at.to_owned()))
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// A full disk: recording stops at the first write the file system refuses (a log's
/// frame, a new thread's log, the metadata), the program runs on with its output and
/// status, one `jrace:` line says why, and the trace is analyzed, its report saying it was
/// cut by a write error. Writing through a memory map the file system cannot back was a
/// SIGBUS that killed the JVM; events naming what the metadata could not take made the
/// trace unreadable. Needs permission to mount a tmpfs (skipped with a note otherwise).
#[test]
fn a_full_disk_stops_recording_not_the_program() {
    if !java_ready() {
        return;
    }
    let dir = scratch("disk-full");
    let h2 = Path::new("/usr/share/java/h2.jar");
    let cp = classes();
    let h2cp = format!("{}:{}", cp.display(), h2.display());
    let mut programs = vec![(
        cp.display().to_string(),
        vec!["workloads.Loops", "3", "300000"],
    )];
    if h2.is_file() {
        // Many names (the metadata fills too) and threads started while the disk fills.
        programs.push((h2cp, vec!["workloads.Jdbc", "h2", "4", "300"]));
    } else {
        println!("note: no {}: the H2 program is skipped", h2.display());
    }
    let mut cut = 0;
    for (cp, prog) in &programs {
        let plain = Command::new("java")
            .args(["-cp", cp])
            .args(prog)
            .output()
            .unwrap();
        assert!(plain.status.success(), "{}", text(&plain.stderr));
        for size in ["400k", "1m", "2m", "4m"] {
            let at = dir.join(format!("fs-{size}"));
            let Some(_fs) = SmallFs::mount(&at, size) else {
                println!("SKIPPED: cannot mount a tmpfs here (not root?)");
                return;
            };
            let trace = at.join("trace");
            let mut a = vec![
                "record",
                "-o",
                trace.to_str().unwrap(),
                "--",
                "java",
                "-cp",
                cp,
            ];
            a.extend(prog.iter().copied());
            let out = jrace(&a);
            let what = format!("{prog:?} on {size}");
            assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out.stderr));
            assert_eq!(text(&out.stdout), text(&plain.stdout), "{what}: output");
            let err = text(&out.stderr);
            let said: Vec<&str> = err.lines().filter(|l| l.starts_with("jrace:")).collect();
            assert!(said.len() <= 1, "{what}: at most one line: {err}");
            let doc = analyze(&trace, "hb,shb").unwrap_or_else(|e| panic!("{what}: {e}"));
            match doc["trace"]["truncated"]["reason"].as_str() {
                Some("write_error") => {
                    cut += 1;
                    assert_eq!(said.len(), 1, "{what}: {err}");
                }
                None => assert!(said.is_empty(), "{what}: {err}"),
                r => panic!("{what}: cut for {r:?}: {}", doc["trace"]),
            }
        }
    }
    assert!(
        cut >= programs.len(),
        "the disks did fill up: {cut} runs cut"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each way a log's file can fail (`JRACE_TEST_FAULT`: its creation, the reservation of
/// its blocks, its mapping, a sealed chunk's write, at the start, mid-run, at a thread's
/// end, at exit): the program's output and status are those of an unrecorded run, and
/// either the trace could not be started at all (the agent says so and the program runs
/// unrecorded) or it analyzes and says it was cut by a write error, in one `jrace:` line
/// on stderr and in the report.
#[test]
fn every_failing_write_stops_recording_not_the_program() {
    if !java_ready() {
        return;
    }
    let dir = scratch("faults");
    let small = ("juc.AtomicSpin", &[][..]);
    let busy = ("workloads.Loops", &["3", "200000"][..]);
    let cases = [
        ("create:1", small), // the metadata log: no trace at all
        ("create:3", small), // the first thread's log
        ("create:6", busy),  // a thread started later
        ("reserve:1", small),
        ("reserve:3", small),
        ("map:2", small),
        ("map:4", busy),
        ("frame:1", small), // a thread's log at its end
        ("frame:3", small), // the main thread's, at exit
        ("frame:4", small), // the metadata log's, at exit
        ("frame:3", busy),  // mid-run
    ];
    let mut plain = std::collections::HashMap::new();
    for (k, (fault, (main, args))) in cases.iter().enumerate() {
        let want = plain
            .entry(main)
            .or_insert_with(|| harness::java_plain(&[], main, args));
        let trace = dir.join(format!("t{k}"));
        let cp = classes();
        let mut a = vec!["record", "-o", trace.to_str().unwrap(), "--", "java", "-cp"];
        a.push(cp.to_str().unwrap());
        a.push(main);
        a.extend_from_slice(args);
        let out = Command::new(env!("CARGO_BIN_EXE_jrace"))
            .args(&a)
            .env("JRACE_TEST_FAULT", fault)
            .output()
            .unwrap();
        let what = format!("{fault} in {main}");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{what}: {err}");
        assert_eq!(text(&out.stdout), text(&want.stdout), "{what}: output");
        if !trace.join("meta.jrl").exists() {
            assert!(
                err.contains("jrace agent: cannot create the trace directory"),
                "{what}: {err}"
            );
            continue;
        }
        let said: Vec<&str> = err.lines().filter(|l| l.starts_with("jrace:")).collect();
        assert_eq!(said.len(), 1, "{what}: one line on stderr: {err}");
        let doc = analyze(&trace, "hb,shb").unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            doc["trace"]["truncated"]["reason"], "write_error",
            "{what}: {}",
            doc["trace"]
        );
        // A log whose chunk could not be sealed keeps its open chunk for readers; a
        // log that could not be made leaves nothing; the others are finished.
        let broken = usize::from(fault.starts_with("frame"));
        assert_eq!(
            open_logs(&trace).len(),
            broken,
            "{what}: {:?}",
            open_logs(&trace)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// HotSpot compiles no method whose monitors it cannot prove balanced. The hook after a
/// `monitorenter` sat outside javac's handler that releases the monitor (an exception
/// there would leave the method holding it), so every instrumented method with a
/// `synchronized` block ran interpreted for ever: `workloads.Loops` spent a third of its
/// time in the interpreter. The hook is now inside that handler, and C2 compiles the
/// method (C1 still declines it: javac's handler covers itself, and the hook before its
/// `monitorexit` is a call there).
#[test]
fn instrumented_synchronized_blocks_are_jit_compiled() {
    if !java_ready() {
        return;
    }
    let dir = scratch("jit");
    let out = record(
        &dir.join("trace"),
        &["-XX:+PrintCompilation"],
        "workloads.Loops",
        &["2", "1000000"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let log = text(&out.stdout);
    let method = "workloads.Loops::lambda$main$0";
    let lines: Vec<&str> = log.lines().filter(|l| l.contains(method)).collect();
    // `   154   64 % !   4       workloads.Loops::lambda$main$0 @ 15 (313 bytes)`
    let tier4 = |l: &&str| {
        let before = &l[..l.find(method).unwrap()];
        before.split_whitespace().last() == Some("4")
    };
    let skipped: Vec<&&str> = lines
        .iter()
        .filter(|l| tier4(l) && l.contains("COMPILE SKIPPED"))
        .collect();
    assert!(skipped.is_empty(), "C2 declined it: {skipped:?}");
    assert!(
        lines.iter().any(|l| tier4(l) && !l.contains("SKIPPED")),
        "C2 compiled the loop: {lines:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `max_mb`: recording stops, the program runs on with its output and status unchanged,
/// the agent says so (agent.log, stderr), and the trace cut there is analyzed, its report
/// (text, JSON, SARIF) saying it was cut, where, and which threads were running.
#[test]
fn a_trace_cut_at_max_mb_is_analyzed_and_says_so() {
    if !java_ready() {
        return;
    }
    let dir = scratch("max-mb");
    let trace = dir.join("trace");
    let args = ["2", "400000"];
    let plain = harness::java_plain(&[], "workloads.Loops", &args);
    let cp = classes();
    let mut a = vec![
        "record",
        "--max-mb",
        "1",
        "-o",
        trace.to_str().unwrap(),
        "--",
    ];
    a.extend_from_slice(&["java", "-cp", cp.to_str().unwrap(), "workloads.Loops"]);
    a.extend_from_slice(&args);
    let out = jrace(&a);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        text(&plain.stdout),
        "the program's output"
    );
    let err = text(&out.stderr);
    let said: Vec<&str> = err.lines().filter(|l| l.starts_with("jrace:")).collect();
    assert!(
        said.len() == 1 && said[0].contains("max_mb"),
        "one line on stderr: {err}"
    );
    let log = std::fs::read_to_string(trace.join("agent.log")).unwrap();
    assert!(log.contains("max_mb"), "agent.log: {log}");
    assert_eq!(open_logs(&trace), Vec::<String>::new(), "logs left open");

    let doc = analyze(&trace, "hb,shb,mcm").unwrap_or_else(|e| panic!("{e}"));
    let cut = &doc["trace"]["truncated"];
    assert_eq!(cut["reason"], "max_mb", "{}", doc["trace"]);
    assert_eq!(cut["after_event"], doc["trace"]["events"]);
    assert!(
        !cut["running"].as_array().unwrap().is_empty(),
        "the workers were running at the cut: {}",
        doc["trace"]
    );
    let t = jrace(&["analyze", trace.to_str().unwrap(), "-d", "hb"]);
    assert_eq!(t.status.code(), Some(0));
    assert!(
        text(&t.stdout).contains("Trace cut short (max_mb)"),
        "{}",
        text(&t.stdout)
    );
    let sarif = jrace(&[
        "analyze",
        trace.to_str().unwrap(),
        "-d",
        "hb",
        "--format",
        "sarif",
    ]);
    let sarif: Value = serde_json::from_slice(&sarif.stdout).unwrap();
    let note = &sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"][0];
    assert_eq!(note["descriptor"]["id"], "trace-truncated", "{sarif:#}");
    assert_eq!(note["properties"]["reason"], "max_mb");

    // Without the limit the same program's trace is not cut.
    let whole = dir.join("whole");
    let out = record(&whole, &[], "workloads.Loops", &["2", "1000"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = analyze(&whole, "hb").unwrap_or_else(|e| panic!("{e}"));
    assert!(doc["trace"].get("truncated").is_none(), "{}", doc["trace"]);
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

/// Reports name a `java.util.concurrent` lock by the field the code reached it through
/// (`FIELD.lock()`; monitors: tests/it/recipes.rs). One reached through a call
/// (`rw.writeLock().lock()`) keeps its class and id.
#[test]
fn locks_are_named_by_the_fields_they_are_reached_through() {
    if !java_ready() {
        return;
    }
    let dir = scratch("lock-names");
    let trace = dir.join("trace");
    let out = record(&trace, &[], "families.JucLocks", &[]);
    assert!(out.status.success(), "{out:?}");
    let text = common::convert_to_std(&trace, &dir.join("t.std"));
    let names: std::collections::BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.split('|').nth(1)?.strip_prefix("acq(")?.strip_suffix(')'))
        .collect();
    for field in ["families.JucLocks.lock [", "families.JucLocks.lockA ["] {
        assert!(
            names.iter().any(|n| n.starts_with(field)),
            "no lock named {field}...: {names:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
