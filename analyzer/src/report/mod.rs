//! Reports (docs/REPORT.md): JSON, a TSan/RV-Predict-style text report, and SARIF 2.1.0.
//!
//! Detectors report each access's index, location, thread and kind; the locks held and
//! where the thread started come from [`crate::facts`].

pub mod deadlock;
pub mod html;
pub mod merge;
pub mod triage;

use crate::engine::Analysis;
use crate::facts::EventFacts;
use jrace_trace::Symbols;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

/// What the report says about one racing access.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AccessReport {
    pub thread: String,
    pub op: &'static str,
    pub location: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// 1-based position in the trace's global order.
    pub event: u64,
    pub locks: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<String>,
    /// Where the access's thread was started (its `fork` event), when the trace has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct RaceReport {
    pub id: u64,
    pub variable: String,
    pub kind: String,
    pub accesses: [AccessReport; 2],
    pub detectors: Vec<&'static str>,
    /// Stable across runs and schedules ([`crate::report::triage::fingerprint`]).
    pub fingerprint: String,
    /// With `--baseline`: `new` or `known` ([`crate::report::triage::Baseline`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<&'static str>,
    /// In a report of several traces: every trace the race was seen in, with its id there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seen_in: Vec<crate::report::merge::SeenIn>,
    /// With `--witness`: `Some(Some(schedule))`, or `Some(None)` (written as `null`) when
    /// no witness validates. Without `--witness`: `None`, and the field is left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<Option<Vec<WitnessStep>>>,
}

/// One step of a witness schedule (docs/REPORT.md#witnesses): a thread and a 1-based event
/// number.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct WitnessStep {
    /// Shared by every step of the thread: a witness can have millions of steps.
    pub thread: std::sync::Arc<str>,
    pub event: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct TraceSummary {
    pub events: u64,
    pub threads: usize,
    pub variables: usize,
    pub locks: usize,
    /// Present when the trace ends before the run did ([`Truncated`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<Truncated>,
}

/// A trace cut short: races are those of what was recorded; the run went on (or died)
/// past `after_event`.
#[derive(Clone, Debug, Serialize)]
pub struct Truncated {
    /// `max_mb`, `write_error`, `killed` or `exit`.
    pub reason: &'static str,
    pub message: String,
    /// The trace ends after this event (the number of events in it).
    pub after_event: u64,
    /// Threads with events that had not ended at the cut.
    pub running: Vec<String>,
}

impl Truncated {
    pub fn new(t: &jrace_trace::Truncation, events: u64, sym: &Symbols) -> Truncated {
        let mut message = t.reason.describe().to_string();
        if let Some(d) = &t.detail {
            message = format!("{message} (recorder: {d})");
        }
        Truncated {
            reason: t.reason.name(),
            message,
            after_event: events,
            running: t
                .running
                .iter()
                .map(|&th| sym.thread_name(th).to_string())
                .collect(),
        }
    }

    /// One line for the text report and SARIF.
    pub fn line(&self) -> String {
        let mut s = format!(
            "Trace cut short ({}): {}; it ends after event {}",
            self.reason, self.message, self.after_event
        );
        if !self.running.is_empty() {
            s += &format!("; threads still running then: {}", self.running.join(", "));
        }
        s += ". Races are those of the recorded part.";
        s
    }
}

/// Races a report counts but does not describe: those after the first `--max-races` (in
/// id order). A detector that flags a great many location pairs (lockset on a trace where
/// shared data is touched from hundreds of sites without locks) would otherwise make a
/// report of gigabytes that nobody reads. Detectors' race counts include them.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Omitted {
    pub count: usize,
    /// The largest number of races described.
    pub max_races: usize,
    /// How many of the omitted races each detector found.
    pub by_detector: std::collections::BTreeMap<&'static str, usize>,
}

impl Omitted {
    /// One line for the text report.
    pub fn line(&self) -> String {
        let per: Vec<String> = self
            .by_detector
            .iter()
            .map(|(d, n)| format!("{d} {n}"))
            .collect();
        format!(
            "{} more race{} not shown ({}): the report describes {} (those of sound detectors first); raise --max-races to see more",
            self.count,
            if self.count == 1 { "" } else { "s" },
            per.join(", "),
            self.max_races
        )
    }
}

/// Keeps `max` races of `a` and returns what the others were (`None` when there are no
/// more than `max`): first the races a sound detector found, then the warnings of
/// detectors that only warn (lockset), each in id order. Kept races keep their ids.
pub fn omit_beyond(a: &mut Analysis, max: usize) -> Option<Omitted> {
    if a.races.len() <= max {
        return None;
    }
    let runs = &a.runs;
    let warning =
        |r: &crate::engine::SigRace| r.detectors.iter().all(|&d| runs[d].outcome.warnings_only);
    let sound = a.races.iter().filter(|r| !warning(r)).count();
    // The first `max` sound races, then the first warnings up to `max` in all.
    let (mut kept_sound, mut kept_warnings) = (0, 0);
    let (keep, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut a.races).into_iter().partition(|r| {
        if warning(r) {
            kept_warnings += 1;
            kept_warnings <= max.saturating_sub(sound.min(max))
        } else {
            kept_sound += 1;
            kept_sound <= max
        }
    });
    a.races = keep;
    let mut o = Omitted {
        count: rest.len(),
        max_races: max,
        ..Default::default()
    };
    for r in &rest {
        for &d in &r.detectors {
            *o.by_detector.entry(a.runs[d].name).or_default() += 1;
        }
    }
    Some(o)
}

#[derive(Clone, Debug, Serialize)]
pub struct DetectorSummary {
    pub name: &'static str,
    pub races: usize,
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub complete: Option<bool>,
    /// Lockset's reports are warnings (docs/DETECTORS.md#lockset); the flag itself is not
    /// written to JSON, only the text and SARIF reports show it.
    #[serde(skip)]
    pub warnings_only: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Deadlocks found (the `deadlock` detector only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlocks: Option<usize>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub version: u32,
    pub trace: TraceSummary,
    pub detectors: Vec<DetectorSummary>,
    pub races: Vec<RaceReport>,
    /// Predicted deadlocks, when the `deadlock` detector ran
    /// ([`crate::report::deadlock`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlocks: Option<Vec<crate::report::deadlock::DeadlockReport>>,
    /// With suppressions: the races they took out of `races`, per rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suppressed: Option<crate::report::triage::Suppressed>,
    /// Races beyond `--max-races`, counted but not described ([`Omitted`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted: Option<Omitted>,
    /// With `--baseline`: how many races are new and how many the baseline has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<crate::report::triage::BaselineSummary>,
    /// In a report of several traces ([`crate::report::merge`]): each trace; `trace` then has the
    /// totals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traces: Option<Vec<crate::report::merge::TraceEntry>>,
}

/// The event indices [`build`] needs facts for.
pub fn needed_events(a: &Analysis) -> BTreeSet<u64> {
    a.races
        .iter()
        .flat_map(|r| [r.pair.first, r.pair.second])
        .collect()
}

fn access(sym: &Symbols, idx: u64, f: &EventFacts) -> AccessReport {
    let e = f;
    AccessReport {
        thread: sym.thread_name(e.thread).to_owned(),
        op: e.kind.name(),
        location: sym.loc_name(e.loc).to_owned(),
        method: method_of(sym, e.loc),
        event: idx + 1,
        locks: f
            .locks
            .iter()
            .map(|&l| sym.lock_name(l).to_owned())
            .collect(),
        stack: stack_of(sym, e.thread, e.loc),
        created_at: f.created_at.map(|l| frame_name(sym, l)),
    }
}

/// The call stack the recorder kept for `thread` at `loc`, as Java prints frames.
pub(crate) fn stack_of(sym: &Symbols, thread: u32, loc: u32) -> Vec<String> {
    sym.stacks
        .get(&(thread, loc))
        .map(|frames| frames.iter().map(|&l| frame_name(sym, l)).collect())
        .unwrap_or_default()
}

/// `Class.method` of `loc`, when the recorder knows it.
pub(crate) fn method_of(sym: &Symbols, loc: u32) -> Option<String> {
    let detail = sym.loc_detail.get(loc as usize).and_then(|d| d.as_ref());
    detail.map(|d| format!("{}.{}", d.class, d.method))
}

/// A stack frame as Java prints one: `pkg.Class.method(File.java:17)`.
pub(crate) fn frame_name(sym: &Symbols, loc: u32) -> String {
    let token = sym.loc_name(loc);
    match sym.loc_detail.get(loc as usize).and_then(|d| d.as_ref()) {
        Some(d) if d.file.is_some() => format!("{}.{}({token})", d.class, d.method),
        _ => token.to_owned(),
    }
}

/// Builds the report. `facts` must cover [`needed_events`].
pub fn build(a: &Analysis, facts: &HashMap<u64, EventFacts>) -> Report {
    let sym = &a.symbols;
    let detectors = a
        .runs
        .iter()
        .map(|r| DetectorSummary {
            name: r.name,
            races: a
                .races
                .iter()
                .filter(|s| s.detectors.contains(&index_of(a, r.name)))
                .count(),
            seconds: (r.seconds * 1e6).round() / 1e6,
            unknown: r.outcome.unknown,
            complete: r.outcome.complete,
            warnings_only: r.outcome.warnings_only,
            note: r.outcome.note.clone(),
            deadlocks: (r.name == "deadlock").then_some(r.outcome.deadlocks.len()),
        })
        .collect();
    let races = a
        .races
        .iter()
        .map(|s| {
            let f1 = &facts[&s.pair.first];
            let f2 = &facts[&s.pair.second];
            let a1 = access(sym, s.pair.first, f1);
            let a2 = access(sym, s.pair.second, f2);
            let mut r = RaceReport {
                id: s.id,
                variable: sym.statics.name(s.key.0).to_owned(),
                kind: format!("{}-{}", a1.op, a2.op),
                accesses: [a1, a2],
                detectors: s.detectors.iter().map(|&i| a.runs[i].name).collect(),
                fingerprint: String::new(),
                baseline: None,
                seen_in: Vec::new(),
                witness: None,
            };
            r.fingerprint = crate::report::triage::fingerprint(&r);
            r
        })
        .collect();
    Report {
        version: 1,
        trace: TraceSummary {
            events: a.events,
            threads: sym.threads.len(),
            variables: sym.vars.len(),
            locks: sym.locks.len(),
            truncated: None,
        },
        detectors,
        races,
        deadlocks: crate::report::deadlock::build(a),
        suppressed: None,
        omitted: None,
        baseline: None,
        traces: None,
    }
}

fn index_of(a: &Analysis, name: &str) -> usize {
    a.runs
        .iter()
        .position(|r| r.name == name)
        .unwrap_or(usize::MAX)
}

impl Report {
    /// Sets each detector's race count from `races` (after races were taken out or merged).
    pub fn recount_detector_races(&mut self) {
        for d in &mut self.detectors {
            d.races = self
                .races
                .iter()
                .filter(|r| r.detectors.contains(&d.name))
                .count()
                + self
                    .omitted
                    .as_ref()
                    .and_then(|o| o.by_detector.get(d.name))
                    .copied()
                    .unwrap_or(0);
        }
    }

    /// True when every detector that reported `race` reports only warnings (lockset):
    /// the race is then shown as a possible race, not a predicted one.
    pub fn only_warnings(&self, race: &RaceReport) -> bool {
        race.detectors.iter().all(|name| {
            self.detectors
                .iter()
                .any(|d| d.name == *name && d.warnings_only)
        })
    }
}

pub fn to_json(r: &Report) -> String {
    serde_json::to_string_pretty(r).expect("report serializes") + "\n"
}

/// At most this many race blocks in a text report; beyond it, races are grouped per
/// variable with a count of the rest (the JSON report lists every race).
pub const TEXT_RACES_SHOWN: usize = 100;
/// Race blocks shown per variable when a text report is over [`TEXT_RACES_SHOWN`].
const TEXT_RACES_PER_VARIABLE: usize = 2;

/// TSan/RV-Predict-style text: one block per race signature, one summary line per
/// detector. Over [`TEXT_RACES_SHOWN`] races (lockset on code with many sites can report
/// millions), the races of sound detectors come first, each variable shows two blocks
/// and one line for its other location pairs, and the report ends with what it left out.
pub fn to_text(r: &Report) -> String {
    let mut s = String::new();
    if r.races.len() <= TEXT_RACES_SHOWN {
        for race in &r.races {
            race_block(&mut s, r, race);
        }
    } else {
        grouped_races(&mut s, r);
    }
    for d in r.deadlocks.iter().flatten() {
        crate::report::deadlock::text_block(&mut s, d);
    }
    match &r.traces {
        None => {
            let _ = writeln!(
                s,
                "Trace: {} events, {} threads, {} variables, {} locks",
                r.trace.events, r.trace.threads, r.trace.variables, r.trace.locks
            );
        }
        Some(ts) => {
            let _ = writeln!(
                s,
                "Traces: {}, {} events and {} threads in all",
                ts.len(),
                r.trace.events,
                r.trace.threads
            );
            for t in ts {
                let plural = if t.races == 1 { "" } else { "s" };
                let _ = writeln!(
                    s,
                    "  {}: {} events, {} race{plural}",
                    t.name, t.trace.events, t.races
                );
                if let Some(c) = &t.trace.truncated {
                    let _ = writeln!(s, "    {}", c.line());
                }
            }
        }
    }
    if let Some(t) = &r.trace.truncated {
        let _ = writeln!(s, "{}", t.line());
    }
    for d in &r.detectors {
        let noun = if d.warnings_only { "warning" } else { "race" };
        let (n, noun) = match d.deadlocks {
            Some(n) => (n, "deadlock"),
            None => (d.races, noun),
        };
        let plural = if n == 1 { "" } else { "s" };
        let _ = write!(s, "{:>8}: {n} {noun}{plural} in {:.3} s", d.name, d.seconds);
        if d.warnings_only {
            let _ = write!(s, " (lockset is not sound: warnings may be false alarms)");
        }
        if let Some(u) = d.unknown {
            let _ = write!(s, ", {u} undecided");
        }
        if let Some(c) = d.complete {
            let _ = write!(s, ", {}", if c { "complete" } else { "may be incomplete" });
        }
        if let Some(n) = &d.note {
            let _ = write!(s, "; {n}");
        }
        s.push('\n');
    }
    if let Some(o) = &r.omitted {
        let _ = writeln!(s, "{}", o.line());
    }
    if let Some(sup) = &r.suppressed {
        let plural = if sup.count == 1 { "" } else { "s" };
        let _ = writeln!(s, "suppressed: {} race{plural}", sup.count);
        for h in &sup.rules {
            let plural = if h.races == 1 { "" } else { "s" };
            let _ = writeln!(
                s,
                "  {} race{plural} by `{}` ({}:{})",
                h.races, h.rule, h.file, h.line
            );
        }
    }
    if let Some(b) = &r.baseline {
        let _ = writeln!(s, "baseline {}: {} new, {} known", b.file, b.new, b.known);
    }
    s
}

/// One race's block of the text report.
fn race_block(s: &mut String, r: &Report, race: &RaceReport) {
    let only_warnings = r.only_warnings(race);
    let title = if only_warnings {
        "Possible data race (lockset warning)"
    } else {
        "Data race"
    };
    let marker = match race.baseline {
        Some("new") => " [new]",
        Some(_) => " [known]",
        None => "",
    };
    let _ = writeln!(
        s,
        "{title} #{} on {} ({}){marker}",
        race.id, race.variable, race.kind
    );
    for (i, a) in race.accesses.iter().enumerate() {
        let which = if i == 0 { "  " } else { "  and concurrently, " };
        let _ = write!(
            s,
            "{which}{} by thread {} at {}",
            a.op, a.thread, a.location
        );
        if let Some(m) = &a.method {
            let _ = write!(s, " in {m}");
        }
        let _ = writeln!(s, " (event {})", a.event);
        let locks = if a.locks.is_empty() {
            "none".to_owned()
        } else {
            a.locks.join(", ")
        };
        let _ = writeln!(s, "      locks held: {locks}");
        // The top frames; the JSON report has every recorded frame.
        const SHOWN: usize = 6;
        for f in a.stack.iter().take(SHOWN) {
            let _ = writeln!(s, "        at {f}");
        }
        if a.stack.len() > SHOWN {
            let _ = writeln!(s, "        ... {} more", a.stack.len() - SHOWN);
        }
        if let Some(c) = &a.created_at {
            let _ = writeln!(s, "      thread started at {c}");
        }
    }
    let _ = writeln!(
        s,
        "  found by: {}; fingerprint {}",
        race.detectors.join(", "),
        race.fingerprint
    );
    if !race.seen_in.is_empty() {
        const SHOWN: usize = 5;
        let seen: Vec<String> = race
            .seen_in
            .iter()
            .take(SHOWN)
            .map(|t| format!("{} (race #{})", t.trace, t.id))
            .collect();
        let _ = write!(s, "  seen in {} trace", race.seen_in.len());
        if race.seen_in.len() != 1 {
            s.push('s');
        }
        let _ = write!(s, ": {}", seen.join(", "));
        if race.seen_in.len() > SHOWN {
            let _ = write!(s, " and {} more", race.seen_in.len() - SHOWN);
        }
        s.push('\n');
    }
    match &race.witness {
        Some(Some(w)) => {
            let _ = writeln!(
                s,
                "  witness: a schedule of {} events (--format json lists it)",
                w.len()
            );
        }
        Some(None) => {
            let _ = writeln!(s, "  witness: none found");
        }
        None => {}
    }
    s.push('\n');
}

/// The races of a long text report: grouped per variable, sound detectors' races first,
/// at most [`TEXT_RACES_PER_VARIABLE`] blocks per variable and [`TEXT_RACES_SHOWN`] in
/// all, then one line for what was left out.
fn grouped_races(s: &mut String, r: &Report) {
    let mut groups: Vec<(&str, Vec<&RaceReport>)> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for race in &r.races {
        let g = *at.entry(&race.variable).or_insert_with(|| {
            groups.push((&race.variable, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(race);
    }
    // Proven races before lockset warnings; then the variables with most races first.
    for (_, races) in &mut groups {
        races.sort_by_key(|race| (r.only_warnings(race), race.id));
    }
    groups.sort_by_key(|(v, races)| {
        let warnings = races.iter().all(|race| r.only_warnings(race));
        (warnings, std::cmp::Reverse(races.len()), *v)
    });
    let (mut shown, mut left, mut left_vars, mut left_proven) = (0usize, 0usize, 0usize, 0usize);
    for (var, races) in &groups {
        if shown >= TEXT_RACES_SHOWN {
            left += races.len();
            left_vars += 1;
            left_proven += races.iter().filter(|race| !r.only_warnings(race)).count();
            continue;
        }
        for race in races.iter().take(TEXT_RACES_PER_VARIABLE) {
            race_block(s, r, race);
            shown += 1;
        }
        if races.len() > TEXT_RACES_PER_VARIABLE {
            const PAIRS: usize = 5;
            let rest = &races[TEXT_RACES_PER_VARIABLE..];
            let pairs: Vec<String> = rest
                .iter()
                .take(PAIRS)
                .map(|race| {
                    format!(
                        "{} / {}",
                        race.accesses[0].location, race.accesses[1].location
                    )
                })
                .collect();
            let more = if rest.len() > PAIRS { ", ..." } else { "" };
            let _ = writeln!(
                s,
                "... and {} more on {var}: {}{more}\n",
                rest.len(),
                pairs.join(", ")
            );
        }
    }
    let _ = writeln!(
        s,
        "{} races {}; {shown} shown in full above{}. `--format json` lists every race {}.\n",
        r.races.len(),
        if r.omitted.is_some() {
            "described"
        } else {
            "in all"
        },
        if left > 0 {
            format!(
                ", {left} more on {left_vars} other variables not listed ({left_proven} of them \
                 found by a detector other than lockset)"
            )
        } else {
            String::new()
        },
        if r.omitted.is_some() {
            "described"
        } else {
            "reported"
        }
    );
}

/// SARIF 2.1.0: one result per race, with both accesses as locations.
pub fn to_sarif(r: &Report) -> String {
    use serde_json::{json, Value};
    let loc = |a: &AccessReport| -> Value {
        let mut l = json!({
            "message": {"text": format!("{} by thread {} (event {})", a.op, a.thread, a.event)}
        });
        match split_file_line(&a.location) {
            Some((file, line)) => {
                l["physicalLocation"] = json!({
                    "artifactLocation": {"uri": file},
                    "region": {"startLine": line}
                });
            }
            None => {
                l["logicalLocations"] = json!([{"fullyQualifiedName": a.location}]);
            }
        }
        if let Some(m) = &a.method {
            l["logicalLocations"] = json!([{"fullyQualifiedName": m, "kind": "function"}]);
        }
        l
    };
    let mut results: Vec<Value> = r
        .races
        .iter()
        .map(|race| {
            let only_warnings = r.only_warnings(race);
            let [a1, a2] = &race.accesses;
            let mut v = json!({
                "ruleId": if only_warnings { "lockset-warning" } else { "data-race" },
                "level": if only_warnings { "warning" } else { "error" },
                "message": {"text": format!(
                    "Data race on {} ({}): {} by {} at {} and {} by {} at {}; found by {}",
                    race.variable, race.kind, a1.op, a1.thread, a1.location,
                    a2.op, a2.thread, a2.location, race.detectors.join(", "))},
                "locations": [loc(a1), loc(a2)],
                "partialFingerprints": {
                    "jraceRace/v1": race.fingerprint,
                    "raceSignature": format!("{}|{}|{}", race.variable,
                        a1.location.as_str().min(a2.location.as_str()),
                        a1.location.as_str().max(a2.location.as_str()))
                },
                "properties": {"raceId": race.id, "detectors": race.detectors},
            });
            if !race.seen_in.is_empty() {
                v["properties"]["seenIn"] = json!(race.seen_in);
            }
            if let Some(b) = race.baseline {
                v["baselineState"] = json!(if b == "known" { "unchanged" } else { "new" });
            }
            v
        })
        .collect();
    results.extend(
        r.deadlocks
            .iter()
            .flatten()
            .map(crate::report::deadlock::sarif_result),
    );
    // A trace cut short is the run's notification, not a result.
    let mut invocation = json!({"executionSuccessful": true});
    if let Some(sup) = &r.suppressed {
        // Suppressed races are counted, never silently dropped.
        invocation["properties"] = json!({"suppressed": sup.count, "suppressionRules": sup.rules});
    }
    if let Some(o) = &r.omitted {
        invocation["properties"]["omittedRaces"] = json!(o.count);
        invocation["properties"]["omittedByDetector"] = json!(o.by_detector);
    }
    if let Some(t) = &r.trace.truncated {
        invocation["toolExecutionNotifications"] = json!([{
            "level": "warning",
            "descriptor": {"id": "trace-truncated"},
            "message": {"text": t.line()},
            "properties": {"reason": t.reason, "afterEvent": t.after_event, "running": t.running}
        }]);
    }
    let doc = json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": {"driver": {
                "name": "jrace",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": [
                    {"id": "data-race", "shortDescription": {"text": "Predicted data race"},
                     "fullDescription": {"text": "Two conflicting accesses by different threads that some schedule of the program can run back to back."}},
                    {"id": "lockset-warning", "shortDescription": {"text": "Lockset warning"},
                     "fullDescription": {"text": "Conflicting accesses not protected by a common lock; the lockset discipline is not sound, so this may be a false alarm."}},
                    {"id": "deadlock", "shortDescription": {"text": "Predicted deadlock"},
                     "fullDescription": {"text": "Threads that some schedule of the program brings to each hold a lock the next one requests."}}
                ]
            }},
            "invocations": [invocation],
            "results": results
        }]
    });
    serde_json::to_string_pretty(&doc).expect("sarif serializes") + "\n"
}

/// `Account.java:17` → (`Account.java`, 17).
pub(crate) fn split_file_line(loc: &str) -> Option<(&str, u64)> {
    let (f, l) = loc.rsplit_once(':')?;
    let line: u64 = l.parse().ok()?;
    (!f.is_empty() && line > 0).then_some((f, line))
}
