//! Running a schedule: the state the validator keeps (positions, last writers, lock
//! owners, and for the value models values and tainted threads) and the rules each event
//! is checked against.

use super::*;

/// The state of a schedule being run: per-thread positions, last writers, lock owners.
#[derive(Clone)]
pub(super) struct Sim {
    pos: Vec<u32>,
    last_write: Vec<u32>,
    /// Dense thread holding each lock, or `NONE`.
    owner: Vec<u32>,
    model: Model,
    /// Value models: each variable's current value, `None` when unknown.
    cur: Vec<Option<ValueKey>>,
    /// Value models: threads that read a value other than the recorded one.
    taint: Vec<bool>,
    /// Value models: waits whose matched notify ran before them (their wake may not run).
    lost: Vec<u32>,
    /// Read-modify-writes whose read ran and whose write did not: (variable, thread).
    rmw: Vec<(u32, u32)>,
    /// How many events are done, and the first event not done (the schedule so far is
    /// the recorded prefix `0..frontier` exactly when both equal).
    ndone: usize,
    frontier: usize,
    /// Value models on a trace without branches (conservative mode): every read may
    /// decide what its thread does next, its ending too, so a thread whose read changed
    /// runs nothing more and cannot be joined.
    reads_guard_all: bool,
}

impl Sim {
    /// Per dense thread: how many of its events ran.
    pub(super) fn pos(&self) -> &[u32] {
        &self.pos
    }

    /// Becomes a copy of `other`, reusing this one's memory (a clone of a large trace's
    /// state is mostly page faults).
    pub(super) fn copy_from(&mut self, other: &Sim) {
        self.pos.clone_from(&other.pos);
        self.last_write.clone_from(&other.last_write);
        self.owner.clone_from(&other.owner);
        self.model = other.model;
        self.cur.clone_from(&other.cur);
        self.taint.clone_from(&other.taint);
        self.lost.clone_from(&other.lost);
        self.rmw.clone_from(&other.rmw);
        self.ndone = other.ndone;
        self.frontier = other.frontier;
        self.reads_guard_all = other.reads_guard_all;
    }

    /// The feasibility model it checks in.
    pub(super) fn model(&self) -> Model {
        self.model
    }

    /// Per lock: the dense thread holding it, or `NONE`.
    pub(super) fn owners(&self) -> &[u32] {
        &self.owner
    }

    pub(super) fn new(f: &Facts) -> Sim {
        Sim::with_model(f, Model::Rf)
    }

    pub(super) fn with_model(f: &Facts, model: Model) -> Sim {
        let valued = model != Model::Rf;
        Sim {
            pos: vec![0; f.threads.len()],
            last_write: vec![NONE; f.nvars],
            owner: vec![NONE; f.nlocks],
            model,
            cur: if valued { f.init.clone() } else { Vec::new() },
            taint: vec![false; if valued { f.threads.len() } else { 0 }],
            lost: Vec::new(),
            rmw: Vec::new(),
            ndone: 0,
            frontier: 0,
            reads_guard_all: valued && !f.trace.has_branches,
        }
    }

    /// Value models: whether read `i` would return its recorded value now: its value is
    /// the current one, or it reads from its recorded writer, and for a read whose value
    /// missing code wrote ([`unexplained_reads`]) only at its recorded place.
    pub(super) fn concrete_read(&self, f: &Facts, i: usize) -> bool {
        let v = f.ev(i).target as usize;
        let cur = self.cur[v];
        cur == Some(f.keys[i])
            || (self.last_write[v] == f.observed[i]
                && (f.observed[i] == NONE || cur.is_some())
                && (!f.unexplained.contains(&(i as u32))
                    || (self.ndone == i && self.frontier == i)))
    }

    pub(super) fn done(&self, f: &Facts, i: u32) -> bool {
        self.pos[f.tix[i as usize] as usize] > f.local[i as usize]
    }

    /// Whether event `i` may run next; `exempt` skips the reads-from rule (racing reads).
    pub(super) fn check(&self, f: &Facts, i: usize, exempt: bool) -> Result<(), (Rule, String)> {
        let t = f.tix[i] as usize;
        let e = f.ev(i);
        let sym = &f.trace.symbols;
        let p = self.pos[t];
        let l = f.local[i];
        if l < p {
            return Err((
                Rule::Format,
                format!("{} is already in the schedule", f.describe(i)),
            ));
        }
        if l > p {
            let missing = f.threads[t][p as usize] as usize;
            return Err((
                Rule::Po,
                format!(
                    "{} is not the next event of its thread: {} comes first",
                    f.describe(i),
                    f.describe(missing)
                ),
            ));
        }
        if l == 0 && f.fork_of[t] != NONE && !self.done(f, f.fork_of[t]) {
            return Err((
                Rule::Fork,
                format!(
                    "{} runs before thread {} is forked by {}",
                    f.describe(i),
                    sym.thread_name(e.thread),
                    f.describe(f.fork_of[t] as usize)
                ),
            ));
        }
        if let Some(&x) = f
            .before
            .get(&(i as u32))
            .and_then(|xs| xs.iter().find(|&&x| !self.done(f, x)))
        {
            return Err((
                Rule::Barrier,
                format!(
                    "{} runs before {}, which missing code orders before it (BarrierPair)",
                    f.describe(i),
                    f.describe(x as usize)
                ),
            ));
        }
        let owner = |lk: u32| self.owner[lk as usize];
        let holder = |lk: u32| match owner(lk) {
            NONE => "no thread".to_owned(),
            o => format!("thread {}", f.thread_name_dense(o)),
        };
        if self.model != Model::Rf {
            match e.kind {
                Kind::Read | Kind::VRead
                    if !exempt && self.model == Model::Value && !self.concrete_read(f, i) =>
                {
                    return Err((
                        Rule::Val,
                        format!(
                            "{} would not return its recorded value {}",
                            f.describe(i),
                            e.value
                        ),
                    ));
                }
                _ if self.reads_guard_all && self.taint[t] => {
                    return Err((
                        Rule::Cf,
                        format!(
                            "{}: an earlier read of its thread returned another value than recorded, and without recorded branches that read may decide what the thread does next",
                            f.describe(i)
                        ),
                    ));
                }
                Kind::Branch | Kind::Enter | Kind::Exit if self.taint[t] => {
                    return Err((
                        Rule::Cf,
                        format!(
                            "{}: an earlier read of its thread returned another value than recorded, so this control decision may differ",
                            f.describe(i)
                        ),
                    ));
                }
                _ => {}
            }
        }
        // W-ATOMIC: no write to a variable, and no second read-modify-write of it, while
        // another thread's read-modify-write of it is half done.
        let opens = e.kind == Kind::VRead && f.rmw_write(i).is_some();
        if e.kind.is_write() || opens {
            if let Some(&(_, u)) = self
                .rmw
                .iter()
                .find(|&&(x, u)| x == e.target && u != t as u32)
            {
                return Err((
                    Rule::Atomic,
                    format!(
                        "{} would come inside thread {}'s read-modify-write of its variable",
                        f.describe(i),
                        f.thread_name_dense(u)
                    ),
                ));
            }
        }
        match e.kind {
            Kind::Read | Kind::VRead if !exempt && self.model == Model::Rf => {
                let want = f.observed[i];
                let got = self.last_write[e.target as usize];
                if got != want {
                    let name = |w: u32| {
                        if w == NONE {
                            "the initial value".to_owned()
                        } else {
                            f.describe(w as usize)
                        }
                    };
                    return Err((
                        Rule::Rf,
                        format!(
                            "{} would read from {}, but in the trace it reads from {}",
                            f.describe(i),
                            name(got),
                            name(want)
                        ),
                    ));
                }
            }
            Kind::Acquire => {
                let ok = if e.is_nested() {
                    owner(e.target) == t as u32
                } else {
                    owner(e.target) == NONE
                };
                if !ok {
                    return Err((
                        Rule::Lock,
                        format!(
                            "{}: lock {} is held by {}",
                            f.describe(i),
                            sym.lock_name(e.target),
                            holder(e.target)
                        ),
                    ));
                }
            }
            Kind::Release | Kind::Wait | Kind::Notify | Kind::NotifyAll => {
                if owner(e.target) != t as u32 {
                    return Err((
                        Rule::Lock,
                        format!(
                            "{}: lock {} is held by {}, not by this thread",
                            f.describe(i),
                            sym.lock_name(e.target),
                            holder(e.target)
                        ),
                    ));
                }
                if let Some(ws) = f
                    .notify_waits
                    .get(&(i as u32))
                    .filter(|_| self.model == Model::Rf)
                {
                    if let Some(&w) = ws.iter().find(|&&w| !self.done(f, w)) {
                        return Err((
                            Rule::Notify,
                            format!(
                                "{} runs before {}, whose wake it is matched with",
                                f.describe(i),
                                f.describe(w as usize)
                            ),
                        ));
                    }
                }
            }
            Kind::Wake => {
                if owner(e.target) != NONE {
                    return Err((
                        Rule::Lock,
                        format!(
                            "{} cannot re-acquire lock {}: it is held by {}",
                            f.describe(i),
                            sym.lock_name(e.target),
                            holder(e.target)
                        ),
                    ));
                }
                let nt = f.wake_notify[i];
                if let Some(w) = f
                    .wake_wait
                    .get(&(i as u32))
                    .filter(|w| self.lost.contains(w))
                {
                    return Err((
                        Rule::Notify,
                        format!(
                            "{} cannot return: its notify {} ran before {}, and notified nobody",
                            f.describe(i),
                            f.describe(nt as usize),
                            f.describe(*w as usize)
                        ),
                    ));
                }
                if nt != NONE && !self.done(f, nt) {
                    return Err((
                        Rule::Notify,
                        format!(
                            "{} runs before {}, the notify it is matched with",
                            f.describe(i),
                            f.describe(nt as usize)
                        ),
                    ));
                }
            }
            Kind::Join => {
                if let Some(&c) = f.dense.get(&e.target) {
                    let c = c as usize;
                    let len = f.threads[c].len() as u32;
                    if self.pos[c] < len {
                        return Err((
                            Rule::Join,
                            format!(
                                "{} runs before thread {}'s {} is scheduled",
                                f.describe(i),
                                sym.thread_name(e.target),
                                f.describe(f.threads[c][self.pos[c] as usize] as usize)
                            ),
                        ));
                    }
                    if self.reads_guard_all && self.taint[c] {
                        return Err((
                            Rule::Cf,
                            format!(
                                "{}: a read of thread {} returned another value than recorded, so whether it ends is not known",
                                f.describe(i),
                                sym.thread_name(e.target)
                            ),
                        ));
                    }
                } else if let Some(fk) = f.join_after(e.target).filter(|&k| !self.done(f, k)) {
                    return Err((
                        Rule::Join,
                        format!(
                            "{} runs before thread {} is started by {}",
                            f.describe(i),
                            sym.thread_name(e.target),
                            f.describe(fk as usize)
                        ),
                    ));
                }
            }
            _ => {}
        }
        Ok(())
    }

    pub(super) fn apply(&mut self, f: &Facts, i: usize) {
        let t = f.tix[i];
        let e = f.ev(i);
        if e.kind == Kind::VRead && f.rmw_write(i).is_some() {
            self.rmw.push((e.target, t));
        } else if e.kind == Kind::VWrite && !self.rmw.is_empty() {
            self.rmw.retain(|&(x, u)| (x, u) != (e.target, t));
        }
        if self.model != Model::Rf {
            match e.kind {
                Kind::Read | Kind::VRead if !self.concrete_read(f, i) => {
                    self.taint[t as usize] = true;
                }
                Kind::Write | Kind::VWrite => {
                    self.cur[e.target as usize] = if self.taint[t as usize] {
                        None
                    } else {
                        Some(f.keys[i])
                    };
                }
                Kind::Notify | Kind::NotifyAll => {
                    if let Some(ws) = f.notify_waits.get(&(i as u32)) {
                        for &w in ws {
                            if !self.done(f, w) {
                                self.lost.push(w);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        self.pos[t as usize] += 1;
        self.ndone += 1;
        if !f.unexplained.is_empty() {
            while self.frontier < f.trace.events.len() && self.done(f, self.frontier as u32) {
                self.frontier += 1;
            }
        }
        match e.kind {
            Kind::Write | Kind::VWrite => self.last_write[e.target as usize] = i as u32,
            Kind::Acquire if !e.is_nested() => self.owner[e.target as usize] = t,
            Kind::Wake => self.owner[e.target as usize] = t,
            Kind::Release if !e.is_nested() => self.owner[e.target as usize] = NONE,
            Kind::Wait => self.owner[e.target as usize] = NONE,
            _ => {}
        }
    }
}
