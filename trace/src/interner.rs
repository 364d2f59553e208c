//! A string interner: dense `u32` ids in first-seen order, names stored back to back.
//!
//! Why this shape: interning is the text reader's main cost, and a binary trace names
//! millions of variables. Every name lives in one growing string (no allocation per name,
//! nothing to free one by one at exit), and the name-to-id table is open addressing over
//! 8-byte slots holding 32 bits of the name's hash and its id: a probe reads one slot,
//! growing the table never rehashes a name, and only a slot whose hash bits match looks
//! at the name itself. A binary trace's names come with their ids
//! ([`Interner::push_unique`]); their table is only built when someone looks a name up.

use std::fmt;
use std::sync::OnceLock;

/// Names and their ids.
#[derive(Clone, Default)]
pub struct Interner {
    /// Every name, back to back.
    text: String,
    /// `ends[i]`: where name `i` ends in `text` (it starts where name `i - 1` ends).
    ends: Vec<usize>,
    /// Name to id, built on first use.
    ids: OnceLock<Table>,
}

/// The hash of a name, as the table and [`Interner::hash`] use it.
#[inline]
fn name_hash(name: &str) -> u32 {
    use std::hash::BuildHasher;
    // The high half: FxHasher's finish mixes it best.
    (rustc_hash::FxBuildHasher.hash_one(name) >> 32) as u32
}

/// Open addressing with linear probing; a slot is `hash << 32 | id`, or [`EMPTY`].
#[derive(Clone)]
struct Table {
    slots: Vec<u64>,
    /// Ids in the table.
    len: usize,
}

const EMPTY: u64 = u64::MAX;

impl Table {
    fn with_capacity(n: usize) -> Table {
        let size = (n.max(8) * 2).next_power_of_two();
        Table {
            slots: vec![EMPTY; size],
            len: 0,
        }
    }

    /// The id of the name hashing to `hash` for which `is(id)` holds, or the slot where it
    /// would go.
    #[inline]
    fn find(&self, hash: u32, mut is: impl FnMut(u32) -> bool) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let s = self.slots[i];
            if s == EMPTY {
                return Err(i);
            }
            if (s >> 32) as u32 == hash && is(s as u32) {
                return Ok(s as u32);
            }
            i = (i + 1) & mask;
        }
    }

    /// Puts `id` in slot `at` (from [`Table::find`]); grows the table past half full.
    #[inline]
    fn insert_at(&mut self, at: usize, hash: u32, id: u32) {
        self.slots[at] = (hash as u64) << 32 | id as u64;
        self.len += 1;
        if self.len * 2 > self.slots.len() {
            self.grow();
        }
    }

    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; size]);
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|&s| s != EMPTY) {
            let mut i = (s >> 32) as usize & mask;
            while self.slots[i] != EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }

    /// Hints the processor to fetch the slot where a name hashing to `hash` starts its
    /// probe.
    #[inline]
    fn prefetch(&self, hash: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(s) = self
            .slots
            .get(hash as usize & (self.slots.len().wrapping_sub(1)))
        {
            // SAFETY: a prefetch hint on a valid address; it reads nothing.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    (s as *const u64).cast(),
                )
            };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = hash;
    }
}

/// The name of `id` in `text`/`ends`.
#[inline]
fn name_in<'a>(text: &'a str, ends: &[usize], id: usize) -> &'a str {
    let start = if id == 0 { 0 } else { ends[id - 1] };
    &text[start..ends[id]]
}

fn table_of(text: &str, ends: &[usize]) -> Table {
    let mut t = Table::with_capacity(ends.len());
    for id in 0..ends.len() {
        let name = name_in(text, ends, id);
        let h = name_hash(name);
        match t.find(h, |o| name_in(text, ends, o as usize) == name) {
            // A name pushed twice keeps its first id for lookups.
            Ok(_) => {}
            Err(at) => t.insert_at(at, h, id as u32),
        }
    }
    t
}

impl Interner {
    /// Gives `name` the next id without looking it up: the caller knows it is new (see
    /// [`Interner::first_duplicate`]).
    pub fn push_unique(&mut self, name: &str) -> u32 {
        self.push_unique_with(|text| text.push_str(name))
    }

    /// [`Interner::push_unique`] for a name that `write` appends to the interner's text
    /// (e.g. with `write!`), so that it is never built on its own.
    pub fn push_unique_with(&mut self, write: impl FnOnce(&mut String)) -> u32 {
        let id = self.ends.len() as u32;
        write(&mut self.text);
        self.ends.push(self.text.len());
        if let Some(t) = self.ids.get_mut() {
            let name = name_in(&self.text, &self.ends, id as usize);
            let h = name_hash(name);
            let (text, ends) = (&self.text, &self.ends);
            if let Err(at) = t.find(h, |o| name_in(text, ends, o as usize) == name) {
                t.insert_at(at, h, id);
            }
        }
        id
    }

    /// The first id whose name an earlier id already has, if any. Builds the name table
    /// to find out, but keeps it only if it was there already: a binary trace's millions
    /// of variable names are checked once and rarely looked up.
    pub fn first_duplicate(&self) -> Option<u32> {
        let built;
        let t = match self.ids.get() {
            Some(t) => t,
            None => {
                built = table_of(&self.text, &self.ends);
                &built
            }
        };
        if t.len == self.ends.len() {
            return None;
        }
        let (text, ends) = (&self.text, &self.ends);
        (0..self.ends.len() as u32).find(|&id| {
            let name = name_in(text, ends, id as usize);
            t.find(name_hash(name), |o| name_in(text, ends, o as usize) == name) != Ok(id)
        })
    }

    fn table(&self) -> &Table {
        self.ids.get_or_init(|| table_of(&self.text, &self.ends))
    }

    /// The id of `name`, new ones in first-seen order.
    #[inline]
    pub fn intern(&mut self, name: &str) -> u32 {
        self.intern_hashed(name, name_hash(name))
    }

    /// The hash [`Interner::intern_hashed`] expects for `name`: computing it is a good
    /// part of interning, and needs no access to the interner.
    #[inline]
    pub fn hash(name: &str) -> u32 {
        name_hash(name)
    }

    /// [`Interner::intern`] with `hash` = [`Interner::hash`]`(name)`.
    #[inline]
    pub fn intern_hashed(&mut self, name: &str, hash: u32) -> u32 {
        if self.ids.get().is_none() {
            let _ = self.ids.set(table_of(&self.text, &self.ends));
        }
        let t = self.ids.get_mut().expect("built above");
        let (text, ends) = (&self.text, &self.ends);
        match t.find(hash, |o| name_in(text, ends, o as usize) == name) {
            Ok(id) => id,
            Err(at) => {
                let id = self.ends.len() as u32;
                t.insert_at(at, hash, id);
                self.text.push_str(name);
                self.ends.push(self.text.len());
                id
            }
        }
    }

    /// Hints the processor to fetch what interning a name with this [`Interner::hash`]
    /// will read first (a no-op until the table exists).
    #[inline]
    pub fn prefetch(&self, hash: u32) {
        if let Some(t) = self.ids.get() {
            t.prefetch(hash);
        }
    }

    pub fn get(&self, name: &str) -> Option<u32> {
        let (text, ends) = (&self.text, &self.ends);
        self.table()
            .find(name_hash(name), |o| name_in(text, ends, o as usize) == name)
            .ok()
    }

    /// The name of `id` (panics if there is none, as indexing does).
    pub fn name(&self, id: u32) -> &str {
        name_in(&self.text, &self.ends, id as usize)
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Every name, in id order.
    pub fn names(&self) -> Names<'_> {
        Names {
            text: &self.text,
            ends: &self.ends,
        }
    }
}

impl fmt::Debug for Interner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.names().fmt(f)
    }
}

/// The names of an [`Interner`], indexed by id.
#[derive(Clone, Copy)]
pub struct Names<'a> {
    text: &'a str,
    ends: &'a [usize],
}

impl<'a> Names<'a> {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn get(&self, id: usize) -> Option<&'a str> {
        (id < self.ends.len()).then(|| name_in(self.text, self.ends, id))
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'a str> + DoubleEndedIterator + 'a {
        let (text, ends) = (self.text, self.ends);
        (0..ends.len()).map(move |id| name_in(text, ends, id))
    }
}

impl<'a> std::ops::Index<usize> for Names<'a> {
    type Output = str;
    fn index(&self, id: usize) -> &str {
        name_in(self.text, self.ends, id)
    }
}

impl PartialEq for Names<'_> {
    fn eq(&self, other: &Names<'_>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<const N: usize> PartialEq<[&str; N]> for Names<'_> {
    fn eq(&self, other: &[&str; N]) -> bool {
        self.len() == N && self.iter().eq(other.iter().copied())
    }
}

impl fmt::Debug for Names<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_in_first_seen_order() {
        let mut i = Interner::default();
        assert_eq!(i.intern("b"), 0);
        assert_eq!(i.intern("a"), 1);
        assert_eq!(i.intern("b"), 0);
        assert_eq!(i.intern(""), 2);
        assert_eq!(i.names(), ["b", "a", ""]);
        assert_eq!(i.get("a"), Some(1));
        assert_eq!(i.get("c"), None);
        assert_eq!(i.name(2), "");
    }

    #[test]
    fn many_names_survive_growth_and_agree_with_a_map() {
        let mut i = Interner::default();
        let mut map = std::collections::HashMap::new();
        for k in 0..50_000u32 {
            let name = format!("{}.f{}", k % 20_011, k % 7);
            let next = map.len() as u32;
            let want = *map.entry(name.clone()).or_insert(next);
            assert_eq!(i.intern(&name), want);
        }
        assert_eq!(i.len(), map.len());
        for (name, &id) in &map {
            assert_eq!(i.get(name), Some(id));
            assert_eq!(i.name(id), name);
        }
    }

    #[test]
    fn pushed_names_are_found_once_looked_up_and_duplicates_are_told() {
        let mut i = Interner::default();
        for n in ["x", "y", "z"] {
            i.push_unique(n);
        }
        i.push_unique_with(|t| t.push_str("w1"));
        assert_eq!(i.first_duplicate(), None);
        assert_eq!(i.get("w1"), Some(3));
        // After the table exists, pushes go into it.
        assert_eq!(i.push_unique("v"), 4);
        assert_eq!(i.get("v"), Some(4));
        assert_eq!(i.intern("y"), 1);
        let mut d = Interner::default();
        for n in ["p", "q", "p"] {
            d.push_unique(n);
        }
        assert_eq!(d.first_duplicate(), Some(2));
        assert_eq!(d.get("p"), Some(0));
    }
}
