//! The report's predicted deadlocks (docs/REPORT.md#deadlocks): what JSON, text and SARIF
//! say of each deadlock the `deadlock` detector ([`crate::deadlock`]) found.

use crate::engine::Analysis;
use crate::report::WitnessStep;
use jrace_trace::{LocId, Symbols, Trace};
use serde::Serialize;
use std::fmt::Write as _;

/// Where a thread of a deadlock took or requests a lock.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LockSite {
    pub location: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// 1-based position in the trace's global order.
    pub event: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<String>,
}

/// One thread of a deadlock: it holds `holds` and waits for `requests`, which the next
/// thread of the cycle holds.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeadlockThreadReport {
    pub thread: String,
    pub holds: String,
    pub held_at: LockSite,
    pub requests: String,
    pub requested_at: LockSite,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeadlockReport {
    pub id: u64,
    /// The cycle: each thread waits for the next one's lock, the last for the first's.
    pub threads: Vec<DeadlockThreadReport>,
    /// Stable across runs: the code locations of the cycle ([`fingerprint`]).
    pub fingerprint: String,
    /// Events in the validated schedule that reaches the deadlock.
    pub schedule_events: u64,
    /// With `--witness`: that schedule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<Vec<WitnessStep>>,
}

fn site(sym: &Symbols, thread: u32, loc: LocId, idx: u64) -> LockSite {
    LockSite {
        location: sym.loc_name(loc).to_owned(),
        method: crate::report::method_of(sym, loc),
        event: idx + 1,
        stack: crate::report::stack_of(sym, thread, loc),
    }
}

/// The deadlocks of `a`, numbered from 1 in the detector's order; `None` when the
/// `deadlock` detector did not run.
pub fn build(a: &Analysis) -> Option<Vec<DeadlockReport>> {
    let run = a.runs.iter().find(|r| r.name == "deadlock")?;
    let sym = &a.symbols;
    Some(
        run.outcome
            .deadlocks
            .iter()
            .enumerate()
            .map(|(k, d)| {
                let threads: Vec<DeadlockThreadReport> = d
                    .threads
                    .iter()
                    .map(|t| DeadlockThreadReport {
                        thread: sym.thread_name(t.thread).to_owned(),
                        holds: sym.lock_name(t.holds).to_owned(),
                        held_at: site(sym, t.thread, t.held_loc, t.held_at),
                        requests: sym.lock_name(t.requests).to_owned(),
                        requested_at: site(sym, t.thread, t.request_loc, t.request),
                    })
                    .collect();
                DeadlockReport {
                    id: k as u64 + 1,
                    fingerprint: fingerprint(&threads),
                    threads,
                    schedule_events: d.schedule_len,
                    witness: None,
                }
            })
            .collect(),
    )
}

/// FNV-1a of the cycle's code: each thread's (held-at, requested-at) location and
/// method, sorted, so that the same inversion gets the same fingerprint whatever the
/// threads' names, lock objects or the cycle's starting point.
pub fn fingerprint(threads: &[DeadlockThreadReport]) -> String {
    let key = |s: &LockSite| format!("{}\u{1}{}", s.location, s.method.as_deref().unwrap_or(""));
    let mut parts: Vec<String> = threads
        .iter()
        .map(|t| format!("{}\u{2}{}", key(&t.held_at), key(&t.requested_at)))
        .collect();
    parts.sort();
    let mut all = vec!["deadlock-v1"];
    all.extend(parts.iter().map(String::as_str));
    crate::report::triage::fnv_fingerprint(&all)
}

/// The steps of schedule `s` (0-based indices of `trace`).
pub fn steps(trace: &Trace, s: &[u64]) -> Vec<WitnessStep> {
    let mut names: std::collections::HashMap<u32, std::sync::Arc<str>> = Default::default();
    s.iter()
        .map(|&i| {
            let t = trace.events[i as usize].thread;
            WitnessStep {
                thread: names
                    .entry(t)
                    .or_insert_with(|| trace.symbols.thread_name(t).into())
                    .clone(),
                event: i + 1,
            }
        })
        .collect()
}

/// One deadlock's block of the text report.
pub fn text_block(s: &mut String, d: &DeadlockReport) {
    let _ = writeln!(
        s,
        "Deadlock #{} ({} threads): each thread waits for a lock the next one holds",
        d.id,
        d.threads.len()
    );
    for t in &d.threads {
        let _ = write!(
            s,
            "  thread {} holds {} (taken at {}",
            t.thread, t.holds, t.held_at.location
        );
        if let Some(m) = &t.held_at.method {
            let _ = write!(s, " in {m}");
        }
        let _ = writeln!(s, ", event {})", t.held_at.event);
        let _ = write!(
            s,
            "    and requests {} at {}",
            t.requests, t.requested_at.location
        );
        if let Some(m) = &t.requested_at.method {
            let _ = write!(s, " in {m}");
        }
        let _ = writeln!(s, " (event {})", t.requested_at.event);
        const SHOWN: usize = 6;
        for f in t.requested_at.stack.iter().take(SHOWN) {
            let _ = writeln!(s, "        at {f}");
        }
    }
    let _ = write!(
        s,
        "  reached by a validated schedule of {} events",
        d.schedule_events
    );
    if d.witness.is_some() {
        s.push_str(" (--format json lists it)");
    }
    let _ = writeln!(s, "; fingerprint {}\n", d.fingerprint);
}

/// One SARIF result per deadlock (rule `deadlock`), located at each thread's request.
pub fn sarif_result(d: &DeadlockReport) -> serde_json::Value {
    use serde_json::json;
    let cycle: Vec<String> = d
        .threads
        .iter()
        .map(|t| {
            format!(
                "{} holds {} and requests {} at {}",
                t.thread, t.holds, t.requests, t.requested_at.location
            )
        })
        .collect();
    let locations: Vec<serde_json::Value> = d
        .threads
        .iter()
        .map(|t| {
            let a = &t.requested_at;
            let mut l = json!({"message": {"text": format!(
                "{} requests {} (event {})", t.thread, t.requests, a.event)}});
            match crate::report::split_file_line(&a.location) {
                Some((file, line)) => {
                    l["physicalLocation"] = json!({
                        "artifactLocation": {"uri": file},
                        "region": {"startLine": line}
                    });
                }
                _ => l["logicalLocations"] = json!([{"fullyQualifiedName": a.location}]),
            }
            if let Some(m) = &a.method {
                l["logicalLocations"] = json!([{"fullyQualifiedName": m, "kind": "function"}]);
            }
            l
        })
        .collect();
    json!({
        "ruleId": "deadlock",
        "level": "error",
        "message": {"text": format!("Deadlock of {} threads: {}", d.threads.len(), cycle.join("; "))},
        "locations": locations,
        "partialFingerprints": {"jraceDeadlock/v1": d.fingerprint},
        "properties": {"deadlockId": d.id, "scheduleEvents": d.schedule_events},
    })
}
