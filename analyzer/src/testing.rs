//! Helpers for tests: race signatures as short strings (`x:(2,7)`), and the expectation
//! lines of the test vectors in `tests/vectors/` (`# expect hb: x:(2,7) y:(1,3)`, `-` for
//! none).

use crate::engine;
use jrace_trace::{MemSource, Symbols, Trace};
use std::collections::{BTreeMap, BTreeSet};

/// A signature as `var:(a,b)` with the two location tokens in sorted order.
pub fn sig_string(var: &str, a: &str, b: &str) -> String {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    format!("{var}:({lo},{hi})")
}

/// Normalizes `x:(7,2)` to `x:(2,7)`.
pub fn normalize_sig(s: &str) -> Option<String> {
    let (var, rest) = s.split_once(":(")?;
    let (a, b) = rest.strip_suffix(')')?.split_once(',')?;
    Some(sig_string(var, a.trim(), b.trim()))
}

/// Runs one detector over an in-memory trace; its race signatures as strings.
pub fn run_detector(trace: &Trace, name: &str) -> BTreeSet<String> {
    let d = crate::make_detector(name).unwrap_or_else(|| panic!("no detector {name}"));
    let mut src = MemSource::new(trace);
    let a = engine::run(&mut src, vec![d], &mut |_| {}).expect("in-memory trace");
    a.races.iter().map(|r| sig_of(&a.symbols, r)).collect()
}

pub fn sig_of(sym: &Symbols, r: &engine::SigRace) -> String {
    sig_string(
        sym.statics.name(r.key.0),
        sym.loc_name(r.pair.first_loc),
        sym.loc_name(r.pair.second_loc),
    )
}

/// The test vectors, `tests/vectors/*.std` at the repository's root, sorted.
pub fn vector_files() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors");
    let mut v: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/vectors exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "std"))
        .collect();
    v.sort();
    v
}

/// The `# expect DET: ...` lines of a vector file: detector -> signatures.
pub fn expectations(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("# expect ") else {
            continue;
        };
        let Some((det, sigs)) = rest.split_once(':') else {
            continue;
        };
        let set: BTreeSet<String> = sigs
            .split_whitespace()
            .filter(|s| *s != "-")
            .map(|s| normalize_sig(s).unwrap_or_else(|| panic!("bad signature {s} in `{line}`")))
            .collect();
        m.insert(det.trim().to_owned(), set);
    }
    m
}

// ---------------------------------------------------------------------------------------
// Random tiny traces, for property tests against the brute-force oracle.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Knobs of the random trace generator ([`random_trace_text`]).
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Threads per trace: 2 up to this (at most 3 makes sense for the oracle).
    pub max_threads: usize,
    /// Top-level statements per thread: 1 up to this.
    pub max_stmts: usize,
    /// The schedule stops after this many events (the trace is then cut, which is legal).
    pub max_events: usize,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            max_threads: 3,
            max_stmts: 4,
            max_events: 16,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum GenOp {
    Read(usize),
    Write(usize),
    VRead,
    VWrite,
    Acq(usize),
    Rel(usize),
    Wait(usize),
    Wake(usize),
    Notify(usize),
    NotifyAll(usize),
    Fork(usize),
    Join(usize),
}

const GEN_VARS: [&str; 3] = ["x", "y", "z"];
const GEN_LOCKS: [&str; 2] = ["l", "m"];

struct GenShape {
    nvars: usize,
    nlocks: usize,
    wait_notify: bool,
}

fn gen_access(rng: &mut SmallRng, shape: &GenShape, out: &mut Vec<GenOp>) {
    if rng.gen_bool(0.2) {
        out.push(if rng.gen_bool(0.5) {
            GenOp::VRead
        } else {
            GenOp::VWrite
        });
    } else {
        let v = rng.gen_range(0..shape.nvars);
        out.push(if rng.gen_bool(0.5) {
            GenOp::Read(v)
        } else {
            GenOp::Write(v)
        });
    }
}

/// One statement: an access, or a synchronized block (properly nested, sometimes
/// re-entrant) that may wait on or notify its lock.
fn gen_stmt(rng: &mut SmallRng, shape: &GenShape, held: &mut Vec<usize>, out: &mut Vec<GenOp>) {
    if held.len() < 2 && rng.gen_bool(0.35) {
        let mut l = rng.gen_range(0..shape.nlocks);
        if held.contains(&l) && rng.gen_bool(0.7) {
            l = (l + 1) % shape.nlocks; // mostly another lock, sometimes re-entrant
        }
        out.push(GenOp::Acq(l));
        held.push(l);
        let n = rng.gen_range(1..=2);
        for k in 0..n {
            if shape.wait_notify && rng.gen_bool(0.2) {
                let r: f64 = rng.gen();
                if r < 0.4 {
                    out.push(GenOp::Notify(l));
                } else if r < 0.6 {
                    out.push(GenOp::NotifyAll(l));
                } else {
                    out.push(GenOp::Wait(l));
                    out.push(GenOp::Wake(l));
                }
            }
            if k == 0 || rng.gen_bool(0.7) {
                gen_stmt(rng, shape, held, out);
            }
        }
        held.pop();
        out.push(GenOp::Rel(l));
    } else {
        gen_access(rng, shape, out);
    }
}

#[derive(Default)]
struct GenThread {
    ops: Vec<GenOp>,
    pc: usize,
    started: bool,
    /// (lock, notified, saved depth) while in `wait`.
    waiting: Option<(usize, bool, u32)>,
}

/// `seed` shifted by `JRACE_PROP_SEED` (0 when unset): the property tests run on fixed
/// seeds, so that CI is reproducible; a developer hunting for a rare soundness bug runs
/// them again with other values (a failure prints the trace, which is all that is needed
/// to reproduce it).
pub fn prop_seed(seed: u64) -> u64 {
    static SHIFT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let shift = *SHIFT.get_or_init(|| {
        std::env::var("JRACE_PROP_SEED")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    });
    seed.wrapping_add(shift.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// A well-formed random `.std` trace of 2–3 threads, a few variables (plain `x`, `y`,
/// `z` and volatile `v`), 1–2 locks in properly nested synchronized blocks (sometimes
/// re-entrant), optional fork/join from `t1`, and occasional wait/notify. Location tokens
/// are the event numbers (1, 2, ...), so a signature names its two events. The same
/// seed always gives the same trace; `JRACE_PROP_SEED=N` in the environment gives every
/// seed another trace ([`prop_seed`]).
pub fn random_trace_text(seed: u64, cfg: &GenConfig) -> String {
    let mut rng = SmallRng::seed_from_u64(prop_seed(seed));
    let nthreads = rng.gen_range(2..=cfg.max_threads.max(2));
    let shape = GenShape {
        nvars: rng.gen_range(1..=GEN_VARS.len()),
        nlocks: rng.gen_range(1..=GEN_LOCKS.len()),
        wait_notify: rng.gen_bool(0.25),
    };
    let use_fork = rng.gen_bool(0.4);
    let handshake = if rng.gen_bool(0.15) {
        let a = rng.gen_range(0..nthreads);
        (a, (a + rng.gen_range(1..nthreads)) % nthreads)
    } else {
        (usize::MAX, usize::MAX)
    };
    let mut threads: Vec<GenThread> = (0..nthreads).map(|_| GenThread::default()).collect();
    for (t, th) in threads.iter_mut().enumerate() {
        let mut stmts: Vec<Vec<GenOp>> = Vec::new();
        for _ in 0..rng.gen_range(1..=cfg.max_stmts.max(1)) {
            let mut s = Vec::new();
            gen_stmt(&mut rng, &shape, &mut Vec::new(), &mut s);
            stmts.push(s);
        }
        if handshake.0 == t || handshake.1 == t {
            // A wait/notify handshake on one lock between two threads.
            let l = rng.gen_range(0..shape.nlocks);
            let mut s = vec![GenOp::Acq(l)];
            if handshake.0 == t {
                s.extend([GenOp::Wait(l), GenOp::Wake(l)]);
                gen_access(&mut rng, &shape, &mut s);
            } else {
                gen_access(&mut rng, &shape, &mut s);
                s.push(if rng.gen_bool(0.5) {
                    GenOp::Notify(l)
                } else {
                    GenOp::NotifyAll(l)
                });
            }
            s.push(GenOp::Rel(l));
            let at = rng.gen_range(0..=stmts.len());
            stmts.insert(at, s);
        }
        if t == 0 && use_fork {
            // Forks and joins between top-level statements of t1.
            for c in 1..nthreads {
                let at = rng.gen_range(0..=stmts.len().min(1));
                stmts.insert(at, vec![GenOp::Fork(c)]);
                if rng.gen_bool(0.6) {
                    let j = rng.gen_range(at + 1..=stmts.len());
                    stmts.insert(j, vec![GenOp::Join(c)]);
                }
            }
        }
        th.ops = stmts.concat();
        th.started = t == 0 || !use_fork;
    }
    // Lock owner and depth.
    let mut owner: Vec<Option<(usize, u32)>> = vec![None; GEN_LOCKS.len()];
    let mut out = String::new();
    let mut n = 0;
    while n < cfg.max_events {
        let enabled: Vec<usize> = (0..nthreads)
            .filter(|&t| {
                let th = &threads[t];
                if !th.started || th.pc >= th.ops.len() {
                    return false;
                }
                match th.ops[th.pc] {
                    GenOp::Acq(l) => owner[l].is_none_or(|(o, _)| o == t),
                    GenOp::Wake(l) => {
                        owner[l].is_none() && matches!(th.waiting, Some((_, true, _)))
                    }
                    GenOp::Join(c) => {
                        threads[c].pc >= threads[c].ops.len() && threads[c].waiting.is_none()
                    }
                    _ => true,
                }
            })
            .collect();
        if enabled.is_empty() {
            break; // finished, or deadlocked: the trace is cut here
        }
        let t = enabled[rng.gen_range(0..enabled.len())];
        let op = threads[t].ops[threads[t].pc];
        threads[t].pc += 1;
        n += 1;
        let text = match op {
            GenOp::Read(v) => format!("r({})", GEN_VARS[v]),
            GenOp::Write(v) => format!("w({})", GEN_VARS[v]),
            GenOp::VRead => "vr(v)".to_owned(),
            GenOp::VWrite => "vw(v)".to_owned(),
            GenOp::Acq(l) => {
                owner[l] = Some((t, owner[l].map_or(0, |(_, d)| d) + 1));
                format!("acq({})", GEN_LOCKS[l])
            }
            GenOp::Rel(l) => {
                let (o, d) = owner[l].expect("release of a held lock");
                owner[l] = if d > 1 { Some((o, d - 1)) } else { None };
                format!("rel({})", GEN_LOCKS[l])
            }
            GenOp::Wait(l) => {
                let (_, d) = owner[l].expect("wait on a held lock");
                owner[l] = None;
                threads[t].waiting = Some((l, false, d));
                format!("wait({})", GEN_LOCKS[l])
            }
            GenOp::Wake(l) => {
                let (_, _, d) = threads[t].waiting.take().expect("wake after wait");
                owner[l] = Some((t, d));
                format!("wake({})", GEN_LOCKS[l])
            }
            GenOp::Notify(l) | GenOp::NotifyAll(l) => {
                let all = matches!(op, GenOp::NotifyAll(_));
                let waiters: Vec<usize> = (0..nthreads)
                    .filter(|&w| matches!(threads[w].waiting, Some((wl, false, _)) if wl == l))
                    .collect();
                if !waiters.is_empty() {
                    let chosen = if all {
                        waiters
                    } else {
                        vec![waiters[rng.gen_range(0..waiters.len())]]
                    };
                    for w in chosen {
                        if let Some(st) = threads[w].waiting.as_mut() {
                            st.1 = true;
                        }
                    }
                }
                format!(
                    "{}({})",
                    if all { "notifyall" } else { "notify" },
                    GEN_LOCKS[l]
                )
            }
            GenOp::Fork(c) => {
                threads[c].started = true;
                format!("fork(t{})", c + 1)
            }
            GenOp::Join(c) => format!("join(t{})", c + 1),
        };
        out.push_str(&format!("t{}|{}|{}\n", t + 1, text, n));
    }
    out
}

/// [`random_trace_text`] parsed (and checked well formed). Panics if the generator
/// produced a malformed trace, which would be a bug in the generator.
pub fn random_trace(seed: u64, cfg: &GenConfig) -> (String, Trace) {
    let text = random_trace_text(seed, cfg);
    let trace = jrace_trace::std_format::parse_str(&text, &format!("random-{seed}.std"))
        .unwrap_or_else(|e| panic!("generator bug, seed {seed}: {e}\n{text}"));
    (text, trace)
}

#[cfg(test)]
mod gen_tests {
    use super::*;

    #[test]
    fn generated_traces_are_well_formed_and_deterministic() {
        let cfg = GenConfig::default();
        let mut kinds = std::collections::HashSet::new();
        for seed in 0..2000 {
            let (text, trace) = random_trace(seed, &cfg);
            assert_eq!(text, random_trace_text(seed, &cfg));
            for e in &trace.events {
                kinds.insert(e.kind);
            }
        }
        use jrace_trace::Kind::*;
        for k in [
            Read, Write, VRead, VWrite, Acquire, Release, Fork, Join, Wait, Wake, Notify, NotifyAll,
        ] {
            assert!(kinds.contains(&k), "generator never produced {k:?}");
        }
    }
}
