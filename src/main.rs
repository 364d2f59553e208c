//! `jrace`: the command line. Parses arguments, opens traces, runs the analyzer and
//! prints reports; everything else lives in the `trace` and `analyzer` crates.
//!
//! Size: most of this file is the clap definitions and their help text (what `--help`
//! teaches); each command's work is a module of its own.
//!
//! Exit status (docs/REPORT.md#exit-status): 0 analysis finished, 1 races found with
//! `--fail-on-race`, 2 bad usage or bad input.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use jrace_analyzer::report::{self, deadlock as report_deadlock, html as report_html, triage};
use jrace_analyzer::{engine, pipeline, registry, witness, witness_view};
use jrace_trace::tree::{self, Mode};
use jrace_trace::EventSource;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod convert;
mod demo;
mod record;
mod replay;
mod stats;

#[derive(Parser)]
#[command(
    name = "jrace",
    version,
    about = "Predict the data races another schedule of a Java program would hit",
    long_about = "jrace predicts data races from one recorded run of a Java program: it reports \
pairs of conflicting accesses that some other schedule of the same program can run back to \
back, using detectors that range from fast vector clocks (hb, shb, wcp, cp) to lockset warnings.\n\n\
A trace is either a `.std` text file (RAPID's format plus jrace's extensions: one \
`THREAD|OP|LOCATION` line per event) or a trace directory written by jrace's recorder.",
    after_help = "Examples:\n  jrace demo\n  jrace analyze run.std\n  jrace analyze run.std -d hb,shb,wcp,cp,lockset --format json\n  jrace analyze traces/ --format html -o report.html\n  jrace stats run.std\n  jrace convert run.std --to bin -o run.trace\n\nExit status: 0 analysis finished (races or not), 1 races found with --fail-on-race, 2 bad usage or bad input."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyze a trace and report predicted races.
    #[command(after_help = DETECTOR_HELP)]
    Analyze(AnalyzeArgs),
    /// Print what a trace contains: events by kind, threads, variables, locks.
    Stats {
        /// A `.std` file or a trace directory.
        trace: PathBuf,
    },
    /// Convert a trace between the `.std` text format and the binary trace directory.
    Convert {
        /// A `.std` file or a trace directory.
        trace: PathBuf,
        /// Output format.
        #[arg(long, value_enum)]
        to: ConvertTo,
        /// Output file (`std`) or directory (`bin`).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Run a Java program under the recording agent, writing a trace directory.
    #[command(after_help = RECORD_HELP)]
    Record {
        #[command(flatten)]
        record: record::RecordOptions,
        /// The program: `java [JVM options] MAIN|-jar JAR [args]`, after `--`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Record a Java program, then analyze its trace (record's and analyze's options).
    #[command(after_help = DETECTOR_HELP)]
    Run(RunArgs),
    /// Record a bundled racy Java program (falls back to its recorded trace without a JVM)
    /// and print the report.
    Demo,
    /// Show the witness schedule of one race: per-thread columns, locks held, the prefix
    /// run as recorded elided, where the schedule departs from the recording, the race.
    #[command(after_help = WITNESS_HELP)]
    Witness(WitnessArgs),
    /// Run the program again under the agent, holding its threads to follow one race's
    /// witness, and say whether the two accesses ran back to back.
    #[command(after_help = replay::REPLAY_HELP)]
    Replay(replay::ReplayArgs),
}

const WITNESS_HELP: &str = "The trace is analyzed as by `jrace analyze --witness` with the same \
detectors, so race ids match analyze's report for the same -d.\n\n\
Text view: `>>` marks the two racing rows, `^` a row that runs before an event recorded \
earlier (it overtakes), and a `--` line the point where the schedule departs from the \
recorded order. Each cell holds the thread's op and the locks it holds after it; `~` marks a \
read that gets its value from another write than in the recording (mcm's and said's \
witnesses may need that), explained below the table. With more \
than 8 threads, the racing threads keep their columns and the rest share one `others` \
column. Colour only when standard output is a terminal and NO_COLOR is unset.\n\n\
The schedule is in canonical form: of the orders that keep every two dependent events \
(same thread, same lock, same variable with a write) as the witness found them, the one \
that runs the earliest recorded event first, so it follows the recording as long as it can.\n\n\
With --deadlock ID (a deadlock of `jrace analyze -d deadlock`), the view shows the schedule \
that reaches the deadlock and ends with one `>>` row per thread of the cycle: the request \
it blocks on.\n\n\
Examples:\n  jrace witness examples/bank.std --race 2\n  jrace witness examples/bank.std --race 2 --context 5 --wide\n  jrace witness examples/bank.std --race 2 --minimize\n  jrace witness examples/bank.std --race 2 --html race2.html";

#[derive(clap::Args)]
struct WitnessArgs {
    /// A `.std` file or a trace directory written by the recorder.
    trace: PathBuf,
    /// The race id, as in `jrace analyze`'s report with the same detectors.
    #[arg(
        long,
        value_name = "ID",
        required_unless_present = "deadlock",
        conflicts_with = "deadlock"
    )]
    race: Option<u64>,
    /// Show a predicted deadlock's schedule instead: its id in `jrace analyze -d deadlock`.
    #[arg(long, value_name = "ID")]
    deadlock: Option<u64>,
    /// Comma-separated detectors, or `all` (the same default as `analyze`).
    #[arg(short, long, value_delimiter = ',', default_value = "hb,shb,wcp")]
    detectors: Vec<String>,
    /// Also write the view as one self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Show the last K events of the elided as-recorded prefix as rows.
    #[arg(long, value_name = "K", default_value_t = 0)]
    context: usize,
    /// Do not cut cells at 32 characters.
    #[arg(long)]
    wide: bool,
    /// Keep only the events the race needs: the two accesses, what their threads ran
    /// before them, and recursively the writers of those reads, the previous holders of
    /// those locks, the notifies, forks and joined threads they depend on. Events of the
    /// recording the race does not need are left out, so less of it is elided; the
    /// result is checked like any other witness.
    #[arg(long)]
    minimize: bool,
}

/// `--tree=MODE`: `hb`, `hybrid` or `lockset`.
fn parse_tree_mode(s: &str) -> std::result::Result<Mode, String> {
    Mode::parse(s).ok_or_else(|| format!("expected hb, hybrid or lockset, found `{s}`"))
}

const DETECTOR_HELP: &str = "Detectors (-d):\n  hb       happens-before with vector clocks; sound for the first race only\n  shb      schedulable happens-before; every race it reports is real\n  m2       M2; every race it reports is real; complete for 2 threads and says\n           when it is complete; about 3x hb's time on two cores\n  wcp      weak causal precedence; finds races hb misses by reordering critical sections\n  cp       causally-precedes; between hb and wcp\n  lockset  Eraser's lockset; warnings only, not sound\n  mcm      maximal causal model (z3): every race is real; on a .std trace with branches it\n           finds every race any sound detector can from it, within its windows\n  said     whole-trace read-write consistency (z3): every race is real; fewer than mcm\n  rdit     mcm for traces recorded with --barrier-pairs: a call into excluded code orders\n           only events on the objects it can reach (mcm and said order everything around\n           it); every race is real if excluded code touches nothing else\n  deadlock predicted deadlocks, not races: lock-order cycles that a reordering of the run\n           reaches (sync-preserving closure; z3 for two threads); every deadlock is real\n           and has a validated schedule (`jrace witness --deadlock`, `jrace replay\n           --deadlock`)\n  all      every detector above\nDefault: hb,shb,wcp.\n\nTREE (--tree[=MODE], or a trace recorded with `jrace record --tree`): redundant accesses\nare dropped; only hb and lockset (mode hb) or lockset (modes hybrid, lockset) may read\nsuch a trace, and they report the same race signatures as on the whole trace.\n\nWith --witness, each race carries a schedule that makes its two accesses adjacent, checked\nagainst the trace's rules (locks, fork/join, wait/notify, every read keeps its writer), or\nnull when none is found.";

const RECORD_HELP: &str = "The program's standard streams pass through untouched; jrace prints \
nothing of its own (DIR/record.log has the summary, DIR/agent.log the agent's messages). \
The exit status is the program's (128+N when it is killed by signal N); 2 only for jrace's \
own usage errors.\n\n\
The agent can also be loaded by hand:\n  java -agentpath:/path/to/libjrace_agent.so=out=DIR[,exclude=a.*;b.*][,include=..][,branches=0][,tree=hb] ...\n\n\
Examples:\n  jrace record -o bank.trace -- java -cp classes demo.Bank\n  jrace record --exclude 'org.apache.derby.*' -- java -jar app.jar\n  jrace analyze bank.trace";

#[derive(clap::Args)]
struct RunArgs {
    #[command(flatten)]
    record: record::RecordOptions,
    /// Comma-separated detectors, or `all`. Default: hb,shb,wcp; with --tree, the
    /// detectors a filtered trace allows.
    #[arg(short, long, value_delimiter = ',', long_help = detectors_help(
        "Default: hb,shb,wcp; with --tree, the detectors a filtered trace allows."))]
    detectors: Option<Vec<String>>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Exit with status 1 when any race or deadlock is reported (with --baseline: any
    /// new race; suppressed races never count).
    #[arg(long)]
    fail_on_race: bool,
    /// Attach a validated witness schedule to each race.
    #[arg(long)]
    witness: bool,
    #[command(flatten)]
    solver: SolverArgs,
    #[command(flatten)]
    triage: TriageArgs,
    /// The program: `java [JVM options] MAIN|-jar JAR [args]`, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(clap::Args)]
struct AnalyzeArgs {
    /// A `.std` file or a trace directory written by the recorder. Several traces, or a
    /// directory of trace directories (as `out=DIR/%p` writes, one per JVM), give one
    /// report: races merged by fingerprint, each with the traces it was seen in.
    #[arg(required = true, value_name = "TRACE")]
    traces: Vec<PathBuf>,
    /// Comma-separated detectors, or `all`. Default: hb,shb,wcp; with --tree, or on a
    /// trace recorded with it, the detectors a filtered trace allows.
    #[arg(short, long, value_delimiter = ',', long_help = detectors_help(
        "Default: hb,shb,wcp; with --tree, or on a trace recorded with it, the detectors a \
         filtered trace allows."))]
    detectors: Option<Vec<String>>,
    /// Drop redundant accesses (TREE) before the detectors. MODE `hb` (the default) keeps
    /// every race signature of hb and lockset; `hybrid` and `lockset` drop more and keep
    /// lockset's. No other detector may run on a filtered trace.
    #[arg(long, value_name = "MODE", num_args = 0..=1, require_equals = true,
          default_missing_value = "hb", value_parser = parse_tree_mode)]
    tree: Option<Mode>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Exit with status 1 when any race is reported (with --baseline: any new race;
    /// suppressed races never count).
    #[arg(long)]
    fail_on_race: bool,
    /// Attach to each race a validated schedule that runs its two accesses back to back
    /// (`witness` in the JSON report, `null` when none is found). Keeps the trace in memory.
    #[arg(long)]
    witness: bool,
    #[command(flatten)]
    solver: SolverArgs,
    #[command(flatten)]
    triage: TriageArgs,
}

/// Suppressions and baselines (docs/REPORT.md#using-jrace-in-ci).
#[derive(clap::Args, Clone, Default)]
struct TriageArgs {
    /// Leave out the races FILE's rules match (counted in the report, never silently
    /// dropped). One rule per line: `race:GLOB` (the variable, e.g. `demo.Cache.*`),
    /// `location:GLOB` (either access's `File.java:LINE` or `pkg.Class.method`),
    /// `thread:GLOB`, `fingerprint:HEX`; `#` starts a comment; `*` and `?` are the only
    /// wildcards. Repeatable; files named in $JRACE_SUPPRESSIONS (`:`-separated) apply too.
    #[arg(long, value_name = "FILE")]
    suppressions: Vec<PathBuf>,
    /// A JSON report of an earlier run (`--format json`): each race is marked new or known
    /// by its fingerprint, and --fail-on-race fails only on new ones.
    #[arg(long, value_name = "OLD.json")]
    baseline: Option<PathBuf>,
    /// Describe at most N races (sound detectors' first); the others are counted, per detector,
    /// in the report (JSON `omitted`) and fail --fail-on-race. 0: no limit. A detector
    /// that flags a great many location pairs (lockset on shared data touched from
    /// hundreds of sites) would otherwise make a report of gigabytes.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    max_races: usize,
}

/// Suppressions and baseline, loaded before the analysis so that a bad file fails fast.
struct Triage {
    suppressions: triage::Suppressions,
    baseline: Option<triage::Baseline>,
}

impl TriageArgs {
    /// `--max-races`, `None` for no limit.
    fn max_races(&self) -> Option<usize> {
        (self.max_races > 0).then_some(self.max_races)
    }

    fn load(&self) -> Result<Triage> {
        let mut files = self.suppressions.clone();
        if let Some(env) = std::env::var_os("JRACE_SUPPRESSIONS") {
            files.extend(std::env::split_paths(&env).filter(|p| !p.as_os_str().is_empty()));
        }
        let suppressions = triage::Suppressions::load(&files).map_err(|e| anyhow!(e))?;
        let baseline = match &self.baseline {
            Some(p) => Some(triage::Baseline::load(p).map_err(|e| anyhow!(e))?),
            None => None,
        };
        Ok(Triage {
            suppressions,
            baseline,
        })
    }
}

impl Triage {
    fn apply(&self, rep: &mut report::Report) {
        if !self.suppressions.is_empty() {
            self.suppressions.apply(rep);
        }
        if let Some(b) = &self.baseline {
            b.apply(rep);
        }
    }
}

/// The exit status after a report: 1 with --fail-on-race when a race counts.
fn exit_status(rep: &report::Report, fail_on_race: bool) -> ExitCode {
    if fail_on_race && triage::failing_races(rep) > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Options of the solver detectors (mcm, said).
#[derive(clap::Args, Clone, Copy, Default)]
struct SolverArgs {
    /// Window size in events for mcm and said (windows overlap by half). Default 10000.
    #[arg(long, value_name = "N")]
    window: Option<usize>,
    /// Per-pair solver timeout in seconds; a pair that times out is not reported and is
    /// counted as `unknown`. Default 10.
    #[arg(long, value_name = "SECS")]
    solver_timeout: Option<f64>,
}

impl SolverArgs {
    fn options(&self) -> Result<jrace_analyzer::DetectorOptions> {
        let solver_timeout = match self.solver_timeout {
            Some(t) if !(t > 0.0 && t.is_finite()) => {
                bail!("--solver-timeout: expected a positive number of seconds, found {t}")
            }
            Some(t) => Some(std::time::Duration::from_secs_f64(t)),
            None => None,
        };
        if self.window == Some(0) {
            bail!("--window: expected a positive number of events, found 0");
        }
        Ok(jrace_analyzer::DetectorOptions {
            window: self.window,
            solver_timeout,
        })
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
    Sarif,
    /// One self-contained page, sortable and filterable (docs/REPORT.md#html-report).
    Html,
}

#[derive(Clone, Copy, ValueEnum)]
enum ConvertTo {
    Std,
    Bin,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("jrace: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Analyze(args) => analyze(&args),
        Command::Stats { trace } => stats::stats(&trace),
        Command::Convert { trace, to, output } => convert::convert(&trace, to, &output),
        Command::Record { record, command } => {
            let (_, status) = record::record(&record, &command)?;
            Ok(ExitCode::from(record::exit_code(status)))
        }
        Command::Run(args) => run_cmd(&args),
        Command::Demo => demo::demo(),
        Command::Witness(args) => witness_cmd(&args),
        Command::Replay(args) => replay::replay_cmd(&args),
    }
}

/// `--help` for `-d`: the default, then each detector with what its races promise.
fn detectors_help(default: &str) -> String {
    format!(
        "Comma-separated detectors, or `all`. {default}\n\nDetectors (docs/DETECTORS.md):\n{}",
        registry::help()
    )
}

/// Expands `-d` into detector names, rejecting unknown ones with the list of valid names.
fn detector_names(requested: &[String]) -> Result<Vec<&'static str>> {
    let mut names: Vec<&'static str> = Vec::new();
    for r in requested {
        let r = r.trim();
        if r == "all" {
            for d in registry::names() {
                if !names.contains(&d) {
                    names.push(d);
                }
            }
            continue;
        }
        if let Some(d) = registry::info(r) {
            if !names.contains(&d.name) {
                names.push(d.name);
            }
        } else if jrace_analyzer::PLANNED.contains(&r) {
            bail!(
                "detector `{r}` is not available in this build yet; available: {}",
                jrace_analyzer::detector_names().join(",")
            );
        } else {
            bail!(
                "unknown detector `{r}`; expected a comma list of {} or `all`",
                jrace_analyzer::detector_names().join(",")
            );
        }
    }
    if names.is_empty() {
        bail!(
            "no detector given; expected a comma list of {} or `all`",
            jrace_analyzer::detector_names().join(",")
        );
    }
    Ok(names)
}

fn progress_bar(what: &str) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {msg} {pos} events ({per_sec}, {elapsed})",
        )
        .expect("valid template"),
    );
    pb.set_message(what.to_owned());
    Some(pb)
}

/// The solver detectors' progress ([`jrace_analyzer::Progress`]) on the reading bar: once
/// the trace is read, it turns into a bar of windows with the queries, races and
/// undecided pairs so far and an estimate of the time left.
struct WindowProgress {
    pb: indicatif::ProgressBar,
    detector: std::sync::Mutex<&'static str>,
}

impl jrace_analyzer::Progress for WindowProgress {
    fn update(&self, detector: &str, done: u64, total: u64, status: &str) {
        let mut current = self.detector.lock().unwrap_or_else(|e| e.into_inner());
        if *current != detector {
            *current = match detector {
                "mcm" => "mcm",
                "said" => "said",
                "rdit" => "rdit",
                _ => "solver",
            };
            self.pb.reset();
            self.pb.set_length(total);
            self.pb.set_style(
                indicatif::ProgressStyle::with_template(
                    "{prefix} {pos}/{len} windows [{bar:16}] {msg}, {eta} left",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            self.pb.set_prefix(*current);
        }
        self.pb.set_length(total);
        self.pb.set_position(done);
        self.pb.set_message(status.to_owned());
    }
}

fn open(path: &Path) -> Result<Box<dyn EventSource>> {
    Ok(jrace_trace::open(path)?)
}

/// The TREE mode an agent trace was recorded with (its `filtered` metadata fact); `.std`
/// files have no header to carry it. Opening a big trace directory takes a while (its
/// names), so callers that read the trace anyway use [`open_first`] or [`tree_of_meta`].
fn recorded_tree(path: &Path) -> Result<Option<Mode>> {
    if !path.is_dir() {
        return Ok(None);
    }
    let reader = jrace_trace::binlog::TraceReader::open(path)?;
    tree_of_meta(path, reader.meta())
}

/// A trace opened for reading, with the TREE mode it was recorded with.
fn open_first(path: &Path) -> Result<(Box<dyn EventSource>, Option<Mode>)> {
    if !path.is_dir() {
        return Ok((open(path)?, None));
    }
    let reader = jrace_trace::binlog::TraceReader::open(path)?;
    let mode = tree_of_meta(path, reader.meta())?;
    Ok((Box::new(reader), mode))
}

fn tree_of_meta(
    path: &Path,
    meta: &std::collections::BTreeMap<String, String>,
) -> Result<Option<Mode>> {
    match meta.get(tree::META_FILTERED) {
        None => Ok(None),
        Some(v) => Mode::from_flag(v).map(Some).ok_or_else(|| {
            anyhow!(
                "{}: the trace says it was filtered by `{v}`, which this jrace does not know",
                path.display()
            )
        }),
    }
}

/// `-d` as given, or the default: hb,shb,wcp, or on a filtered trace (`modes`) every
/// detector those modes allow.
fn detectors_or_default(requested: Option<&[String]>, modes: &[Mode]) -> Result<Vec<&'static str>> {
    match requested {
        Some(r) => detector_names(r),
        None if modes.is_empty() => Ok(jrace_analyzer::DEFAULT_DETECTORS.to_vec()),
        None => Ok(registry::names()
            .filter(|d| modes.iter().all(|m| m.consumers().contains(d)))
            .collect()),
    }
}

/// Refuses the detectors that cannot read a TREE-filtered trace (H-T7, H-T8 in
/// `trace/src/tree.rs`).
fn check_tree(
    path: &Path,
    names: &[&'static str],
    prepass: Option<Mode>,
    recorded: Option<Mode>,
    witness: bool,
) -> Result<()> {
    for (mode, how) in [
        (recorded, "was recorded with the TREE filter in mode"),
        (prepass, "is filtered (--tree) in mode"),
    ] {
        let Some(m) = mode else { continue };
        let refused: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| !m.consumers().contains(n))
            .collect();
        if !refused.is_empty() {
            bail!(
                "{} {how} {m}, which drops accesses that {} need{}; only {} may analyze it",
                path.display(),
                refused.join(","),
                if refused.len() == 1 { "s" } else { "" },
                m.consumers().join(",")
            );
        }
    }
    if let (Some(m), true) = (recorded, witness) {
        bail!(
            "{} was recorded with the TREE filter in mode {m}: a witness needs every access \
             (a dropped write leaves later reads unexplained); analyze it without --witness",
            path.display()
        );
    }
    Ok(())
}

fn analyze_source(
    path: &Path,
    reopen: &dyn Fn() -> Result<Box<dyn EventSource>>,
    names: &[&'static str],
    witness: bool,
    opts: &jrace_analyzer::DetectorOptions,
) -> Result<report::Report> {
    let how = How {
        witness,
        ..How::default()
    };
    analyze_source_tree(path, reopen, Some(names), None, opts, how).map(|(rep, _)| rep)
}

/// [`analyze_source`] with the witness of race `race` only (`jrace witness`, `jrace
/// replay`), minimized when asked: race ids do not depend on witnesses, and on long
/// traces building every race's witness to show one would cost minutes and gigabytes.
/// Also gives back the trace, read whole for the witnesses, for names and locations.
fn analyze_for_race(
    path: &Path,
    reopen: &dyn Fn() -> Result<Box<dyn EventSource>>,
    names: &[&'static str],
    race: u64,
    minimize: bool,
) -> Result<(report::Report, jrace_trace::Trace)> {
    let how = How {
        witness: true,
        only_race: Some((race, minimize)),
        ..How::default()
    };
    let (rep, trace) =
        analyze_source_tree(path, reopen, Some(names), None, &Default::default(), how)?;
    Ok((
        rep,
        trace.expect("a witness analysis reads the whole trace"),
    ))
}

/// How [`analyze_source_tree`] analyzes a trace, besides with which detectors.
#[derive(Clone, Copy, Default)]
struct How {
    /// Validate a witness for each race (or only `only_race`'s, minimized if asked).
    witness: bool,
    only_race: Option<(u64, bool)>,
    /// The TREE filter in front of the detectors (`--tree`).
    prepass: Option<Mode>,
    /// `--max-races` (`None`: describe every race).
    max_races: Option<usize>,
}

/// [`analyze_source`], as `how` says, with the detectors either `names` or, when that is
/// `None`, `-d` as `requested` (with defaults that depend on the filters). Reports name
/// events by their position in the whole trace, filtered or not. With `how.witness`, the
/// trace read whole comes back too.
fn analyze_source_tree(
    path: &Path,
    reopen: &dyn Fn() -> Result<Box<dyn EventSource>>,
    names: Option<&[&'static str]>,
    requested: Option<&[String]>,
    opts: &jrace_analyzer::DetectorOptions,
    how: How,
) -> Result<(report::Report, Option<jrace_trace::Trace>)> {
    let How {
        witness,
        only_race,
        prepass,
        max_races,
    } = how;
    // The first pass's source also tells whether the trace was recorded filtered.
    let (first, recorded) = open_first(path)?;
    let names = match names {
        Some(n) => n.to_vec(),
        None => {
            let modes: Vec<Mode> = prepass.into_iter().chain(recorded).collect();
            detectors_or_default(requested, &modes)?
        }
    };
    let names = &names[..];
    check_tree(path, names, prepass, recorded, witness)?;
    let pb = progress_bar("analyzing");
    let progress = pb.as_ref().map(|pb| {
        std::sync::Arc::new(WindowProgress {
            pb: pb.clone(),
            detector: std::sync::Mutex::new(""),
        }) as std::sync::Arc<dyn jrace_analyzer::Progress>
    });
    let req = pipeline::Request {
        witness,
        prepass,
        only_race,
        progress,
        max_races: max_races.unwrap_or(usize::MAX),
        // (`JRACE_TEST_JOURNAL_CAP` lets tests force the report's second pass.)
        journal_cap: std::env::var("JRACE_TEST_JOURNAL_CAP")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(jrace_analyzer::facts::JOURNAL_CAP),
        ..pipeline::Request::new(names, opts)
    };
    let on_events = &mut |n| {
        if let Some(pb) = &pb {
            pb.set_position(n);
        }
    };
    let reopen = || {
        reopen().map_err(|e| jrace_trace::TraceError::Other {
            path: path.to_owned(),
            msg: format!("{e:#}"),
        })
    };
    let out = pipeline::analyze(first, &reopen, &req, on_events)
        .with_context(|| format!("cannot analyze {}", path.display()))?;
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    if let Some(t) = out.tree {
        eprintln!(
            "jrace: tree ({}): dropped {} of {} events ({:.1}%)",
            t.mode,
            t.dropped,
            t.read,
            100.0 * t.fraction
        );
    }
    for id in &out.missing_witnesses {
        eprintln!(
            "jrace: warning: internal error: race {id} was reported by a detector that \
             is sound for every race, but no validated witness was found for it; \
             please report this bug"
        );
    }
    Ok((out.report, out.trace))
}

fn analyze(args: &AnalyzeArgs) -> Result<ExitCode> {
    if let Some(d) = &args.detectors {
        detector_names(d)?; // a bad -d is reported before the trace is opened
    }
    let opts = args.solver.options()?;
    let triage = args.triage.load()?;
    let traces = expand_traces(&args.traces)?;
    let mut reports = Vec::with_capacity(traces.len());
    let mut views = report_html::WitnessPages::new();
    for path in &traces {
        let how = How {
            witness: args.witness,
            prepass: args.tree,
            max_races: args.triage.max_races(),
            ..How::default()
        };
        let (rep, trace) = analyze_source_tree(
            path,
            &|| open(path),
            None,
            args.detectors.as_deref(),
            &opts,
            how,
        )?;
        let name = path.display().to_string();
        if let (Format::Html, Some(t)) = (args.format, &trace) {
            add_witness_pages(&mut views, &name, t, &rep);
        }
        reports.push((name, rep));
    }
    let mut rep = if reports.len() == 1 {
        reports.pop().expect("one report").1
    } else {
        jrace_analyzer::report::merge::merge(reports)
    };
    triage.apply(&mut rep);
    // The traces as expanded: a directory holding one trace names that trace, so that the
    // HTML page's `jrace witness` commands and embedded views point at it.
    let source: Vec<String> = traces.iter().map(|t| t.display().to_string()).collect();
    emit(
        &rep,
        args.format,
        args.output.as_deref(),
        &source.join(" "),
        &views,
    )?;
    Ok(exit_status(&rep, args.fail_on_race))
}

/// The traces named on the command line: a `.std` file or a trace directory is one; a
/// directory that is not a trace but holds trace directories (`out=DIR/%p`, one per JVM)
/// stands for those, in name order.
fn expand_traces(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let is_trace_dir = jrace_trace::binlog::is_trace_dir;
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() || is_trace_dir(p) {
            out.push(p.clone());
            continue;
        }
        let mut inner: Vec<PathBuf> = std::fs::read_dir(p)
            .with_context(|| format!("cannot read directory {}", p.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|d| d.is_dir() && is_trace_dir(d))
            .collect();
        if inner.is_empty() {
            // Not a trace and no traces inside: the reader says what it expected.
            out.push(p.clone());
            continue;
        }
        inner.sort();
        out.extend(inner);
    }
    Ok(out)
}

fn run_cmd(args: &RunArgs) -> Result<ExitCode> {
    let modes: Vec<Mode> = args.record.tree.into_iter().collect();
    let names = detectors_or_default(args.detectors.as_deref(), &modes)?;
    check_tree(
        Path::new("the trace"),
        &names,
        None,
        args.record.tree,
        args.witness,
    )?;
    let opts = args.solver.options()?;
    let triage = args.triage.load()?;
    let (dir, status) = record::record(&args.record, &args.command)?;
    if !status.success() {
        eprintln!(
            "jrace: the program exited with status {}; analyzing what it did",
            record::exit_code(status)
        );
    }
    let d2 = dir.clone();
    let how = How {
        witness: args.witness,
        max_races: args.triage.max_races(),
        ..How::default()
    };
    let (mut rep, trace) =
        analyze_source_tree(&dir, &|| open(&d2), Some(&names), None, &opts, how)?;
    let name = dir.display().to_string();
    let mut views = report_html::WitnessPages::new();
    if let (Format::Html, Some(t)) = (args.format, &trace) {
        add_witness_pages(&mut views, &name, t, &rep);
    }
    triage.apply(&mut rep);
    emit(&rep, args.format, args.report.as_deref(), &name, &views)?;
    eprintln!("jrace: trace in {}", dir.display());
    Ok(exit_status(&rep, args.fail_on_race))
}

fn witness_cmd(args: &WitnessArgs) -> Result<ExitCode> {
    let path = args.trace.clone();
    let view = match (args.race, args.deadlock) {
        (Some(id), _) => race_view(args, &|| open(&path), id)?,
        (None, Some(id)) => deadlock_view(&args.trace, &|| open(&path), id)?,
        (None, None) => bail!("--race ID or --deadlock ID"),
    };
    let view = view.expand_prefix(args.context);
    if let Some(file) = &args.html {
        let name = args
            .trace
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let page = view.to_html(&name, &generator());
        std::fs::write(file, page).with_context(|| format!("cannot write {}", file.display()))?;
    }
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let text = view.to_text(witness_view::TextOptions {
        color,
        wide: args.wide,
    });
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The deadlocks of `jrace analyze -d deadlock --witness` on `path`, and the trace.
fn analyze_for_deadlocks(
    path: &Path,
    reopen: &dyn Fn() -> Result<Box<dyn EventSource>>,
) -> Result<(Vec<report_deadlock::DeadlockReport>, jrace_trace::Trace)> {
    let how = How {
        witness: true,
        ..How::default()
    };
    let (rep, trace) = analyze_source_tree(
        path,
        reopen,
        Some(&["deadlock"]),
        None,
        &Default::default(),
        how,
    )?;
    Ok((
        rep.deadlocks.unwrap_or_default(),
        trace.expect("a witness analysis reads the whole trace"),
    ))
}

/// The view of deadlock `id` of `jrace analyze -d deadlock` on `path`.
fn deadlock_view(
    path: &Path,
    reopen: &dyn Fn() -> Result<Box<dyn EventSource>>,
    id: u64,
) -> Result<witness_view::View> {
    let (all, trace) = analyze_for_deadlocks(path, reopen)?;
    let Some(d) = all.iter().find(|d| d.id == id) else {
        if all.is_empty() {
            bail!("no deadlock {id} in {}: none is predicted", path.display());
        }
        bail!(
            "no deadlock {id} in {}: deadlocks 1 to {} are predicted",
            path.display(),
            all.len()
        );
    };
    witness_view::View::for_deadlock(&trace, d)
        .map_err(|e| anyhow!("deadlock {id} has no schedule to show: {e}"))
}

/// The view of race `id` of `jrace analyze --witness` with `args`' detectors.
fn race_view(
    args: &WitnessArgs,
    reopen: &dyn Fn() -> Result<Box<dyn EventSource>>,
    id: u64,
) -> Result<witness_view::View> {
    let names = detector_names(&args.detectors)?;
    let (rep, trace) = analyze_for_race(&args.trace, reopen, &names, id, args.minimize)?;
    let Some(race) = rep.races.iter().find(|r| r.id == id) else {
        if rep.races.is_empty() {
            bail!(
                "no race {id} in {}: detectors {} report no race",
                args.trace.display(),
                names.join(",")
            );
        }
        bail!(
            "no race {id} in {}: detectors {} report races 1 to {}",
            args.trace.display(),
            names.join(","),
            rep.races.len()
        );
    };
    witness_view::View::new(&trace, race).map_err(|e| {
        anyhow!(
            "race {} ({} on {}) has no witness to show: {e}",
            race.id,
            race.kind,
            race.variable
        )
    })
}

/// The witness views an HTML report embeds, at most this many: each is a page of its own.
const HTML_WITNESS_VIEWS: usize = 50;

/// Adds the witness view of each of `rep`'s races that has a witness (with `--witness`),
/// drawn from the trace `name` they were found in.
fn add_witness_pages(
    pages: &mut report_html::WitnessPages,
    name: &str,
    trace: &jrace_trace::Trace,
    rep: &report::Report,
) {
    for race in &rep.races {
        if pages.len() >= HTML_WITNESS_VIEWS {
            return;
        }
        if let Ok(view) = witness_view::View::new(trace, race) {
            let page = view.to_html(name, &generator());
            pages.insert((name.to_string(), race.id), page);
        }
    }
}

fn generator() -> String {
    format!("jrace {}", env!("CARGO_PKG_VERSION"))
}

/// Writes the report; `source` names what was analyzed, and `views` holds witness views,
/// for the HTML page.
fn emit(
    rep: &report::Report,
    format: Format,
    output: Option<&Path>,
    source: &str,
    views: &report_html::WitnessPages,
) -> Result<()> {
    let text = match format {
        Format::Text => report::to_text(rep),
        Format::Json => report::to_json(rep),
        Format::Sarif => report::to_sarif(rep),
        Format::Html => report_html::to_html(rep, source, &generator(), views),
    };
    match output {
        Some(p) => {
            std::fs::write(p, text).with_context(|| format!("cannot write {}", p.display()))?
        }
        None => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (e.g. `| head`) is not an error worth a message.
            if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    return Err(e.into());
                }
            }
        }
    }
    Ok(())
}
