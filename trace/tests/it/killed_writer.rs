//! A writer killed with SIGKILL at random moments leaves a trace that reads without
//! error, and each thread's events are exactly a prefix of what it wrote.
//!
//! The test re-executes its own binary as the writer (`killed_writer_child` with
//! `JRACE_KILLED_WRITER_DIR` set); `Child::kill` sends SIGKILL on Unix.

use jrace_trace::binlog::{Table, TraceReader, TraceWriter, WriterOptions};
use jrace_trace::{Event, EventSource, Kind};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

const ENV: &str = "JRACE_KILLED_WRITER_DIR";
const THREADS: u32 = 4;
/// Each thread switches to a new variable (a new metadata record) this often.
const VAR_EVERY: u64 = 400;
/// Bound on events per thread, to bound disk use if the kill comes late.
const MAX_EVENTS: u64 = 3_000_000;

/// What thread `t` writes as its `c`-th event: (kind, variable name or lock, value).
fn expected(t: u32, c: u64) -> (Kind, String, i64) {
    let var = format!("v{t}.k{}", c / VAR_EVERY);
    match c % 4 {
        0 => (Kind::Acquire, format!("l{t}"), 0),
        1 => (Kind::Write, var, c as i64),
        2 => (Kind::Read, var, c as i64),
        _ => (Kind::Release, format!("l{t}"), 0),
    }
}

fn writer_thread(w: Arc<TraceWriter>, t: u32, next_var: Arc<AtomicU32>) -> std::io::Result<()> {
    w.name(Table::Thread, t, &format!("w{t}"))?;
    w.name(Table::Lock, t, &format!("l{t}"))?;
    let mut log = w.thread_log(t)?;
    let mut var = 0;
    for c in 0..MAX_EVENTS {
        if c % VAR_EVERY == 0 {
            var = next_var.fetch_add(1, Ordering::Relaxed);
            let name = format!("v{t}.k{}", c / VAR_EVERY);
            w.name(Table::Static, var, &name)?;
            w.var(var, var, &name)?;
        }
        let loc = (c % 4) as u32;
        let e = match c % 4 {
            0 => Event::new(t, Kind::Acquire, t, loc),
            1 => Event::new(t, Kind::Write, var, loc).with_value(c as i64),
            2 => Event::new(t, Kind::Read, var, loc).with_value(c as i64),
            _ => Event::new(t, Kind::Release, t, loc),
        };
        log.append(c, &e)?;
    }
    std::mem::forget(log); // stay "killed-looking" even if the kill comes late
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The writer process. A no-op unless started by `kill_at_random_moments`.
#[test]
fn killed_writer_child() {
    let Ok(dir) = std::env::var(ENV) else { return };
    let opts = WriterOptions {
        chunk_bytes: 4096,
        zstd_level: 1,
    };
    let w = Arc::new(TraceWriter::create_with(Path::new(&dir), opts).expect("create"));
    w.set_meta("branches", "0").expect("meta");
    for l in 0..4 {
        w.loc(l, &format!("Killed.java:{}", l + 1), None)
            .expect("loc");
    }
    let next_var = Arc::new(AtomicU32::new(0));
    for t in 0..THREADS {
        let (w, nv) = (w.clone(), next_var.clone());
        std::thread::spawn(move || writer_thread(w, t, nv).expect("writer thread"));
    }
    println!("\nJRACE-WRITER-READY");
    // Normally killed long before; exit on our own if the parent died.
    std::thread::sleep(Duration::from_secs(30));
    std::process::exit(0);
}

fn check_prefixes(dir: &Path) -> Vec<u64> {
    let mut r = TraceReader::open(dir).unwrap_or_else(|e| panic!("open {}: {e}", dir.display()));
    let mut counts = vec![0u64; THREADS as usize];
    let mut last = (0u64, 0u32);
    while let Some(e) = r
        .next_event()
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
    {
        let key = (r.last_stamp(), e.thread);
        assert!(key >= last, "global order broken: {key:?} after {last:?}");
        last = key;
        let s = r.symbols();
        let tname = s.thread_name(e.thread);
        let t: u32 = tname
            .strip_prefix('w')
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("thread {tname}"));
        let c = counts[t as usize];
        let (kind, name, value) = expected(t, c);
        assert_eq!(e.kind, kind, "thread {t} event {c}");
        let got = if kind.is_access() {
            s.var_name(e.target)
        } else {
            s.lock_name(e.target)
        };
        assert_eq!(got, name, "thread {t} event {c}");
        assert_eq!(e.value, value, "thread {t} event {c}");
        assert_eq!(s.loc_name(e.loc), format!("Killed.java:{}", c % 4 + 1));
        assert_eq!(r.last_stamp(), c);
        counts[t as usize] += 1;
    }
    assert!(!r.has_branches());
    let cut = r
        .truncation()
        .unwrap_or_else(|| panic!("{}: a killed writer's trace says it was cut", dir.display()));
    assert_eq!(cut.reason, jrace_trace::CutReason::Killed);
    counts
}

#[test]
fn kill_at_random_moments() {
    use rand::{Rng, SeedableRng};
    let exe = std::env::current_exe().expect("current_exe");
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0x6a72_6163);
    let mut total = 0;
    for base_ms in [0u64, 2, 7, 20, 45, 90, 160, 300] {
        let delay = base_ms + rng.gen_range(0..=base_ms / 2 + 1);
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("trace");
        let mut child = Command::new(&exe)
            .args([
                "killed_writer::killed_writer_child",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(ENV, &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn writer");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        loop {
            line.clear();
            if out.read_line(&mut line).expect("read child") == 0 {
                panic!("writer exited before it was ready");
            }
            if line.contains("JRACE-WRITER-READY") {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(delay));
        child.kill().expect("SIGKILL");
        child.wait().expect("wait");
        let counts = check_prefixes(&dir);
        eprintln!("killed after {delay} ms: events per thread {counts:?}");
        total += counts.iter().sum::<u64>();
    }
    assert!(total > 0, "no run wrote any event");
}
