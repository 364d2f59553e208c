//! One row per detector: its name, what a race it reports promises, what the witness step
//! must know about it, and how to build it. The names `-d` accepts, the CLI's help, which
//! detectors must witness every race and which model BarrierPairs all come from here, so
//! that a new detector is one module plus one row. (Which detectors may read a trace the
//! TREE filter thinned is TREE's own guarantee: `jrace_trace::tree::Mode::consumers`.)

use crate::detector::Detector;
use crate::{cp, deadlock, hb, lockset, m2, mcm, rdit, said, shb, wcp, DetectorOptions};

/// What jrace knows about one detector (docs/DETECTORS.md has the long form).
pub struct DetectorInfo {
    pub name: &'static str,
    /// One line: what a reported race means, for `--help`.
    pub promise: &'static str,
    /// Every race it reports is real, so `--witness` must find a validated schedule for
    /// each (one missing is a bug, said on standard error).
    pub must_witness: bool,
    /// It orders events through BarrierPairs (calls into excluded code), so the witnesses
    /// of its races may rely on them.
    pub barrier_aware: bool,
    /// A fresh detector built with these options.
    pub make: fn(&DetectorOptions) -> Box<dyn Detector>,
}

/// Every detector, in the order reports list them.
pub const REGISTRY: &[DetectorInfo] = &[
    DetectorInfo {
        name: "hb",
        promise: "conflicting accesses unordered by happens-before (the first race is real)",
        must_witness: false,
        barrier_aware: false,
        make: |_| Box::new(hb::HbDetector::default()),
    },
    DetectorInfo {
        name: "lockset",
        promise: "conflicting accesses with disjoint lock sets (warnings: not sound)",
        must_witness: false,
        barrier_aware: false,
        make: |_| Box::new(lockset::LocksetDetector::default()),
    },
    DetectorInfo {
        name: "cp",
        promise: "hb's races plus races behind non-conflicting critical sections (the first race, or a deadlock, is real)",
        must_witness: false,
        barrier_aware: false,
        make: |_| Box::new(cp::CpDetector::default()),
    },
    DetectorInfo {
        name: "wcp",
        promise: "cp's races and more, in linear time (the first race, or a deadlock, is real)",
        must_witness: false,
        barrier_aware: false,
        make: |_| Box::new(wcp::WcpDetector::default()),
    },
    DetectorInfo {
        name: "shb",
        promise: "hb's races that stay unordered with reads-from edges (every race is real)",
        must_witness: true,
        barrier_aware: false,
        make: |_| Box::new(shb::ShbDetector::default()),
    },
    DetectorInfo {
        name: "m2",
        promise: "also races that need critical sections swapped; complete for two threads (every race is real)",
        must_witness: true,
        barrier_aware: false,
        make: |_| Box::new(m2::M2Detector::default()),
    },
    DetectorInfo {
        name: "mcm",
        promise: "every race of the maximal causal model within its windows, solved with z3 (every race is real)",
        must_witness: true,
        barrier_aware: true,
        make: |o| Box::new(mcm::detector(o.causal())),
    },
    DetectorInfo {
        name: "said",
        promise: "races in which every read keeps its value, solved with z3 (every race is real)",
        must_witness: true,
        barrier_aware: true,
        make: |o| Box::new(said::detector(o.causal())),
    },
    DetectorInfo {
        name: "rdit",
        promise: "mcm on traces with calls into excluded code, through BarrierPairs (every race is real under its model)",
        must_witness: true,
        barrier_aware: true,
        make: |o| Box::new(rdit::detector(o.causal())),
    },
    DetectorInfo {
        name: "deadlock",
        promise: "lock-order cycles that a reordering of the run reaches (sync-preserving closure, z3 for two threads), each with a validated schedule (every deadlock is real)",
        must_witness: false,
        barrier_aware: false,
        make: |o| Box::new(deadlock::DeadlockDetector::new(o.causal())),
    },
];

/// The row of detector `name`.
pub fn info(name: &str) -> Option<&'static DetectorInfo> {
    REGISTRY.iter().find(|d| d.name == name)
}

/// Every detector's name, in report order.
pub fn names() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|d| d.name)
}

/// Whether `--witness` must validate every race `name` reports.
pub fn must_witness(name: &str) -> bool {
    info(name).is_some_and(|d| d.must_witness)
}

/// Whether `name` orders events through BarrierPairs.
pub fn barrier_aware(name: &str) -> bool {
    info(name).is_some_and(|d| d.barrier_aware)
}

/// `NAME  promise` lines for `--help`.
pub fn help() -> String {
    let width = REGISTRY.iter().map(|d| d.name.len()).max().unwrap_or(0);
    REGISTRY
        .iter()
        .map(|d| format!("  {:width$}  {}", d.name, d.promise))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row builds the detector it names; names are distinct.
    #[test]
    fn every_row_builds_its_detector() {
        let mut seen = std::collections::HashSet::new();
        for d in REGISTRY {
            assert!(seen.insert(d.name), "{} twice", d.name);
            let det = (d.make)(&DetectorOptions::default());
            assert_eq!(det.name(), d.name);
            assert!(!d.promise.is_empty());
        }
        assert!(must_witness("shb") && !must_witness("hb") && !must_witness("nope"));
        assert!(barrier_aware("rdit") && !barrier_aware("m2"));
        assert!(help().lines().count() == REGISTRY.len());
    }
}
