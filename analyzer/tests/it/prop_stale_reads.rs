//! The trace reader's stale-read move (trace/FORMAT.md §7) on random traces: each trace
//! from the shared generator is written with clock-like stamps, some reads (with the
//! branch or `begin` before them) stamped late, as a recorder whose read hook ran long
//! after its load would. Read back as an agent trace, the moves must keep every thread's
//! order and the order of everything but reads, branches and `begin`s, never leave more
//! reads unexplained than the stamps do, and never move anything in a trace whose stamps
//! agree with its values.

use jrace_analyzer::testing::{random_trace, GenConfig};
use jrace_analyzer::witness::unexplained_reads;
use jrace_trace::binlog::{write_trace_stamped, TraceReader};
use jrace_trace::{read_all, EventSource, Kind, Trace};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::path::Path;

const AGENT: &[(&str, &str)] = &[("recorder", "jrace-agent")];

fn read_back(trace: &Trace, stamps: &[u64], meta: &[(&str, &str)], dir: &Path) -> (Trace, u64) {
    let _ = std::fs::remove_dir_all(dir);
    write_trace_stamped(trace, stamps, meta, dir).unwrap();
    let mut r = TraceReader::open(dir).unwrap_or_else(|e| panic!("{e}"));
    let t = read_all(&mut r).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let moved = r.reads_moved();
    let _ = std::fs::remove_dir_all(dir);
    (t, moved)
}

/// Stamps 10 per event; with probability 1/2 a read (and a branch or `begin` just before
/// it in its thread) takes a later stamp, up to just before its thread's next event (and
/// so before anything that waits for the thread).
fn late_stamps(trace: &Trace, seed: u64) -> Vec<u64> {
    let mut rng = SmallRng::seed_from_u64(jrace_analyzer::testing::prop_seed(seed ^ 0x57a1e));
    let ev = &trace.events;
    let mut stamps: Vec<u64> = (0..ev.len() as u64).map(|i| 10 * i).collect();
    for i in 0..ev.len() {
        if ev[i].kind != Kind::Read || !rng.gen_bool(0.5) {
            continue;
        }
        let t = ev[i].thread;
        // A read its thread's last event stays: a join of the thread must follow it.
        let Some(next) = (i + 1..ev.len()).find(|&k| ev[k].thread == t) else {
            continue;
        };
        let late = rng.gen_range(stamps[i]..10 * next as u64);
        stamps[i] = late;
        if let Some(p) = (0..i).rev().find(|&k| ev[k].thread == t) {
            if matches!(ev[p].kind, Kind::Branch | Kind::Begin) && rng.gen_bool(0.5) {
                stamps[p] = late;
            }
        }
    }
    stamps
}

/// The generator's trace with values as the agent records them: each plain write a value
/// of its own, each plain read the value of the write before it (0 before any).
fn with_values(mut t: Trace) -> Trace {
    let mut last = std::collections::HashMap::new();
    for (i, e) in t.events.iter_mut().enumerate() {
        match e.kind {
            Kind::Write => {
                *e = e.with_value(i as i64 + 1);
                last.insert(e.target, e.value);
            }
            Kind::Read => *e = e.with_value(last.get(&e.target).copied().unwrap_or(0)),
            _ => {}
        }
    }
    t
}

fn per_thread(t: &Trace) -> Vec<Vec<jrace_trace::Event>> {
    let n = t
        .events
        .iter()
        .map(|e| e.thread as usize + 1)
        .max()
        .unwrap_or(0);
    let mut out = vec![Vec::new(); n];
    for e in &t.events {
        out[e.thread as usize].push(*e);
    }
    out
}

fn fixed(t: &Trace) -> Vec<jrace_trace::Event> {
    t.events
        .iter()
        .filter(|e| !matches!(e.kind, Kind::Read | Kind::Branch | Kind::Begin))
        .copied()
        .collect()
}

/// Reads `trace` back with `stamps`, as another writer's trace and as an agent's: the
/// agent's reordering keeps every thread's order and the order of everything but reads,
/// branches and `begin`s, and leaves no more reads unexplained. Returns the reads it moved
/// or held and how many fewer reads are unexplained.
fn reordered(trace: &Trace, stamps: &[u64], dir: &Path, what: &str) -> (u64, u64) {
    let (plain, _) = read_back(trace, stamps, &[], dir);
    let (fixed_up, moved) = read_back(trace, stamps, AGENT, dir);
    assert_eq!(per_thread(&fixed_up), per_thread(trace), "{what}");
    assert_eq!(fixed(&fixed_up), fixed(&plain), "{what}");
    let (before, after) = (
        unexplained_reads(&plain.events).len(),
        unexplained_reads(&fixed_up.events).len(),
    );
    assert!(
        after <= before,
        "{what}: {after} reads unexplained after the reordering, {before} before"
    );
    (moved, (before - after) as u64)
}

#[test]
fn stale_reads_move_only_reads_and_explain_them() {
    let cfg = GenConfig {
        max_threads: 4,
        max_stmts: 10,
        max_events: 80,
    };
    let dir = std::env::temp_dir().join(format!("jrace-prop-stale-{}", std::process::id()));
    let (mut moved_total, mut fewer) = (0u64, 0u64);
    for seed in 0..1500u64 {
        let (text, trace) = random_trace(seed, &cfg);
        let trace = with_values(trace);
        let index: Vec<u64> = (0..trace.events.len() as u64).map(|i| 10 * i).collect();
        let (same, moved) = read_back(&trace, &index, AGENT, &dir);
        assert_eq!(
            moved, 0,
            "seed {seed}: a consistent trace had reads moved\n{text}"
        );
        assert_eq!(same.events, trace.events, "seed {seed}\n{text}");

        let stamps = late_stamps(&trace, seed);
        let (moved, explained) = reordered(&trace, &stamps, &dir, &format!("seed {seed}\n{text}"));
        moved_total += moved;
        fewer += explained;
    }
    eprintln!("{moved_total} reads moved, {fewer} fewer unexplained");
    // Not vacuous: the late stamps leave reads the moves explain.
    assert!(
        moved_total > 200 && fewer > 200,
        "{moved_total} moved, {fewer} explained"
    );
}

/// Stamps 10 per event; with probability 1/2 a read of another thread's write takes a stamp
/// before that write (after its own thread's previous event), as a plain read that loaded
/// what a compare-and-set stored before the CAS was recorded.
fn early_stamps(trace: &Trace, seed: u64) -> Vec<u64> {
    let mut rng = SmallRng::seed_from_u64(jrace_analyzer::testing::prop_seed(seed ^ 0xea21));
    let ev = &trace.events;
    let mut stamps: Vec<u64> = (0..ev.len() as u64).map(|i| 10 * i).collect();
    let mut last_write = std::collections::HashMap::new();
    for i in 0..ev.len() {
        match ev[i].kind {
            Kind::Write => {
                last_write.insert(ev[i].target, i);
            }
            Kind::Read if rng.gen_bool(0.5) => {
                let t = ev[i].thread;
                let Some(&w) = last_write.get(&ev[i].target) else {
                    continue;
                };
                // A thread's first event stays after its fork.
                let Some(prev) = (0..i).rev().find(|&k| ev[k].thread == t) else {
                    continue;
                };
                if ev[w].thread == t || prev >= w {
                    continue;
                }
                let low = stamps[prev];
                if low < stamps[w] {
                    stamps[i] = rng.gen_range(low..stamps[w]);
                }
            }
            _ => {}
        }
    }
    stamps
}

/// The converse move (trace/FORMAT.md §7): a read stamped before the write whose value it
/// has is held until that write. It keeps every thread's order and the order of everything
/// but reads and branches, never leaves more reads unexplained than the stamps do, and
/// explains some.
#[test]
fn early_reads_wait_for_their_write_and_are_explained() {
    let cfg = GenConfig {
        max_threads: 4,
        max_stmts: 10,
        max_events: 80,
    };
    let dir = std::env::temp_dir().join(format!("jrace-prop-early-{}", std::process::id()));
    let (mut moved_total, mut fewer) = (0u64, 0u64);
    for seed in 0..1500u64 {
        let (text, trace) = random_trace(seed, &cfg);
        let trace = with_values(trace);
        let stamps = early_stamps(&trace, seed);
        let (moved, explained) = reordered(&trace, &stamps, &dir, &format!("seed {seed}\n{text}"));
        moved_total += moved;
        fewer += explained;
    }
    eprintln!("{moved_total} reads held or moved, {fewer} fewer unexplained");
    assert!(
        moved_total > 100 && fewer > 100,
        "{moved_total} held or moved, {fewer} explained"
    );
}
