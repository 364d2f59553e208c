//! `jrace record` and `jrace run`: run a Java program under the agent.
//!
//! The agent does the recording; this module only finds `libjrace_agent.so`, builds the
//! `-agentpath:` option (docs/REPORT.md#commands) and runs the program with its standard
//! streams untouched, reporting the program's own exit status.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// What to record, as given on the command line.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct RecordOptions {
    /// Trace directory to create (default: a new directory under ./jrace-traces/).
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Also leave these classes uninstrumented: comma-separated globs (`*` crosses dots),
    /// added to the default java.*,javax.*,jdk.*,sun.*,com.sun.*. May repeat.
    #[arg(long, value_name = "GLOBS", value_delimiter = ',')]
    pub exclude: Vec<String>,
    /// Instrument these classes even though the defaults exclude them. May repeat.
    #[arg(long, value_name = "GLOBS", value_delimiter = ',')]
    pub include: Vec<String>,
    /// Record calls into excluded code as BarrierPairs (for the rdit detector).
    #[arg(long)]
    pub barrier_pairs: bool,
    /// With --barrier-pairs: classes whose static fields excluded code may use to
    /// synchronize (comma-separated dotted names); every BarrierPair's reachable set then
    /// holds them. May repeat.
    #[arg(
        long,
        value_name = "CLASSES",
        value_delimiter = ',',
        requires = "barrier_pairs"
    )]
    pub bp_globals: Vec<String>,
    /// Do not record branch events (smaller, faster traces: about a third fewer events).
    /// The detectors analyze a recording as if every read were followed by a branch
    /// either way; the branches show in `jrace witness` and `jrace convert` output.
    #[arg(long)]
    pub no_branches: bool,
    /// Stop recording (not the program) when the trace reaches this many MB.
    #[arg(long, value_name = "MB")]
    pub max_mb: Option<u64>,
    /// Drop redundant accesses while recording (TREE; agent option `tree=MODE`). MODE `hb`
    /// (the default) keeps every race signature of hb and lockset, `hybrid` and `lockset`
    /// drop more and keep lockset's; no other detector may analyze the trace.
    #[arg(long, value_name = "MODE", num_args = 0..=1, require_equals = true,
          default_missing_value = "hb", value_parser = crate::parse_tree_mode)]
    pub tree: Option<jrace_trace::tree::Mode>,
    /// More agent options, appended as given (`jrace replay`'s `replay=FILE,...`).
    #[arg(skip)]
    pub agent_extra: Option<String>,
}

/// The agent library: next to this executable (also cargo's `deps/`), else `$JRACE_AGENT`.
pub fn agent_path() -> Result<PathBuf> {
    const LIB: &str = "libjrace_agent.so";
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent() {
            // `cargo test` refreshes deps/ without copying the library up: take the newer.
            let newest = [dir.join(LIB), dir.join("deps").join(LIB)]
                .into_iter()
                .filter_map(|c| Some((c.metadata().ok()?.modified().ok()?, c)))
                .max();
            if let Some((_, c)) = newest {
                return Ok(c);
            }
        }
    }
    if let Some(p) = std::env::var_os("JRACE_AGENT") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        bail!("JRACE_AGENT={} is not a file", p.display());
    }
    bail!("cannot find {LIB} next to the jrace executable; set JRACE_AGENT to its path")
}

/// The `-agentpath:` value for these options.
pub fn agent_option(agent: &Path, dir: &Path, o: &RecordOptions) -> Result<String> {
    let dir = dir.to_string_lossy();
    if dir.contains(',') {
        bail!("the trace directory may not contain a comma: {dir}");
    }
    let mut s = format!("-agentpath:{}=out={dir}", agent.display());
    let globs = |v: &[String]| {
        v.iter()
            .map(|g| g.trim())
            .filter(|g| !g.is_empty())
            .collect::<Vec<_>>()
            .join(";")
    };
    if !o.exclude.is_empty() {
        s += &format!(",exclude={}", globs(&o.exclude));
    }
    if !o.include.is_empty() {
        s += &format!(",include={}", globs(&o.include));
    }
    if o.no_branches {
        s += ",branches=0";
    }
    if o.barrier_pairs {
        s += ",barrier=1";
    }
    if !o.bp_globals.is_empty() {
        s += &format!(",bp_globals={}", globs(&o.bp_globals));
    }
    if let Some(mb) = o.max_mb {
        s += &format!(",max_mb={mb}");
    }
    if let Some(m) = o.tree {
        s += &format!(",tree={m}");
    }
    if let Some(extra) = &o.agent_extra {
        s += &format!(",{extra}");
    }
    Ok(s)
}

/// A fresh directory name under ./jrace-traces/.
fn default_dir() -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    PathBuf::from("jrace-traces").join(format!("trace-{secs}-{}", std::process::id()))
}

/// Runs `command` (a `java …` command line) under the agent, recording into the returned
/// directory. A command whose program is not `java` (a launcher script, Maven) gets the
/// agent through `JAVA_TOOL_OPTIONS` instead.
pub fn record(o: &RecordOptions, command: &[String]) -> Result<(PathBuf, ExitStatus)> {
    record_watching(o, command, None)
}

/// [`record`], calling `watch` every 50 ms while the program runs; the program is killed
/// when it returns true (`jrace replay --deadlock` ends a deadlocked JVM).
pub fn record_watching(
    o: &RecordOptions,
    command: &[String],
    watch: Option<&mut dyn FnMut() -> bool>,
) -> Result<(PathBuf, ExitStatus)> {
    let Some((prog, args)) = command.split_first() else {
        bail!("no command to record: expected `-- java [JVM options] MAIN [args]`");
    };
    let dir = o.output.clone().unwrap_or_else(default_dir);
    if dir.join("meta.jrl").exists() {
        bail!(
            "{} already holds a trace; choose another -o DIR",
            dir.display()
        );
    }
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the trace directory {}", dir.display()))?;
    let dir = dir.canonicalize().unwrap_or(dir);
    let agent = agent_path()?;
    let opt = agent_option(&agent, &dir, o)?;
    let is_java = Path::new(prog)
        .file_name()
        .is_some_and(|n| n == "java" || n == "java.exe");
    let mut cmd = Command::new(prog);
    if is_java {
        cmd.arg(&opt).args(args);
    } else {
        let prev = std::env::var("JAVA_TOOL_OPTIONS").unwrap_or_default();
        cmd.args(args)
            .env("JAVA_TOOL_OPTIONS", format!("{prev} {opt}").trim());
    }
    let started = std::time::Instant::now();
    let status = match watch {
        None => cmd
            .status()
            .with_context(|| format!("cannot run `{prog}`"))?,
        Some(watch) => {
            let mut child = cmd
                .spawn()
                .with_context(|| format!("cannot run `{prog}`"))?;
            loop {
                if let Some(st) = child.try_wait()? {
                    break st;
                }
                if watch() {
                    let _ = child.kill();
                    break child.wait()?;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
    };
    let mut log = format!(
        "command: {}\nagent option: {opt}\nexit status: {}\nwall time: {:.3} s\n",
        command.join(" "),
        exit_code(status),
        started.elapsed().as_secs_f64()
    );
    if let Some(m) = o.tree {
        log += &tree_summary(&dir, m);
    }
    let _ = std::fs::write(dir.join("record.log"), log);
    Ok((dir, status))
}

/// The record.log line of a recording made with the TREE filter: what the agent dropped.
fn tree_summary(dir: &Path, mode: jrace_trace::tree::Mode) -> String {
    use jrace_trace::tree::META_DROPPED;
    let dropped = jrace_trace::binlog::TraceReader::open(dir)
        .ok()
        .and_then(|r| r.meta().get(META_DROPPED).cloned());
    match dropped {
        Some(n) => format!("tree filter: mode {mode}, {n} redundant accesses dropped\n"),
        None => format!("tree filter: mode {mode} (the agent recorded no count)\n"),
    }
}

/// The program's exit status as a shell reports it (128+N when killed by signal N).
pub fn exit_code(s: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => c as u8,
        (None, Some(sig)) => 128u8.wrapping_add(sig as u8),
        _ => 1,
    }
}
