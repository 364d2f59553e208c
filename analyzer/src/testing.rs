//! Helpers for tests: race signatures as short strings (`x:(2,7)`), and the expectation
//! lines of the test vectors in `tests/vectors/` (`# expect hb: x:(2,7) y:(1,3)`, `-` for
//! none).

use crate::engine;
use jrace_trace::{Symbols, Trace};
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

/// The `# expect DET: ...` lines of a vector file: detector -> signatures.
pub fn expectations(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("# expect ") else { continue };
        let Some((det, sigs)) = rest.split_once(':') else { continue };
        let set: BTreeSet<String> = sigs
            .split_whitespace()
            .filter(|s| *s != "-")
            .map(|s| normalize_sig(s).unwrap_or_else(|| panic!("bad signature {s} in `{line}`")))
            .collect();
        m.insert(det.trim().to_owned(), set);
    }
    m
}

/// An [`jrace_trace::EventSource`] over an in-memory trace (events already checked).
pub struct MemSource<'a> {
    trace: &'a Trace,
    next: usize,
}

impl<'a> MemSource<'a> {
    pub fn new(trace: &'a Trace) -> Self {
        MemSource { trace, next: 0 }
    }
}

impl jrace_trace::EventSource for MemSource<'_> {
    fn next_event(&mut self) -> Result<Option<jrace_trace::Event>, jrace_trace::TraceError> {
        let e = self.trace.events.get(self.next).copied();
        self.next += 1;
        Ok(e)
    }
    fn symbols(&self) -> &Symbols {
        &self.trace.symbols
    }
    fn has_branches(&self) -> bool {
        self.trace.has_branches
    }
}
