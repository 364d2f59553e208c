//! The classic programs of the race-detection literature, written for jrace
//! (java-harness/src/classic/, issue 8): each is recorded with `jrace record` under
//! `-Xverify:all`, its output compared with a run without the agent, and the trace analyzed
//! by every sound detector (`hb,shb,wcp,cp,m2,mcm,said`, plus `lockset`, whose reports are
//! only printed). The test fails when a sound detector reports a false alarm (a NORACE, or
//! an unlisted race: java-harness/README.md) or misses a RACE it must report, unless the
//! failure is a known gap listed below.
//!
//! Needs `java` on the PATH (the tests print a note and pass without it), javac at build
//! time (build.rs), and the agent built next to the jrace binary:
//! `cargo build --release && cargo build --release -p jrace-agent && cargo test --release --test it -- record_classic::`.

use crate::common;
use crate::harness;
use crate::truth;

use harness::Suite;
use std::collections::BTreeSet;

/// Known detector gaps: (program, check), as in `Suite::gaps`. These depend on the
/// recorded schedule, so a run where they do not show passes too (with a note).
// Races a sound detector is known to miss on these programs (program, truth line
// [detector]); none at present. (mcm missed BubbleSort's `swaps` race while at most 8
// pairs per signature and window were tried; the forced-order refutation in the quick
// check removed the crowding pairs.)
const KNOWN_GAPS: &[(&str, &str)] = &[];

const PROBE: &str = "classic/Airline.class";

fn suite() -> Suite {
    Suite {
        name: "classic",
        src: common::root().join("java-harness/src/classic"),
        detectors: "hb,shb,wcp,cp,m2,mcm,said",
        informative: "lockset",
        verify_in_recording: true,
        gaps: KNOWN_GAPS,
        gaps_must_show: false,
        java: None,
    }
}

macro_rules! classic {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                suite().run($name, PROBE);
            }
        )*
        /// Every program under classic/ with a truth has a test here.
        const PROGRAMS: &[&str] = &[$($name),*];
    };
}

classic! {
    classic_airline => "Airline",
    classic_bounded_buffer => "BoundedBuffer",
    classic_bubble_sort => "BubbleSort",
    classic_buffered_writer => "BufferedWriter",
    classic_critical_section => "CriticalSection",
    classic_merge_sort => "MergeSort",
    classic_ping_pong => "PingPong",
    classic_ray_tracer => "RayTracer",
    classic_moldyn => "MolDyn",
    classic_monte_carlo => "MonteCarlo",
    classic_ftp_server => "FtpServer",
}

#[test]
fn every_classic_program_has_a_test_and_a_valid_truth() {
    let found = suite().programs_with_truth();
    let listed: BTreeSet<String> = PROGRAMS.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        found, listed,
        "classic programs with a truth vs tested here"
    );
    let mut all = BTreeSet::new();
    for e in std::fs::read_dir(suite().src).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "java") {
            all.insert(p.file_stem().unwrap().to_string_lossy().into_owned());
        }
    }
    assert_eq!(all, listed, "every program under classic/ states a truth");
    for (p, c) in KNOWN_GAPS {
        assert!(listed.contains(*p), "KNOWN_GAPS names unknown program {p}");
        let src = suite().src.join(format!("{p}.java"));
        let t = truth::Truth::parse_file(&src).unwrap();
        let check = c.rsplit_once(" [").map_or(*c, |(c, _)| c);
        assert!(
            t.races.iter().any(|r| r.spec == check)
                || t.noraces.iter().any(|r| r.spec == check)
                || !check.starts_with("RACE:") && !check.starts_with("NORACE:"),
            "KNOWN_GAPS entry `{c}` names no truth line of {p}"
        );
    }
}
