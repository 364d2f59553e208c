//! Values as the value models compare them, initial values, and reads no traced write
//! explains: facts about the trace that the witnesses, the solver detectors and the
//! deadlock detector all read.

use jrace_trace::{Event, Kind};
use std::collections::HashMap;

/// A value as the value models compare them: `(0, v)` a recorded value `v`, `(1, i)` the
/// value written by event `i`, which no other write has (a write without a value, or a
/// JDK write, [`jrace_trace::FLAG_JDK`]), `(2, 0)` the initial value seen by a read
/// without a value that observed no write.
pub type ValueKey = (u8, i64);

/// The value key of every access (other events get `(2, 0)`): recorded values where the
/// trace has them; for a write without one, or a JDK write, a token of its own; for a read
/// the key of the write it observed (docs/DETECTORS.md#reads-from) when it has that write's
/// value (or no value), else its own value; the initial-value token for a read without a
/// value that observed no write.
pub fn value_keys(events: &[Event]) -> Vec<ValueKey> {
    // Per variable: the key and the value (if any) of its last write.
    let mut last: Dense<Option<(ValueKey, Option<i64>)>> = Dense::default();
    events
        .iter()
        .enumerate()
        .map(|(i, e)| match e.kind {
            Kind::Write | Kind::VWrite => {
                // The JDK's own writes (and writes without values) are their own key: what
                // a JDK read saw decides code the trace does not show, so it may only read
                // from its recorded writer, never from another write of the same value.
                let k = if e.has_value() && !e.is_jdk() {
                    (0, e.value)
                } else {
                    (1, i as i64)
                };
                *last.get_mut(e.target) = Some((k, e.has_value().then_some(e.value)));
                k
            }
            Kind::Read | Kind::VRead => {
                match last.get(e.target) {
                    // Reads its writer's value: the writer's key (a JDK writer's own).
                    Some((k, v)) if !e.has_value() || v == Some(e.value) => k,
                    // A value its writer did not write: its own value (unexplained reads).
                    _ if e.has_value() => (0, e.value),
                    Some((k, _)) => k,
                    None => (2, 0),
                }
            }
            _ => (2, 0),
        })
        .collect()
}

/// A map from dense ids (variables, threads) to values: a vector that grows on demand,
/// much cheaper than hashing once per event of a long trace.
pub struct Dense<T> {
    v: Vec<T>,
}

impl<T> Default for Dense<T> {
    fn default() -> Self {
        Dense { v: Vec::new() }
    }
}

impl<T: Default + Copy> Dense<T> {
    pub fn get_mut(&mut self, id: u32) -> &mut T {
        crate::wcp::slot(&mut self.v, id)
    }

    /// The value of `id`, the default when never set.
    pub fn get(&self, id: u32) -> T {
        self.v.get(id as usize).copied().unwrap_or_default()
    }

    pub fn into_vec(self) -> Vec<T> {
        self.v
    }
}

/// Per variable: its value before the trace, when known: the value its first access read
/// (None when that access is a write, or the variable is never accessed).
pub fn initial_values(events: &[Event], keys: &[ValueKey]) -> HashMap<u32, Option<ValueKey>> {
    initial_values_dense(events, keys)
        .into_iter()
        .enumerate()
        .filter_map(|(v, k)| k.map(|k| (v as u32, k)))
        .collect()
}

/// [`initial_values`] indexed by variable (`None` for a variable never accessed).
pub fn initial_values_dense(events: &[Event], keys: &[ValueKey]) -> Vec<Option<Option<ValueKey>>> {
    let mut init: Dense<Option<Option<ValueKey>>> = Dense::default();
    for (i, e) in events.iter().enumerate() {
        if e.kind.is_access() {
            let slot = init.get_mut(e.target);
            if slot.is_none() {
                *slot = Some(if e.kind.is_write() {
                    None
                } else {
                    Some(keys[i])
                });
            }
        }
    }
    init.into_vec()
}

/// The reads whose recorded value no traced write explains (test vector r08b_missingwrite):
/// a valued read whose observed write has another recorded value, or that observed no write
/// and differs from the variable's initial value (the first value read). Missing code (an
/// excluded library, native code, a copy the agent did not record) wrote it, at a moment
/// the trace does not show, so such a read returns its recorded value for sure only where
/// it was recorded: after exactly the events before it in the trace. The encodings give it
/// no recorded-writer or initial-value alternative, only writes of the same value.
/// ([`UnexplainedCounter`] is the definition, event by event.)
pub fn unexplained_reads(events: &[Event]) -> std::collections::HashSet<u32> {
    let mut c = UnexplainedCounter::default();
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| c.add(e))
        .map(|(i, _)| i as u32)
        .collect()
}

/// The reads no traced write explains ([`unexplained_reads`]), decided event by event in
/// trace order (also while streaming: `jrace stats`). Per variable it keeps the value key
/// of its first access if that is a read (its initial value, [`initial_values`]) and the
/// value of its last write.
#[derive(Default)]
pub struct UnexplainedCounter {
    /// Per variable: whether it was seen, the key of its first access if a read, and the
    /// value of its last write.
    vars: Dense<(bool, Option<ValueKey>, Option<Option<i64>>)>,
    /// Valued reads seen, and those no traced write explains.
    pub reads: u64,
    pub unexplained: u64,
}

impl UnexplainedCounter {
    /// Takes the next event of the trace; `true` when it is a read no traced write
    /// explains.
    pub fn add(&mut self, e: &Event) -> bool {
        if !e.kind.is_access() {
            return false;
        }
        let st = self.vars.get_mut(e.target);
        let seen = std::mem::replace(&mut st.0, true);
        let st = (&mut st.1, &mut st.2);
        if e.kind.is_write() {
            *st.1 = Some(e.has_value().then_some(e.value));
            return false;
        }
        if !seen {
            *st.0 = Some(if e.has_value() { (0, e.value) } else { (2, 0) });
        }
        if !e.has_value() {
            return false;
        }
        self.reads += 1;
        let explained = match *st.1 {
            Some(w) => w.is_none_or(|v| v == e.value),
            None => *st.0 == Some((0, e.value)),
        };
        self.unexplained += u64::from(!explained);
        !explained
    }
}
