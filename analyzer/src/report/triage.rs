//! Triage of a report for a team that runs jrace on every commit (docs/REPORT.md#ci):
//! a fingerprint per race that survives re-runs, suppressions for the races a team
//! accepts, and a baseline of the races an earlier report already showed.
//!
//! A fingerprint names what stays the same from run to run: the race's signature, that
//! is the variable's static name (`demo.Bank.balance`, `java.lang.Object[]`) and the two
//! accesses' locations and methods, in sorted order. It leaves out what changes with the
//! schedule: object ids, event numbers, thread names, which access came first, and even
//! the two operations: a signature stands for every racing pair of its two locations,
//! and which pair represents it can change from run to run (`hits++` reads and writes on
//! one line: write-read in one run, write-write in the next).
//!
//! Suppressed races are taken out of the report's race list but never silently: the report
//! counts them per rule (`suppressed` in JSON, a line in the text report).

use crate::report::{AccessReport, RaceReport, Report};
use serde::Serialize;
use std::collections::HashSet;
use std::path::Path;

/// The fingerprint of a race: 16 hex digits (FNV-1a, 64 bits) of its stable parts.
pub fn fingerprint(race: &RaceReport) -> String {
    let [a, b] = &race.accesses;
    fingerprint_of(
        &race.variable,
        [
            access_key(&a.location, a.method.as_deref()),
            access_key(&b.location, b.method.as_deref()),
        ],
    )
}

fn access_key(location: &str, method: Option<&str>) -> String {
    format!("{location}\u{1}{}", method.unwrap_or(""))
}

fn fingerprint_of(variable: &str, mut accesses: [String; 2]) -> String {
    accesses.sort();
    fnv_fingerprint(&["v1", variable, &accesses[0], &accesses[1]])
}

/// 16 hex digits of FNV-1a 64 over `parts`, each ended by a zero byte: a fixed,
/// documented function (std's hasher may change between releases, and fingerprints are
/// compared across jrace versions).
pub fn fnv_fingerprint(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &byte in part.as_bytes().iter().chain(&[0u8]) {
            h ^= byte as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// Sets [`RaceReport::fingerprint`] on every race.
pub fn add_fingerprints(report: &mut Report) {
    for r in &mut report.races {
        r.fingerprint = fingerprint(r);
    }
}

/// What a suppression rule matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    /// The variable's static name.
    Race,
    /// Either access's location (`Bank.java:12`) or method (`demo.Bank.transfer`).
    Location,
    /// Either access's thread name.
    Thread,
    /// The race's fingerprint, exactly.
    Fingerprint,
}

#[derive(Clone, Debug)]
struct Rule {
    field: Field,
    pattern: String,
    /// Where it was written, for the report and for errors.
    file: String,
    line: usize,
}

/// Rules loaded from suppression files.
#[derive(Clone, Debug, Default)]
pub struct Suppressions {
    rules: Vec<Rule>,
}

/// How many races one rule suppressed (JSON `suppressed.rules[]`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct RuleHits {
    pub file: String,
    pub line: usize,
    pub rule: String,
    pub races: usize,
}

/// The races suppressions took out of a report.
#[derive(Clone, Debug, Serialize, Default)]
pub struct Suppressed {
    pub count: usize,
    /// The rules that matched at least one race, in file order.
    pub rules: Vec<RuleHits>,
}

impl Suppressions {
    /// Parses a suppression file's text; `file` names it in errors, which say the line and
    /// what was expected.
    pub fn parse(text: &str, file: &str) -> Result<Suppressions, String> {
        let mut rules = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = || format!("{file}:{}", i + 1);
            let Some((kind, pattern)) = line.split_once(':') else {
                return Err(format!(
                    "{}: expected KIND:PATTERN (race:, location:, thread: or fingerprint:), found `{line}`",
                    at()
                ));
            };
            let field = match kind.trim() {
                "race" => Field::Race,
                "location" => Field::Location,
                "thread" => Field::Thread,
                "fingerprint" => Field::Fingerprint,
                k => {
                    return Err(format!(
                        "{}: expected race:, location:, thread: or fingerprint:, found `{k}:`",
                        at()
                    ))
                }
            };
            let pattern = pattern.trim();
            if pattern.is_empty() {
                return Err(format!(
                    "{}: expected a pattern after `{}:`",
                    at(),
                    kind.trim()
                ));
            }
            if field == Field::Fingerprint
                && !(pattern.len() == 16 && pattern.bytes().all(|b| b.is_ascii_hexdigit()))
            {
                return Err(format!(
                    "{}: expected a fingerprint of 16 hex digits (as in the JSON report), found `{pattern}`",
                    at()
                ));
            }
            rules.push(Rule {
                field,
                pattern: pattern.to_string(),
                file: file.to_string(),
                line: i + 1,
            });
        }
        Ok(Suppressions { rules })
    }

    /// Reads and parses each file, in order.
    pub fn load(paths: &[impl AsRef<Path>]) -> Result<Suppressions, String> {
        let mut all = Suppressions::default();
        for p in paths {
            let p = p.as_ref();
            let text = std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read suppression file {}: {e}", p.display()))?;
            all.rules
                .extend(Suppressions::parse(&text, &p.display().to_string())?.rules);
        }
        Ok(all)
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The first rule that matches `race`.
    fn matching(&self, race: &RaceReport) -> Option<usize> {
        self.rules.iter().position(|r| {
            let any = |f: &dyn Fn(&AccessReport) -> bool| race.accesses.iter().any(f);
            match r.field {
                Field::Race => glob_match(&r.pattern, &race.variable),
                Field::Location => any(&|a| {
                    glob_match(&r.pattern, &a.location)
                        || a.method
                            .as_deref()
                            .is_some_and(|m| glob_match(&r.pattern, m))
                }),
                Field::Thread => any(&|a| glob_match(&r.pattern, &a.thread)),
                Field::Fingerprint => r.pattern.eq_ignore_ascii_case(&race.fingerprint),
            }
        })
    }

    /// Takes the races some rule matches out of `report`, counts them in
    /// `report.suppressed` and recounts each detector's races. Race ids are kept (`jrace
    /// witness --race ID` and `jrace replay --race ID` still name the same race).
    pub fn apply(&self, report: &mut Report) {
        let mut hits = vec![0usize; self.rules.len()];
        let before = report.races.len();
        report.races.retain(|race| match self.matching(race) {
            Some(i) => {
                hits[i] += 1;
                false
            }
            None => true,
        });
        let mut s = Suppressed {
            count: before - report.races.len(),
            rules: Vec::new(),
        };
        for (r, n) in self.rules.iter().zip(hits) {
            if n > 0 {
                s.rules.push(RuleHits {
                    file: r.file.clone(),
                    line: r.line,
                    rule: format!("{}:{}", field_name(r.field), r.pattern),
                    races: n,
                });
            }
        }
        report.recount_detector_races();
        report.suppressed = Some(s);
    }
}

fn field_name(f: Field) -> &'static str {
    match f {
        Field::Race => "race",
        Field::Location => "location",
        Field::Thread => "thread",
        Field::Fingerprint => "fingerprint",
    }
}

/// `*` matches any run of characters (dots and slashes too), `?` any one character;
/// everything else stands for itself (so `java.lang.Object[]` needs no escaping).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    // The last `*` seen and the text position it was tried at (classic backtracking glob).
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == t[ti])) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The fingerprints of an earlier JSON report (`--baseline`).
#[derive(Clone, Debug, Default)]
pub struct Baseline {
    pub file: String,
    fingerprints: HashSet<String>,
}

/// How a report compares with its baseline (JSON `baseline`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct BaselineSummary {
    pub file: String,
    pub new: usize,
    pub known: usize,
}

impl Baseline {
    /// Reads a JSON report written by `jrace analyze --format json` (by this or an older
    /// version: a race without a `fingerprint` field gets it computed from its variable and
    /// accesses).
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read baseline {}: {e}", path.display()))?;
        Baseline::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, file: &str) -> Result<Baseline, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            format!("baseline {file}: expected a jrace JSON report (--format json): {e}")
        })?;
        let races = v.get("races").and_then(|r| r.as_array()).ok_or_else(|| {
            format!("baseline {file}: expected a jrace JSON report with a `races` array")
        })?;
        let mut fingerprints = HashSet::new();
        for (i, r) in races.iter().enumerate() {
            let fp = match r.get("fingerprint").and_then(|f| f.as_str()) {
                Some(f) => f.to_ascii_lowercase(),
                None => fingerprint_from_json(r).ok_or_else(|| {
                    format!(
                        "baseline {file}: race {} (the {}th in `races`) has neither a \
                         `fingerprint` nor a `variable` and two `accesses` with a `location`",
                        r.get("id")
                            .map(|i| i.to_string())
                            .unwrap_or_else(|| "?".into()),
                        i + 1
                    )
                })?,
            };
            fingerprints.insert(fp);
        }
        Ok(Baseline {
            file: file.to_string(),
            fingerprints,
        })
    }

    /// Marks each race `new` or `known` and records the counts in `report.baseline`.
    pub fn apply(&self, report: &mut Report) {
        let mut s = BaselineSummary {
            file: self.file.clone(),
            new: 0,
            known: 0,
        };
        for r in &mut report.races {
            let known = self.fingerprints.contains(&r.fingerprint);
            if known {
                s.known += 1;
            } else {
                s.new += 1;
            }
            r.baseline = Some(if known { "known" } else { "new" });
        }
        report.baseline = Some(s);
    }
}

fn fingerprint_from_json(r: &serde_json::Value) -> Option<String> {
    let variable = r.get("variable")?.as_str()?;
    let acc = r.get("accesses")?.as_array()?;
    if acc.len() != 2 {
        return None;
    }
    let key = |a: &serde_json::Value| -> Option<String> {
        Some(access_key(
            a.get("location")?.as_str()?,
            a.get("method").and_then(|m| m.as_str()),
        ))
    };
    Some(fingerprint_of(variable, [key(&acc[0])?, key(&acc[1])?]))
}

/// The races `--fail-on-race` fails on: all of them, or with a baseline the new ones.
pub fn failing_races(report: &Report) -> usize {
    let shown = report
        .races
        .iter()
        .filter(|r| r.baseline != Some("known"))
        .count();
    // Races left out by --max-races were never matched against rules or the baseline.
    // A predicted deadlock fails a build like a race.
    shown
        + report.omitted.as_ref().map_or(0, |o| o.count)
        + report.deadlocks.as_ref().map_or(0, Vec::len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{DetectorSummary, TraceSummary};

    fn access(
        op: &'static str,
        thread: &str,
        location: &str,
        method: &str,
        event: u64,
    ) -> AccessReport {
        AccessReport {
            thread: thread.into(),
            op,
            location: location.into(),
            method: Some(method.into()),
            event,
            locks: vec![],
            stack: vec![],
            created_at: None,
        }
    }

    fn race(id: u64, variable: &str, a: AccessReport, b: AccessReport) -> RaceReport {
        let mut r = RaceReport {
            id,
            variable: variable.into(),
            kind: format!("{}-{}", a.op, b.op),
            accesses: [a, b],
            detectors: vec!["hb"],
            witness: None,
            fingerprint: String::new(),
            baseline: None,
            seen_in: vec![],
        };
        r.fingerprint = fingerprint(&r);
        r
    }

    fn report(races: Vec<RaceReport>) -> Report {
        Report {
            version: 1,
            trace: TraceSummary {
                events: 10,
                threads: 2,
                variables: 1,
                locks: 0,
                truncated: None,
            },
            detectors: vec![DetectorSummary {
                name: "hb",
                races: races.len(),
                seconds: 0.0,
                unknown: None,
                complete: None,
                warnings_only: false,
                note: None,
                deadlocks: None,
            }],
            races,
            suppressed: None,
            omitted: None,
            baseline: None,
            traces: None,
            deadlocks: None,
        }
    }

    fn bank() -> Vec<RaceReport> {
        vec![
            race(
                1,
                "demo.Bank.balance",
                access("write", "Thread-1", "Bank.java:20", "demo.Bank.deposit", 17),
                access("read", "Thread-2", "Bank.java:31", "demo.Bank.audit", 40),
            ),
            race(
                2,
                "java.lang.Object[]",
                access("write", "worker-3", "Cache.java:8", "demo.Cache.put", 50),
                access("write", "worker-4", "Cache.java:8", "demo.Cache.put", 61),
            ),
        ]
    }

    /// What varies with the schedule (threads, events, which access comes first, which
    /// operations represent the signature) leaves the fingerprint alone; what names the
    /// race (variable, locations) changes it.
    #[test]
    fn fingerprints_ignore_the_schedule() {
        let r = &bank()[0];
        let swapped = race(
            9,
            "demo.Bank.balance",
            access("read", "pool-7", "Bank.java:31", "demo.Bank.audit", 4),
            access("write", "main", "Bank.java:20", "demo.Bank.deposit", 3),
        );
        assert_eq!(r.fingerprint, swapped.fingerprint);
        assert_eq!(r.fingerprint.len(), 16);
        let moved = race(
            1,
            "demo.Bank.balance",
            access("write", "Thread-1", "Bank.java:21", "demo.Bank.deposit", 17),
            access("read", "Thread-2", "Bank.java:31", "demo.Bank.audit", 40),
        );
        assert_ne!(r.fingerprint, moved.fingerprint);
        let other_kind = race(
            1,
            "demo.Bank.balance",
            access("write", "Thread-1", "Bank.java:20", "demo.Bank.deposit", 17),
            access("write", "Thread-2", "Bank.java:31", "demo.Bank.audit", 40),
        );
        assert_eq!(r.fingerprint, other_kind.fingerprint);
        // A fixed function: the same input gives the same digits in every version.
        assert_eq!(r.fingerprint, fingerprint(&bank()[0]));
        assert_eq!(
            fingerprint_of("x", ["a".into(), "b".into()]),
            "4bf3a6fcfc797b23"
        );
    }

    #[test]
    fn globs_match_dotted_names_and_brackets_literally() {
        assert!(glob_match("demo.Bank.*", "demo.Bank.balance"));
        assert!(glob_match("*.balance", "demo.Bank.balance"));
        assert!(glob_match("java.lang.Object[]", "java.lang.Object[]"));
        assert!(glob_match("Bank.java:2?", "Bank.java:20"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "aXXbYYbc"));
        assert!(!glob_match("demo.Bank.*", "demo.Bankx"));
        assert!(!glob_match("Bank.java:2?", "Bank.java:200"));
        assert!(!glob_match("", "x"));
    }

    #[test]
    fn suppressions_take_races_out_and_count_them() {
        let s = Suppressions::parse(
            "# accepted races\n\nrace: java.lang.Object[]\nthread:nobody-*\nlocation:demo.Bank.audit\n",
            "team.supp",
        )
        .unwrap();
        let mut rep = report(bank());
        s.apply(&mut rep);
        assert!(rep.races.is_empty());
        let sup = rep.suppressed.as_ref().unwrap();
        assert_eq!(sup.count, 2);
        assert_eq!(
            sup.rules,
            [
                RuleHits {
                    file: "team.supp".into(),
                    line: 3,
                    rule: "race:java.lang.Object[]".into(),
                    races: 1
                },
                RuleHits {
                    file: "team.supp".into(),
                    line: 5,
                    rule: "location:demo.Bank.audit".into(),
                    races: 1
                }
            ]
        );
        assert_eq!(rep.detectors[0].races, 0);
        assert_eq!(failing_races(&rep), 0);

        // By thread, by location token and by fingerprint; ids are kept.
        for rule in [
            "thread:worker-*".to_string(),
            "location:Cache.java:*".to_string(),
            format!("fingerprint:{}", bank()[1].fingerprint.to_uppercase()),
        ] {
            let mut rep = report(bank());
            Suppressions::parse(&rule, "f").unwrap().apply(&mut rep);
            assert_eq!(rep.races.len(), 1, "{rule}");
            assert_eq!(rep.races[0].id, 1, "{rule}");
            assert_eq!(rep.detectors[0].races, 1);
        }
    }

    #[test]
    fn a_bad_suppression_line_names_file_line_and_what_was_expected() {
        for (text, line, wanted) in [
            ("race:x\nrace x\n", 2, "expected KIND:PATTERN"),
            ("# c\nvariable:x\n", 2, "found `variable:`"),
            ("thread:   \n", 1, "expected a pattern after `thread:`"),
            ("fingerprint:1234\n", 1, "16 hex digits"),
        ] {
            let e = Suppressions::parse(text, "ci/jrace.supp").unwrap_err();
            assert!(e.starts_with(&format!("ci/jrace.supp:{line}: ")), "{e}");
            assert!(e.contains(wanted), "{e}");
        }
    }

    /// A baseline marks the races it has as known and the others as new; `--fail-on-race`
    /// then counts only the new ones. An older report without fingerprints works too.
    #[test]
    fn baselines_mark_known_and_new_races() {
        let old = report(vec![bank().remove(0)]);
        let json = crate::report::to_json(&old);
        let b = Baseline::parse(&json, "old.json").unwrap();
        let mut rep = report(bank());
        b.apply(&mut rep);
        assert_eq!(rep.races[0].baseline, Some("known"));
        assert_eq!(rep.races[1].baseline, Some("new"));
        assert_eq!(
            rep.baseline,
            Some(BaselineSummary {
                file: "old.json".into(),
                new: 1,
                known: 1
            })
        );
        assert_eq!(failing_races(&rep), 1);

        let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
        v["races"][0].as_object_mut().unwrap().remove("fingerprint");
        let b = Baseline::parse(&v.to_string(), "older.json").unwrap();
        let mut rep = report(bank());
        b.apply(&mut rep);
        assert_eq!(rep.races[0].baseline, Some("known"));

        for bad in ["{", "{\"races\": 3}", "{\"races\": [{\"id\": 1}]}"] {
            let e = Baseline::parse(bad, "b.json").unwrap_err();
            assert!(e.starts_with("baseline b.json: "), "{e}");
        }
    }
}
