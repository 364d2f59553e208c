//! `jrace`: the command line. Parses arguments, opens traces, runs the analyzer and
//! prints reports; everything else lives in the `trace` and `analyzer` crates.
//!
//! Exit status (DESIGN §4): 0 analysis finished, 1 races found with `--fail-on-race`,
//! 2 bad usage or bad input.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use jrace_analyzer::testing::MemSource;
use jrace_analyzer::{engine, report, witness, witness_view};
use jrace_trace::{EventSource, Kind};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod record;
mod replay;

const DEMO_TRACE: &str = include_str!("../examples/bank.std");

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
    after_help = "Examples:\n  jrace demo\n  jrace analyze run.std\n  jrace analyze run.std -d hb,shb,wcp,cp,lockset --format json\n  jrace stats run.std\n  jrace convert run.std --to bin -o run.trace\n\nExit status: 0 analysis finished (races or not), 1 races found with --fail-on-race, 2 bad usage or bad input."
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
recorded order. Each cell holds the thread's op and the locks it holds after it. With more \
than 8 threads, the racing threads keep their columns and the rest share one `others` \
column. Colour only when standard output is a terminal and NO_COLOR is unset.\n\n\
Examples:\n  jrace witness examples/bank.std --race 2\n  jrace witness examples/bank.std --race 2 --html race2.html";

#[derive(clap::Args)]
struct WitnessArgs {
    /// A `.std` file or a trace directory written by the recorder.
    trace: PathBuf,
    /// The race id, as in `jrace analyze`'s report with the same detectors.
    #[arg(long, value_name = "ID")]
    race: u64,
    /// Comma-separated detectors, or `all` (the same default as `analyze`).
    #[arg(short, long, value_delimiter = ',', default_value = "hb,shb,wcp")]
    detectors: Vec<String>,
    /// Also write the view as one self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

const DETECTOR_HELP: &str = "Detectors (-d):\n  hb       happens-before with vector clocks; sound for the first race only\n  shb      schedulable happens-before; every race it reports is real\n  m2       M2; every race it reports is real; complete for 2 threads and says\n           when it is complete; slow on traces of millions of events\n  wcp      weak causal precedence; finds races hb misses by reordering critical sections\n  cp       causally-precedes; between hb and wcp\n  lockset  Eraser's lockset; warnings only, not sound\n  mcm      maximal causal model (z3): every race is real, and with branches recorded it\n           finds every race any sound detector can from this trace, within its windows\n  said     whole-trace read-write consistency (z3): every race is real; fewer than mcm\n  rdit     mcm for traces recorded with --barrier-pairs: a call into excluded code orders\n           only events on the objects it can reach (mcm and said order everything around\n           it); every race is real if excluded code touches nothing else\n  all      every detector above\nDefault: hb,shb,wcp.\n\nWith --witness, each race carries a schedule that makes its two accesses adjacent, checked\nagainst the trace's rules (locks, fork/join, wait/notify, every read keeps its writer), or\nnull when none is found.";

const RECORD_HELP: &str = "The program's standard streams pass through untouched; jrace prints \
nothing of its own (DIR/record.log has the summary, DIR/agent.log the agent's messages). \
The exit status is the program's (128+N when it is killed by signal N); 2 only for jrace's \
own usage errors.\n\n\
The agent can also be loaded by hand:\n  java -agentpath:/path/to/libjrace_agent.so=out=DIR[,exclude=a.*;b.*][,include=..][,branches=0] ...\n\n\
Examples:\n  jrace record -o bank.trace -- java -cp classes demo.Bank\n  jrace record --exclude 'org.apache.derby.*' -- java -jar app.jar\n  jrace analyze bank.trace";

#[derive(clap::Args)]
struct RunArgs {
    #[command(flatten)]
    record: record::RecordOptions,
    /// Comma-separated detectors, or `all`.
    #[arg(short, long, value_delimiter = ',', default_value = "hb,shb,wcp")]
    detectors: Vec<String>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Exit with status 1 when any race is reported.
    #[arg(long)]
    fail_on_race: bool,
    /// Attach a validated witness schedule to each race.
    #[arg(long)]
    witness: bool,
    #[command(flatten)]
    solver: SolverArgs,
    /// The program: `java [JVM options] MAIN|-jar JAR [args]`, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(clap::Args)]
struct AnalyzeArgs {
    /// A `.std` file or a trace directory written by the recorder.
    trace: PathBuf,
    /// Comma-separated detectors, or `all`.
    #[arg(short, long, value_delimiter = ',', default_value = "hb,shb,wcp")]
    detectors: Vec<String>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Exit with status 1 when any race is reported.
    #[arg(long)]
    fail_on_race: bool,
    /// Attach to each race a validated schedule that runs its two accesses back to back
    /// (`witness` in the JSON report, `null` when none is found). Keeps the trace in memory.
    #[arg(long)]
    witness: bool,
    #[command(flatten)]
    solver: SolverArgs,
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
        Command::Stats { trace } => stats(&trace),
        Command::Convert { trace, to, output } => convert(&trace, to, &output),
        Command::Record { record, command } => {
            let (_, status) = record::record(&record, &command)?;
            Ok(ExitCode::from(record::exit_code(status)))
        }
        Command::Run(args) => run_cmd(&args),
        Command::Demo => demo(),
        Command::Witness(args) => witness_cmd(&args),
        Command::Replay(args) => replay::replay_cmd(&args),
    }
}

/// Expands `-d` into detector names, rejecting unknown ones with the list of valid names.
fn detector_names(requested: &[String]) -> Result<Vec<&'static str>> {
    let mut names: Vec<&'static str> = Vec::new();
    for r in requested {
        let r = r.trim();
        if r == "all" {
            for d in jrace_analyzer::DETECTORS {
                if !names.contains(d) {
                    names.push(d);
                }
            }
            continue;
        }
        if let Some(d) = jrace_analyzer::DETECTORS.iter().find(|d| **d == r) {
            if !names.contains(d) {
                names.push(d);
            }
        } else if jrace_analyzer::PLANNED.contains(&r) {
            bail!(
                "detector `{r}` is not available in this build yet; available: {}",
                jrace_analyzer::DETECTORS.join(",")
            );
        } else {
            bail!(
                "unknown detector `{r}`; expected a comma list of {} or `all`",
                jrace_analyzer::DETECTORS.join(",")
            );
        }
    }
    if names.is_empty() {
        bail!(
            "no detector given; expected a comma list of {} or `all`",
            jrace_analyzer::DETECTORS.join(",")
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

fn open(path: &Path) -> Result<Box<dyn EventSource>> {
    Ok(jrace_trace::open(path)?)
}

fn analyze_source(
    path: &Path,
    reopen: &dyn Fn() -> Result<Box<dyn EventSource>>,
    names: &[&'static str],
    witness: bool,
    opts: &jrace_analyzer::DetectorOptions,
) -> Result<report::Report> {
    let detectors = names
        .iter()
        .map(|n| {
            jrace_analyzer::make_detector_with(n, opts)
                .ok_or_else(|| anyhow!("detector {n} missing"))
        })
        .collect::<Result<Vec<_>>>()?;
    // Witnesses need the whole trace in memory; otherwise the trace is streamed twice.
    let trace = if witness {
        let mut src = reopen()?;
        Some(
            jrace_trace::read_all(src.as_mut())
                .with_context(|| format!("cannot analyze {}", path.display()))?,
        )
    } else {
        None
    };
    let mut mem;
    let mut file;
    let src: &mut dyn EventSource = match &trace {
        Some(t) => {
            mem = MemSource::new(t);
            &mut mem
        }
        None => {
            file = reopen()?;
            file.as_mut()
        }
    };
    let pb = progress_bar("analyzing");
    // Detector-built schedules (m2's) are kept only when witnesses are asked for.
    let progress = &mut |n| {
        if let Some(pb) = &pb {
            pb.set_position(n);
        }
    };
    let mut analysis = engine::run_with_schedules(src, detectors, progress, witness)
        .with_context(|| format!("cannot analyze {}", path.display()))?;
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    // May change a race's representative pair to one that has a witness.
    let witnesses = trace
        .as_ref()
        .map(|t| witness::witness_analysis(t, &mut analysis));
    let needed = report::needed_events(&analysis);
    let facts = if needed.is_empty() {
        Default::default()
    } else if let Some(t) = &trace {
        report::annotate(&mut MemSource::new(t), &needed)?
    } else {
        let mut src2 = reopen()?;
        report::annotate(src2.as_mut(), &needed)?
    };
    let mut rep = report::build(&analysis, &facts);
    if let (Some(t), Some(ws)) = (&trace, witnesses) {
        for id in &ws.missing {
            eprintln!(
                "jrace: warning: internal error: race {id} was reported by a detector that \
                 is sound for every race, but no validated witness was found for it; \
                 please report this bug"
            );
        }
        for (r, w) in rep.races.iter_mut().zip(&ws.witnesses) {
            r.witness = Some(w.as_ref().map(|w| witness::steps(t, w)));
        }
    }
    Ok(rep)
}

fn analyze(args: &AnalyzeArgs) -> Result<ExitCode> {
    let names = detector_names(&args.detectors)?;
    let path = args.trace.clone();
    let opts = args.solver.options()?;
    let rep = analyze_source(&args.trace, &|| open(&path), &names, args.witness, &opts)?;
    emit(&rep, args.format, args.output.as_deref())?;
    Ok(if args.fail_on_race && !rep.races.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn run_cmd(args: &RunArgs) -> Result<ExitCode> {
    let names = detector_names(&args.detectors)?;
    let opts = args.solver.options()?;
    let (dir, status) = record::record(&args.record, &args.command)?;
    if !status.success() {
        eprintln!(
            "jrace: the program exited with status {}; analyzing what it did",
            record::exit_code(status)
        );
    }
    let d2 = dir.clone();
    let rep = analyze_source(&dir, &|| open(&d2), &names, args.witness, &opts)?;
    emit(&rep, args.format, args.report.as_deref())?;
    eprintln!("jrace: trace in {}", dir.display());
    Ok(if args.fail_on_race && !rep.races.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn witness_cmd(args: &WitnessArgs) -> Result<ExitCode> {
    let names = detector_names(&args.detectors)?;
    let path = args.trace.clone();
    let rep = analyze_source(
        &args.trace,
        &|| open(&path),
        &names,
        true,
        &Default::default(),
    )?;
    let Some(race) = rep.races.iter().find(|r| r.id == args.race) else {
        if rep.races.is_empty() {
            bail!(
                "no race {} in {}: detectors {} report no race",
                args.race,
                args.trace.display(),
                names.join(",")
            );
        }
        bail!(
            "no race {} in {}: detectors {} report races 1 to {}",
            args.race,
            args.trace.display(),
            names.join(","),
            rep.races.len()
        );
    };
    // The same trace analyze_source read, kept for names, ops and locations.
    let trace = jrace_trace::load(&args.trace)
        .with_context(|| format!("cannot read {}", args.trace.display()))?;
    let view = witness_view::View::new(&trace, race).map_err(|e| {
        anyhow!(
            "race {} ({} on {}) has no witness to show: {e}",
            race.id,
            race.kind,
            race.variable
        )
    })?;
    if let Some(file) = &args.html {
        let name = args
            .trace
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let page = view.to_html(&name, &format!("jrace {}", env!("CARGO_PKG_VERSION")));
        std::fs::write(file, page).with_context(|| format!("cannot write {}", file.display()))?;
    }
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let text = view.to_text(color);
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn emit(rep: &report::Report, format: Format, output: Option<&Path>) -> Result<()> {
    let text = match format {
        Format::Text => report::to_text(rep),
        Format::Json => report::to_json(rep),
        Format::Sarif => report::to_sarif(rep),
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

fn stats(path: &Path) -> Result<ExitCode> {
    let mut src = open(path)?;
    let mut counts = jrace_trace::Counts::default();
    let pb = progress_bar("reading");
    while let Some(e) = src.next_event()? {
        counts.add(&e);
        if counts.events % engine::PROGRESS_EVERY == 0 {
            if let Some(pb) = &pb {
                pb.set_position(counts.events);
            }
        }
    }
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let sym = src.symbols();
    let mut s = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(s, "trace:      {}", path.display());
    let _ = writeln!(s, "events:     {}", counts.events);
    let _ = writeln!(s, "threads:    {}", sym.threads.len());
    let _ = writeln!(
        s,
        "variables:  {} ({} static names)",
        sym.vars.len(),
        sym.statics.len()
    );
    let _ = writeln!(s, "locks:      {}", sym.locks.len());
    let _ = writeln!(s, "locations:  {}", sym.locs.len());
    let _ = writeln!(
        s,
        "branches recorded: {}",
        if src.has_branches() { "yes" } else { "no" }
    );
    if path.is_dir() {
        // What the recorder noted about the run (branches recorded, cut at a size limit,
        // classes left uninstrumented, ...).
        let reader = jrace_trace::binlog::TraceReader::open(path)?;
        for (k, v) in reader.meta() {
            let _ = writeln!(s, "recorder: {k} = {v}");
        }
        let bytes = dir_size(path);
        let per = if counts.events > 0 {
            bytes as f64 / counts.events as f64
        } else {
            0.0
        };
        let _ = writeln!(s, "size on disk: {bytes} bytes ({per:.2} bytes/event)");
    }
    let _ = writeln!(s, "events by kind:");
    for k in Kind::ALL {
        let n = counts.of(k);
        if n > 0 {
            let _ = writeln!(s, "  {:<10} {n}", k.name());
        }
    }
    print!("{s}");
    Ok(ExitCode::SUCCESS)
}

fn dir_size(p: &Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn convert(path: &Path, to: ConvertTo, output: &Path) -> Result<ExitCode> {
    match to {
        ConvertTo::Std => {
            let mut src = open(path)?;
            let f = std::fs::File::create(output)
                .with_context(|| format!("cannot create {}", output.display()))?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
            while let Some(e) = src.next_event()? {
                jrace_trace::std_format::format_event(&e, src.symbols(), &mut w)?;
                w.write_all(b"\n")?;
            }
            w.flush()
                .with_context(|| format!("cannot write {}", output.display()))?;
        }
        ConvertTo::Bin => {
            let trace = jrace_trace::load(path)?;
            jrace_trace::binlog::write_trace(&trace, output)
                .with_context(|| format!("cannot write trace directory {}", output.display()))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Records java-harness/src/demo/Bank.java under the agent; `None` when this machine
/// cannot (no JVM, no agent, no compiled harness), with the reason.
fn demo_record(dir: &Path) -> std::result::Result<PathBuf, String> {
    let classes = PathBuf::from(env!("JRACE_HARNESS_CLASSES"));
    if !classes.join("demo/Bank.class").is_file() {
        return Err(format!("{} has no demo/Bank.class", classes.display()));
    }
    record::agent_path().map_err(|e| e.to_string())?;
    let trace = dir.join("bank.trace");
    let opts = record::RecordOptions {
        output: Some(trace.clone()),
        ..Default::default()
    };
    let cmd = vec![
        "java".to_string(),
        "-cp".to_string(),
        classes.to_string_lossy().into_owned(),
        "demo.Bank".to_string(),
    ];
    match record::record(&opts, &cmd) {
        Ok((t, s)) if s.success() => Ok(t),
        Ok((_, s)) => Err(format!("java exited with status {}", record::exit_code(s))),
        Err(e) => Err(format!("{e:#}")),
    }
}

fn demo() -> Result<ExitCode> {
    let dir = std::env::temp_dir().join(format!("jrace-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    eprintln!(
        "jrace demo: recording a small bank program (2 tellers, 1 auditor: \
         java-harness/src/demo/Bank.java) under the agent"
    );
    match demo_record(&dir) {
        Ok(trace) => {
            eprintln!("            trace: {}\n", trace.display());
            let names = detector_names(&["all".to_owned()])?;
            let t2 = trace.clone();
            let rep = analyze_source(&trace, &|| open(&t2), &names, false, &Default::default())?;
            emit(&rep, Format::Text, None)?;
            let _ = std::fs::remove_dir_all(&dir);
            return Ok(ExitCode::SUCCESS);
        }
        Err(why) => {
            eprintln!("jrace demo: cannot record here ({why}); analyzing a recorded run instead")
        }
    }
    let path = dir.join("bank.std");
    std::fs::write(&path, DEMO_TRACE)?;
    eprintln!(
        "jrace demo: analyzing a recorded run of a small bank program (2 tellers, 1 auditor)"
    );
    eprintln!(
        "            trace: {} ({} lines)\n",
        path.display(),
        DEMO_TRACE.lines().count()
    );
    let names = detector_names(&["all".to_owned()])?;
    let p2 = path.clone();
    let rep = analyze_source(&path, &|| open(&p2), &names, false, &Default::default())?;
    emit(&rep, Format::Text, None)?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(ExitCode::SUCCESS)
}
