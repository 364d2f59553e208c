//! One report for many traces: a test suite starts tens of JVMs, each with its own trace
//! (`out=DIR/%p`). Their reports are merged by race fingerprint ([`crate::report::triage`]): a
//! race seen in several JVMs is listed once, with every trace (and its race id there)
//! it was seen in, so that `jrace witness TRACE --race ID` still finds it.

use crate::report::{DetectorSummary, RaceReport, Report, TraceSummary};
use serde::Serialize;
use std::collections::HashMap;

/// One analyzed trace of a merged report (JSON `traces[]`).
#[derive(Clone, Debug, Serialize)]
pub struct TraceEntry {
    /// The trace as named on the command line (or found in a directory of traces).
    pub name: String,
    pub trace: TraceSummary,
    /// Races reported on this trace alone.
    pub races: usize,
}

/// Where a merged race was seen (JSON `races[].seen_in[]`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct SeenIn {
    pub trace: String,
    /// The race's id in that trace's own report.
    pub id: u64,
}

/// Merges the reports of several traces (named), in order. A race keeps the details of
/// the first trace it was seen in, and the merged report numbers races 1, 2, ... in
/// that order. Detector summaries add up their times and undecided counts.
pub fn merge(reports: Vec<(String, Report)>) -> Report {
    let mut races: Vec<RaceReport> = Vec::new();
    let mut by_fingerprint: HashMap<String, usize> = HashMap::new();
    let mut traces = Vec::with_capacity(reports.len());
    let mut detectors: Vec<DetectorSummary> = Vec::new();
    let mut total = TraceSummary {
        events: 0,
        threads: 0,
        variables: 0,
        locks: 0,
        truncated: None,
    };
    // Races each trace's report left out (--max-races) stay counted; they cannot be
    // matched by fingerprint, so the same race omitted in two traces counts twice.
    let mut omitted: Option<crate::report::Omitted> = None;
    // Deadlocks, one per fingerprint, in first-seen order.
    let mut deadlocks: Option<Vec<crate::report::deadlock::DeadlockReport>> = None;
    for (name, mut rep) in reports {
        if let Some(ds) = rep.deadlocks.take() {
            let all = deadlocks.get_or_insert_with(Vec::new);
            for mut d in ds {
                if !all.iter().any(|x| x.fingerprint == d.fingerprint) {
                    d.id = all.len() as u64 + 1;
                    all.push(d);
                }
            }
        }
        if let Some(o) = &rep.omitted {
            let m = omitted.get_or_insert_with(Default::default);
            m.count += o.count;
            m.max_races = m.max_races.max(o.max_races);
            for (d, n) in &o.by_detector {
                *m.by_detector.entry(d).or_default() += n;
            }
        }
        total.events += rep.trace.events;
        total.threads += rep.trace.threads;
        total.variables += rep.trace.variables;
        total.locks += rep.trace.locks;
        for d in &rep.detectors {
            match detectors.iter_mut().find(|m| m.name == d.name) {
                Some(m) => {
                    m.seconds = ((m.seconds + d.seconds) * 1e6).round() / 1e6;
                    m.unknown = match (m.unknown, d.unknown) {
                        (None, None) => None,
                        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
                    };
                    m.complete = match (m.complete, d.complete) {
                        (Some(a), Some(b)) => Some(a && b),
                        (Some(false), _) | (_, Some(false)) => Some(false),
                        _ => None,
                    };
                }
                None => detectors.push(d.clone()),
            }
        }
        traces.push(TraceEntry {
            name: name.clone(),
            trace: rep.trace.clone(),
            races: rep.races.len(),
        });
        for r in rep.races {
            let seen = SeenIn {
                trace: name.clone(),
                id: r.id,
            };
            match by_fingerprint.get(&r.fingerprint) {
                Some(&i) => {
                    let m = &mut races[i];
                    m.seen_in.push(seen);
                    for d in r.detectors {
                        if !m.detectors.contains(&d) {
                            m.detectors.push(d);
                        }
                    }
                }
                None => {
                    by_fingerprint.insert(r.fingerprint.clone(), races.len());
                    let mut r = r;
                    r.id = races.len() as u64 + 1;
                    r.seen_in = vec![seen];
                    races.push(r);
                }
            }
        }
    }
    // Detectors listed in the order of the first report, races' detectors likewise.
    let order: Vec<&'static str> = detectors.iter().map(|d| d.name).collect();
    for r in &mut races {
        r.detectors
            .sort_by_key(|d| order.iter().position(|o| o == d).unwrap_or(usize::MAX));
    }
    let mut merged = Report {
        version: 1,
        trace: total,
        detectors,
        races,
        suppressed: None,
        omitted,
        baseline: None,
        traces: Some(traces),
        deadlocks,
    };
    merged.recount_detector_races();
    let found = merged.deadlocks.as_ref().map(Vec::len);
    for d in &mut merged.detectors {
        if d.deadlocks.is_some() {
            d.deadlocks = found;
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::AccessReport;

    fn race(
        id: u64,
        variable: &str,
        loc: &str,
        thread: &str,
        detectors: Vec<&'static str>,
    ) -> RaceReport {
        let a = |op: &'static str, event| AccessReport {
            thread: thread.into(),
            op,
            location: loc.into(),
            method: None,
            event,
            locks: vec![],
            stack: vec![],
            created_at: None,
        };
        let mut r = RaceReport {
            id,
            variable: variable.into(),
            kind: "write-read".into(),
            accesses: [a("write", id * 10), a("read", id * 10 + 1)],
            detectors,
            fingerprint: String::new(),
            baseline: None,
            seen_in: vec![],
            witness: None,
        };
        r.fingerprint = crate::report::triage::fingerprint(&r);
        r
    }

    fn report(events: u64, races: Vec<RaceReport>, unknown: Option<u64>) -> Report {
        let det = |name, warnings_only| DetectorSummary {
            name,
            races: 0,
            seconds: 0.5,
            unknown: if name == "mcm" { unknown } else { None },
            complete: None,
            warnings_only,
            note: None,
            deadlocks: None,
        };
        Report {
            version: 1,
            trace: TraceSummary {
                events,
                threads: 2,
                variables: 3,
                locks: 1,
                truncated: None,
            },
            detectors: vec![det("hb", false), det("mcm", false)],
            races,
            suppressed: None,
            omitted: None,
            baseline: None,
            traces: None,
            deadlocks: None,
        }
    }

    /// The same race in two JVMs is one race seen in both (details from the first, ids
    /// from each); a race of one JVM only is listed with that JVM; counts add up.
    #[test]
    fn races_merge_by_fingerprint_across_traces() {
        let a = report(
            100,
            vec![
                race(1, "C.hits", "C.java:5", "pool-1", vec!["hb"]),
                race(2, "C.misses", "C.java:9", "pool-1", vec!["hb"]),
            ],
            Some(2),
        );
        let b = report(
            50,
            vec![
                race(1, "D.size", "D.java:3", "main", vec!["mcm"]),
                race(2, "C.hits", "C.java:5", "worker-7", vec!["mcm", "hb"]),
            ],
            Some(1),
        );
        let m = merge(vec![("jvm-1".into(), a), ("jvm-2".into(), b)]);
        type Row<'a> = (u64, &'a str, Vec<(String, u64)>, Vec<&'a str>);
        let got: Vec<Row> = m
            .races
            .iter()
            .map(|r| {
                (
                    r.id,
                    r.variable.as_str(),
                    r.seen_in.iter().map(|s| (s.trace.clone(), s.id)).collect(),
                    r.detectors.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    1,
                    "C.hits",
                    vec![("jvm-1".into(), 1), ("jvm-2".into(), 2)],
                    vec!["hb", "mcm"]
                ),
                (2, "C.misses", vec![("jvm-1".into(), 2)], vec!["hb"]),
                (3, "D.size", vec![("jvm-2".into(), 1)], vec!["mcm"]),
            ]
        );
        assert_eq!(m.races[0].accesses[0].thread, "pool-1");
        assert_eq!(m.trace.events, 150);
        assert_eq!(m.detectors[0].races, 2);
        assert_eq!(m.detectors[1].races, 2);
        assert_eq!(m.detectors[1].unknown, Some(3));
        assert_eq!(m.detectors[0].seconds, 1.0);
        let t = m.traces.as_ref().unwrap();
        assert_eq!(
            (t[0].name.as_str(), t[0].races, t[1].races),
            ("jvm-1", 2, 2)
        );
    }

    /// The same deadlock in two JVMs is listed once; the detector's count follows.
    #[test]
    fn deadlocks_merge_by_fingerprint() {
        use crate::report::deadlock::{DeadlockReport, DeadlockThreadReport, LockSite};
        let site = |loc: &str| LockSite {
            location: loc.into(),
            method: None,
            event: 1,
            stack: vec![],
        };
        let deadlock = |a: &str, b: &str| {
            let threads = vec![
                DeadlockThreadReport {
                    thread: "t1".into(),
                    holds: "a".into(),
                    held_at: site("A.java:1"),
                    requests: "b".into(),
                    requested_at: site(a),
                },
                DeadlockThreadReport {
                    thread: "t2".into(),
                    holds: "b".into(),
                    held_at: site("B.java:1"),
                    requests: "a".into(),
                    requested_at: site(b),
                },
            ];
            DeadlockReport {
                id: 1,
                fingerprint: crate::report::deadlock::fingerprint(&threads),
                threads,
                schedule_events: 4,
                witness: None,
            }
        };
        let with = |ds: Vec<DeadlockReport>| {
            let mut r = report(10, vec![], None);
            r.detectors[1] = DetectorSummary {
                name: "deadlock",
                races: 0,
                seconds: 0.1,
                unknown: Some(0),
                complete: None,
                warnings_only: false,
                note: None,
                deadlocks: Some(ds.len()),
            };
            r.deadlocks = Some(ds);
            r
        };
        let m = merge(vec![
            ("jvm-1".into(), with(vec![deadlock("A.java:2", "B.java:2")])),
            (
                "jvm-2".into(),
                with(vec![
                    deadlock("A.java:2", "B.java:2"),
                    deadlock("A.java:7", "B.java:2"),
                ]),
            ),
        ]);
        let ds = m.deadlocks.as_ref().unwrap();
        assert_eq!(ds.len(), 2);
        assert_eq!((ds[0].id, ds[1].id), (1, 2));
        assert_eq!(ds[1].threads[0].requested_at.location, "A.java:7");
        assert_eq!(m.detectors[1].deadlocks, Some(2));
    }
}
