//! The agent's options (`-agentpath:libjrace_agent.so=out=DIR,exclude=a.*;b.*,...`,
//! docs/REPORT.md#commands) and the class globs that decide what is instrumented.

use jrace_trace::tree::Mode;
use std::path::PathBuf;

/// JDK internals, excluded unless `include=` takes classes back (docs/REPORT.md#commands).
pub const DEFAULT_EXCLUDES: &[&str] = &["java.*", "javax.*", "jdk.*", "sun.*", "com.sun.*"];

/// Default of `bp_budget=` (see [`AgentOptions::bp_budget`]).
pub const BP_DEFAULT_BUDGET: u32 = 10_000;

#[derive(Clone, Debug)]
pub struct AgentOptions {
    /// Trace directory; `%p` is replaced by the process id (one trace per JVM).
    pub out: PathBuf,
    pub exclude: Vec<String>,
    pub include: Vec<String>,
    pub branches: bool,
    pub barrier: bool,
    /// `bp_globals=a.B;c.D`: classes whose statics every BarrierPair may touch (their
    /// dotted names are added to every reachable set).
    pub bp_globals: Vec<String>,
    /// `bp_budget=N`: objects plus reference-array elements one reachable-set walk may
    /// visit before the BarrierPair is widened to every object.
    pub bp_budget: u32,
    /// `bp_walk=1`: compute each reachable set at its call by walking the heap (slow;
    /// the default logs roots and snapshots, expanded by the reader).
    pub bp_walk: bool,
    /// `tree=MODE` (`1` is `hb`): drop redundant accesses while recording (TREE, see
    /// [`jrace_trace::tree`]).
    pub tree: Option<Mode>,
    /// Stop recording (not the program) when the trace reaches this many bytes.
    pub max_bytes: Option<u64>,
    /// `verbose=1`: log every class the hook sees to DIR/agent.log.
    pub verbose: bool,
    /// `replay=FILE`: gate threads to follow this schedule (see [`crate::replay`]).
    pub replay: Option<PathBuf>,
    /// `replay_timeout=SECS`: when replay gives up gating (default 10).
    pub replay_timeout: f64,
}

impl AgentOptions {
    /// Parses the option string; `Err` says which option is wrong and what was expected.
    pub fn parse(s: &str) -> Result<AgentOptions, String> {
        let mut o = AgentOptions {
            out: PathBuf::new(),
            exclude: DEFAULT_EXCLUDES.iter().map(|s| s.to_string()).collect(),
            include: Vec::new(),
            branches: true,
            barrier: false,
            bp_globals: Vec::new(),
            bp_budget: BP_DEFAULT_BUDGET,
            bp_walk: false,
            tree: None,
            max_bytes: None,
            verbose: false,
            replay: None,
            replay_timeout: 10.0,
        };
        let mut out = None;
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("option `{part}`: expected KEY=VALUE"))?;
            let flag = |v: &str| match v {
                "1" | "true" | "yes" | "on" => Ok(true),
                "0" | "false" | "no" | "off" => Ok(false),
                _ => Err(format!("option `{k}`: expected 0 or 1, found `{v}`")),
            };
            match k.trim() {
                "out" => out = Some(PathBuf::from(v)),
                "exclude" => o.exclude.extend(globs(v)),
                "include" => o.include.extend(globs(v)),
                "branches" => o.branches = flag(v)?,
                "barrier" => o.barrier = flag(v)?,
                "bp_globals" => o.bp_globals.extend(globs(v)),
                "bp_walk" => o.bp_walk = flag(v)?,
                "bp_budget" => {
                    o.bp_budget = v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        format!("option `bp_budget`: expected a positive number, found `{v}`")
                    })?;
                }
                "tree" => {
                    o.tree = match Mode::parse(v) {
                        Some(m) => Some(m),
                        None => flag(v)
                            .map_err(|_| {
                                format!(
                                    "option `tree`: expected hb, hybrid, lockset, 1 (hb) or 0, found `{v}`"
                                )
                            })?
                            .then_some(Mode::Hb),
                    }
                }
                "verbose" => o.verbose = flag(v)?,
                "replay" => o.replay = Some(PathBuf::from(v)),
                "replay_timeout" => {
                    o.replay_timeout = v
                        .parse::<f64>()
                        .ok()
                        .filter(|t| *t >= 0.0 && t.is_finite())
                        .ok_or_else(|| {
                            format!("option `replay_timeout`: expected seconds, found `{v}`")
                        })?;
                }
                "max_mb" => {
                    let mb: u64 = v
                        .parse()
                        .map_err(|_| format!("option `max_mb`: expected a number, found `{v}`"))?;
                    o.max_bytes = Some(mb.saturating_mul(1 << 20));
                }
                _ => {
                    return Err(format!(
                        "unknown option `{k}` (expected out, exclude, include, branches, barrier, bp_globals, bp_budget, bp_walk, tree, max_mb, verbose, replay or replay_timeout)"
                    ))
                }
            }
        }
        o.out = out.ok_or("missing option out=DIR (where to write the trace)")?;
        if !o.bp_globals.is_empty() && !o.barrier {
            return Err("option bp_globals= needs barrier=1".into());
        }
        Ok(o)
    }

    /// Whether the class with this internal name (`a/b/C`) is instrumented.
    pub fn instruments(&self, internal_name: &str) -> bool {
        if internal_name.starts_with("jrace/") || internal_name == "java/lang/Object" {
            return false;
        }
        let dotted = internal_name.replace('/', ".");
        if self.include.iter().any(|g| glob_match(g, &dotted)) {
            return true;
        }
        !self.exclude.iter().any(|g| glob_match(g, &dotted))
    }
}

fn globs(v: &str) -> impl Iterator<Item = String> + '_ {
    v.split(';')
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .map(String::from)
}

/// `*` matches any run of characters (dots included); everything else matches itself.
pub fn glob_match(glob: &str, s: &str) -> bool {
    let (g, s) = (glob.as_bytes(), s.as_bytes());
    let (mut gi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if gi < g.len() && g[gi] == b'*' {
            star = Some((gi, si));
            gi += 1;
        } else if gi < g.len() && g[gi] == s[si] {
            gi += 1;
            si += 1;
        } else if let Some((sg, ss)) = star {
            gi = sg + 1;
            si = ss + 1;
            star = Some((sg, ss + 1));
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_cross_dots() {
        assert!(glob_match("java.*", "java.util.HashMap"));
        assert!(glob_match("*Test", "a.b.FooTest"));
        assert!(!glob_match("java.*", "javax.swing.JFrame"));
        assert!(glob_match("a.*.C", "a.b.c.C"));
        assert!(glob_match("Main", "Main"));
        assert!(!glob_match("Main", "Main$1"));
    }

    #[test]
    fn parses_options() {
        let o = AgentOptions::parse("out=/tmp/t,exclude=org.foo.*;com.bar.*,branches=0,max_mb=5")
            .unwrap();
        assert_eq!(o.out, PathBuf::from("/tmp/t"));
        assert!(!o.branches);
        assert!(!o.instruments("org/foo/X"));
        assert!(!o.instruments("java/util/HashMap"));
        assert!(o.instruments("demo/Bank"));
        assert_eq!(o.max_bytes, Some(5 << 20));
        let o = AgentOptions::parse("out=d,include=java.util.concurrent.*").unwrap();
        assert!(o.instruments("java/util/concurrent/FutureTask"));
        assert!(AgentOptions::parse("exclude=x")
            .unwrap_err()
            .contains("out=DIR"));
        assert!(AgentOptions::parse("out=d,bogus=1")
            .unwrap_err()
            .contains("bogus"));
        assert!(AgentOptions::parse("out=d,branches=maybe").is_err());
        let o = AgentOptions::parse("out=d,replay=/tmp/s.tsv,replay_timeout=2.5").unwrap();
        assert_eq!(o.replay, Some(PathBuf::from("/tmp/s.tsv")));
        assert_eq!(o.replay_timeout, 2.5);
        assert!(AgentOptions::parse("out=d,replay_timeout=soon").is_err());
        for (v, m) in [
            ("1", Some(Mode::Hb)),
            ("hb", Some(Mode::Hb)),
            ("lockset", Some(Mode::Lockset)),
            ("hybrid", Some(Mode::Hybrid)),
            ("0", None),
        ] {
            assert_eq!(
                AgentOptions::parse(&format!("out=d,tree={v}"))
                    .unwrap()
                    .tree,
                m
            );
        }
        assert!(AgentOptions::parse("out=d,tree=wcp")
            .unwrap_err()
            .contains("expected hb, hybrid, lockset"));
    }

    #[test]
    fn parses_barrier_options() {
        let o = AgentOptions::parse("out=d,barrier=1,bp_globals=a.Lib;b.C,bp_budget=50").unwrap();
        assert!(o.barrier);
        assert_eq!(o.bp_globals, ["a.Lib", "b.C"]);
        assert_eq!(o.bp_budget, 50);
        let o = AgentOptions::parse("out=d").unwrap();
        assert!(!o.barrier && o.bp_globals.is_empty());
        assert_eq!(o.bp_budget, BP_DEFAULT_BUDGET);
        assert!(AgentOptions::parse("out=d,bp_globals=a.Lib")
            .unwrap_err()
            .contains("barrier=1"));
        assert!(AgentOptions::parse("out=d,barrier=1,bp_budget=0").is_err());
    }
}
