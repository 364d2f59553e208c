//! `mcm` and `said` beyond the vectors' expectations (which tests/it/vectors.rs checks):
//! where they beat the other detectors, their witnesses, windows, unknowns and options.

use jrace_analyzer::causal::{self, Options, Policy};
use jrace_analyzer::engine;
use jrace_analyzer::facts;
use jrace_analyzer::testing::{run_detector, sig_string, vector_files};
use jrace_analyzer::witness::{witness_analysis, Facts, Method, Model, Rule};
use jrace_analyzer::{make_detector_with, DetectorOptions, RaceSink};
use jrace_trace::MemSource;
use jrace_trace::Trace;
use std::collections::BTreeSet;
use std::time::Duration;

fn parse(text: &str) -> Trace {
    jrace_trace::std_format::parse_str(text, "t.std").unwrap()
}

fn vector(name: &str) -> Trace {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/vectors")
        .join(name);
    parse(&std::fs::read_to_string(p).unwrap())
}

fn sigs(trace: &Trace, sink: &RaceSink) -> BTreeSet<String> {
    let sym = &trace.symbols;
    sink.pairs()
        .iter()
        .map(|p| {
            sig_string(
                sym.static_name(p.var),
                sym.loc_name(p.first_loc),
                sym.loc_name(p.second_loc),
            )
        })
        .collect()
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// docs/STD_FORMAT.md's example (RVPredict Fig. 4): only the maximal detector finds (3,10); a
/// weaker detector in mcm's place fails here.
#[test]
fn design_example_only_mcm() {
    let t = vector("v1.std");
    assert_eq!(run_detector(&t, "mcm"), set(&["x:(10,3)"]));
    for weaker in ["hb", "cp", "wcp", "shb", "m2", "said"] {
        assert!(run_detector(&t, weaker).is_empty(), "{weaker}");
    }
    // Races mcm finds and every other detector misses, across the vectors.
    let mut beyond = 0;
    for f in vector_files() {
        let t = parse(&std::fs::read_to_string(&f).unwrap());
        let mut others = BTreeSet::new();
        for d in ["hb", "cp", "wcp", "shb", "m2", "said"] {
            others.extend(run_detector(&t, d));
        }
        beyond += run_detector(&t, "mcm").difference(&others).count();
    }
    assert!(
        beyond >= 6,
        "only {beyond} races beyond the other detectors"
    );
}

/// Every mcm and said race of every vector carries its own schedule, which the report's
/// witness step validates (cf for mcm, value for said); no race lacks a witness.
#[test]
fn vector_races_have_validated_witnesses() {
    let mut from_detector = 0;
    for f in vector_files() {
        let t = parse(&std::fs::read_to_string(&f).unwrap());
        let ds = ["mcm", "said"]
            .iter()
            .map(|n| make_detector_with(n, &DetectorOptions::default()).unwrap())
            .collect();
        let mut a = engine::run(&mut MemSource::new(&t), ds, &mut |_| {}).unwrap();
        for run in &a.runs {
            assert_eq!(run.outcome.unknown, Some(0), "{}", f.display());
            assert_eq!(run.schedules.len(), run.pairs.len(), "{}", f.display());
        }
        let rw = witness_analysis(&t, &mut a);
        assert!(rw.missing.is_empty(), "{}: {:?}", f.display(), rw.missing);
        let facts = Facts::new(&t);
        for (r, w) in a.races.iter().zip(&rw.witnesses) {
            let w = w.as_ref().unwrap();
            let (x, y) = (r.pair.first as usize, r.pair.second as usize);
            facts
                .validate_race_model(Model::Cf, x, y, &w.schedule)
                .unwrap_or_else(|e| panic!("{}: race {}: {e}", f.display(), r.id));
            if w.method == Method::Detector {
                from_detector += 1;
            }
        }
    }
    assert!(from_detector >= 8, "only {from_detector}");
}

/// The witness the paper's literal Φ gives for V12 (F1,F11) is rejected at F6, a branch
/// of a thread whose read of y changed; jrace's witnesses validate.
#[test]
fn literal_phi_witness_of_v12_is_rejected() {
    let t = vector("v12.std");
    let facts = Facts::new(&t);
    let loc = |tok: &str| {
        t.events
            .iter()
            .position(|e| t.symbols.loc_name(e.loc) == tok)
            .unwrap()
    };
    let sched: Vec<usize> = ["F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F1", "F11"]
        .iter()
        .map(|s| loc(s))
        .collect();
    let err = facts
        .validate_race_model(Model::Cf, loc("F1"), loc("F11"), &sched)
        .unwrap_err();
    assert_eq!((err.rule, err.step), (Rule::Cf, 4), "{err}");
    // V1's expected witness: 1, 6, 7, 8, 9, 2 · 3, 10 (8 reads y = 0).
    let t = vector("v1.std");
    let facts = Facts::new(&t);
    let s: Vec<usize> = [1, 6, 7, 8, 9, 2, 3, 10].iter().map(|i| i - 1).collect();
    facts.validate_race_model(Model::Cf, 2, 9, &s).unwrap();
    let err = facts
        .validate_race_model(Model::Value, 2, 9, &s)
        .unwrap_err();
    assert_eq!(err.rule, Rule::Val);
    assert_eq!(facts.validate_race(2, 9, &s).unwrap_err().rule, Rule::Rf);
}

/// A trace whose only race spans a window border (docs/DETECTORS.md#windows-and-solver-limits): window 10, the pair at
/// events 8 and 12. Overlapping windows find it; disjoint windows do not.
#[test]
fn cross_window_race_needs_overlap() {
    let mut text = String::new();
    for i in 1..=20 {
        let line = match i {
            8 => "t1|w(x,1)|8".to_owned(),
            12 => "t2|r(x,1)|12".to_owned(),
            _ if i % 2 == 1 => format!("t1|w(a{i},1)|{i}"),
            _ => format!("t2|w(b{i},1)|{i}"),
        };
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str("t2|br|21\n");
    let t = parse(&text);
    let run = |overlap: bool| {
        let mut sink = RaceSink::new();
        let opts = Options {
            window: 10,
            overlap,
            ..Options::default()
        };
        causal::run(&t.events, Policy::Mcm, &opts, None, &mut sink);
        sigs(&t, &sink)
    };
    assert_eq!(run(true), set(&["x:(12,8)"]));
    assert!(run(false).is_empty());
    // The same through the public options, and for said.
    let opts = DetectorOptions {
        window: Some(10),
        solver_timeout: Some(Duration::from_secs(5)),
    };
    for d in ["mcm", "said"] {
        let a = engine::run(
            &mut MemSource::new(&t),
            vec![make_detector_with(d, &opts).unwrap()],
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(a.races.len(), 1, "{d}");
    }
}

/// A query answered `unknown` (as on a timeout) is never reported and is counted, per
/// (variable, location pair); the races left are a subset.
#[test]
fn unknown_answers_are_counted_not_reported() {
    for name in ["v5b.std", "v9b.std", "v10.std", "rvpredict4.std"] {
        let t = vector(name);
        for policy in [Policy::Mcm, Policy::Said] {
            let mut full = RaceSink::new();
            let st = causal::run(&t.events, policy, &Options::default(), None, &mut full);
            assert_eq!(st.unknown, 0);
            for every in [1, 2] {
                let mut sink = RaceSink::new();
                let opts = Options {
                    inject_unknown_every: every,
                    ..Options::default()
                };
                let s = causal::run(&t.events, policy, &opts, None, &mut sink);
                let got = sigs(&t, &sink);
                assert!(got.is_subset(&sigs(&t, &full)), "{name} {policy:?}");
                if every == 1 {
                    assert!(got.is_empty());
                    assert!(
                        s.unknown as usize >= sigs(&t, &full).len(),
                        "{name} {policy:?}"
                    );
                    assert!(s.unknown > 0, "{name} {policy:?}");
                }
            }
        }
    }
    // Through the detector's outcome.
    let t = vector("v9b.std");
    let d = make_detector_with("mcm", &DetectorOptions::default()).unwrap();
    let a = engine::run(&mut MemSource::new(&t), vec![d], &mut |_| {}).unwrap();
    assert_eq!(a.runs[0].outcome.unknown, Some(0));
}

/// V6a and V6c differ in one trailing `br` only: branch-complete mode finds
/// (6,11), conservative mode nothing; forcing conservative mode on V6a agrees.
#[test]
fn mode_switch() {
    assert_eq!(run_detector(&vector("v6a.std"), "mcm"), set(&["y:(11,6)"]));
    assert!(run_detector(&vector("v6c.std"), "mcm").is_empty());
    let t = vector("v6a.std");
    let mut sink = RaceSink::new();
    let opts = Options {
        branches: Some(false),
        ..Options::default()
    };
    causal::run(&t.events, Policy::Mcm, &opts, None, &mut sink);
    assert!(sink.is_empty());
}

/// Vector r12_window (R12): a BarrierPair that starts before a window keeps its set and its
/// extent inside it (its edges are computed over the whole trace), with overlapping and
/// with disjoint windows of 5 events; hb still reports the pair, and rdit through the
/// public options too.
#[test]
fn rdit_keeps_a_barrier_pair_across_a_window_border() {
    let t = vector("r12_window.std");
    let index = facts::barrier::ObjectIndex::new(&t.symbols);
    for overlap in [true, false] {
        let mut sink = RaceSink::new();
        let opts = Options {
            window: 5,
            overlap,
            ..Options::default()
        };
        let st = causal::run_with_objects(
            &t.events,
            Policy::Rdit,
            &opts,
            None,
            Some(&index),
            &mut sink,
        );
        assert!(sink.is_empty(), "overlap {overlap}: {:?}", sigs(&t, &sink));
        assert!(st.windows > 1);
    }
    assert_eq!(run_detector(&t, "hb"), set(&["x:(10,21)"]));
    let opts = DetectorOptions {
        window: Some(5),
        solver_timeout: None,
    };
    let a = engine::run(
        &mut MemSource::new(&t),
        vec![make_detector_with("rdit", &opts).unwrap()],
        &mut |_| {},
    )
    .unwrap();
    assert!(a.races.is_empty());
    // Without the BarrierPairs' sets (names unknown), every set counts as `*`.
    let mut sink = RaceSink::new();
    causal::run(
        &t.events,
        Policy::Rdit,
        &Options::default(),
        None,
        &mut sink,
    );
    assert!(sink.is_empty());
    // R2 (disjoint sets): rdit reports what mcm's `*` reading cannot.
    let t = vector("r02_disjoint.std");
    assert_eq!(run_detector(&t, "rdit"), set(&["x:(3,8)"]));
    assert!(run_detector(&t, "mcm").is_empty());
}

/// The per-signature query budget: a signature still undecided when its budget is spent
/// is not reported and is counted as unknown (given up); races found are a subset.
#[test]
fn a_spent_query_budget_gives_a_signature_up() {
    let mut gave_up = 0;
    for f in vector_files() {
        let t = vector(f.file_name().unwrap().to_str().unwrap());
        let mut full = RaceSink::new();
        let st = causal::run(&t.events, Policy::Mcm, &Options::default(), None, &mut full);
        assert_eq!(st.given_up, 0);
        let mut sink = RaceSink::new();
        let opts = Options {
            max_queries_per_signature: 1,
            ..Options::default()
        };
        let s = causal::run(&t.events, Policy::Mcm, &opts, None, &mut sink);
        assert!(
            sigs(&t, &sink).is_subset(&sigs(&t, &full)),
            "{}",
            f.display()
        );
        assert!(s.unknown >= s.given_up, "{}", f.display());
        assert!(s.queries <= st.queries, "{}", f.display());
        gave_up += s.given_up;
    }
    assert!(gave_up > 0, "no vector spends a budget of one query");
}

/// An owner-field latch (a page's `owner`, set under the page's monitor after a guard
/// read of `null`, cleared later) protects `buf`, written by both threads outside any
/// lock: no race, decided without a single solver query; `hits` is read outside the latch
/// and races. Without the latch shortcut, the same races, but the solver must refute
/// every `buf` pair.
#[test]
fn a_latch_by_value_refutes_its_pairs_without_the_solver() {
    let mut text = String::from("main|fork(t1)|m1\nmain|fork(t2)|m2\n");
    let mut order = vec![];
    for round in 0..3 {
        for t in ["t1", "t2"] {
            order.push((t, round));
        }
    }
    for (k, (t, round)) in order.into_iter().enumerate() {
        let me = if t == "t1" { 1 } else { 2 };
        text.push_str(&format!(
            "{t}|acq(page)|P.java:10\n{t}|r(page.owner,0)|P.java:11\n{t}|br|P.java:11\n\
             {t}|w(page.owner,{me})|P.java:12\n{t}|rel(page)|P.java:13\n\
             {t}|r(buf,{prev})|B.java:20\n{t}|w(buf,{me}{round})|B.java:21\n\
             {t}|acq(page)|P.java:30\n{t}|w(page.owner,0)|P.java:31\n{t}|notifyall(page)|P.java:32\n{t}|rel(page)|P.java:33\n\
             {t}|r(hits,{k})|H.java:5\n{t}|w(hits,{next})|H.java:6\n",
            prev = if round == 0 && t == "t1" { "0".to_owned() } else if t == "t1" { format!("2{}", round - 1) } else { format!("1{round}") },
            next = k + 1,
        ));
    }
    let trace = parse(&text);
    let run = |latches: bool| {
        let mut sink = RaceSink::new();
        let opts = Options {
            latches,
            ..Options::default()
        };
        let stats = causal::run(&trace.events, Policy::Mcm, &opts, None, &mut sink);
        (sigs(&trace, &sink), stats)
    };
    let (with, ws) = run(true);
    let (without, ns) = run(false);
    assert_eq!(with, without);
    assert!(with.iter().all(|s| s.starts_with("hits")), "{with:?}");
    assert!(!with.is_empty());
    assert_eq!(ws.latch_vars, 1, "{ws:?}");
    assert!(ws.latched >= 3, "{ws:?}");
    assert!(ns.queries >= ws.queries + 3, "with {ws:?}, without {ns:?}");
}

/// A read-write lock as the recorder models it, without values: the writer reads
/// `$readers` when it locks and writes `$writer` when it unlocks; a reader reads `$writer`
/// and writes `$readers`. Each read's source is its recorded writer (its value is that
/// writer's own token), however many writes the variable has in the window, so the pairs
/// on `data` are refuted by forced order alone. (With a cap on the writes a read's
/// sources are searched among, hundreds of solver queries refuted them one by one.)
#[test]
fn a_lock_models_valueless_reads_force_their_writer() {
    let mut text = String::from("main|fork(w)|m1\nmain|fork(r)|m2\n");
    for _ in 0..80 {
        text.push_str(
            "w|acq(L)|L.java:1\nw|vr(L.$readers)|L.java:1\nw|br|L.java:1\nw|w(data,1)|D.java:2\n\
             w|vw(L.$writer)|L.java:3\nw|rel(L)|L.java:3\n\
             r|vr(L.$writer)|L.java:4\nr|br|L.java:4\nr|r(data,1)|D.java:5\nr|vw(L.$readers)|L.java:6\n",
        );
    }
    let trace = parse(&text);
    for policy in [Policy::Mcm, Policy::Said] {
        let mut sink = RaceSink::new();
        let stats = causal::run(&trace.events, policy, &Options::default(), None, &mut sink);
        assert!(sigs(&trace, &sink).is_empty(), "{policy:?}");
        assert_eq!(stats.queries, 0, "{policy:?}: {stats:?}");
        assert!(stats.forced > 0, "{policy:?}: {stats:?}");
    }
}

/// Without recorded branches, a read may decide whether its thread ends (it may spin on
/// `y`): t1 writes `z` only after joining t2, whose last read of `y` returns t3's write,
/// made after t3's own write of `z`. For the two writes of `z` to meet, t2's read must
/// return the initial value, and then nothing says t2 ends: no race. With branches
/// recorded and none after t2's read, t2 ends whatever it reads: the race is real, and
/// mcm (and rdit) find it. The deadlock detector asks the same cut query.
#[test]
fn a_join_needs_the_joined_threads_last_read_when_branches_are_not_recorded() {
    let body = "t1|fork(t2)|1\nt1|fork(t3)|2\nt3|w(z,1)|3\nt3|w(y,1)|4\nt2|r(y,1)|5\n\
t1|join(t2)|6\nt1|w(z,2)|7\n";
    let without = parse(body);
    assert!(!without.has_branches);
    let with = parse(&format!("t1|br|0\n{body}"));
    assert!(with.has_branches);
    for d in ["mcm", "rdit"] {
        assert_eq!(run_detector(&without, d), set(&["y:(4,5)"]), "{d}");
        assert_eq!(run_detector(&with, d), set(&["y:(4,5)", "z:(3,7)"]), "{d}");
    }
    // The validator says why such a schedule is refused.
    let facts = Facts::new(&without);
    let err = facts
        .validate_race_model(Model::Cf, 2, 6, &[0, 1, 4, 5, 2, 6])
        .unwrap_err();
    let facts = Facts::new(&with);
    facts
        .validate_race_model(Model::Cf, 3, 7, &[0, 1, 2, 5, 6, 3, 7])
        .unwrap();
    // Decided by the formula, not by a refused witness.
    for t in [&without, &with] {
        let mut sink = RaceSink::new();
        let stats = causal::run(&t.events, Policy::Mcm, &Options::default(), None, &mut sink);
        assert_eq!(
            (stats.unknown, stats.invalid_witnesses),
            (0, 0),
            "{stats:?}"
        );
    }
    assert_eq!(err.rule, Rule::Cf, "{err:?}");
}
