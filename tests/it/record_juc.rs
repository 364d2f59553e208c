//! `java.util.concurrent` as it really synchronizes (java-harness/src/juc/): one program
//! per shape in which a detector could be misled by the JDK's synchronization (atomics
//! spun on, subclasses and wrappers of concurrent classes, executors beyond the plain
//! path, parallel streams, asynchronous I/O, collections shared without their lock,
//! failed operations, locks held at a thread's end or at exit). Each is recorded many
//! times, since what goes wrong here goes wrong in some schedules only: in every
//! recording, no detector sound for every race (shb, m2, mcm, said, rdit) may report a
//! race the truth does not list, and every listed race is found by the detectors it names
//! (all of hb, shb, wcp, cp, m2 and mcm when it names none). The output of every recording
//! is the program's own, and one run under `-Xverify:all` verifies.

use crate::common;
use crate::harness;

use harness::Suite;

/// Recordings of each program.
const RUNS: u32 = 20;

const DETECTORS: &str = "hb,shb,wcp,cp,m2,mcm,said,rdit";

fn suite() -> Suite {
    Suite {
        name: "juc",
        src: common::root().join("java-harness/src/juc"),
        detectors: DETECTORS,
        informative: "",
        verify_in_recording: false,
        gaps: &[],
        gaps_must_show: true,
        java: None,
    }
}

/// Recordings of each program of the hand-off catalogue (many small shapes per program,
/// each checked in every recording).
const CATALOGUE_RUNS: u32 = 5;

macro_rules! programs {
    ($($test:ident => $name:literal x $runs:expr),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                suite().run_n($name, "juc/AtomicSpin.class", $runs);
            }
        )*
        const PROGRAMS: &[&str] = &[$($name),*];
    };
}

programs! {
    atomics_spun_on_keep_their_order => "AtomicSpin" x RUNS,
    subclasses_and_wrappers_of_concurrent_classes => "ConcurrentSubclasses" x RUNS,
    executors_beyond_the_plain_path => "ExecutorPaths" x RUNS,
    parallel_stream_collect => "ParallelCollect" x RUNS,
    asynchronous_accept_handler => "AsyncAccept" x RUNS,
    collections_shared_without_their_lock => "SyncViews" x RUNS,
    failed_operations_order_what_they_read => "FailedOps" x RUNS,
    a_thread_ends_holding_a_lock => "LockHeldAtEnd" x RUNS,
    the_jvm_exits_while_a_lock_is_held => "LockHeldAtExit" x RUNS,
    compare_and_set_spin_locks => "CasSpinLock" x CATALOGUE_RUNS,
    // The catalogue: every kind of hand-off, signal, atomic, pool and concurrent
    // collection publishing plain data.
    objects_handed_off_through_every_queue => "Handoffs" x CATALOGUE_RUNS,
    signals_of_every_synchronizer => "Signals" x CATALOGUE_RUNS,
    field_updaters_and_other_atomics_publish => "Updaters" x CATALOGUE_RUNS,
    results_through_every_pool_path => "Pools" x CATALOGUE_RUNS,
    skip_lists_copy_on_write_and_compute_publish => "Maps" x CATALOGUE_RUNS,
    bulk_operations_on_the_common_pool => "Bulk" x CATALOGUE_RUNS,
    drains_timed_acquires_and_atomic_arrays => "Drains" x CATALOGUE_RUNS,
    volatile_fields_set_through_reflection_publish => "Reflection" x CATALOGUE_RUNS,
    termination_seen_without_join_and_caller_runs => "Termination" x CATALOGUE_RUNS,
}

#[test]
fn every_juc_program_has_a_test_and_a_valid_truth() {
    let found = suite().programs_with_truth();
    let listed: std::collections::BTreeSet<String> =
        PROGRAMS.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        found, listed,
        "programs with a truth vs programs tested here"
    );
}

/// A JDK newer than the one the agent is built with: `JRACE_TEST_JAVA`, else the newest
/// under /usr/lib/jvm that is not 17 (the machine's Temurin beside OpenJDK 17).
fn newer_java() -> Option<std::path::PathBuf> {
    std::env::var_os("JRACE_TEST_JAVA")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            let mut found: Vec<_> = std::fs::read_dir("/usr/lib/jvm")
                .ok()?
                .flatten()
                .map(|e| e.path().join("bin/java"))
                .filter(|p| p.is_file() && !p.to_string_lossy().contains("17"))
                .collect();
            found.sort();
            found.pop()
        })
}

/// Virtual threads (java-harness/src/vthreads), on a JDK that has them (21+): each is a
/// thread of its own in the trace, across carriers, with its start, join and locks.
/// Skipped with a note when there is no such JDK.
#[test]
fn virtual_threads_are_threads_of_their_own() {
    if !harness::java_ready("vthreads/Virtual.class") {
        return;
    }
    let Some(java) = newer_java() else {
        eprintln!("note: no JDK besides 17 under /usr/lib/jvm: skipped");
        return;
    };
    let probe = harness::java_plain_with(java.to_str().unwrap(), &[], "vthreads.Virtual", &[]);
    if String::from_utf8_lossy(&probe.stdout).contains("no virtual threads") {
        eprintln!("note: {} has no virtual threads: skipped", java.display());
        return;
    }
    let suite = Suite {
        name: "vthreads",
        src: common::root().join("java-harness/src/vthreads"),
        java: Some(java),
        ..suite()
    };
    suite.run_n("Virtual", "vthreads/Virtual.class", CATALOGUE_RUNS);
}

/// A newer JDK than the one the agent is built with (see [`newer_java`]): its
/// `java.util.concurrent` and `Unsafe` differ
/// (`arrayBaseOffset` returns a long there); two programs record, run as without the agent
/// and give their races. Skipped with a note when there is no such JDK.
#[test]
fn a_newer_jdk_records_the_same_races() {
    if !harness::java_ready("juc/AtomicSpin.class") {
        return;
    }
    let Some(java) = newer_java() else {
        eprintln!("note: no JDK besides 17 under /usr/lib/jvm: skipped");
        return;
    };
    for (main, want) in [
        (
            "juc.AtomicSpin",
            &["juc.AtomicSpin.after", "juc.AtomicSpin.lost"][..],
        ),
        (
            "juc.FailedOps",
            &[
                "juc.FailedOps.offered",
                "juc.FailedOps.polled",
                "juc.FailedOps.removed",
            ][..],
        ),
    ] {
        let dir = harness::scratch("juc-newer", main);
        let trace = dir.join("trace");
        let cp = harness::classes();
        let plain = std::process::Command::new(&java)
            .arg("-cp")
            .arg(&cp)
            .arg(main)
            .output()
            .expect("java runs");
        let rec = common::jrace(&[
            "record",
            "-o",
            trace.to_str().unwrap(),
            "--",
            java.to_str().unwrap(),
            "-cp",
            cp.to_str().unwrap(),
            main,
        ]);
        assert_eq!(
            (rec.status.code(), &rec.stdout, &rec.stderr),
            (plain.status.code(), &plain.stdout, &plain.stderr),
            "{main} on {}: the agent changed the program's output",
            java.display()
        );
        let doc = harness::analyze(&trace, "shb,m2,mcm").unwrap();
        let mut got: Vec<String> = harness::reported(&doc)
            .into_iter()
            .map(|r| r.variable)
            .collect();
        got.sort();
        got.dedup();
        assert_eq!(got, want, "{main} on {}", java.display());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
