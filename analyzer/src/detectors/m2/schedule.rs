//! m2's witnesses as trace schedules (docs/REPORT.md#witnesses): the schedule of `X`'s
//! model events that m2 proved (Lemma 5.1's `t|X`, or `decide`'s replayed max-min
//! linearization), expanded with the events M2's model leaves out (`branch`, `begin`/`end`,
//! `enter`/`exit`, re-entrant inner acquires and releases), then the racing pair.
//!
//! Those events constrain nothing in M2's model, but a witness must run every thread as
//! a prefix of its program order, so each one goes just before the next scheduled event
//! of its thread. Two more are needed: before a `join(u)`, the rest of `u`'s events
//! before the join in the trace (typically `end`, which the validator's W-JOIN wants
//! done); and before the race, the events of the two racing threads that precede their
//! access. The result is checked by the witness validator ([`crate::witness`]) before
//! anyone sees it; nothing here is trusted.

use super::model::{Model, NONE};
use jrace_trace::Kind;

/// Every event (model or not) per dense thread, and each event's place there.
pub(super) struct Expander {
    all: Vec<Vec<u32>>,
    apos: Vec<u32>,
}

impl Expander {
    pub fn new(m: &Model) -> Expander {
        let mut all: Vec<Vec<u32>> = vec![Vec::new(); m.k];
        let mut apos = vec![0u32; m.events.len()];
        for (g, e) in m.events.iter().enumerate() {
            let d = (m.dense[e.thread as usize] - 1) as usize;
            apos[g] = all[d].len() as u32;
            all[d].push(g as u32);
        }
        Expander { all, apos }
    }

    fn thread(&self, m: &Model, g: u32) -> usize {
        (m.dense[m.events[g as usize].thread as usize] - 1) as usize
    }

    /// `w` (model events of `X`, in schedule order) expanded to every event, then `e1`
    /// and `e2`: 0-based trace indices.
    pub fn expand(&self, m: &Model, w: &[u32], e1: u32, e2: u32) -> Vec<u64> {
        let mut done = vec![0u32; m.k];
        let mut out: Vec<u64> = Vec::with_capacity(w.len() + 2);
        // The events of thread `c` before `g` not yet scheduled.
        let catch_up = |c: usize, upto: u32, done: &mut [u32], out: &mut Vec<u64>| {
            while done[c] < upto {
                out.push(self.all[c][done[c] as usize] as u64);
                done[c] += 1;
            }
        };
        for &g in w {
            let c = self.thread(m, g);
            let e = &m.events[g as usize];
            if e.kind == Kind::Join {
                let u = m.dense[e.target as usize];
                if u != 0 {
                    let u = (u - 1) as usize;
                    let upto = self.all[u].partition_point(|&j| j < g) as u32;
                    catch_up(u, upto, &mut done, &mut out);
                }
            }
            catch_up(c, self.apos[g as usize], &mut done, &mut out);
            out.push(g as u64);
            done[c] = done[c].max(self.apos[g as usize] + 1);
        }
        for e in [e1, e2] {
            let c = self.thread(m, e);
            catch_up(c, self.apos[e as usize], &mut done, &mut out);
        }
        out.push(e1 as u64);
        out.push(e2 as u64);
        out
    }
}

/// Lemma 5.1's witness before expansion: the model events of `X` in trace order.
pub(super) fn trace_order(m: &Model, x: &[i32]) -> Vec<u32> {
    let ends: Vec<u32> = x.iter().map(|&p| (p + 1) as u32).collect();
    prefixes_in_trace_order(m, &ends)
}

/// The model events at positions below `ends[c]` of every thread `c`, in trace order: a
/// scan of the trace up to the last of them (no sort).
pub(super) fn prefixes_in_trace_order(m: &Model, ends: &[u32]) -> Vec<u32> {
    let total: usize = ends.iter().map(|&e| e as usize).sum();
    let last = (0..ends.len())
        .filter(|&c| ends[c] > 0)
        .map(|c| m.chain[c][ends[c] as usize - 1])
        .max();
    let mut w: Vec<u32> = Vec::with_capacity(total);
    if let Some(last) = last {
        for g in 0..=last {
            let c = m.tix[g as usize];
            if c != NONE && m.pos[g as usize] < ends[c as usize] {
                w.push(g);
            }
        }
    }
    debug_assert_eq!(w.len(), total);
    w
}
