//! Vector clocks indexed by thread id.
//!
//! A clock is *sparse* (sorted `(thread, value)` pairs) while few of its entries are
//! non-zero for the thread ids it spans, and *dense* (one slot per thread id up to the
//! largest) once that costs no more. Traces of a few threads have dense clocks after their
//! first events, as before; traces of thousands of (virtual) threads, where most clocks
//! (a thread's own lock, a volatile only it and its starter touch) name a handful of
//! threads with large ids, no longer cost a slot per thread in every clock, which made
//! memory quadratic in the number of threads.

use jrace_trace::ThreadId;

/// A sparse clock becomes dense when it spans at most [`DENSE_SPAN`] thread ids (a few
/// cache lines: every clock of a trace of a few threads), or when it has at least
/// [`SPARSE_MIN`] entries and a dense clock would take no more than [`DENSE_FACTOR`] times
/// as many slots as it has entries.
const DENSE_SPAN: usize = 32;
const SPARSE_MIN: usize = 8;
const DENSE_FACTOR: usize = 4;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Repr {
    /// Non-zero entries, sorted by thread id.
    Sparse(Vec<(ThreadId, u32)>),
    Dense(Vec<u32>),
}

#[derive(Clone, Debug)]
pub struct VectorClock(Repr);

/// Equal as clocks, whatever their forms.
impl PartialEq for VectorClock {
    fn eq(&self, other: &VectorClock) -> bool {
        self.entries().eq(other.entries())
    }
}

impl Eq for VectorClock {}

impl Default for VectorClock {
    fn default() -> VectorClock {
        VectorClock(Repr::Sparse(Vec::new()))
    }
}

impl VectorClock {
    pub fn new() -> VectorClock {
        VectorClock::default()
    }

    #[inline]
    pub fn get(&self, t: ThreadId) -> u32 {
        match &self.0 {
            Repr::Dense(d) => d.get(t as usize).copied().unwrap_or(0),
            Repr::Sparse(s) => match s.binary_search_by_key(&t, |e| e.0) {
                Ok(i) => s[i].1,
                Err(_) => 0,
            },
        }
    }

    #[inline]
    pub fn set(&mut self, t: ThreadId, v: u32) {
        match &mut self.0 {
            Repr::Dense(d) => {
                let i = t as usize;
                if i >= d.len() {
                    if v == 0 {
                        return;
                    }
                    if !worth_dense(i + 1, nonzero(d) + 1) {
                        let mut sp = to_sparse(d);
                        sp.push((t, v));
                        self.0 = Repr::Sparse(sp);
                        return;
                    }
                    d.resize(i + 1, 0);
                }
                d[i] = v;
            }
            Repr::Sparse(s) => {
                match s.binary_search_by_key(&t, |e| e.0) {
                    Ok(i) if v == 0 => {
                        s.remove(i);
                    }
                    Ok(i) => s[i].1 = v,
                    Err(_) if v == 0 => {}
                    Err(i) => s.insert(i, (t, v)),
                }
                self.maybe_densify();
            }
        }
    }

    #[inline]
    pub fn inc(&mut self, t: ThreadId) {
        let v = self.get(t);
        self.set(t, v + 1);
    }

    /// Pointwise maximum into `self`.
    #[inline]
    pub fn join(&mut self, other: &VectorClock) {
        match (&mut self.0, &other.0) {
            (Repr::Dense(a), Repr::Dense(b)) => join_dense(a, b),
            (Repr::Dense(a), Repr::Sparse(b)) => {
                if let Some(&(t, _)) = b.last() {
                    if t as usize >= a.len() {
                        if !worth_dense(t as usize + 1, nonzero(a) + b.len()) {
                            let sp = to_sparse(a);
                            self.0 = Repr::Sparse(sp);
                            return self.join(other);
                        }
                        a.resize(t as usize + 1, 0);
                    }
                }
                for &(t, v) in b {
                    let x = &mut a[t as usize];
                    if v > *x {
                        *x = v;
                    }
                }
            }
            (Repr::Sparse(a), Repr::Dense(b)) => {
                let span = b.len().max(a.last().map_or(0, |e| e.0 as usize + 1));
                if !worth_dense(span, a.len() + nonzero(b)) {
                    let sb = to_sparse(b);
                    *a = merge_sparse(a, &sb);
                    return;
                }
                let mut d = b.clone();
                for &(t, v) in a.iter() {
                    let i = t as usize;
                    if i >= d.len() {
                        d.resize(i + 1, 0);
                    }
                    if v > d[i] {
                        d[i] = v;
                    }
                }
                self.0 = Repr::Dense(d);
            }
            (Repr::Sparse(a), Repr::Sparse(b)) => {
                if b.is_empty() {
                    return;
                }
                *a = merge_sparse(a, b);
                self.maybe_densify();
            }
        }
    }

    /// `self ⊑ other` pointwise.
    pub fn le(&self, other: &VectorClock) -> bool {
        match &self.0 {
            Repr::Dense(a) => a
                .iter()
                .enumerate()
                .all(|(i, &v)| v <= other.get(i as ThreadId)),
            Repr::Sparse(a) => a.iter().all(|&(t, v)| v <= other.get(t)),
        }
    }

    /// Copies `other` into `self`, reusing the allocation when both have the same form.
    pub fn assign(&mut self, other: &VectorClock) {
        match (&mut self.0, &other.0) {
            (Repr::Dense(a), Repr::Dense(b)) => {
                a.clear();
                a.extend_from_slice(b);
            }
            (Repr::Sparse(a), Repr::Sparse(b)) => {
                a.clear();
                a.extend_from_slice(b);
            }
            _ => self.0 = other.0.clone(),
        }
    }

    /// The non-zero entries `(thread, value)`, by thread id.
    pub fn entries(&self) -> impl Iterator<Item = (ThreadId, u32)> + '_ {
        let (dense, sparse) = match &self.0 {
            Repr::Dense(d) => (Some(d), None),
            Repr::Sparse(s) => (None, Some(s)),
        };
        let d = dense.into_iter().flat_map(|d| dense_entries(d));
        d.chain(sparse.into_iter().flat_map(|s| s.iter().copied()))
    }

    fn maybe_densify(&mut self) {
        if let Repr::Sparse(s) = &self.0 {
            let span = s.last().map_or(0, |e| e.0 as usize + 1);
            if span > 0 && worth_dense(span, s.len()) {
                let mut d = vec![0u32; span];
                for &(t, v) in s {
                    d[t as usize] = v;
                }
                self.0 = Repr::Dense(d);
            }
        }
    }
}

/// The pointwise maximum of two sparse clocks.
fn merge_sparse(a: &[(ThreadId, u32)], b: &[(ThreadId, u32)]) -> Vec<(ThreadId, u32)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        match x.0.cmp(&y.0) {
            std::cmp::Ordering::Less => {
                out.push(x);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(y);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((x.0, x.1.max(y.1)));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Whether a clock of `entries` non-zero entries, the largest at `span - 1`, is better
/// dense.
#[inline]
fn worth_dense(span: usize, entries: usize) -> bool {
    span <= DENSE_SPAN || (entries >= SPARSE_MIN && span <= DENSE_FACTOR * entries)
}

fn nonzero(d: &[u32]) -> usize {
    d.iter().filter(|&&v| v != 0).count()
}

/// The non-zero slots of a dense clock, as `(thread, value)`.
fn dense_entries(d: &[u32]) -> impl Iterator<Item = (ThreadId, u32)> + '_ {
    d.iter()
        .enumerate()
        .filter(|(_, &v)| v != 0)
        .map(|(i, &v)| (i as ThreadId, v))
}

fn to_sparse(d: &[u32]) -> Vec<(ThreadId, u32)> {
    dense_entries(d).collect()
}

#[inline]
fn join_dense(a: &mut Vec<u32>, b: &[u32]) {
    if b.len() > a.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b.iter()) {
        if *y > *x {
            *x = *y;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// A plain dense model of a clock.
    fn model(c: &VectorClock, n: usize) -> Vec<u32> {
        (0..n as ThreadId).map(|t| c.get(t)).collect()
    }

    #[test]
    fn sparse_and_dense_agree_with_a_dense_model() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut mixed = 0;
        for round in 0..300 {
            // Thread ids from a narrow range (clocks are dense at once), a middle one (some
            // densify along the way, so sparse and dense clocks meet) or a wide one.
            let n: u32 = [12, 150, 5000][round % 3];
            let mut clocks: Vec<VectorClock> = (0..4).map(|_| VectorClock::new()).collect();
            let mut models: Vec<Vec<u32>> = vec![vec![0; n as usize]; 4];
            let mut forms = [0usize; 2];
            for _ in 0..150 {
                let (i, j) = (rng.gen_range(0..4), rng.gen_range(0..4));
                let t = rng.gen_range(0..n);
                match rng.gen_range(0..5) {
                    0 => {
                        let v = rng.gen_range(0..50);
                        clocks[i].set(t, v);
                        models[i][t as usize] = v;
                    }
                    1 => {
                        clocks[i].inc(t);
                        models[i][t as usize] += 1;
                    }
                    2 => {
                        let o = clocks[j].clone();
                        clocks[i].join(&o);
                        let mj = models[j].clone();
                        for (a, b) in models[i].iter_mut().zip(mj) {
                            *a = (*a).max(b);
                        }
                    }
                    3 => {
                        let o = clocks[j].clone();
                        clocks[i].assign(&o);
                        models[i] = models[j].clone();
                    }
                    _ => {
                        let le = models[i].iter().zip(&models[j]).all(|(a, b)| a <= b);
                        assert_eq!(clocks[i].le(&clocks[j]), le);
                    }
                }
                assert_eq!(model(&clocks[i], n as usize), models[i]);
                let nz: Vec<(ThreadId, u32)> = models[i]
                    .iter()
                    .enumerate()
                    .filter(|(_, &v)| v != 0)
                    .map(|(k, &v)| (k as ThreadId, v))
                    .collect();
                assert_eq!(clocks[i].entries().collect::<Vec<_>>(), nz);
                forms[matches!(clocks[i].0, Repr::Dense(_)) as usize] += 1;
            }
            if n == 150 {
                mixed += (forms[0] > 0 && forms[1] > 0) as u32;
            }
        }
        assert!(mixed > 50, "sparse and dense clocks met in {mixed} rounds");
    }

    #[test]
    fn few_entries_with_large_ids_stay_sparse() {
        let mut c = VectorClock::new();
        c.set(0, 3);
        c.set(29_999, 1);
        assert!(matches!(c.0, Repr::Sparse(_)));
        let mut d = VectorClock::new();
        d.set(3, 1);
        assert!(
            matches!(d.0, Repr::Dense(_)),
            "a small span is dense at once"
        );
        let mut e = VectorClock::new();
        for t in 0..16 {
            e.set(1000 + 7 * t, 1);
        }
        assert!(matches!(e.0, Repr::Sparse(_)));
        for t in 0..300 {
            e.set(t, 1);
        }
        assert!(
            matches!(e.0, Repr::Dense(_)),
            "entries for most ids up to the largest"
        );
    }
}
