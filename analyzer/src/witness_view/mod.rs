//! Views of one race's witness (README's `jrace witness`): the text table that `jrace
//! witness` prints and the self-contained HTML page that `--html` writes.
//!
//! Both are built from the validated schedule in a [`RaceReport`] (`analyze --witness`)
//! and the trace it came from, through one [`View`]:
//!
//! - **Columns**: one per thread that has an event in the schedule, the racing threads
//!   first (first access's, then second's), the others in order of first appearance. With
//!   more than [`MAX_THREAD_COLUMNS`] threads, the text and HTML views keep the two racing
//!   threads and fold every other thread into one `others` column whose cells start with
//!   the thread's name, so rows stay readable on a terminal.
//! - **Prefix**: the longest prefix of the schedule that is exactly the trace's first
//!   events in recorded order (never the racing pair itself) is elided with a count per
//!   thread, followed by the locks each thread holds at its end.
//! - **Departure**: the first row that *overtakes* (runs before an event recorded earlier
//!   that the schedule has not run yet) is where the schedule departs from the recorded
//!   order; it gets a marker line, and every overtaking row the `^` mark.
//! - **Race**: the two racing rows carry `>>` (text) or a `RACE` label (HTML).
//! - **Locks**: each cell shows the locks its thread holds after the event (outermost
//!   acquisitions; re-entrant inner ones change nothing).
//!
//! Output is deterministic: no timestamps, no paths beyond the trace's own tokens and the
//! name the caller passes.

use crate::report::RaceReport;
use jrace_trace::{Event, Kind, Symbols, ThreadId, Trace};
use std::collections::HashMap;
use std::fmt::Write as _;

mod html;
mod text;

pub use crate::report::html::esc;

/// Beyond this many threads in a schedule, non-racing threads share one `others` column.
pub const MAX_THREAD_COLUMNS: usize = 8;

/// Widest text cell; longer cells end in `...`.
pub const MAX_CELL: usize = 32;

/// HTML: at most this many prefix rows (the last ones) in the collapsible part.
pub const MAX_PREFIX_ROWS: usize = 1000;

/// HTML: at most this many rows after the prefix.
pub const MAX_ROWS: usize = 5000;

/// One step of the schedule, ready to display.
#[derive(Clone, Debug)]
pub struct Row {
    /// 1-based position in the schedule.
    pub step: usize,
    /// 1-based event id in the trace.
    pub event: u64,
    pub thread: String,
    /// Index into [`View::columns`].
    pub column: usize,
    /// Canonical op, as in a `.std` line: `w(Bank.balance,150)`, `acq(bank)`.
    pub op: String,
    /// `acc`, `sync` or `branch` (HTML class of the acting cell); `other` for the rest.
    pub class: &'static str,
    /// The lock an acquire/release/wait/... names, if any.
    pub lock: Option<String>,
    /// Locks the thread holds after the event.
    pub locks: Vec<String>,
    /// The trace's location token.
    pub location: String,
    /// `Class.method` when the recorder knows it.
    pub method: Option<String>,
    /// Runs before some event recorded earlier that has not run yet.
    pub overtakes: bool,
    /// One of the two racing accesses.
    pub race: bool,
    /// A read (not a racing one) that reads from another write than in the recording.
    pub stale: Option<Stale>,
}

/// A read that, in the schedule, gets its value from another write than it did in the
/// recording (allowed by the value models, which `said`'s and `mcm`'s witnesses are
/// checked in: docs/DETECTORS.md#witnesses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stale {
    /// 1-based event id of the write it reads from in the schedule (`None`: the initial
    /// value).
    pub reads_from: Option<u64>,
    /// The same for the recording.
    pub recorded_from: Option<u64>,
    /// The value the recorded read returned, when recorded.
    pub recorded_value: Option<String>,
    /// The value the write it reads from in the schedule wrote, when known. Equal to
    /// `recorded_value` under the value model; may differ under cf.
    pub value: Option<String>,
}

/// Options of the text view.
#[derive(Clone, Copy, Debug, Default)]
pub struct TextOptions {
    /// ANSI colour (bold racing rows, dim elided rows, highlighted departure).
    pub color: bool,
    /// No truncation of cells at [`MAX_CELL`] characters.
    pub wide: bool,
}

/// A column of the table.
#[derive(Clone, Debug)]
pub struct Column {
    /// Thread name, or `others`.
    pub name: String,
    /// Holds one of the racing threads.
    pub racing: bool,
    /// Threads shown in this column (several only for `others`).
    pub threads: Vec<String>,
}

/// Everything both views show about one race's witness.
#[derive(Clone, Debug)]
pub struct View {
    pub race: RaceReport,
    pub rows: Vec<Row>,
    pub columns: Vec<Column>,
    /// Whether non-racing threads were folded into an `others` column.
    pub folded: bool,
    /// Number of leading rows run exactly as recorded (elided).
    pub prefix: usize,
    /// Events per thread in the prefix, in order of first appearance.
    pub prefix_counts: Vec<(String, usize)>,
    /// Locks each column's thread holds at the end of the prefix (`others`: per thread).
    pub prefix_locks: Vec<Vec<(String, Vec<String>)>>,
    /// Row index of the first overtaking row and the 1-based id (and thread) of the
    /// earliest recorded event it runs ahead of.
    pub departure: Option<(usize, u64, String)>,
    /// For each racing access (each request of a deadlock): locks held just before it.
    pub race_locks: Vec<Vec<String>>,
    /// How many rows end the schedule as its subject: the two racing accesses, or a
    /// deadlock's requests (one per thread of the cycle).
    pub ending: usize,
    /// The deadlock shown, for a deadlock's view ([`View::for_deadlock`]); `race` then
    /// only carries its id.
    pub deadlock: Option<crate::report::deadlock::DeadlockReport>,
    /// The feasibility model the schedule needs (docs/DETECTORS.md#witnesses): `rf` when
    /// every read keeps its recorded writer, `value` when some read changes writer but not
    /// value, `cf` when some read's value changes (only `mcm` and `rdit` report such
    /// races).
    pub model: &'static str,
}

/// Why a race cannot be shown.
#[derive(Debug)]
pub enum ViewError {
    /// The report has no witness field (not built with `--witness`).
    NotAnalyzed,
    /// The race has no validated witness.
    NoWitness,
    /// The schedule does not fit the trace.
    Inconsistent(String),
}

impl std::fmt::Display for ViewError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ViewError::NotAnalyzed => write!(f, "the report carries no witnesses"),
            ViewError::NoWitness => write!(f, "no validated witness was found for this race"),
            ViewError::Inconsistent(s) => write!(f, "witness does not fit the trace: {s}"),
        }
    }
}

impl std::error::Error for ViewError {}

/// The canonical op of an event: the middle field of its `.std` line.
pub fn op_text(e: &Event, sym: &Symbols) -> String {
    let mut buf = Vec::new();
    if jrace_trace::std_format::format_event(e, sym, &mut buf).is_err() {
        return e.kind.name().to_owned();
    }
    let line = String::from_utf8_lossy(&buf).into_owned();
    let t = sym.thread_name(e.thread).len() + 1;
    let l = sym.loc_name(e.loc).len() + 1;
    if line.len() >= t + l {
        line[t..line.len() - l].to_owned()
    } else {
        line
    }
}

fn class_of(k: Kind) -> &'static str {
    match k {
        Kind::Read | Kind::Write => "acc",
        Kind::Branch => "branch",
        Kind::Enter | Kind::Exit | Kind::Begin | Kind::End => "other",
        _ => "sync",
    }
}

fn lock_names(sym: &Symbols, v: Option<&Vec<u32>>) -> Vec<String> {
    v.map(|v| v.iter().map(|&l| sym.lock_name(l).to_owned()).collect())
        .unwrap_or_default()
}

impl View {
    /// Builds the view of `race`'s witness over `trace` (the trace the report was built
    /// from).
    pub fn new(trace: &Trace, race: &RaceReport) -> Result<View, ViewError> {
        let steps = match &race.witness {
            None => return Err(ViewError::NotAnalyzed),
            Some(None) => return Err(ViewError::NoWitness),
            Some(Some(s)) => s,
        };
        let events: Vec<u64> = steps.iter().map(|s| s.event).collect();
        View::build(trace, race, &events, 2)
    }

    /// The view of a deadlock's schedule (`jrace witness --deadlock`): the schedule, then
    /// each thread's blocked request as a final row.
    pub fn for_deadlock(
        trace: &Trace,
        d: &crate::report::deadlock::DeadlockReport,
    ) -> Result<View, ViewError> {
        let steps = d.witness.as_ref().ok_or(ViewError::NotAnalyzed)?;
        let mut events: Vec<u64> = steps.iter().map(|s| s.event).collect();
        events.extend(d.threads.iter().map(|t| t.requested_at.event));
        let site =
            |t: &crate::report::deadlock::DeadlockThreadReport| crate::report::AccessReport {
                thread: t.thread.clone(),
                op: "acquire",
                location: t.requested_at.location.clone(),
                method: t.requested_at.method.clone(),
                event: t.requested_at.event,
                locks: vec![t.holds.clone()],
                stack: t.requested_at.stack.clone(),
                created_at: None,
            };
        let k = d.threads.len();
        let placeholder = RaceReport {
            id: d.id,
            variable: String::new(),
            kind: "deadlock".into(),
            accesses: [site(&d.threads[0]), site(&d.threads[(1).min(k - 1)])],
            detectors: vec!["deadlock"],
            fingerprint: d.fingerprint.clone(),
            baseline: None,
            seen_in: Vec::new(),
            witness: None,
        };
        let mut view = View::build(trace, &placeholder, &events, k)?;
        view.deadlock = Some(d.clone());
        Ok(view)
    }

    /// The view of `schedule` (1-based event ids) whose last `ending` rows are its subject.
    fn build(
        trace: &Trace,
        race: &RaceReport,
        steps: &[u64],
        ending: usize,
    ) -> Result<View, ViewError> {
        let n = trace.events.len();
        let sym = &trace.symbols;
        let mut schedule = Vec::with_capacity(steps.len());
        for &event in steps {
            let i = event as usize;
            if i == 0 || i > n {
                return Err(ViewError::Inconsistent(format!(
                    "event {event} is not in the trace ({n} events)"
                )));
            }
            schedule.push(i - 1);
        }
        if schedule.len() < ending.max(2) {
            return Err(ViewError::Inconsistent(format!(
                "fewer than {} steps",
                ending.max(2)
            )));
        }
        let len = schedule.len();

        // Threads in order: racing (or deadlocked) first, then by first appearance.
        let mut order: Vec<ThreadId> = Vec::new();
        for &i in schedule[len - ending..].iter().chain(&schedule) {
            let t = trace.events[i].thread;
            if !order.contains(&t) {
                order.push(t);
            }
        }
        let folded = order.len() > MAX_THREAD_COLUMNS;
        let mut columns: Vec<Column> = Vec::new();
        let mut col_of: HashMap<ThreadId, usize> = HashMap::new();
        for (k, &t) in order.iter().enumerate() {
            let name = sym.thread_name(t).to_owned();
            if folded && k >= ending {
                if columns.len() == ending {
                    columns.push(Column {
                        name: "others".into(),
                        racing: false,
                        threads: Vec::new(),
                    });
                }
                columns[ending].threads.push(name);
                col_of.insert(t, ending);
            } else {
                col_of.insert(t, columns.len());
                columns.push(Column {
                    name: name.clone(),
                    racing: k < ending,
                    threads: vec![name],
                });
            }
        }

        // The recorded writer of every read in the schedule.
        let reads: std::collections::HashSet<usize> = schedule[..len - ending]
            .iter()
            .copied()
            .filter(|&i| matches!(trace.events[i].kind, Kind::Read | Kind::VRead))
            .collect();
        let mut recorded_from: HashMap<usize, Option<usize>> = HashMap::new();
        if !reads.is_empty() {
            let end = reads.iter().max().map_or(0, |&m| m + 1);
            let mut last_write: HashMap<u32, usize> = HashMap::new();
            for (i, e) in trace.events[..end].iter().enumerate() {
                if reads.contains(&i) {
                    recorded_from.insert(i, last_write.get(&e.target).copied());
                } else if e.kind.is_write() {
                    last_write.insert(e.target, i);
                }
            }
        }
        let mut sched_write: HashMap<u32, usize> = HashMap::new();
        let value_of = |i: usize| {
            let e = &trace.events[i];
            e.has_value().then(|| e.value.to_string())
        };

        let mut held: HashMap<ThreadId, Vec<u32>> = HashMap::new();
        let mut scheduled = vec![false; n];
        let mut next = 0usize; // smallest index not yet scheduled
        let mut rows = Vec::with_capacity(len);
        let mut departure = None;
        let mut race_locks: Vec<Vec<String>> = vec![Vec::new(); ending];
        for (k, &i) in schedule.iter().enumerate() {
            let e = &trace.events[i];
            let overtakes = next < i;
            if overtakes && departure.is_none() {
                departure = Some((
                    k,
                    next as u64 + 1,
                    sym.thread_name(trace.events[next].thread).to_owned(),
                ));
            }
            if k + ending >= len {
                race_locks[k + ending - len] = lock_names(sym, held.get(&e.thread));
            }
            let stale = match recorded_from.get(&i) {
                Some(&rec) => {
                    let now = sched_write.get(&e.target).copied();
                    (now != rec).then(|| Stale {
                        reads_from: now.map(|w| w as u64 + 1),
                        recorded_from: rec.map(|w| w as u64 + 1),
                        recorded_value: value_of(i),
                        value: now.and_then(value_of),
                    })
                }
                None => None,
            };
            if e.kind.is_write() {
                sched_write.insert(e.target, i);
            }
            crate::facts::track_held_locks(&mut held, e);
            scheduled[i] = true;
            while next < n && scheduled[next] {
                next += 1;
            }
            let detail = sym.loc_detail.get(e.loc as usize).and_then(|d| d.as_ref());
            rows.push(Row {
                step: k + 1,
                event: i as u64 + 1,
                thread: sym.thread_name(e.thread).to_owned(),
                column: col_of[&e.thread],
                op: op_text(e, sym),
                class: class_of(e.kind),
                lock: e
                    .kind
                    .has_lock()
                    .then(|| sym.lock_name(e.target).to_owned()),
                // The subject's rows show the locks held at them: a deadlock's request
                // blocks, it takes nothing (an access changes no lock either way).
                locks: if k + ending >= len {
                    race_locks[k + ending - len].clone()
                } else {
                    lock_names(sym, held.get(&e.thread))
                },
                location: sym.loc_name(e.loc).to_owned(),
                method: detail.map(|d| format!("{}.{}", d.class, d.method)),
                overtakes,
                race: k + ending >= len,
                stale,
            });
        }
        let prefix = departure.as_ref().map_or(len, |d| d.0).min(len - ending);
        let stale: Vec<&Stale> = rows.iter().filter_map(|r| r.stale.as_ref()).collect();
        let model = if stale.is_empty() {
            "rf"
        } else if stale
            .iter()
            .all(|s| s.recorded_value.is_some() && s.value == s.recorded_value)
        {
            "value"
        } else {
            "cf"
        };
        let mut view = View {
            race: race.clone(),
            rows,
            columns,
            folded,
            prefix,
            prefix_counts: Vec::new(),
            prefix_locks: Vec::new(),
            departure,
            race_locks,
            ending,
            deadlock: None,
            model,
        };
        view.summarize_prefix();
        Ok(view)
    }

    /// Shows the last `k` elided rows (`jrace witness --context K`): the elided prefix
    /// shrinks by `k` rows.
    pub fn expand_prefix(mut self, k: usize) -> View {
        self.prefix = self.prefix.saturating_sub(k);
        self.summarize_prefix();
        self
    }

    /// Recomputes the per-thread counts and held locks of the elided prefix from its rows.
    fn summarize_prefix(&mut self) {
        let rows = &self.rows[..self.prefix];
        let mut counts: Vec<(String, usize)> = Vec::new();
        for r in rows {
            match counts.iter_mut().find(|(t, _)| *t == r.thread) {
                Some(c) => c.1 += 1,
                None => counts.push((r.thread.clone(), 1)),
            }
        }
        self.prefix_counts = counts;
        self.prefix_locks = self
            .columns
            .iter()
            .map(|c| {
                c.threads
                    .iter()
                    .map(|t| {
                        let locks = rows
                            .iter()
                            .rev()
                            .find(|r| r.thread == *t)
                            .map(|r| r.locks.clone())
                            .unwrap_or_default();
                        (t.clone(), locks)
                    })
                    .collect()
            })
            .collect();
    }

    /// The text of a row's cell (without truncation).
    fn cell(&self, r: &Row) -> String {
        let mut s = String::new();
        if self.folded && r.column == self.ending {
            let _ = write!(s, "{}: ", r.thread);
        }
        if r.stale.is_some() {
            s.push('~');
        }
        s.push_str(&r.op);
        if !r.locks.is_empty() {
            let _ = write!(s, "  {}", braces(&r.locks));
        }
        s
    }

    fn prefix_summary(&self) -> String {
        let what = if self.prefix == 1 { "event" } else { "events" };
        let counts: Vec<String> = self
            .prefix_counts
            .iter()
            .map(|(t, c)| format!("{t} {c}"))
            .collect();
        format!("{} {what} as recorded: {}", self.prefix, counts.join(", "))
    }

    fn held_cell(&self, col: usize) -> String {
        let parts = &self.prefix_locks[col];
        if self.folded && col == self.ending {
            let busy: Vec<String> = parts
                .iter()
                .filter(|(_, l)| !l.is_empty())
                .map(|(t, l)| format!("{t} {}", braces(l)))
                .collect();
            if busy.is_empty() {
                "holds {}".into()
            } else {
                format!("holds {}", busy.join(" "))
            }
        } else {
            let l = parts.first().map(|p| p.1.clone()).unwrap_or_default();
            format!("holds {}", braces(&l))
        }
    }

    fn header_lines(&self) -> Vec<String> {
        if let Some(d) = &self.deadlock {
            return self.deadlock_header(d);
        }
        let r = &self.race;
        let mut out = vec![format!("race {}  {}  {}", r.id, r.variable, r.kind)];
        let len = self.rows.len();
        for (k, role) in ["first ", "second"].iter().enumerate() {
            let row = &self.rows[len - 2 + k];
            out.push(format!(
                "  {role}  {}  {}  {}  event {}  holds {}",
                row.thread,
                row.op,
                row.location,
                row.event,
                braces(&self.race_locks[k])
            ));
        }
        let elided = self.elided_text();
        out.push(format!(
            "witness  {} steps, model {}; {elided}; race found by {}",
            len,
            self.model,
            r.detectors.join(",")
        ));
        out
    }

    fn elided_text(&self) -> String {
        if self.prefix == 0 {
            "no step as recorded".to_owned()
        } else {
            format!(
                "first {} step{} as recorded (elided)",
                self.prefix,
                if self.prefix == 1 { "" } else { "s" }
            )
        }
    }

    fn deadlock_header(&self, d: &crate::report::deadlock::DeadlockReport) -> Vec<String> {
        let mut out = vec![format!(
            "deadlock {}  {} threads  fingerprint {}",
            d.id,
            d.threads.len(),
            d.fingerprint
        )];
        for t in &d.threads {
            out.push(format!(
                "  {}  holds {} (event {})  requests {}  {}  event {}",
                t.thread,
                t.holds,
                t.held_at.event,
                t.requests,
                t.requested_at.location,
                t.requested_at.event
            ));
        }
        out.push(format!(
            "schedule  {} steps, model {}; {}; then each thread requests its lock",
            self.rows.len() - self.ending,
            self.model,
            self.elided_text()
        ));
        out
    }

    fn deadlock_footer(&self, d: &crate::report::deadlock::DeadlockReport) -> String {
        let k = d.threads.len();
        let ran = self.rows.len() - self.ending;
        let when = if ran == 0 {
            "at the start".to_owned()
        } else {
            format!("after step {ran}")
        };
        let mut s = format!("{when}:");
        for (j, t) in d.threads.iter().enumerate() {
            let next = &d.threads[(j + 1) % k];
            let _ = write!(
                s,
                "\n  {} waits for {} ({}), which {} holds;",
                t.thread, t.requests, t.requested_at.location, next.thread
            );
        }
        s.push_str("\nno thread of the cycle can go on: a deadlock.");
        s
    }

    fn departure_text(&self) -> String {
        match &self.departure {
            Some((k, ev, t)) => {
                let row = &self.rows[*k];
                format!(
                    "departs from the recorded order here: step {} runs event {} ({}) before event {} ({})",
                    row.step, row.event, row.thread, ev, t
                )
            }
            None if self.deadlock.is_some() => {
                "the schedule runs as recorded up to the requests".to_owned()
            }
            None => "the schedule runs as recorded: the racing accesses are already adjacent in the trace"
                .to_owned(),
        }
    }

    fn footer_text(&self) -> String {
        if let Some(d) = &self.deadlock {
            return self.deadlock_footer(d);
        }
        let len = self.rows.len();
        let (a, b) = (&self.rows[len - 2], &self.rows[len - 1]);
        let verb = |op: &str| {
            if op.starts_with('w') {
                "write"
            } else {
                "read"
            }
        };
        let common: Vec<&String> = self.race_locks[0]
            .iter()
            .filter(|l| self.race_locks[1].contains(l))
            .collect();
        let common = if common.is_empty() {
            "no common lock".to_owned()
        } else {
            format!(
                "common locks {{{}}}",
                common
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        };
        let when = if len == 2 {
            "at the start".to_owned()
        } else {
            format!("after step {}", len - 2)
        };
        format!(
            "{when}: {} is about to {} {} ({}) holding {};\n{} is about to {} it ({}) holding {}; {common}.",
            a.thread,
            verb(&a.op),
            self.race.variable,
            a.location,
            braces(&self.race_locks[0]),
            b.thread,
            verb(&b.op),
            b.location,
            braces(&self.race_locks[1]),
        )
    }

    /// One footnote per `~` row shown: where the read gets its value in the schedule and
    /// where it got it in the recording.
    pub fn stale_notes(&self) -> Vec<String> {
        let src = |w: Option<u64>| match w {
            Some(e) => format!("event {e}"),
            None => "the initial value".to_owned(),
        };
        self.rows
            .iter()
            .skip(self.prefix)
            .filter_map(|r| {
                let s = r.stale.as_ref()?;
                let value = match (&s.value, &s.recorded_value) {
                    (Some(v), Some(rv)) if v == rv => format!(" (the same value, {v})"),
                    (_, Some(rv)) => format!(" (recorded value {rv})"),
                    _ => String::new(),
                };
                Some(format!(
                    "~ step {} (event {}): {} reads from {}, not from {} as recorded{value}.",
                    r.step,
                    r.event,
                    r.thread,
                    src(s.reads_from),
                    src(s.recorded_from)
                ))
            })
            .collect()
    }
}

fn braces(v: &[String]) -> String {
    format!("{{{}}}", v.join(","))
}
