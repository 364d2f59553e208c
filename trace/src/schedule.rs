//! The two small files of `jrace replay`: the **schedule** the command line writes for the
//! agent (`replay=FILE`), and the **result** the agent writes back (`replay.result` in its
//! trace directory). Both are UTF-8 text, one record per line, fields separated by tabs
//! (tabs and newlines inside names are written as spaces); `#` starts a comment line.
//!
//! # Schedule (`jrace-schedule 1`)
//!
//! (Tabs shown as two spaces.)
//!
//! ```text
//! jrace-schedule  1
//! race  3  demo.Bank.transfers
//! thread  0  main  0  main
//! thread  1  teller-1  0  teller-1
//! thread  2  worker  1  worker#31
//! step  0  1  begin  -
//! step  0  2  vwrite  Bank.java:13  hold
//! step  1  1  begin  -
//! ...
//! step  1  8  write  Bank.java:24
//! step  2  9  read  Bank.java:24
//! ```
//!
//! * `race ID VARIABLE`: what is replayed (for messages only).
//! * `deadlock K` (optional): the schedule leads to a deadlock of K threads instead of a
//!   race: **its last K steps are the threads' blocking requests** (acquires, in cycle
//!   order), which are let go once every step before them has run, and which never run
//!   if the deadlock happens.
//! * `thread INDEX NAME OCCURRENCE TRACE_NAME`: every thread of the recorded trace, in the
//!   order the recorder first saw them. NAME is the Java thread name; the recorder appends
//!   `#<java id>` to a name that repeats (TRACE_NAME keeps that form), and ids change
//!   between runs, so a thread is identified by NAME and OCCURRENCE, its 0-based rank
//!   among the threads of that name in first-seen order ([`thread_keys`]).
//! * `step THREAD K KIND LOCATION [hold] [init]`: the schedule, in order. THREAD is a thread
//!   index, K the 1-based number of the event among the events the recorder wrote for that
//!   thread (`begin` is 1), KIND an event kind name ([`Kind::name`]), LOCATION its location
//!   token (`File.java:LINE` or `Class.method@BCI`; `-` for none). Each thread's steps are
//!   its events 1, 2, …, m in order (a witness runs a prefix of every thread). **The last
//!   two steps are the racing pair**, first then second. The optional `hold` marks a step
//!   whose operation follows its hook (a write, release, fork, ...) and that no other
//!   thread's step before the thread's next step depends on (same variable, same lock,
//!   the forked thread, a wake after a notify): the thread may be held between the hook
//!   and the operation. The optional `init` marks a class-initialization check (the
//!   `vread` of `C.<clinit>` the recorder writes in the hook of a field access, just
//!   before the access): the agent gates the access instead, like a branch.
//!
//! # Result (`jrace-replay-result 1`)
//!
//! ```text
//! jrace-replay-result  1
//! status  reproduced
//! first  teller-1  8  write  Bank.java:24  1
//! second  teller-2  9  read  Bank.java:24  1
//! progress  21  21
//! ```
//!
//! `status` is one of `reproduced` (both racing accesses ran back to back), `separated`
//! (both ran, with `between N` other events in between), `diverged` (a thread's event did
//! not match its step: `diverged THREAD K EXPECTED_KIND EXPECTED_LOC FOUND_KIND FOUND_LOC`),
//! `timeout` (the deadline passed first) or `exited` (the JVM ended first); for a deadlock,
//! `released` (every step before the requests ran and the requesting threads were let go:
//! written while the program may still run; `pid N` gives the JVM's process id, for a thread
//! dump) or `nodeadlock` (a request got its lock: `first` says which). `first` and
//! `second` give thread, K, kind, location and the value the access carried (`-` for
//! none); `waiting THREAD K KIND LOC` is the first step that had not run; `progress DONE
//! TOTAL` counts the steps of the schedule's prefix that had run; `note TEXT` is a remark
//! on how the accesses ran.

use crate::model::Kind;
use std::fmt::Write as _;

pub const SCHEDULE_MAGIC: &str = "jrace-schedule";
pub const RESULT_MAGIC: &str = "jrace-replay-result";
/// The result file the agent writes in its trace directory.
pub const RESULT_FILE: &str = "replay.result";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleThread {
    /// The Java thread name (without the recorder's `#<id>`).
    pub name: String,
    /// 0-based rank among the trace's threads with this name, in first-seen order.
    pub occurrence: u32,
    /// The name as the trace shows it.
    pub trace_name: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleStep {
    /// Index into [`Schedule::threads`].
    pub thread: u32,
    /// 1-based number of the event among its thread's recorded events.
    pub k: u32,
    pub kind: Kind,
    /// Location token; empty for none.
    pub loc: String,
    /// The thread may be held between this step's hook and its operation.
    pub hold: bool,
    /// A class-initialization check, emitted by the hook of the access after it.
    pub init: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    pub race: u64,
    pub variable: String,
    /// A deadlock of this many threads, whose requests are the last steps (0: a race).
    pub deadlock: usize,
    pub threads: Vec<ScheduleThread>,
    pub steps: Vec<ScheduleStep>,
}

fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

fn loc_out(s: &str) -> String {
    if s.is_empty() {
        "-".into()
    } else {
        clean(s)
    }
}

fn loc_in(s: &str) -> String {
    if s == "-" {
        String::new()
    } else {
        s.to_string()
    }
}

pub fn kind_by_name(s: &str) -> Option<Kind> {
    Kind::ALL.iter().copied().find(|k| k.name() == s)
}

/// (name, occurrence) for each thread of a trace, given the names in thread-id order (the
/// recorder's first-seen order): a name `N#<digits>` whose `N` is an earlier thread's name
/// is the recorder's form of a repeated `N`.
pub fn thread_keys(names: &[&str]) -> Vec<(String, u32)> {
    let mut count: std::collections::HashMap<String, u32> = Default::default();
    let mut seen: std::collections::HashSet<&str> = Default::default();
    let mut out = Vec::with_capacity(names.len());
    for &n in names {
        let base = match n.rsplit_once('#') {
            Some((b, id))
                if !id.is_empty() && id.bytes().all(|c| c.is_ascii_digit()) && seen.contains(b) =>
            {
                b
            }
            _ => n,
        };
        seen.insert(n);
        let c = count.entry(base.to_string()).or_insert(0);
        out.push((base.to_string(), *c));
        *c += 1;
    }
    out
}

fn fields(line: &str) -> Vec<&str> {
    line.split('\t').collect()
}

fn num<T: std::str::FromStr>(s: &str, what: &str, line: usize) -> Result<T, String> {
    s.parse()
        .map_err(|_| format!("line {line}: expected {what}, found `{s}`"))
}

impl Schedule {
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{SCHEDULE_MAGIC}\t1");
        let _ = writeln!(s, "race\t{}\t{}", self.race, clean(&self.variable));
        if self.deadlock > 0 {
            let _ = writeln!(s, "deadlock\t{}", self.deadlock);
        }
        for (i, t) in self.threads.iter().enumerate() {
            let _ = writeln!(
                s,
                "thread\t{i}\t{}\t{}\t{}",
                clean(&t.name),
                t.occurrence,
                clean(&t.trace_name)
            );
        }
        for st in &self.steps {
            let _ = writeln!(
                s,
                "step\t{}\t{}\t{}\t{}{}{}",
                st.thread,
                st.k,
                st.kind.name(),
                loc_out(&st.loc),
                if st.hold { "\thold" } else { "" },
                if st.init { "\tinit" } else { "" }
            );
        }
        s
    }

    /// Parses and checks a schedule: thread indices dense, each thread's steps numbered
    /// 1, 2, … in order, at least the two racing steps.
    pub fn parse(text: &str) -> Result<Schedule, String> {
        let mut s = Schedule::default();
        let mut magic = false;
        let mut next_k: Vec<u32> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let ln = i + 1;
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let f = fields(line);
            if !magic {
                if f.first() != Some(&SCHEDULE_MAGIC) || f.get(1) != Some(&"1") {
                    return Err(format!(
                        "line {ln}: expected `{SCHEDULE_MAGIC}<TAB>1` (a jrace replay schedule)"
                    ));
                }
                magic = true;
                continue;
            }
            match (f[0], f.len()) {
                ("race", 3) => {
                    s.race = num(f[1], "a race id", ln)?;
                    s.variable = f[2].to_string();
                }
                ("deadlock", 2) => {
                    s.deadlock = num(f[1], "a number of threads", ln)?;
                    if s.deadlock < 2 {
                        return Err(format!("line {ln}: a deadlock has at least two threads"));
                    }
                }
                ("thread", 5) => {
                    let idx: usize = num(f[1], "a thread index", ln)?;
                    if idx != s.threads.len() {
                        return Err(format!("line {ln}: thread {idx} out of order"));
                    }
                    s.threads.push(ScheduleThread {
                        name: f[2].to_string(),
                        occurrence: num(f[3], "an occurrence number", ln)?,
                        trace_name: f[4].to_string(),
                    });
                    next_k.push(1);
                }
                ("step", 5..=7) => {
                    let (mut hold, mut init) = (false, false);
                    for &x in &f[5..] {
                        match x {
                            "hold" if !hold => hold = true,
                            "init" if !init => init = true,
                            _ => return Err(format!("line {ln}: unknown step flag `{x}`")),
                        }
                    }
                    let thread: u32 = num(f[1], "a thread index", ln)?;
                    let k: u32 = num(f[2], "an event number", ln)?;
                    let kind = kind_by_name(f[3])
                        .ok_or_else(|| format!("line {ln}: unknown event kind `{}`", f[3]))?;
                    let Some(nk) = next_k.get_mut(thread as usize) else {
                        return Err(format!("line {ln}: no thread {thread}"));
                    };
                    if k != *nk {
                        return Err(format!(
                            "line {ln}: thread {thread} runs event {k} where its event {nk} was expected (each thread's steps are its events 1, 2, … in order)"
                        ));
                    }
                    *nk += 1;
                    s.steps.push(ScheduleStep {
                        thread,
                        k,
                        kind,
                        loc: loc_in(f[4]),
                        hold,
                        init,
                    });
                }
                _ => return Err(format!("line {ln}: unexpected record `{line}`")),
            }
        }
        if !magic {
            return Err("empty schedule".into());
        }
        if s.steps.len() < 2 {
            return Err("a schedule needs at least the two racing steps".into());
        }
        if s.deadlock > 0 {
            let n = s.steps.len();
            if n < s.deadlock
                || s.steps[n - s.deadlock..]
                    .iter()
                    .any(|st| st.kind != Kind::Acquire)
            {
                return Err(format!(
                    "a deadlock's schedule ends with its {} requests (acquires)",
                    s.deadlock
                ));
            }
        }
        Ok(s)
    }
}

/// One racing access as the replay ran it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RanAccess {
    pub thread: String,
    pub k: u32,
    pub kind: Kind,
    pub loc: String,
    pub value: Option<i64>,
}

/// A step of the schedule (for messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepRef {
    pub thread: String,
    pub k: u32,
    pub kind: Kind,
    pub loc: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Reproduced,
    /// Both accesses ran, this many other events apart (or the second first: `None`).
    Separated(Option<u64>),
    Diverged {
        at: StepRef,
        found_kind: Kind,
        found_loc: String,
    },
    Timeout,
    Exited,
    /// A deadlock's requesting threads were let go (not final: the program runs on).
    Released,
    /// A deadlock's request got its lock (`first` says which).
    NoDeadlock,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayResult {
    pub status: Status,
    pub first: Option<RanAccess>,
    pub second: Option<RanAccess>,
    /// The first step that had not run.
    pub waiting: Option<StepRef>,
    /// Steps of the schedule's prefix that had run, and their number.
    pub done: u64,
    pub total: u64,
    /// A remark on how the accesses ran (`note TEXT`).
    pub note: Option<String>,
    /// The JVM's process id (`pid N`), written with `released`.
    pub pid: Option<u32>,
}

impl ReplayResult {
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{RESULT_MAGIC}\t1");
        let status = match &self.status {
            Status::Reproduced => "reproduced",
            Status::Separated(_) => "separated",
            Status::Diverged { .. } => "diverged",
            Status::Timeout => "timeout",
            Status::Exited => "exited",
            Status::Released => "released",
            Status::NoDeadlock => "nodeadlock",
        };
        let _ = writeln!(s, "status\t{status}");
        match &self.status {
            Status::Separated(n) => {
                let _ = writeln!(
                    s,
                    "between\t{}",
                    n.map_or("-".to_string(), |n| n.to_string())
                );
            }
            Status::Diverged {
                at,
                found_kind,
                found_loc,
            } => {
                let _ = writeln!(
                    s,
                    "diverged\t{}\t{}\t{}\t{}\t{}\t{}",
                    clean(&at.thread),
                    at.k,
                    at.kind.name(),
                    loc_out(&at.loc),
                    found_kind.name(),
                    loc_out(found_loc)
                );
            }
            _ => {}
        }
        for (tag, a) in [("first", &self.first), ("second", &self.second)] {
            if let Some(a) = a {
                let _ = writeln!(
                    s,
                    "{tag}\t{}\t{}\t{}\t{}\t{}",
                    clean(&a.thread),
                    a.k,
                    a.kind.name(),
                    loc_out(&a.loc),
                    a.value.map_or("-".to_string(), |v| v.to_string())
                );
            }
        }
        if let Some(w) = &self.waiting {
            let _ = writeln!(
                s,
                "waiting\t{}\t{}\t{}\t{}",
                clean(&w.thread),
                w.k,
                w.kind.name(),
                loc_out(&w.loc)
            );
        }
        let _ = writeln!(s, "progress\t{}\t{}", self.done, self.total);
        if let Some(n) = &self.note {
            let _ = writeln!(s, "note\t{}", clean(n));
        }
        if let Some(p) = self.pid {
            let _ = writeln!(s, "pid\t{p}");
        }
        s
    }

    pub fn parse(text: &str) -> Result<ReplayResult, String> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
        match lines.next() {
            Some((_, l)) if l == format!("{RESULT_MAGIC}\t1") => {}
            _ => {
                return Err(format!(
                    "expected `{RESULT_MAGIC}<TAB>1` (a jrace replay result)"
                ))
            }
        }
        let mut status = None;
        let mut between = None;
        let mut diverged = None;
        let mut r = ReplayResult {
            status: Status::Exited,
            first: None,
            second: None,
            waiting: None,
            done: 0,
            total: 0,
            note: None,
            pid: None,
        };
        let kind = |s: &str, ln: usize| {
            kind_by_name(s).ok_or_else(|| format!("line {ln}: unknown event kind `{s}`"))
        };
        for (i, line) in lines {
            let ln = i + 1;
            let f = fields(line);
            match (f[0], f.len()) {
                ("status", 2) => status = Some(f[1].to_string()),
                ("between", 2) => between = f[1].parse::<u64>().ok(),
                ("diverged", 7) => {
                    diverged = Some(Status::Diverged {
                        at: StepRef {
                            thread: f[1].to_string(),
                            k: num(f[2], "an event number", ln)?,
                            kind: kind(f[3], ln)?,
                            loc: loc_in(f[4]),
                        },
                        found_kind: kind(f[5], ln)?,
                        found_loc: loc_in(f[6]),
                    })
                }
                ("first" | "second", 6) => {
                    let a = RanAccess {
                        thread: f[1].to_string(),
                        k: num(f[2], "an event number", ln)?,
                        kind: kind(f[3], ln)?,
                        loc: loc_in(f[4]),
                        value: f[5].parse().ok(),
                    };
                    if f[0] == "first" {
                        r.first = Some(a);
                    } else {
                        r.second = Some(a);
                    }
                }
                ("waiting", 5) => {
                    r.waiting = Some(StepRef {
                        thread: f[1].to_string(),
                        k: num(f[2], "an event number", ln)?,
                        kind: kind(f[3], ln)?,
                        loc: loc_in(f[4]),
                    })
                }
                ("note", 2) => r.note = Some(f[1].to_string()),
                ("pid", 2) => r.pid = Some(num(f[1], "a process id", ln)?),
                ("progress", 3) => {
                    r.done = num(f[1], "a step count", ln)?;
                    r.total = num(f[2], "a step count", ln)?;
                }
                _ => return Err(format!("line {ln}: unexpected record `{line}`")),
            }
        }
        r.status = match status.as_deref() {
            Some("reproduced") => Status::Reproduced,
            Some("separated") => Status::Separated(between),
            Some("diverged") => diverged.ok_or("status diverged without its `diverged` line")?,
            Some("timeout") => Status::Timeout,
            Some("exited") => Status::Exited,
            Some("released") => Status::Released,
            Some("nodeadlock") => Status::NoDeadlock,
            Some(s) => return Err(format!("unknown status `{s}`")),
            None => return Err("no status line".into()),
        };
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_keys_strip_the_recorders_suffix() {
        let k = thread_keys(&["main", "w", "w#23", "x#5", "w#40", "a#b"]);
        assert_eq!(
            k,
            vec![
                ("main".into(), 0),
                ("w".into(), 0),
                ("w".into(), 1),
                ("x#5".into(), 0),
                ("w".into(), 2),
                ("a#b".into(), 0)
            ]
        );
    }

    #[test]
    fn schedule_round_trips_and_checks_order() {
        let s = Schedule {
            race: 3,
            variable: "demo.Bank.transfers".into(),
            deadlock: 0,
            threads: vec![
                ScheduleThread {
                    name: "main".into(),
                    occurrence: 0,
                    trace_name: "main".into(),
                },
                ScheduleThread {
                    name: "t 1".into(),
                    occurrence: 0,
                    trace_name: "t 1".into(),
                },
            ],
            steps: vec![
                ScheduleStep {
                    thread: 0,
                    k: 1,
                    kind: Kind::Begin,
                    loc: String::new(),
                    hold: false,
                    init: false,
                },
                ScheduleStep {
                    thread: 1,
                    k: 1,
                    kind: Kind::Begin,
                    loc: String::new(),
                    hold: false,
                    init: false,
                },
                ScheduleStep {
                    thread: 0,
                    k: 2,
                    kind: Kind::Write,
                    loc: "A.java:3".into(),
                    hold: true,
                    init: true,
                },
                ScheduleStep {
                    thread: 1,
                    k: 2,
                    kind: Kind::Read,
                    loc: "A.java:9".into(),
                    hold: false,
                    init: false,
                },
            ],
        };
        let text = s.to_text();
        assert_eq!(Schedule::parse(&text).unwrap(), s);
        let bad = text.replace("step\t1\t2\t", "step\t1\t3\t");
        assert!(Schedule::parse(&bad).unwrap_err().contains("event 3"));
        let twice = text.replace("\thold\tinit", "\tinit\tinit");
        assert!(Schedule::parse(&twice).unwrap_err().contains("step flag"));
        assert!(Schedule::parse("hello").is_err());
        // A deadlock's schedule ends with its requests.
        let mut d = s.clone();
        d.deadlock = 2;
        for st in &mut d.steps[2..] {
            st.kind = Kind::Acquire;
        }
        assert_eq!(Schedule::parse(&d.to_text()).unwrap(), d);
        let not_acquires = d
            .to_text()
            .replace("step\t1\t2\tacquire", "step\t1\t2\tread");
        assert!(Schedule::parse(&not_acquires)
            .unwrap_err()
            .contains("requests"));
        let one = d.to_text().replace("deadlock\t2", "deadlock\t1");
        assert!(Schedule::parse(&one).unwrap_err().contains("two threads"));
    }

    #[test]
    fn result_round_trips() {
        let a = |t: &str, v| RanAccess {
            thread: t.into(),
            k: 4,
            kind: Kind::Write,
            loc: "A.java:3".into(),
            value: v,
        };
        for status in [
            Status::Reproduced,
            Status::Separated(Some(2)),
            Status::Separated(None),
            Status::Timeout,
            Status::Exited,
            Status::Released,
            Status::NoDeadlock,
            Status::Diverged {
                at: StepRef {
                    thread: "w".into(),
                    k: 3,
                    kind: Kind::Write,
                    loc: "A.java:3".into(),
                },
                found_kind: Kind::End,
                found_loc: String::new(),
            },
        ] {
            let r = ReplayResult {
                status,
                first: Some(a("a", Some(-1))),
                second: Some(a("b", None)),
                waiting: Some(StepRef {
                    thread: "c".into(),
                    k: 1,
                    kind: Kind::Begin,
                    loc: String::new(),
                }),
                done: 3,
                total: 9,
                note: Some("a remark".into()),
                pid: Some(4242),
            };
            assert_eq!(ReplayResult::parse(&r.to_text()).unwrap(), r);
        }
    }
}
