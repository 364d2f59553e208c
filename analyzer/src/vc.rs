//! Vector clocks indexed by thread id, growing on demand.

use jrace_trace::ThreadId;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VectorClock(Vec<u32>);

impl VectorClock {
    pub fn new() -> VectorClock {
        VectorClock(Vec::new())
    }
    #[inline]
    pub fn get(&self, t: ThreadId) -> u32 {
        self.0.get(t as usize).copied().unwrap_or(0)
    }
    #[inline]
    pub fn set(&mut self, t: ThreadId, v: u32) {
        let i = t as usize;
        if i >= self.0.len() {
            self.0.resize(i + 1, 0);
        }
        self.0[i] = v;
    }
    #[inline]
    pub fn inc(&mut self, t: ThreadId) {
        let v = self.get(t);
        self.set(t, v + 1);
    }
    /// Pointwise maximum into `self`.
    #[inline]
    pub fn join(&mut self, other: &VectorClock) {
        if other.0.len() > self.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            if *b > *a {
                *a = *b;
            }
        }
    }
    /// `self ⊑ other` pointwise.
    pub fn le(&self, other: &VectorClock) -> bool {
        self.0
            .iter()
            .enumerate()
            .all(|(i, &a)| a <= other.get(i as ThreadId))
    }
    /// Copies `other` into `self`, reusing the allocation.
    pub fn assign(&mut self, other: &VectorClock) {
        self.0.clear();
        self.0.extend_from_slice(&other.0);
    }
    pub fn as_slice(&self) -> &[u32] {
        &self.0
    }
}
