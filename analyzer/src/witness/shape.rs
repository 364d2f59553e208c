//! A witness's shape for people: canonical form (the recording's order kept as long as
//! it can be) and minimization (only the events the race needs). Both results are
//! validated again by the caller.

use super::*;

impl Facts<'_> {
    /// The canonical form of a witness: of the schedules that keep the order of every two
    /// *dependent* events of `schedule` (same thread; same lock; same variable with a write
    /// among them; a `fork` before its thread's events, a thread's events before its
    /// `join`; a BarrierPair edge), the one that always runs the available event recorded
    /// first, with the racing pair held back to the end.
    ///
    /// Every validation rule depends only on the order of dependent events, except that
    /// a read no recorded write explains is concrete only at its recorded place, so
    /// callers validate the result and keep `schedule` if it fails
    /// ([`Witnesser`] does). The result runs as much of the recording as recorded as any
    /// reordering can, so the view elides more and departs later. A witness with more
    /// than [`CANONICAL_MAX_REORDER`] events to reorder is returned as it is.
    pub fn canonical(&self, schedule: &[usize]) -> Vec<usize> {
        let k = schedule.len();
        if k <= 2 {
            return schedule.to_vec();
        }
        let body = &schedule[..k - 2];
        // An increasing body is its own canonical form (no order is smaller). Otherwise,
        // with d the first descent, every event before d smaller than all events from d
        // on is emitted where it stands (it is the smallest event left when its turn
        // comes, and depends only on earlier ones): only the rest is reordered.
        let Some(d) = (1..body.len()).find(|&s| body[s] < body[s - 1]) else {
            return schedule.to_vec();
        };
        let min_after = body[d..].iter().copied().min().unwrap_or(usize::MAX);
        let p = body[..d].iter().take_while(|&&i| i < min_after).count();
        let rest = &body[p..];
        let m = rest.len();
        if m > CANONICAL_MAX_REORDER {
            return schedule.to_vec();
        }
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut last_thread: HashMap<u32, u32> = HashMap::new();
        let mut first_of_thread: HashMap<u32, u32> = HashMap::new();
        let mut fork_at: HashMap<u32, u32> = HashMap::new();
        let mut last_lock: HashMap<u32, u32> = HashMap::new();
        // Per variable: the last write and the reads since it.
        let mut var_state: HashMap<u32, (Option<u32>, Vec<u32>)> = HashMap::new();
        for (s, &i) in rest.iter().enumerate() {
            let s = s as u32;
            let e = self.ev(i);
            let t = self.tix[i];
            if let Some(q) = last_thread.insert(t, s) {
                edges.push((q, s));
            }
            first_of_thread.entry(t).or_insert(s);
            if e.kind.has_lock() {
                if let Some(q) = last_lock.insert(e.target, s) {
                    edges.push((q, s));
                }
            }
            if e.kind.is_access() {
                let st = var_state.entry(e.target).or_default();
                if e.kind.is_write() {
                    edges.extend(st.0.into_iter().chain(st.1.drain(..)).map(|q| (q, s)));
                    st.0 = Some(s);
                } else {
                    st.1.push(s);
                    if let Some(q) = st.0 {
                        edges.push((q, s));
                    }
                }
            }
            // The child's events before its join (forks: below); the fork of a child
            // without events.
            if e.kind == Kind::Fork {
                fork_at.insert(e.target, s);
            }
            if e.kind == Kind::Join {
                let q = match self.dense.get(&e.target) {
                    Some(c) => last_thread.get(c),
                    None => fork_at.get(&e.target),
                };
                if let Some(&q) = q {
                    edges.push((q, s));
                }
            }
        }
        // A fork before its child's first event (the rest follow by program order).
        for (s, &i) in rest.iter().enumerate() {
            let e = self.ev(i);
            if e.kind == Kind::Fork {
                if let Some(&q) = self
                    .dense
                    .get(&e.target)
                    .and_then(|c| first_of_thread.get(c))
                {
                    if q as usize > s {
                        edges.push((s as u32, q));
                    }
                }
            }
        }
        if !self.before.is_empty() || !self.kept.is_empty() {
            let mut pos: Vec<(usize, u32)> = rest
                .iter()
                .enumerate()
                .map(|(s, &i)| (i, s as u32))
                .collect();
            pos.sort_unstable();
            let at = |x: usize| pos.binary_search_by_key(&x, |p| p.0).ok().map(|j| pos[j].1);
            for (s, &i) in rest.iter().enumerate() {
                for x in self.preds(i) {
                    if let Some(q) = at(x as usize) {
                        if (q as usize) < s {
                            edges.push((q, s as u32));
                        }
                    }
                }
            }
        }
        // Successor lists (CSR) and in-degrees.
        let mut start = vec![0u32; m + 1];
        let mut indeg = vec![0u32; m];
        for &(x, y) in &edges {
            start[x as usize + 1] += 1;
            indeg[y as usize] += 1;
        }
        for j in 0..m {
            start[j + 1] += start[j];
        }
        let mut succ = vec![0u32; edges.len()];
        let mut fill = start.clone();
        for &(x, y) in &edges {
            succ[fill[x as usize] as usize] = y;
            fill[x as usize] += 1;
        }
        let mut out = Vec::with_capacity(k);
        out.extend_from_slice(&body[..p]);
        let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<(usize, u32)>> = (0..m)
            .filter(|&s| indeg[s] == 0)
            .map(|s| std::cmp::Reverse((rest[s], s as u32)))
            .collect();
        while let Some(std::cmp::Reverse((i, s))) = ready.pop() {
            out.push(i);
            let s = s as usize;
            for &u in &succ[start[s] as usize..start[s + 1] as usize] {
                let u = u as usize;
                indeg[u] -= 1;
                if indeg[u] == 0 {
                    ready.push(std::cmp::Reverse((rest[u], u as u32)));
                }
            }
        }
        debug_assert_eq!(out.len(), k - 2, "the dependence order is acyclic");
        if out.len() != k - 2 {
            return schedule.to_vec();
        }
        out.extend_from_slice(&schedule[k - 2..]);
        out
    }

    /// A minimized witness (`jrace witness --minimize`): the events of `schedule` the
    /// racing pair needs, in the same order. Starting from the pair and their program-order
    /// predecessors, it adds until nothing changes: the writer each read has in the
    /// schedule (the last earlier write to its variable), the previous release or wait of
    /// an acquire's or wake's lock, a wake's notify and a notify's matched waits, every
    /// event of a joined thread, the fork of every thread present, BarrierPair
    /// predecessors, and the program-order predecessors of each. Callers validate the
    /// result ([`Witnesser::minimized`] does) and keep `schedule` if it fails.
    pub fn minimize(&self, schedule: &[usize]) -> Vec<usize> {
        let k = schedule.len();
        if k <= 2 {
            return schedule.to_vec();
        }
        let pos: HashMap<usize, usize> =
            schedule.iter().enumerate().map(|(s, &i)| (i, s)).collect();
        // Per position: the previous write of the same variable and the previous
        // release/wait of the same lock, in schedule order.
        let mut prev_write = vec![usize::MAX; k];
        let mut prev_free = vec![usize::MAX; k];
        let mut last_write: HashMap<u32, usize> = HashMap::new();
        let mut last_free: HashMap<u32, usize> = HashMap::new();
        for (s, &i) in schedule.iter().enumerate() {
            let e = self.ev(i);
            if e.kind.is_access() {
                if let Some(&w) = last_write.get(&e.target) {
                    prev_write[s] = w;
                }
                if e.kind.is_write() {
                    last_write.insert(e.target, s);
                }
            }
            if e.kind.has_lock() {
                if let Some(&r) = last_free.get(&e.target) {
                    prev_free[s] = r;
                }
                if matches!(e.kind, Kind::Release | Kind::Wait) && !e.is_nested() {
                    last_free.insert(e.target, s);
                }
            }
        }
        let mut keep = vec![false; k];
        let mut work: Vec<usize> = vec![k - 2, k - 1];
        // Program-order predecessors are added thread by thread: `upto[t]` is how far
        // (in the thread's events) the kept prefix reaches.
        let mut upto: HashMap<u32, u32> = HashMap::new();
        while let Some(s) = work.pop() {
            if s == usize::MAX || keep[s] {
                continue;
            }
            keep[s] = true;
            let i = schedule[s];
            let e = self.ev(i);
            let t = self.tix[i];
            let local = self.local[i] + 1;
            let reach = upto.entry(t).or_insert(0);
            if *reach < local {
                for &j in &self.threads[t as usize][*reach as usize..local as usize] {
                    if let Some(&q) = pos.get(&(j as usize)) {
                        work.push(q);
                    }
                }
                *reach = local;
                if let Some(&q) = pos.get(&(self.fork_of[t as usize] as usize)) {
                    work.push(q);
                }
            }
            if s + 2 < k && matches!(e.kind, Kind::Read | Kind::VRead) {
                work.push(prev_write[s]);
            }
            if matches!(e.kind, Kind::Acquire | Kind::Wake) && !e.is_nested() {
                work.push(prev_free[s]);
            }
            let mut add = |j: u32| {
                if let Some(&q) = pos.get(&(j as usize)) {
                    work.push(q);
                }
            };
            if e.kind == Kind::Wake && self.wake_notify[i] != NONE {
                add(self.wake_notify[i]);
            }
            for &w in self.notify_waits.get(&(i as u32)).into_iter().flatten() {
                add(w);
            }
            if e.kind == Kind::Join {
                match self.dense.get(&e.target) {
                    Some(&u) => self.threads[u as usize].iter().for_each(|&j| add(j)),
                    None => self.join_after(e.target).into_iter().for_each(&mut add),
                }
            }
            for x in self.preds(i) {
                add(x);
            }
        }
        schedule
            .iter()
            .zip(&keep)
            .filter(|(_, &kept)| kept)
            .map(|(&i, _)| i)
            .collect()
    }
}
