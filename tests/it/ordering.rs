//! The recorder orders synchronizing operations exactly as they happened, under contention
//! (java-harness/src/stress/AtomicOrder.java): four threads hammer one `AtomicInteger`, one
//! `AtomicIntegerArray` element and one volatile field (through a `VarHandle` and directly)
//! with get, set, compare-and-set and getAndAdd, and log what each operation returned.
//! After the run:
//!
//! * the trace's order of these operations explains every value they read: each read (a
//!   get, or the read half of a successful CAS or a getAndAdd) returns the latest write
//!   before it in trace order;
//! * each thread's operations in the trace are exactly those it logged, with the values
//!   its operations returned (a failed CAS is a read of the value it found, which the
//!   log does not have: its kind is checked, its value by the first check).
//!
//! Over a million operations, several recordings: zero violations.

use std::collections::HashMap;
use std::path::Path;

use crate::harness;

use jrace_trace::Kind;

/// One logged operation.
#[derive(Clone, Copy, Debug)]
struct Op {
    target: i32,
    kind: i32,
    a: i32,
    b: i32,
    result: i32,
}

fn read_log(path: &Path) -> HashMap<String, Vec<Op>> {
    let bytes = std::fs::read(path).unwrap();
    let mut p = 0;
    let u16_at = |p: &mut usize| {
        let v = u16::from_be_bytes([bytes[*p], bytes[*p + 1]]);
        *p += 2;
        v
    };
    let mut out = HashMap::new();
    while p < bytes.len() {
        let n = u16_at(&mut p) as usize;
        let name = String::from_utf8(bytes[p..p + n].to_vec()).unwrap();
        p += n;
        let int = |p: &mut usize| {
            let v = i32::from_be_bytes(bytes[*p..*p + 4].try_into().unwrap());
            *p += 4;
            v
        };
        let count = int(&mut p) as usize;
        let mut ops = Vec::with_capacity(count);
        for _ in 0..count {
            ops.push(Op {
                target: int(&mut p),
                kind: int(&mut p),
                a: int(&mut p),
                b: int(&mut p),
                result: int(&mut p),
            });
        }
        out.insert(name, ops);
    }
    out
}

/// The (kind, value) events each logged operation must be in the trace (`None`: a value
/// the log does not have).
fn expected(op: &Op) -> Vec<(Kind, Option<i64>)> {
    let (a, b, r) = (op.a as i64, op.b as i64, op.result as i64);
    match op.kind {
        0 => vec![(Kind::VRead, Some(r))],
        1 => vec![(Kind::VWrite, Some(a))],
        2 if op.result == 1 => vec![(Kind::VRead, Some(a)), (Kind::VWrite, Some(b))],
        2 => vec![(Kind::VRead, None)],
        _ => vec![(Kind::VRead, Some(r)), (Kind::VWrite, Some(r + a))],
    }
}

/// Records one run and returns (operations, violations found).
fn one_run(ops_per_thread: u32, attempt: u32) -> (usize, Vec<String>) {
    let dir = harness::scratch("ordering", &format!("run{attempt}"));
    let trace = dir.join("trace");
    let log = dir.join("ops.bin");
    let out = harness::record(
        &trace,
        &[],
        "stress.AtomicOrder",
        &[log.to_str().unwrap(), &ops_per_thread.to_string()],
    );
    assert!(
        out.status.success() && harness::text(&out.stdout).trim() == "done",
        "the stress program under the recorder: {:?} {}",
        out.status,
        harness::text(&out.stderr)
    );
    let logged = read_log(&log);
    let t = jrace_trace::load(&trace).unwrap_or_else(|e| panic!("{e}"));
    let s = &t.symbols;
    // The three variables: named by their static names, touched by the stress threads.
    let stress: Vec<u32> = (0..s.threads.len() as u32)
        .filter(|&i| s.threads.name(i).starts_with("stress-"))
        .collect();
    let wanted = |v: u32| -> Option<usize> {
        let st = s.statics.name(s.var_static[v as usize]);
        let name = s.vars.name(v);
        match st {
            "java.util.concurrent.atomic.AtomicInteger.value" => Some(0),
            "int[]" if name.ends_with("[3]") => Some(1),
            "stress.AtomicOrder.field" => Some(2),
            _ => None,
        }
    };
    let mut which: HashMap<u32, usize> = HashMap::new();
    for e in &t.events {
        let synchronizing = matches!(e.kind, Kind::VRead | Kind::VWrite);
        if synchronizing && stress.contains(&e.thread) {
            if let Some(k) = wanted(e.target) {
                which.insert(e.target, k);
            }
        }
    }
    let mut violations = Vec::new();
    assert_eq!(which.len(), 3, "the three variables: {which:?}");
    // 1. Every read returns the latest write before it.
    let mut current: HashMap<u32, i64> = HashMap::new();
    for (i, e) in t.events.iter().enumerate() {
        if !which.contains_key(&e.target) || !e.kind.is_access() {
            continue;
        }
        assert!(e.has_value(), "event {i} has no value");
        let cur = current.entry(e.target).or_insert(0);
        match e.kind {
            Kind::VWrite => *cur = e.value,
            Kind::VRead if e.value != *cur => violations.push(format!(
                "event {} ({}, {}): read {} but the latest write before it wrote {}",
                i + 1,
                s.threads.name(e.thread),
                s.vars.name(e.target),
                e.value,
                cur
            )),
            Kind::VRead => {}
            k => violations.push(format!(
                "event {}: {k:?} on a synchronizing variable",
                i + 1
            )),
        }
    }
    // 2. Each thread's events are what its operations returned.
    let mut total = 0;
    for &th in &stress {
        let name = s.threads.name(th);
        let ops = &logged[name];
        total += ops.len();
        let got: Vec<(Kind, i64, usize)> = t
            .events
            .iter()
            .filter(|e| e.thread == th && which.contains_key(&e.target))
            .map(|e| (e.kind, e.value, which[&e.target]))
            .collect();
        let want: Vec<(Kind, Option<i64>, usize)> = ops
            .iter()
            .flat_map(|op| {
                let var = (op.target as usize).min(2);
                expected(op).into_iter().map(move |(k, v)| (k, v, var))
            })
            .collect();
        let same = |(gk, gv, gx): &(Kind, i64, usize),
                    (wk, wv, wx): &(Kind, Option<i64>, usize)| {
            gk == wk && gx == wx && wv.is_none_or(|v| v == *gv)
        };
        if got.len() != want.len() || !got.iter().zip(&want).all(|(g, w)| same(g, w)) {
            let at = got.iter().zip(&want).position(|(g, w)| !same(g, w));
            violations.push(format!(
                "{name}: {} events recorded, {} operations' worth expected; first difference at {at:?}",
                got.len(),
                want.len()
            ));
        }
    }
    if violations.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    (total, violations)
}

#[test]
fn synchronizing_operations_are_recorded_in_the_order_they_happened() {
    if !harness::java_ready("stress/AtomicOrder.class") {
        return;
    }
    let mut ops = 0;
    let mut violations = Vec::new();
    for attempt in 0..4 {
        let (n, v) = one_run(70_000, attempt);
        ops += n;
        violations.extend(v);
    }
    eprintln!("{ops} operations checked");
    assert!(ops >= 1_000_000);
    assert!(
        violations.is_empty(),
        "{} violations, the first: {:#?}",
        violations.len(),
        &violations[..violations.len().min(10)]
    );
}
