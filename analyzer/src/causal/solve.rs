//! The only z3-specific code: translating [`Constraints`] for a solver of the current
//! thread (z3's contexts are thread-local in the `z3` crate), checking under a timeout,
//! and reading the order variables back from a model.

use super::formula::{Constraints, Term, F};
use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use z3::ast::{Bool, Int};
use z3::{Params, SatResult, Solver};

/// A solver's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A model: the order value of each event of the query (window-local index), and
    /// the cut (for queries without a cut, 0).
    Sat {
        order: Vec<(u32, i64)>,
        cut: i64,
    },
    Unsat,
    /// Timeout, resource limit or solver error: not proved either way.
    Unknown,
}

/// One z3 solver plus the translation of the assertions in its base scope.
pub struct Z3 {
    solver: Solver,
    ints: HashMap<u32, Int>,
    cut: Int,
    bools: HashMap<u32, Bool>,
}

impl Z3 {
    /// A fresh solver; `timeout_ms` applies to every `check` (0: none). Creating one
    /// costs about 10 ms: use [`with_solver`] to reuse the thread's solver.
    pub fn new(timeout_ms: u32) -> Z3 {
        // Every atom is a difference constraint: z3's Bellman-Ford difference-logic
        // solver is about 10 times faster here than its default arithmetic (measured on
        // the benchmark traces). A global parameter, read when a context is created.
        static ARITH: std::sync::Once = std::sync::Once::new();
        ARITH.call_once(|| z3::set_global_param("smt.arith.solver", "1"));
        let solver = Solver::new();
        set_timeout(&solver, timeout_ms);
        Z3 {
            solver,
            ints: HashMap::default(),
            cut: Int::new_const("C"),
            bools: HashMap::default(),
        }
    }

    fn term(&mut self, t: Term) -> Int {
        match t {
            Term::Cut => self.cut.clone(),
            Term::Ev(k) => self
                .ints
                .entry(k)
                .or_insert_with(|| Int::new_const(format!("o{k}")))
                .clone(),
        }
    }

    fn boolean(&mut self, b: u32) -> Bool {
        self.bools
            .entry(b)
            .or_insert_with(|| Bool::new_const(format!("b{b}")))
            .clone()
    }

    fn tr(&mut self, f: &F) -> Bool {
        match f {
            F::True => Bool::from_bool(true),
            F::False => Bool::from_bool(false),
            F::Lt(x, y) => {
                let (x, y) = (self.term(*x), self.term(*y));
                x.lt(&y)
            }
            F::Le(x, y) => {
                let (x, y) = (self.term(*x), self.term(*y));
                x.le(&y)
            }
            F::Eq(x, y) => {
                let (x, y) = (self.term(*x), self.term(*y));
                x.eq(&y)
            }
            F::B(b) => self.boolean(*b),
            F::And(v) => {
                let v: Vec<Bool> = v.iter().map(|f| self.tr(f)).collect();
                Bool::and(&v)
            }
            F::Or(v) => {
                let v: Vec<Bool> = v.iter().map(|f| self.tr(f)).collect();
                Bool::or(&v)
            }
            F::Implies(b, f) => {
                let b = self.boolean(*b);
                let f = self.tr(f);
                b.implies(&f)
            }
        }
    }

    /// Asserts every assertion of `c` in the current scope. Boolean ids of different
    /// [`Constraints`] must not clash in one scope: use a fresh [`Z3`] or push/pop.
    pub fn assert_all(&mut self, c: &Constraints) {
        for f in &c.asserts {
            let b = self.tr(f);
            self.solver.assert(&b);
        }
    }

    pub fn assert(&mut self, f: &F) {
        let b = self.tr(f);
        self.solver.assert(&b);
    }

    pub fn push(&mut self) {
        self.solver.push();
    }

    /// Pops one scope, forgetting the translations made in it.
    pub fn pop(&mut self, keep_ints: &[u32]) {
        self.solver.pop(1);
        // Constants are global to the context; dropping the cache only saves memory.
        if self.ints.len() > 4 * keep_ints.len() + 1024 {
            self.ints.retain(|k, _| keep_ints.binary_search(k).is_ok());
        }
        self.bools.clear();
    }

    /// Checks, and on `sat` reads the order value of each of `events`.
    pub fn check(&mut self, events: &[u32]) -> Answer {
        match self.solver.check() {
            SatResult::Unsat => Answer::Unsat,
            SatResult::Unknown => Answer::Unknown,
            SatResult::Sat => {
                let Some(m) = self.solver.get_model() else {
                    return Answer::Unknown;
                };
                let mut order = Vec::with_capacity(events.len());
                for &k in events {
                    let v = self.term(Term::Ev(k));
                    match m.eval(&v, true).and_then(|x| x.as_i64()) {
                        Some(x) => order.push((k, x)),
                        None => return Answer::Unknown,
                    }
                }
                let cut = m
                    .eval(&self.cut, true)
                    .and_then(|x| x.as_i64())
                    .unwrap_or(0);
                Answer::Sat { order, cut }
            }
        }
    }
}

fn set_timeout(solver: &Solver, timeout_ms: u32) {
    let mut p = Params::new();
    p.set_u32(
        "timeout",
        if timeout_ms == 0 {
            u32::MAX
        } else {
            timeout_ms
        },
    );
    solver.set_params(&p);
}

struct Cached {
    z: Z3,
    /// Id of the base constraints asserted in the first scope (0: none).
    base: u64,
    timeout_ms: u32,
}

thread_local! {
    static CACHED: RefCell<Option<Cached>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's solver (created once per thread: creating a z3 solver
/// costs far more than a small query), with `base` asserted in its first scope: the
/// constraints identified by `base.0` stay there for later calls with the same id, and
/// are popped when another id comes. `f` must leave the scopes as it found them.
pub fn with_solver<R>(
    timeout_ms: u32,
    base: Option<(u64, &Constraints)>,
    f: impl FnOnce(&mut Z3) -> R,
) -> R {
    CACHED.with(|c| {
        let mut c = c.borrow_mut();
        let cached = c.get_or_insert_with(|| Cached {
            z: Z3::new(timeout_ms),
            base: 0,
            timeout_ms,
        });
        if cached.timeout_ms != timeout_ms {
            set_timeout(&cached.z.solver, timeout_ms);
            cached.timeout_ms = timeout_ms;
        }
        let want = base.map_or(0, |b| b.0);
        if cached.base != want {
            if cached.base != 0 {
                cached.z.pop(&[]);
            }
            if let Some((id, b)) = base {
                cached.z.push();
                cached.z.assert_all(b);
                cached.base = id;
            } else {
                cached.base = 0;
            }
        }
        f(&mut cached.z)
    })
}
