//! The written-down truth of the Java harness programs (format: java-harness/README.md).
//!
//! A program states its races and non-races in `//` comment lines:
//!
//! ```text
//! // RACE: families.Fields.flag @flagW @flagR
//! // RACE: families.Monitors.note @noteW @noteR by=wcp,cp,m2,mcm
//! // NORACE: families.Fields.total
//! // NORACE: $state @guardedAdd @guardedGet
//! ```
//!
//! and marks the lines it refers to with a label in a trailing comment (`flag = 1; // @flagW`).
//! [`Truth::parse`] resolves labels to `File.java:LINE`, the location the JSON report uses.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

/// The detectors that must report a race when its line has no `by=`.
/// (`said` is sound but finds fewer races than `mcm`: a race lists it with `by=` when it must.)
pub const DEFAULT_BY: &[&str] = &["hb", "shb", "wcp", "cp", "m2", "mcm"];

/// One `RACE:` line: a race signature (static variable name, unordered pair of locations).
#[derive(Clone, Debug)]
pub struct Race {
    /// The line as written, without the comment leader (`RACE: v @a @b`): a stable key.
    pub spec: String,
    pub variable: String,
    /// `File.java:LINE`, sorted.
    pub locations: [String; 2],
    /// Detectors that must report it.
    pub by: Vec<String>,
}

/// One `NORACE:` line: no race may be reported on `variable` — only on races that involve
/// one of `locations` when the line lists locations.
#[derive(Clone, Debug)]
pub struct NoRace {
    pub spec: String,
    pub variable: String,
    pub locations: Vec<String>,
}

/// A program's truth.
#[derive(Clone, Debug)]
pub struct Truth {
    /// `families.Fields`: the main class (package + file name).
    pub main_class: String,
    /// `Fields.java`.
    pub file: String,
    pub races: Vec<Race>,
    pub noraces: Vec<NoRace>,
}

impl Race {
    /// Whether a reported race (variable, two locations) is this signature.
    pub fn matches(&self, variable: &str, a: &str, b: &str) -> bool {
        let mut l = [a.to_string(), b.to_string()];
        l.sort();
        self.variable == variable && self.locations == l
    }
}

impl NoRace {
    /// Whether a reported race (variable, two locations) breaks this non-race.
    pub fn violated_by(&self, variable: &str, a: &str, b: &str) -> bool {
        self.variable == variable
            && (self.locations.is_empty() || self.locations.iter().any(|l| l == a || l == b))
    }
}

impl Truth {
    /// Whether `text` states any truth (has a `RACE:` line).
    pub fn has_truth(text: &str) -> bool {
        text.lines().any(|l| l.trim_start().starts_with("// RACE:"))
    }

    /// Parses a Java file's truth; `Err` names the line and what is wrong.
    pub fn parse_file(path: &Path) -> Result<Truth, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        Truth::parse(&file, &text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses the truth of the Java source `text` of file `file` (`Fields.java`).
    pub fn parse(file: &str, text: &str) -> Result<Truth, String> {
        let stem = file.strip_suffix(".java").ok_or("not a .java file")?;
        let package = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("package "))
            .map(|p| p.trim_end_matches(';').trim().to_string());
        let main_class = match package {
            Some(p) => format!("{p}.{stem}"),
            None => stem.to_string(),
        };
        // Labels: `@name` tokens in the `//` comment of any other line.
        let mut labels: BTreeMap<String, usize> = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            if is_truth_line(line) {
                continue;
            }
            let Some(pos) = line.find("//") else { continue };
            for tok in line[pos + 2..].split_whitespace() {
                if let Some(name) = tok.strip_prefix('@') {
                    if is_label(name) && labels.insert(name.to_string(), i + 1).is_some() {
                        return Err(format!("line {}: label @{name} defined twice", i + 1));
                    }
                }
            }
        }
        let loc = |tok: &str, n: usize| -> Result<String, String> {
            if let Some(name) = tok.strip_prefix('@') {
                labels
                    .get(name)
                    .map(|l| format!("{file}:{l}"))
                    .ok_or_else(|| format!("line {n}: no line is labelled @{name}"))
            } else if tok.contains(".java:") {
                Ok(tok.to_string())
            } else {
                Err(format!(
                    "line {n}: expected @label or File.java:LINE, found `{tok}`"
                ))
            }
        };
        let mut races = Vec::new();
        let mut noraces = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let t = line.trim_start();
            let Some(body) = t.strip_prefix("//") else {
                continue;
            };
            let body = body.trim();
            if let Some(rest) = body.strip_prefix("RACE:") {
                let toks: Vec<&str> = rest.split_whitespace().collect();
                let (by, toks) = match toks.last() {
                    Some(l) if l.starts_with("by=") => (
                        Some(l[3..].split(',').map(str::to_string).collect::<Vec<_>>()),
                        &toks[..toks.len() - 1],
                    ),
                    _ => (None, &toks[..]),
                };
                if toks.len() != 3 {
                    return Err(format!(
                        "line {n}: expected `RACE: VARIABLE LOC LOC [by=DET,...]`"
                    ));
                }
                let mut locations = [loc(toks[1], n)?, loc(toks[2], n)?];
                locations.sort();
                let by = by.unwrap_or_else(|| DEFAULT_BY.iter().map(|s| s.to_string()).collect());
                if by.iter().any(|d| d.is_empty()) {
                    return Err(format!("line {n}: empty detector name in by="));
                }
                races.push(Race {
                    spec: body.to_string(),
                    variable: toks[0].to_string(),
                    locations,
                    by,
                });
            } else if let Some(rest) = body.strip_prefix("NORACE:") {
                let toks: Vec<&str> = rest.split_whitespace().collect();
                if toks.is_empty() {
                    return Err(format!("line {n}: expected `NORACE: VARIABLE [LOC...]`"));
                }
                let locations = toks[1..]
                    .iter()
                    .map(|t| loc(t, n))
                    .collect::<Result<Vec<_>, _>>()?;
                noraces.push(NoRace {
                    spec: body.to_string(),
                    variable: toks[0].to_string(),
                    locations,
                });
            }
        }
        for r in &races {
            if noraces
                .iter()
                .any(|nr| nr.violated_by(&r.variable, &r.locations[0], &r.locations[1]))
            {
                return Err(format!("`{}` contradicts a NORACE line", r.spec));
            }
        }
        Ok(Truth {
            main_class,
            file: file.to_string(),
            races,
            noraces,
        })
    }

    /// Whether some RACE line names `variable`.
    pub fn race_variable(&self, variable: &str) -> bool {
        self.races.iter().any(|r| r.variable == variable)
    }
}

fn is_truth_line(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("// RACE:") || t.starts_with("// NORACE:")
}

fn is_label(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_labels_and_by() {
        let src = "package p;\n// RACE: p.A.x @w @r by=wcp,m2\n// NORACE: $state @g\nclass A {\n  x = 1; // @w\n  y = x; // @r\n  l.add(1); // @g\n}\n";
        let t = Truth::parse("A.java", src).unwrap();
        assert_eq!(t.main_class, "p.A");
        assert_eq!(t.races[0].locations, ["A.java:5", "A.java:6"]);
        assert_eq!(t.races[0].by, ["wcp", "m2"]);
        assert!(t.races[0].matches("p.A.x", "A.java:6", "A.java:5"));
        assert!(t.noraces[0].violated_by("$state", "A.java:7", "A.java:9"));
        assert!(!t.noraces[0].violated_by("$state", "A.java:8", "A.java:9"));
    }

    #[test]
    fn rejects_unknown_labels() {
        assert!(Truth::parse("A.java", "// RACE: v @a @b\n").is_err());
    }
}
