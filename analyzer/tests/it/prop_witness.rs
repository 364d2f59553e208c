//! Witnesses (analyzer/src/witness/) on the test vectors and on thousands of random
//! tiny traces: every shb race gets a validated witness, every construction the module
//! claims sound validates, the validator never accepts a race the brute-force oracle
//! rejects, and mutated witnesses fail with the rule that was broken.

use jrace_analyzer::engine::{self, Analysis};
use jrace_analyzer::oracle::predictable_pairs;
use jrace_analyzer::testing::vector_files;
use jrace_analyzer::testing::{random_trace, GenConfig};
use jrace_analyzer::witness::{witness_analysis, Facts, Method, Rule, Witnesser};
use jrace_analyzer::{make_detector, registry};
use jrace_trace::MemSource;
use jrace_trace::{Kind, Trace};
use std::collections::BTreeMap;

/// The detectors this file exercises (the registry's vector-clock ones).
fn detectors() -> Vec<&'static str> {
    registry::names()
        .filter(|d| ["hb", "shb", "wcp", "cp", "lockset"].contains(d))
        .collect()
}

fn analyze(trace: &Trace) -> Analysis {
    let ds = detectors()
        .iter()
        .map(|n| make_detector(n).unwrap())
        .collect();
    engine::run(&mut MemSource::new(trace), ds, &mut |_| {}).expect("in-memory trace")
}

/// Every pair every detector reported, as (detector, first, second).
fn all_pairs(a: &Analysis) -> Vec<(&'static str, usize, usize)> {
    a.runs
        .iter()
        .flat_map(|r| {
            r.pairs
                .iter()
                .map(move |p| (r.name, p.first as usize, p.second as usize))
        })
        .collect()
}

/// docs/REPORT.md#witnesses on the vectors: every shb race gets a validated witness, both
/// per pair and through [`witness_analysis`] (the report path), and the report's
/// representative is the witnessed pair.
#[test]
fn every_shb_race_of_every_vector_has_a_witness() {
    let mut shb_races = 0;
    let mut failures = Vec::new();
    for f in vector_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        let trace = jrace_trace::std_format::parse_str(&text, &f.display().to_string()).unwrap();
        let mut a = analyze(&trace);
        let pairs = all_pairs(&a);
        let w = Witnesser::new(&trace, pairs.iter().map(|&(_, x, y)| (x, y)));
        for &(d, x, y) in &pairs {
            if d != "shb" {
                continue;
            }
            shb_races += 1;
            match w.witness(x, y) {
                Some(wit) => {
                    if let Err(e) = w.facts().validate_race(x, y, &wit.schedule) {
                        failures.push(format!("{}: ({}, {}): {e}", f.display(), x + 1, y + 1));
                    }
                }
                None => failures.push(format!(
                    "{}: shb race ({}, {}) has no witness",
                    f.display(),
                    x + 1,
                    y + 1
                )),
            }
        }
        let rw = witness_analysis(&trace, &mut a);
        if !rw.missing.is_empty() {
            failures.push(format!(
                "{}: races {:?} reported by shb without witness",
                f.display(),
                rw.missing
            ));
        }
        let facts = Facts::new(&trace);
        for (r, wit) in a.races.iter().zip(&rw.witnesses) {
            if let Some(wit) = wit {
                if let Err(e) = facts.validate_race(
                    r.pair.first as usize,
                    r.pair.second as usize,
                    &wit.schedule,
                ) {
                    failures.push(format!("{}: race {}: {e}", f.display(), r.id));
                }
            }
        }
    }
    assert!(shb_races >= 20, "only {shb_races} shb races in the vectors");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Random traces: 3000 of the default shape and 1500 longer ones, fixed seeds.
fn cases() -> impl Iterator<Item = (u64, GenConfig)> {
    let small = GenConfig::default();
    let large = GenConfig {
        max_stmts: 5,
        max_events: 22,
        ..GenConfig::default()
    };
    (0..3000)
        .map(move |s| (s, small.clone()))
        .chain((2_000_000..2_001_500).map(move |s| (s, large.clone())))
}

#[derive(Default, Debug)]
struct Tally {
    pairs: usize,
    witnessed: usize,
    predictable: usize,
}

/// The main property: on random traces,
/// - every shb pair gets a witness, and its SHB-closure construction validates;
/// - every greedy construction validates (it is built with the validator's own rules);
/// - every witness (any detector) validates and is a race the oracle finds predictable.
#[test]
fn random_traces_shb_witnessed_and_witnesses_are_predictable() {
    let mut tally: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut methods: BTreeMap<&str, usize> = BTreeMap::new();
    for (seed, cfg) in cases() {
        let (text, trace) = random_trace(seed, &cfg);
        let a = analyze(&trace);
        let pairs = all_pairs(&a);
        if pairs.is_empty() {
            continue;
        }
        let truth = predictable_pairs(&trace);
        let w = Witnesser::new(&trace, pairs.iter().map(|&(_, x, y)| (x, y)));
        let facts = w.facts();
        for &(d, x, y) in &pairs {
            for (m, s) in w.candidates(x, y) {
                let ok = facts.validate_race(x, y, &s);
                let must = m != Method::ShbClosure || d == "shb";
                assert!(
                    !must || ok.is_ok(),
                    "seed {seed}: {d} pair ({}, {}): {m:?} construction {s:?} invalid: {}\n{text}",
                    x + 1,
                    y + 1,
                    ok.unwrap_err()
                );
            }
            let wit = w.witness(x, y);
            let t = tally.entry(d).or_default();
            t.pairs += 1;
            t.predictable += usize::from(truth.contains(&(x, y)));
            if let Some(wit) = &wit {
                t.witnessed += 1;
                *methods.entry(wit.method.name()).or_default() += 1;
                facts.validate_race(x, y, &wit.schedule).unwrap();
                assert!(
                    truth.contains(&(x, y)),
                    "seed {seed}: witness {:?} for ({}, {}) by {d}, but the oracle says it is \
                     not predictable\n{text}",
                    wit.schedule,
                    x + 1,
                    y + 1
                );
            } else {
                assert!(
                    d != "shb",
                    "seed {seed}: shb pair ({}, {}) has no witness\n{text}",
                    x + 1,
                    y + 1
                );
            }
        }
    }
    eprintln!("witness coverage by detector (pairs, witnessed, oracle-predictable):");
    for (d, t) in &tally {
        eprintln!(
            "  {d:8} {:6} {:6} {:6}  ({:.1}% of pairs, {:.1}% of predictable ones)",
            t.pairs,
            t.witnessed,
            t.predictable,
            100.0 * t.witnessed as f64 / t.pairs.max(1) as f64,
            100.0 * t.witnessed as f64 / t.predictable.max(1) as f64
        );
    }
    eprintln!("methods: {methods:?}");
    let shb = &tally["shb"];
    assert!(shb.pairs > 1000, "weak test: only {} shb pairs", shb.pairs);
    for d in ["hb", "wcp", "cp"] {
        let t = &tally[d];
        assert!(
            t.witnessed > t.pairs / 2,
            "{d}: only {} of {} pairs witnessed",
            t.witnessed,
            t.pairs
        );
    }
}

/// The report path on random traces: [`witness_analysis`] never leaves an shb race
/// without a witness, and every witness ends with the race's representative pair.
#[test]
fn random_traces_report_path() {
    for (seed, cfg) in cases().step_by(3) {
        let (text, trace) = random_trace(seed, &cfg);
        let mut a = analyze(&trace);
        let rw = witness_analysis(&trace, &mut a);
        assert!(
            rw.missing.is_empty(),
            "seed {seed}: shb races {:?} without witness\n{text}",
            rw.missing
        );
        let facts = Facts::new(&trace);
        for (r, w) in a.races.iter().zip(&rw.witnesses) {
            if let Some(w) = w {
                facts
                    .validate_race(r.pair.first as usize, r.pair.second as usize, &w.schedule)
                    .unwrap_or_else(|e| panic!("seed {seed}: race {}: {e}\n{text}", r.id));
            }
        }
    }
}

/// Mutated witnesses are rejected with the rule they break, at the step where they break
/// it: swapping two events of one thread (W-PO), dropping a release (W-LOCK, or W-PO /
/// W-JOIN when the thread's own later events or a join come first), moving a read before
/// its writer (W-RF, or W-PO / W-FORK when the read's own thread is not ready there).
#[test]
fn mutated_witnesses_fail_with_the_right_rule() {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (seed, cfg) in cases().step_by(2) {
        let (text, trace) = random_trace(seed, &cfg);
        let a = analyze(&trace);
        let pairs = all_pairs(&a);
        let w = Witnesser::new(&trace, pairs.iter().map(|&(_, x, y)| (x, y)));
        let facts = w.facts();
        let ev = &trace.events;
        for &(_, x, y) in &pairs {
            let Some(wit) = w.witness(x, y) else { continue };
            let s = &wit.schedule;
            let k = s.len() - 2; // W′ is s[..k]
            let check = |m: &[usize], want: Option<(Rule, usize)>, what: &str| {
                let got = facts.validate_race(x, y, m).err().map(|e| (e.rule, e.step));
                assert_eq!(
                    got, want,
                    "seed {seed}: {what}: witness {s:?} mutated to {m:?}\n{text}"
                );
            };
            // 1. Swap two events of one thread in W′.
            for i in 0..k {
                if let Some(j) = (i + 1..k).find(|&j| ev[s[j]].thread == ev[s[i]].thread) {
                    let mut m = s.clone();
                    m.swap(i, j);
                    check(&m, Some((Rule::Po, i + 1)), "swap");
                    *counts.entry("swap").or_default() += 1;
                    break;
                }
            }
            // 2. Drop an outermost release from W′.
            for i in 0..k {
                let e = &ev[s[i]];
                if e.kind != Kind::Release || e.is_nested() {
                    continue;
                }
                let mut m = s.clone();
                m.remove(i);
                // First failure: the thread's next event (W-PO), another thread taking the
                // lock (W-LOCK), or a join of the thread (W-JOIN), whichever comes first.
                let want = m[i..].iter().enumerate().find_map(|(o, &j)| {
                    let f = &ev[j];
                    if f.thread == e.thread {
                        Some((Rule::Po, i + o + 1))
                    } else if matches!(f.kind, Kind::Acquire | Kind::Wake) && f.target == e.target {
                        Some((Rule::Lock, i + o + 1))
                    } else if f.kind == Kind::Join && f.target == e.thread {
                        Some((Rule::Join, i + o + 1))
                    } else {
                        None
                    }
                });
                if let Some((r, _)) = want {
                    *counts.entry(r.code()).or_default() += 1;
                }
                check(&m, want, "drop release");
            }
            // 3. Move a read of W′ to just before the write it reads from.
            for i in 0..k {
                let e = &ev[s[i]];
                if !matches!(e.kind, Kind::Read | Kind::VRead) {
                    continue;
                }
                let Some(wr) = (0..s[i])
                    .rev()
                    .find(|&j| ev[j].kind.is_write() && ev[j].target == e.target)
                else {
                    continue;
                };
                let p = s[..i]
                    .iter()
                    .position(|&j| j == wr)
                    .expect("writer scheduled");
                let mut m = s.clone();
                let r = m.remove(i);
                m.insert(p, r);
                // The read's own thread must be ready at p, else W-PO (or W-FORK) first.
                let pred_after = m[p + 1..=i].iter().any(|&j| ev[j].thread == e.thread);
                let first_of_thread = !ev[..s[i]].iter().any(|f| f.thread == e.thread);
                let fork_after = first_of_thread
                    && m[p + 1..=i]
                        .iter()
                        .any(|&j| ev[j].kind == Kind::Fork && ev[j].target == e.thread);
                let rule = if pred_after {
                    Rule::Po
                } else if fork_after {
                    Rule::Fork
                } else {
                    Rule::Rf
                };
                *counts.entry(rule.code()).or_default() += 1;
                check(&m, Some((rule, p + 1)), "move read before its writer");
            }
        }
    }
    eprintln!("mutations checked: {counts:?}");
    for r in ["swap", "W-LOCK", "W-RF", "W-PO"] {
        assert!(
            counts.get(r).copied().unwrap_or(0) > 50,
            "too few mutations with outcome {r}: {counts:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// m2 (a MUST_WITNESS detector): every race it reports carries the schedule it proved,
// and that schedule validates.

fn analyze_with(trace: &Trace, names: &[&str]) -> Analysis {
    let ds = names.iter().map(|n| make_detector(n).unwrap()).collect();
    engine::run(&mut MemSource::new(trace), ds, &mut |_| {}).expect("in-memory trace")
}

/// Checks m2's run in `a`: every pair has an attached schedule that validates as a
/// witness of that pair. Returns the number of pairs.
fn check_m2_schedules(a: &Analysis, facts: &Facts, what: &str) -> usize {
    let run = a.runs.iter().find(|r| r.name == "m2").expect("m2 ran");
    for p in &run.pairs {
        let s = run.schedules.get(&(p.first, p.second)).unwrap_or_else(|| {
            panic!(
                "{what}: m2 pair ({}, {}) has no schedule attached",
                p.first + 1,
                p.second + 1
            )
        });
        let s: Vec<usize> = s.iter().map(|&i| i as usize).collect();
        facts
            .validate_race(p.first as usize, p.second as usize, &s)
            .unwrap_or_else(|e| {
                panic!(
                    "{what}: m2 pair ({}, {}): schedule {s:?} invalid: {e}",
                    p.first + 1,
                    p.second + 1
                )
            });
    }
    run.pairs.len()
}

/// docs/REPORT.md#witnesses for m2 on the vectors: every m2 pair carries a schedule that
/// validates, the report path leaves no m2 race without a witness, and on fig2, fig7 and
/// fig9 some races need critical sections swapped, which no construction finds: their
/// witnesses are m2's own.
#[test]
fn every_m2_race_of_every_vector_has_a_witness() {
    let mut m2_pairs = 0;
    let mut by_detector = 0;
    for f in vector_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        let trace = jrace_trace::std_format::parse_str(&text, &f.display().to_string()).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let facts = Facts::new(&trace);
        let mut a = analyze_with(&trace, &["hb", "shb", "wcp", "m2"]);
        m2_pairs += check_m2_schedules(&a, &facts, &name);
        let m2 = a.runs.iter().position(|r| r.name == "m2").unwrap();
        let shb = a.runs.iter().position(|r| r.name == "shb").unwrap();
        let rw = witness_analysis(&trace, &mut a);
        assert!(
            rw.missing.is_empty(),
            "{name}: races {:?} without witness",
            rw.missing
        );
        let mut beyond_shb = 0;
        for (r, w) in a.races.iter().zip(&rw.witnesses) {
            if !r.detectors.contains(&m2) {
                continue;
            }
            let w = w
                .as_ref()
                .unwrap_or_else(|| panic!("{name}: m2 race {} has no witness", r.id));
            facts
                .validate_race(r.pair.first as usize, r.pair.second as usize, &w.schedule)
                .unwrap_or_else(|e| panic!("{name}: race {}: {e}", r.id));
            by_detector += usize::from(w.method == Method::Detector);
            if !r.detectors.contains(&shb) {
                beyond_shb += 1;
            }
        }
        if ["fig2.std", "fig7.std", "fig9.std"].contains(&name.as_str()) {
            assert!(beyond_shb > 0, "{name}: no race found by m2 and not by shb");
            // No construction witnesses these pairs: the witness must be m2's.
            let w = Witnesser::new(
                &trace,
                a.races
                    .iter()
                    .map(|r| (r.pair.first as usize, r.pair.second as usize)),
            );
            let mut needs_m2 = 0;
            for (r, wit) in a.races.iter().zip(&rw.witnesses) {
                let (x, y) = (r.pair.first as usize, r.pair.second as usize);
                if r.detectors.contains(&m2) && w.witness(x, y).is_none() {
                    assert_eq!(wit.as_ref().unwrap().method, Method::Detector, "{name}");
                    needs_m2 += 1;
                }
            }
            assert!(
                needs_m2 > 0,
                "{name}: every m2 race is witnessed by a construction: weak test"
            );
        }
    }
    assert!(m2_pairs >= 20, "only {m2_pairs} m2 races in the vectors");
    assert!(by_detector > 0);
}

/// `text` with the events M2's model leaves out: every thread but `t1` wrapped in
/// `begin`/`end`, every thread's events in `enter`/`exit` of a method (no `exit`/`end`
/// for a thread cut while it holds a lock or waits), and a `br` after every other read.
fn decorate(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let thread = |l: &str| l.split('|').next().unwrap().to_owned();
    let mut first: BTreeMap<String, usize> = BTreeMap::new();
    let mut last: BTreeMap<String, usize> = BTreeMap::new();
    for (i, l) in lines.iter().enumerate() {
        first.entry(thread(l)).or_insert(i);
        last.insert(thread(l), i);
    }
    let mut out = String::new();
    let mut reads = 0;
    // Per thread: locks held (with re-entry) plus one while waiting.
    let mut busy: BTreeMap<String, i32> = BTreeMap::new();
    for (i, l) in lines.iter().enumerate() {
        let t = thread(l);
        let b = busy.entry(t.clone()).or_default();
        if l.contains("|acq(") || l.contains("|wait(") {
            *b += 1;
        } else if l.contains("|rel(") || l.contains("|wake(") {
            *b -= 1;
        }
        if first[&t] == i {
            if t != "t1" {
                out.push_str(&format!("{t}|begin|b{i}\n"));
            }
            out.push_str(&format!("{t}|enter(run;*)|n{i}\n"));
        }
        out.push_str(l);
        out.push('\n');
        if l.contains("|r(") {
            reads += 1;
            if reads % 2 == 1 {
                out.push_str(&format!("{t}|br|c{i}\n"));
            }
        }
        if last[&t] == i && busy[&t] == 0 {
            out.push_str(&format!("{t}|exit(run)|x{i}\n"));
            if t != "t1" {
                out.push_str(&format!("{t}|end|e{i}\n"));
            }
        }
    }
    out
}

/// Random traces, as generated and [`decorate`]d: every m2 pair carries a schedule that
/// validates and is a pair the brute-force oracle confirms; through the report path no
/// m2 race lacks a witness.
#[test]
fn random_traces_every_m2_race_has_a_validated_witness() {
    let (mut pairs, mut beyond_constructions) = (0usize, 0usize);
    let traces = cases().flat_map(|(seed, cfg)| {
        let (text, trace) = random_trace(seed, &cfg);
        let deco = decorate(&text);
        let dtrace = jrace_trace::std_format::parse_str(&deco, "decorated.std")
            .unwrap_or_else(|e| panic!("seed {seed}: decorated trace: {e}\n{deco}"));
        [(seed, text, trace), (seed, deco, dtrace)]
    });
    for (seed, text, trace) in traces {
        let mut a = analyze_with(&trace, &["shb", "m2"]);
        let facts = Facts::new(&trace);
        let m2 = a.runs.iter().position(|r| r.name == "m2").unwrap();
        if a.runs[m2].pairs.is_empty() {
            continue;
        }
        let n = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check_m2_schedules(&a, &facts, &format!("seed {seed}"))
        }))
        .unwrap_or_else(|_| panic!("seed {seed}\n{text}"));
        pairs += n;
        let truth = predictable_pairs(&trace);
        let w = Witnesser::new(
            &trace,
            a.runs[m2]
                .pairs
                .iter()
                .map(|p| (p.first as usize, p.second as usize)),
        );
        for p in &a.runs[m2].pairs {
            let (x, y) = (p.first as usize, p.second as usize);
            assert!(
                truth.contains(&(x, y)),
                "seed {seed}: m2 pair ({}, {}) witnessed but not predictable\n{text}",
                x + 1,
                y + 1
            );
            beyond_constructions += usize::from(w.witness(x, y).is_none());
        }
        let rw = witness_analysis(&trace, &mut a);
        assert!(
            rw.missing.is_empty(),
            "seed {seed}: races {:?} without witness\n{text}",
            rw.missing
        );
        for (r, wit) in a.races.iter().zip(&rw.witnesses) {
            if r.detectors.contains(&m2) {
                let wit = wit
                    .as_ref()
                    .unwrap_or_else(|| panic!("seed {seed}: m2 race {} unwitnessed\n{text}", r.id));
                let (x, y) = (r.pair.first as usize, r.pair.second as usize);
                facts
                    .validate_race(x, y, &wit.schedule)
                    .unwrap_or_else(|e| panic!("seed {seed}: race {}: {e}\n{text}", r.id));
                assert!(
                    truth.contains(&(x, y)),
                    "seed {seed}: race {}\n{text}",
                    r.id
                );
            }
        }
    }
    eprintln!("m2 pairs: {pairs}, of which {beyond_constructions} no construction witnesses");
    assert!(pairs > 1000, "weak test: only {pairs} m2 pairs");
    assert!(
        beyond_constructions > 20,
        "weak test: only {beyond_constructions} m2 pairs need m2's own schedule"
    );
}

/// Length of the leading run `0, 1, 2, ...` of a schedule: what the view elides.
fn as_recorded(s: &[usize]) -> usize {
    s[..s.len() - 2]
        .iter()
        .enumerate()
        .take_while(|&(k, &i)| k == i)
        .count()
}

/// Calls `f(seed, trace text, facts, first, second, schedule)` for every construction
/// ([`Witnesser::candidates`]) that validates, for every pair any detector reports, on
/// every other random trace of [`cases`].
fn for_each_valid_construction(mut f: impl FnMut(u64, &str, &Facts, usize, usize, &[usize])) {
    for (seed, cfg) in cases().step_by(2) {
        let (text, trace) = random_trace(seed, &cfg);
        let a = analyze(&trace);
        let pairs = all_pairs(&a);
        let w = Witnesser::new(&trace, pairs.iter().map(|&(_, x, y)| (x, y)));
        let facts = w.facts();
        for &(_, x, y) in &pairs {
            for (_, s) in w.candidates(x, y) {
                if facts.validate_race(x, y, &s).is_ok() {
                    f(seed, &text, facts, x, y, &s);
                }
            }
        }
    }
}

/// Canonical form (`Facts::canonical`) on random traces: for every valid construction, the
/// canonical schedule validates, ends with the same pair, has the same events, is its
/// own canonical form, is lexicographically no larger (it is the smallest order that
/// keeps every dependence), and so runs at least as long a prefix as recorded.
#[test]
fn canonical_witnesses_validate_and_follow_the_recording() {
    let (mut checked, mut moved) = (0usize, 0usize);
    for_each_valid_construction(|seed, text, facts, x, y, s| {
        let c = facts.canonical(s);
        checked += 1;
        moved += usize::from(c != s);
        facts
            .validate_race(x, y, &c)
            .unwrap_or_else(|e| panic!("seed {seed}: canonical {c:?} of {s:?}: {e}\n{text}"));
        assert_eq!(c[c.len() - 2..], s[s.len() - 2..], "seed {seed}");
        let (mut cs, mut ss) = (c.clone(), s.to_vec());
        cs.sort_unstable();
        ss.sort_unstable();
        assert_eq!(cs, ss, "seed {seed}: not a permutation");
        assert_eq!(
            facts.canonical(&c),
            c,
            "seed {seed}: not idempotent\n{text}"
        );
        assert!(c.as_slice() <= s, "seed {seed}: {c:?} > {s:?}\n{text}");
        assert!(as_recorded(&c) >= as_recorded(s), "seed {seed}");
    });
    eprintln!("canonical: {checked} witnesses, {moved} reordered");
    assert!(
        checked > 2000 && moved > 100,
        "weak test: {checked} checked, {moved} moved"
    );
}

/// Witness test trace TV1: the greedy witness `1 2 3 4 7 8 9 10 11 5 12` is canonical
/// (prefix 4); the brute-force alternative `1 2 3 7 8 9 10 11 4 5 12` canonicalizes to it.
#[test]
fn canonical_form_of_tv1() {
    let text = "T1|acq(KeyLock)|Worker.java:1
T1|r(numDelItr,0)|Worker.java:2
T1|rel(KeyLock)|Worker.java:4
T2|acq(KeyLock)|Worker.java:1
T2|r(numDelItr,0)|Worker.java:2
T2|rel(KeyLock)|Worker.java:4
T1|acq(NumLock)|Worker.java:6
T1|w(NumDeleted,1)|Worker.java:9
T1|rel(NumLock)|Worker.java:11
T1|acq(DelLock)|Worker.java:13
T1|r(numDelItr,0)|Worker.java:14
T1|w(numDelItr,1)|Worker.java:14
T1|rel(DelLock)|Worker.java:15
";
    let trace = jrace_trace::std_format::parse_str(text, "tv1.std").unwrap();
    let facts = Facts::new(&trace);
    let ids = |v: &[usize]| v.iter().map(|&i| i - 1).collect::<Vec<_>>();
    let greedy = ids(&[1, 2, 3, 4, 7, 8, 9, 10, 11, 5, 12]);
    let other = ids(&[1, 2, 3, 7, 8, 9, 10, 11, 4, 5, 12]);
    facts.validate_race(4, 11, &other).unwrap();
    assert_eq!(facts.canonical(&other), greedy);
    assert_eq!(facts.canonical(&greedy), greedy);
    let mut a = analyze(&trace);
    let rw = witness_analysis(&trace, &mut a);
    let r = a
        .races
        .iter()
        .position(|r| (r.pair.first, r.pair.second) == (4, 11))
        .expect("the race (5, 12)");
    assert_eq!(rw.witnesses[r].as_ref().unwrap().schedule, greedy);
}

/// `witness_races(.., Some(id))` (what `jrace witness` and `jrace replay` use) builds the
/// same witness for race `id` as the whole report does, and none for the other races.
#[test]
fn one_race_witness_equals_the_reports() {
    let mut compared = 0;
    for (seed, cfg) in cases().step_by(7) {
        let (text, trace) = random_trace(seed, &cfg);
        let mut all = analyze(&trace);
        let rw = witness_analysis(&trace, &mut all);
        for r in &all.races {
            let mut one = analyze(&trace);
            let w1 = jrace_analyzer::witness::witness_races(&trace, &mut one, Some(r.id), false);
            assert!(w1.missing.is_empty(), "seed {seed}");
            for (k, (x, w)) in one.races.iter().zip(&w1.witnesses).enumerate() {
                if x.id == r.id {
                    assert_eq!(w, &rw.witnesses[k], "seed {seed}: race {}\n{text}", r.id);
                    assert_eq!(x.pair, all.races[k].pair, "seed {seed}");
                    compared += usize::from(w.is_some());
                } else {
                    assert!(w.is_none(), "seed {seed}");
                }
            }
        }
    }
    assert!(compared > 300, "weak test: {compared} witnesses compared");
}

/// Minimized witnesses (`Facts::minimize`) on random traces: for every valid construction,
/// the minimized schedule is a subsequence of it ending with the same pair and is valid
/// itself (the closure takes in everything the rules need), and it is often shorter.
#[test]
fn minimized_witnesses_are_valid_subsequences() {
    let (mut checked, mut shorter) = (0usize, 0usize);
    for_each_valid_construction(|seed, text, facts, x, y, s| {
        let m = facts.minimize(s);
        checked += 1;
        shorter += usize::from(m.len() < s.len());
        facts
            .validate_race(x, y, &m)
            .unwrap_or_else(|e| panic!("seed {seed}: minimized {m:?} of {s:?}: {e}\n{text}"));
        assert_eq!(m[m.len() - 2..], s[s.len() - 2..], "seed {seed}");
        let mut it = s.iter();
        assert!(
            m.iter().all(|i| it.any(|j| j == i)),
            "seed {seed}: {m:?} is not a subsequence of {s:?}"
        );
    });
    eprintln!("minimized: {checked} witnesses, {shorter} shorter");
    assert!(
        checked > 2000 && shorter > 500,
        "weak test: {checked} checked, {shorter} shorter"
    );
}

/// The reads no traced write explains, as `unexplained_reads` and `jrace stats`' streaming
/// count find them (one definition, event by event), equal those of a whole-trace
/// restatement of the rule (the observed write's value, else the variable's initial value
/// as `initial_values` defines it) on random traces, some of whose read values are changed
/// (as if missing code had written them).
#[test]
fn streaming_unexplained_count_matches_the_definition() {
    use jrace_analyzer::witness::{
        initial_values, unexplained_reads, value_keys, UnexplainedCounter,
    };
    let mut total = 0;
    for (seed, cfg) in cases().step_by(3) {
        let (_, mut trace) = random_trace(seed, &cfg);
        // Values as an execution gives them (writes: their index; reads: the last write's,
        // 0 initially), then some reads changed; some events keep no value.
        let mut vals: std::collections::HashMap<u32, i64> = Default::default();
        for (i, e) in trace.events.iter_mut().enumerate() {
            let salt = i as u64 + seed;
            if e.kind.is_write() {
                vals.insert(e.target, i as i64);
                if !salt.is_multiple_of(7) {
                    *e = e.with_value(i as i64);
                }
            } else if e.kind.is_access() && !salt.is_multiple_of(5) {
                let v = vals.get(&e.target).copied().unwrap_or(0);
                *e = e.with_value(if salt.is_multiple_of(4) { v + 1 } else { v });
            }
        }
        let ev = &trace.events;
        let mut last: std::collections::HashMap<u32, u32> = Default::default();
        let observed: Vec<u32> = ev
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let o = last.get(&e.target).copied().unwrap_or(u32::MAX);
                if e.kind.is_write() {
                    last.insert(e.target, i as u32);
                }
                if e.kind.is_access() {
                    o
                } else {
                    u32::MAX
                }
            })
            .collect();
        let keys = value_keys(ev);
        let init = initial_values(ev, &keys);
        let want: std::collections::HashSet<u32> = (0..ev.len())
            .filter(|&i| {
                let e = &ev[i];
                if !matches!(e.kind, Kind::Read | Kind::VRead) || !e.has_value() {
                    return false;
                }
                let explained = match observed[i] {
                    u32::MAX => init.get(&e.target).copied().flatten() == Some(keys[i]),
                    o => !ev[o as usize].has_value() || ev[o as usize].value == e.value,
                };
                !explained
            })
            .map(|i| i as u32)
            .collect();
        assert_eq!(unexplained_reads(ev), want, "seed {seed}");
        let mut c = UnexplainedCounter::default();
        ev.iter().for_each(|e| {
            c.add(e);
        });
        assert_eq!(c.unexplained, want.len() as u64, "seed {seed}");
        total += want.len();
    }
    assert!(total > 100, "weak test: {total} unexplained reads");
}
