//! `jrace replay TRACE --race ID [-d DETECTORS] [--timeout SECS] [-o DIR] -- java ...`:
//! makes a predicted race happen in a new run of the program.
//!
//! The trace is analyzed as by `jrace witness` (same detectors, same race ids) and the
//! race's validated witness becomes a per-thread schedule (each step: thread, k-th event
//! of that thread in the trace, kind, location; the last two steps are the racing pair),
//! written to `DIR/replay.schedule` ([`jrace_trace::schedule`] describes the format).
//! The program then runs under the agent with `replay=DIR/replay.schedule` and
//! `out=DIR` (so the replayed run is recorded too), and with the include/exclude/branch
//! settings the trace was recorded with, so that per-thread event numbers mean the same.
//! The agent holds threads to follow the schedule (agent/src/replay.rs has the gate rule)
//! and writes `DIR/replay.result`, which this command prints as one line:
//!
//! ```text
//! reproduced: VARIABLE LOC1 LOC2 (values: THREAD KIND VALUE, THREAD KIND VALUE)
//! diverged at THREAD event K: expected KIND@LOC, found KIND@LOC
//! timed out at step I of N: THREAD event K (KIND@LOC) had not run
//! not reproduced: ...
//! ```
//!
//! Exit status: 0 reproduced, 1 anything else, 2 bad usage or input (no such race, a race
//! without a witness, a `.std` trace). The program's standard streams pass through.

use crate::record;
use anyhow::{bail, Context, Result};
use jrace_trace::schedule::{
    thread_keys, ReplayResult, Schedule, ScheduleStep, ScheduleThread, Status, RESULT_FILE,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub const REPLAY_HELP: &str = "The trace is analyzed as by `jrace witness` with the same \
detectors, so race ids match; the race's witness becomes a schedule of per-thread event \
numbers (DIR/replay.schedule) that the agent enforces in a new run of the program, which must \
be the same command as the recorded run (same input, same classes). The replayed run is \
recorded into DIR too. The last line says what happened:\n\n\
  reproduced: VARIABLE LOC1 LOC2 (values: ...)    both accesses ran back to back\n\
  diverged at THREAD event K: expected KIND@LOC, found KIND@LOC\n\
  timed out at step I of N: ...                   gating stopped at the deadline\n\
  not reproduced: ...                             the program ended first, or the accesses ran apart\n\n\
With --deadlock ID (a deadlock of `jrace analyze -d deadlock`), the schedule leads the \
threads of the cycle to their requests and lets them go; once the JVM's own thread dump \
(`jcmd PID Thread.print`, saved as DIR/thread-dump.txt) shows the deadlock, the program is \
ended and the line reads `deadlocked: ...`.\n\n\
Exit status: 0 reproduced (or deadlocked), 1 otherwise, 2 bad usage or input.\n\n\
Example:\n  jrace record -o bank.trace -- java -cp classes demo.Bank\n  jrace replay bank.trace --race 1 -- java -cp classes demo.Bank";

#[derive(clap::Args)]
pub struct ReplayArgs {
    /// A trace directory written by the recorder.
    trace: PathBuf,
    /// The race id, as in `jrace analyze`'s report with the same detectors.
    #[arg(
        long,
        value_name = "ID",
        required_unless_present = "deadlock",
        conflicts_with = "deadlock"
    )]
    race: Option<u64>,
    /// Drive the program into a predicted deadlock instead: its id in `jrace analyze -d
    /// deadlock`. The result is `deadlocked` when the JVM's own thread dump shows the
    /// deadlock (saved as DIR/thread-dump.txt); the program is then ended.
    #[arg(long, value_name = "ID")]
    deadlock: Option<u64>,
    /// Comma-separated detectors, or `all` (the same default as `analyze`).
    #[arg(short, long, value_delimiter = ',', default_value = "hb,shb,wcp")]
    detectors: Vec<String>,
    /// Stop holding threads after this many seconds (the program then runs freely).
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    timeout: f64,
    /// Directory for the schedule, the result and the replayed run's trace (default: a
    /// new directory under the system's temporary directory).
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// The program: `java [JVM options] MAIN|-jar JAR [args]`, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// A witness as a schedule of per-thread event numbers: a race's (`deadlock` 0: its last
/// two steps are the racing pair) or a deadlock's (its last `deadlock` steps are the
/// requests).
fn schedule(
    trace: &jrace_trace::Trace,
    (id, subject): (u64, &str),
    deadlock: usize,
    steps: &[jrace_analyzer::report::WitnessStep],
) -> Result<Schedule> {
    let sym = &trace.symbols;
    let n = sym.threads.len();
    let names: Vec<&str> = (0..n as u32).map(|t| sym.thread_name(t)).collect();
    let keys = thread_keys(&names);
    // The JDK's own events (at locations in JDK classes) are not scheduled: the agent
    // neither holds nor counts them in a replay.
    let in_jdk = |e: &jrace_trace::Event| {
        sym.loc_detail
            .get(e.loc as usize)
            .and_then(|d| d.as_ref())
            .is_some_and(|d| d.in_jdk())
    };
    // k of every event: its 1-based number among its thread's events.
    let mut count = vec![0u32; n];
    let mut kth = Vec::with_capacity(trace.events.len());
    for e in &trace.events {
        let c = &mut count[e.thread as usize];
        if !in_jdk(e) {
            *c += 1;
        }
        kth.push(*c);
    }
    let steps: Vec<&jrace_analyzer::report::WitnessStep> = steps
        .iter()
        .filter(|s| {
            (s.event as usize)
                .checked_sub(1)
                .and_then(|i| trace.events.get(i))
                .is_none_or(|e| !in_jdk(e))
        })
        .collect();
    let mut out = Vec::with_capacity(steps.len());
    for s in &steps {
        let Some(e) = (s.event as usize)
            .checked_sub(1)
            .and_then(|i| trace.events.get(i))
        else {
            bail!("witness step {} is outside the trace", s.event);
        };
        out.push(ScheduleStep {
            thread: e.thread,
            k: kth[s.event as usize - 1],
            kind: e.kind,
            loc: sym.loc_name(e.loc).to_string(),
            hold: false,
            init: e.kind == jrace_trace::Kind::VRead
                && sym.var_name(e.target).ends_with(".<clinit>"),
        });
    }
    let events: Vec<&jrace_trace::Event> = steps
        .iter()
        .map(|s| &trace.events[s.event as usize - 1])
        .collect();
    for (i, st) in out.iter_mut().enumerate() {
        st.hold = may_hold(&events, i);
    }
    Ok(Schedule {
        race: id,
        variable: subject.to_string(),
        deadlock,
        threads: keys
            .into_iter()
            .zip(&names)
            .map(|((name, occurrence), t)| ScheduleThread {
                name,
                occurrence,
                trace_name: t.to_string(),
            })
            .collect(),
        steps: out,
    })
}

/// Whether step `i`'s thread may be held between the step's hook and its operation
/// (a write, release, fork, ... is recorded before it happens): only when no other
/// thread's step before the thread's next step depends on that operation.
fn may_hold(events: &[&jrace_trace::Event], i: usize) -> bool {
    use jrace_trace::Kind::*;
    let e = events[i];
    if !matches!(
        e.kind,
        Write | VWrite | Release | Fork | Wait | Notify | NotifyAll
    ) {
        return false;
    }
    for o in &events[i + 1..] {
        if o.thread == e.thread {
            if o.kind == Branch {
                continue;
            }
            return true;
        }
        let depends = match e.kind {
            Write | VWrite => {
                matches!(o.kind, Read | Write | VRead | VWrite) && o.target == e.target
            }
            Release | Wait => matches!(o.kind, Acquire | Wake) && o.target == e.target,
            Notify | NotifyAll => o.kind == Wake && o.target == e.target,
            Fork => o.thread == e.target,
            _ => true,
        };
        if depends {
            return false;
        }
    }
    // The thread's last step: its operation happens (the first racing access) and the
    // thread is held at its next hook.
    false
}

/// The include/exclude/branch settings of the recording, so that the replayed run
/// records (and counts) the same events.
fn recorded_options(trace: &Path, out: &Path) -> record::RecordOptions {
    let mut o = record::RecordOptions {
        output: Some(out.to_path_buf()),
        ..Default::default()
    };
    if let Ok(r) = jrace_trace::binlog::TraceReader::open(trace) {
        o.no_branches = r.meta().get("branches").is_some_and(|v| v == "0");
    }
    let log = std::fs::read_to_string(trace.join("record.log")).unwrap_or_default();
    if let Some(line) = log.lines().find_map(|l| l.strip_prefix("agent option: ")) {
        if let Some((_, opts)) = line.split_once('=') {
            for part in opts.split(',') {
                match part.split_once('=') {
                    Some(("exclude", v)) => o.exclude.extend(v.split(';').map(String::from)),
                    Some(("include", v)) => o.include.extend(v.split(';').map(String::from)),
                    Some(("branches", "0")) => o.no_branches = true,
                    Some(("barrier", "1")) => o.barrier_pairs = true,
                    Some(("bp_globals", v)) => o.bp_globals.extend(v.split(';').map(String::from)),
                    _ => {}
                }
            }
        }
    }
    o
}

fn at(kind: jrace_trace::Kind, loc: &str) -> String {
    if loc.is_empty() {
        kind.name().to_string()
    } else {
        format!("{}@{loc}", kind.name())
    }
}

fn value(v: Option<i64>) -> String {
    v.map_or("?".into(), |v| v.to_string())
}

/// The one line `jrace replay` prints for a result.
pub fn describe(r: &ReplayResult, variable: &str) -> String {
    let line = describe_status(r, variable);
    match &r.note {
        Some(n) => format!("{line}; note: {n}"),
        None => line,
    }
}

fn describe_status(r: &ReplayResult, variable: &str) -> String {
    let waiting = || match &r.waiting {
        Some(w) => format!(
            "step {} of {}: {} event {} ({}) had not run",
            r.done + 1,
            r.total,
            w.thread,
            w.k,
            at(w.kind, &w.loc)
        ),
        None => format!("all {} steps had run", r.total),
    };
    match &r.status {
        Status::Reproduced => {
            let (Some(a), Some(b)) = (&r.first, &r.second) else {
                return "reproduced".into();
            };
            // Witnesses are sequentially consistent: a read right after the write reads
            // what it wrote; say so when the run shows otherwise.
            let stale = if a.kind == jrace_trace::Kind::Write
                && b.kind == jrace_trace::Kind::Read
                && a.value.is_some()
                && b.value.is_some()
                && a.value != b.value
            {
                " [the read did not return the value written]"
            } else {
                ""
            };
            format!(
                "reproduced: {variable} {} {} (values: {} {} {}, {} {} {}){stale}",
                a.loc,
                b.loc,
                a.thread,
                a.kind.name(),
                value(a.value),
                b.thread,
                b.kind.name(),
                value(b.value)
            )
        }
        Status::Separated(n) => match n {
            Some(n) => {
                format!("not reproduced: both accesses to {variable} ran, {n} other events apart")
            }
            None => format!("not reproduced: the second access to {variable} ran before the first"),
        },
        Status::Diverged {
            at: s,
            found_kind,
            found_loc,
        } => format!(
            "diverged at {} event {}: expected {}, found {}",
            s.thread,
            s.k,
            at(s.kind, &s.loc),
            at(*found_kind, found_loc)
        ),
        Status::Timeout => format!("timed out at {}", waiting()),
        Status::Exited => format!("not reproduced: the program ended first ({})", waiting()),
        Status::Released => {
            "not reproduced: the threads were let go to their requests, but the JVM's thread dump shows no deadlock".into()
        }
        Status::NoDeadlock => match &r.first {
            Some(a) => format!(
                "not reproduced: {} got the lock it requests at {} (event {})",
                a.thread, a.loc, a.k
            ),
            None => "not reproduced: a request got its lock".into(),
        },
    }
}

pub fn replay_cmd(args: &ReplayArgs) -> Result<ExitCode> {
    if !(args.timeout >= 0.0 && args.timeout.is_finite()) {
        bail!(
            "--timeout: expected a number of seconds, found {}",
            args.timeout
        );
    }
    if !args.trace.is_dir() {
        bail!(
            "{} is not a trace directory: replay needs a trace recorded by jrace's agent",
            args.trace.display()
        );
    }
    match (args.race, args.deadlock) {
        (Some(id), _) => replay_race(args, id),
        (None, Some(id)) => replay_deadlock(args, id),
        (None, None) => bail!("--race ID or --deadlock ID"),
    }
}

/// The replay directory: `-o DIR`, or a new one under the temporary directory.
fn replay_dir(args: &ReplayArgs, what: &str) -> Result<PathBuf> {
    let dir = match &args.output {
        Some(d) => d.clone(),
        None => {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            std::env::temp_dir().join(format!("jrace-replay-{secs}-{}-{what}", std::process::id()))
        }
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir.canonicalize().unwrap_or(dir))
}

/// Writes `sched` into `dir` and the agent options that enforce it.
fn prepare(args: &ReplayArgs, dir: &Path, sched: &Schedule) -> Result<record::RecordOptions> {
    let file = dir.join("replay.schedule");
    if file.to_string_lossy().contains(',') {
        bail!(
            "the replay directory may not contain a comma: {}",
            dir.display()
        );
    }
    std::fs::write(&file, sched.to_text())
        .with_context(|| format!("cannot write {}", file.display()))?;
    let _ = std::fs::remove_file(dir.join(RESULT_FILE));
    let mut opts = recorded_options(&args.trace, dir);
    opts.agent_extra = Some(format!(
        "replay={},replay_timeout={}",
        file.display(),
        args.timeout
    ));
    Ok(opts)
}

/// Where the JDK's `jcmd` is: next to `$JAVA_HOME/bin/java`, or next to the command's
/// `java` (symbolic links resolved), or on the PATH.
fn jcmd(command: &[String]) -> PathBuf {
    if let Some(h) = std::env::var_os("JAVA_HOME") {
        let p = Path::new(&h).join("bin/jcmd");
        if p.is_file() {
            return p;
        }
    }
    let java = command.first().map(PathBuf::from).and_then(|j| {
        if j.components().count() > 1 {
            Some(j)
        } else {
            std::env::var_os("PATH").and_then(|path| {
                std::env::split_paths(&path)
                    .map(|d| d.join(&j))
                    .find(|p| p.is_file())
            })
        }
    });
    if let Some(p) = java
        .and_then(|j| j.canonicalize().ok())
        .and_then(|j| j.parent().map(|d| d.join("jcmd")))
        .filter(|p| p.is_file())
    {
        return p;
    }
    PathBuf::from("jcmd")
}

/// The JVM's own thread dump of process `pid` (`jcmd PID Thread.print`), if it answers.
fn thread_dump(jcmd: &Path, pid: u32) -> Option<String> {
    let out = std::process::Command::new(jcmd)
        .arg(pid.to_string())
        .arg("Thread.print")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn replay_deadlock(args: &ReplayArgs, id: u64) -> Result<ExitCode> {
    let path = args.trace.clone();
    let (all, trace) = crate::analyze_for_deadlocks(&args.trace, &|| crate::open(&path))?;
    let Some(d) = all.iter().find(|d| d.id == id) else {
        bail!(
            "no deadlock {id} in {}: {}",
            args.trace.display(),
            match all.len() {
                0 => "none is predicted".to_string(),
                n => format!("deadlocks 1 to {n} are predicted"),
            }
        );
    };
    let Some(witness) = &d.witness else {
        bail!("deadlock {id} has no schedule to replay");
    };
    // The schedule, then each thread's request.
    let mut steps = witness.clone();
    for t in &d.threads {
        steps.push(jrace_analyzer::report::WitnessStep {
            thread: t.thread.as_str().into(),
            event: t.requested_at.event,
        });
    }
    let sched = schedule(&trace, (id, "deadlock"), d.threads.len(), &steps)?;
    let dir = replay_dir(args, &format!("deadlock{id}"))?;
    let opts = prepare(args, &dir, &sched)?;
    let result = dir.join(RESULT_FILE);
    let jcmd = jcmd(&args.command);
    let dump_file = dir.join("thread-dump.txt");
    let mut released_at: Option<std::time::Instant> = None;
    let mut last_try: Option<std::time::Instant> = None;
    let mut deadlocked = false;
    // Once the threads are let go, ask the JVM for a thread dump every half second; end
    // the program when the dump shows a deadlock, or a while after the timeout.
    let mut watch = || {
        let Some(r) = std::fs::read_to_string(&result)
            .ok()
            .and_then(|t| ReplayResult::parse(&t).ok())
        else {
            return false;
        };
        let now = std::time::Instant::now();
        if r.status == Status::Released {
            let since = *released_at.get_or_insert(now);
            if last_try.is_none_or(|t| now - t >= std::time::Duration::from_millis(500))
                && now - since >= std::time::Duration::from_millis(300)
            {
                last_try = Some(now);
                if let Some(dump) = r.pid.and_then(|p| thread_dump(&jcmd, p)) {
                    if dump.contains("Java-level deadlock") {
                        let _ = std::fs::write(&dump_file, &dump);
                        deadlocked = true;
                        return true;
                    }
                }
            }
            // Not deadlocked after all, and the program does not end: end it.
            return now - since > std::time::Duration::from_secs_f64(args.timeout + 5.0);
        }
        false
    };
    let (_, status) = record::record_watching(&opts, &args.command, Some(&mut watch))?;
    eprintln!("jrace: replayed run recorded in {}", dir.display());
    if deadlocked {
        let cycle: Vec<String> = d
            .threads
            .iter()
            .map(|t| {
                format!(
                    "{} holds {} and waits for {} at {}",
                    t.thread, t.holds, t.requests, t.requested_at.location
                )
            })
            .collect();
        println!(
            "deadlocked: {} (the JVM's thread dump: {}); the program was ended",
            cycle.join("; "),
            dump_file.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(r) = agent_result(&dir, status)? {
        println!("{}", describe(&r, "deadlock"));
    }
    Ok(ExitCode::from(1))
}

/// The result the agent wrote in `dir`; `None` (with the line saying so) when it wrote
/// none. `status` is the program's exit status.
fn agent_result(dir: &Path, status: std::process::ExitStatus) -> Result<Option<ReplayResult>> {
    let result = dir.join(RESULT_FILE);
    let Ok(text) = std::fs::read_to_string(&result) else {
        println!(
            "not reproduced: the agent wrote no result (the program exited with status {} \
             before the agent started, or the JVM did not load it)",
            record::exit_code(status)
        );
        return Ok(None);
    };
    let r = ReplayResult::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", result.display()))?;
    Ok(Some(r))
}

fn replay_race(args: &ReplayArgs, id: u64) -> Result<ExitCode> {
    let names = crate::detector_names(&args.detectors)?;
    let path = args.trace.clone();
    let (rep, trace) =
        crate::analyze_for_race(&args.trace, &|| crate::open(&path), &names, id, false)?;
    let Some(race) = rep.races.iter().find(|r| r.id == id) else {
        bail!(
            "no race {} in {}: detectors {} report {}",
            id,
            args.trace.display(),
            names.join(","),
            match rep.races.len() {
                0 => "no race".to_string(),
                n => format!("races 1 to {n}"),
            }
        );
    };
    let Some(Some(steps)) = &race.witness else {
        bail!(
            "race {} ({} on {}) has no validated witness to replay",
            race.id,
            race.kind,
            race.variable
        );
    };
    let sched = schedule(&trace, (race.id, &race.variable), 0, steps)?;
    let dir = replay_dir(args, &format!("race{}", race.id))?;
    let opts = prepare(args, &dir, &sched)?;
    let (_, status) = record::record(&opts, &args.command)?;
    eprintln!("jrace: replayed run recorded in {}", dir.display());
    let Some(r) = agent_result(&dir, status)? else {
        return Ok(ExitCode::from(1));
    };
    if !status.success() {
        eprintln!(
            "jrace: the program exited with status {}",
            record::exit_code(status)
        );
    }
    println!("{}", describe(&r, &race.variable));
    Ok(if r.status == Status::Reproduced {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
