//! The binary trace directory: round trips, sealed traces, located errors on damaged
//! files (never a panic), and the size on disk.

use jrace_trace::binlog::{
    write_trace, write_trace_with, Table, TraceReader, TraceWriter, WriterOptions,
};
use jrace_trace::std_format::parse_str;
use jrace_trace::*;
use rand::{Rng, SeedableRng};
use std::path::Path;

const FIG4: &str = "t1|fork(t2)|1\nt1|acq(l)|2\nt1|w(x,1)|3\nt1|w(y,1)|4\nt1|rel(l)|5\n\
t2|begin|6\nt2|acq(l)|7\nt2|r(y,1)|8\nt2|rel(l)|9\nt2|r(x,1)|10\nt2|br|11\nt2|w(z,1)|12\n\
t2|end|13\nt1|join(t2)|14\nt1|r(z,1)|15\nt1|br|16\n";

const MIXED: &str = "# every kind\nT 1 |fork( t2 )| A.java:3 \nT 1|w(o1.f,0xff)|\nT 1|vw(v,-5)\n\
T 1|acq(l)|x\nT 1|acq(l)|x\nT 1|wait(l)|w\nt2|acq(l)|a\nt2|notifyall(l)|n\nt2|notify(l)|n\nt2|rel(l)|r\nT 1|wake(l)|k\nT 1|rel(l)|\n\
T 1|rel(l)|\nt2|enter(java.util.HashMap.put;o1,Main)|9\nt2|exit(java.util.HashMap.put)|9\n\
t2|enter(m;)|\nt2|enter(m;*)|\nt2|r(o1.f)|\nt2|vr(v,-9223372036854775808)|1\nt2|w(o1.f,9223372036854775807)|1\n\
T 1|join(t2)|2\nT 1|end|3\n";

fn read_dir(dir: &Path) -> Result<(Trace, TraceReader), TraceError> {
    let mut r = TraceReader::open(dir)?;
    let t = read_all(&mut r)?;
    Ok((t, r))
}

/// The events read with `threads` decoding threads, up to the first error, and that
/// error's message.
fn read_with(dir: &Path, threads: usize) -> (Vec<Event>, Option<String>) {
    let mut out = Vec::new();
    let mut r = match TraceReader::open_with(dir, threads) {
        Ok(r) => r,
        Err(e) => return (out, Some(e.to_string())),
    };
    loop {
        match r.next_event() {
            Ok(Some(e)) => out.push(e),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

/// [`read_with`] through `next_batch`, `max` events at a time.
fn read_batched(dir: &Path, threads: usize, max: usize) -> (Vec<Event>, Option<String>) {
    let mut out = Vec::new();
    let mut r = match TraceReader::open_with(dir, threads) {
        Ok(r) => r,
        Err(e) => return (out, Some(e.to_string())),
    };
    loop {
        let before = out.len();
        if let Err(e) = r.next_batch(&mut out, max) {
            return (out, Some(e.to_string()));
        }
        assert!(out.len() - before <= max, "at most {max} events per batch");
        if out.len() == before {
            return (out, None);
        }
    }
}

fn assert_same_interner(a: &Interner, b: &Interner, what: &str) {
    assert_eq!(a.names(), b.names(), "{what}");
}

fn assert_equivalent(a: &Trace, b: &Trace) {
    assert_eq!(a.events.len(), b.events.len());
    for (i, (x, y)) in a.events.iter().zip(&b.events).enumerate() {
        assert_eq!(x, y, "event {i}");
    }
    let (s, t) = (&a.symbols, &b.symbols);
    assert_same_interner(&s.threads, &t.threads, "threads");
    assert_same_interner(&s.vars, &t.vars, "vars");
    assert_same_interner(&s.statics, &t.statics, "statics");
    assert_same_interner(&s.locks, &t.locks, "locks");
    assert_same_interner(&s.locs, &t.locs, "locs");
    assert_same_interner(&s.methods, &t.methods, "methods");
    assert_same_interner(&s.objects, &t.objects, "objects");
    assert_eq!(s.var_static, t.var_static);
    assert_eq!(s.loc_detail, t.loc_detail);
    assert_eq!(s.objsets, t.objsets);
    assert_eq!(a.has_branches, b.has_branches);
}

#[test]
fn std_round_trips() {
    for (name, text) in [("fig4.std", FIG4), ("mixed.std", MIXED)] {
        let t = parse_str(text, name).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("trace");
        write_trace(&t, &dir).unwrap();
        let (back, r) = read_dir(&dir).unwrap();
        assert_equivalent(&t, &back);
        assert_eq!(
            r.meta().get("branches").map(String::as_str),
            Some(if t.has_branches { "1" } else { "0" })
        );
        // A finished trace leaves no open chunks behind.
        for ent in std::fs::read_dir(&dir).unwrap() {
            let n = ent.unwrap().file_name().into_string().unwrap();
            assert!(n.ends_with(".jrl"), "{n} left in a finished trace");
        }
        // The generic opener picks the binary reader for a directory.
        let again = load(&dir).unwrap();
        assert_equivalent(&t, &again);
    }
}

/// A synthetic trace with names, details, reachable sets, and many chunks per thread.
fn synthetic(events: usize, seed: u64) -> Trace {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut s = Symbols::default();
    let threads: Vec<ThreadId> = (0..6).map(|i| s.thread(&format!("worker-{i}"))).collect();
    let main = s.thread("main");
    let locks: Vec<LockId> = (0..4).map(|i| s.lock(&format!("lock@{i}"))).collect();
    let locs: Vec<LocId> = (0..40)
        .map(|i| {
            s.loc_with_detail(LocDetail {
                class: "app.Worker".into(),
                method: format!("step{}", i / 8),
                file: if i % 5 == 0 {
                    None
                } else {
                    Some("Worker.java".into())
                },
                line: if i % 5 == 0 { None } else { Some(10 + i) },
                bci: Some(i * 3),
            })
        })
        .collect();
    let shared: Vec<VarId> = (0..8)
        .map(|i| s.var_with_static(&format!("7.app.Shared.f{i}"), &format!("app.Shared.f{i}")))
        .collect();
    let arrays: Vec<VarId> = (0..256)
        .map(|i| {
            s.var_with_static(
                &format!("{}[{}]", 100 + i / 64, i % 64),
                "int[]@Worker.java:30",
            )
        })
        .collect();
    let m = s.method("java.util.HashMap.put");
    let o = s.objects.intern("7");
    let set = s.objset(ObjSet::Objects(vec![o]));
    let mut ev = Vec::new();
    for &t in &threads {
        ev.push(Event::new(main, Kind::Fork, t, locs[0]));
    }
    let mut counters = [0i64; 8];
    let mut pc = vec![0usize; threads.len()];
    let mut held: Vec<Option<LockId>> = vec![None; threads.len()];
    while ev.len() < events {
        // A scheduler slice: one thread runs a stretch of its loop.
        let ti = rng.gen_range(0..threads.len());
        let t = threads[ti];
        for _ in 0..rng.gen_range(20..300) {
            let step = pc[ti] % 12;
            let loc = locs[(ti * 5 + step) % locs.len()];
            let e = match (step, held[ti]) {
                (0, None) => {
                    let l = locks[rng.gen_range(0..locks.len())];
                    if held.contains(&Some(l)) {
                        Event::new(t, Kind::Branch, 0, loc)
                    } else {
                        held[ti] = Some(l);
                        Event::new(t, Kind::Acquire, l, loc)
                    }
                }
                (1, Some(_)) => {
                    let v = rng.gen_range(0..shared.len());
                    Event::new(t, Kind::Read, shared[v], loc).with_value(counters[v])
                }
                (2, Some(_)) => {
                    let v = (pc[ti] / 12) % shared.len();
                    counters[v] += 1;
                    Event::new(t, Kind::Write, shared[v], loc).with_value(counters[v])
                }
                (3, Some(l)) => {
                    held[ti] = None;
                    Event::new(t, Kind::Release, l, loc)
                }
                (4, _) => Event::new(t, Kind::Branch, 0, loc),
                (5..=7, _) => {
                    let i = (pc[ti] / 12 + step) % 64 + ti * 32 % 256;
                    Event::new(t, Kind::Read, arrays[i % arrays.len()], loc)
                        .with_value((i * 7) as i64)
                }
                (8, _) => Event::new(t, Kind::Write, arrays[(pc[ti] / 12) % arrays.len()], loc)
                    .with_value(pc[ti] as i64),
                (9, _) if pc[ti] % 120 == 9 => {
                    let mut e = Event::new(t, Kind::Enter, m, loc);
                    e.value = set as i64;
                    e
                }
                (10, _) if pc[ti] % 120 == 10 => Event::new(t, Kind::Exit, m, loc),
                _ => Event::new(t, Kind::VRead, shared[0], loc).with_value(1),
            };
            ev.push(e);
            pc[ti] += 1;
        }
    }
    // Let the checker compute FLAG_NESTED as a reader would.
    let mut c = wellformed::Checker::new();
    for e in ev.iter_mut() {
        c.check(e, &s).expect("synthetic trace is well formed");
    }
    Trace {
        symbols: s,
        events: ev,
        has_branches: true,
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

#[test]
fn sealed_trace_has_all_events_and_is_small() {
    let t = synthetic(400_000, 7);
    let tmp = tempfile::tempdir().unwrap();
    // Small chunks: many sealed chunks per thread.
    let small = tmp.path().join("small");
    write_trace_with(
        &t,
        &small,
        WriterOptions {
            chunk_bytes: 4096,
            zstd_level: 3,
        },
    )
    .unwrap();
    let (back, _) = read_dir(&small).unwrap();
    assert_equivalent(&t, &back);
    // Default options: the size the agent would produce.
    let dflt = tmp.path().join("default");
    write_trace(&t, &dflt).unwrap();
    let (back, _) = read_dir(&dflt).unwrap();
    assert_equivalent(&t, &back);
    let per_event = dir_bytes(&dflt) as f64 / t.events.len() as f64;
    eprintln!(
        "synthetic trace: {} events, {} bytes on disk, {per_event:.2} bytes/event (4 KiB chunks: {:.2})",
        t.events.len(),
        dir_bytes(&dflt),
        dir_bytes(&small) as f64 / t.events.len() as f64
    );
    assert!(per_event <= 4.0, "{per_event:.2} bytes/event");
}

#[test]
fn writer_api_names_details_and_meta() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("trace");
    let w = TraceWriter::create(&dir).unwrap();
    assert!(
        TraceWriter::create(&dir).is_err(),
        "a second writer must not clobber the trace"
    );
    // Names may arrive out of order and some may be missing.
    w.name(Table::Thread, 1, "worker").unwrap();
    w.name(Table::Thread, 0, "main").unwrap();
    w.name(Table::Static, 0, "app.A.f").unwrap();
    w.var(1, 0, "3.app.A.f").unwrap();
    let d = LocDetail {
        class: "app.A".into(),
        method: "run".into(),
        file: None,
        line: None,
        bci: Some(12),
    };
    w.loc(0, &d.display(), Some(&d)).unwrap();
    w.set_meta("branches", "0").unwrap();
    w.set_meta("cut", "0").unwrap();
    w.set_meta("uninstrumented_classes", "2").unwrap();
    w.set_meta("cut", "1").unwrap();
    w.name(Table::Lock, 0, &"L".repeat(300_000)).unwrap(); // larger than a chunk
    {
        let mut a = w.thread_log(0).unwrap();
        a.append(5, &Event::new(0, Kind::Fork, 1, 0)).unwrap();
        a.append(9, &Event::new(0, Kind::Write, 1, 0).with_value(-3))
            .unwrap();
        assert!(
            a.append(8, &Event::new(0, Kind::Branch, 0, 0)).is_err(),
            "stamps never decrease"
        );
        a.finish().unwrap();
        let mut b = w.thread_log(1).unwrap();
        b.append(5, &Event::new(1, Kind::Begin, 0, 0)).unwrap();
        b.append(9, &Event::new(1, Kind::Acquire, 0, 0)).unwrap();
        // Dropped without finish: sealed on drop.
    }
    w.finish().unwrap();
    let (t, r) = read_dir(&dir).unwrap();
    assert_eq!(r.meta().get("cut").map(String::as_str), Some("1"));
    assert_eq!(
        r.meta().get("uninstrumented_classes").map(String::as_str),
        Some("2")
    );
    assert!(!t.has_branches);
    let s = &t.symbols;
    assert_eq!(s.threads.names(), ["main", "worker"]);
    assert_eq!(s.vars.name(0), "?var#0");
    assert_eq!(s.var_name(1), "3.app.A.f");
    assert_eq!(s.static_name(1), "app.A.f");
    assert_eq!(s.loc_name(0), "app.A.run@12");
    assert_eq!(s.loc_detail[0].as_ref(), Some(&d));
    assert_eq!(s.lock_name(0).len(), 300_000);
    // Merged by (stamp, thread): equal stamps go to the lower thread id first.
    let got: Vec<(ThreadId, Kind)> = t.events.iter().map(|e| (e.thread, e.kind)).collect();
    assert_eq!(
        got,
        [
            (0, Kind::Fork),
            (1, Kind::Begin),
            (0, Kind::Write),
            (1, Kind::Acquire)
        ]
    );
    assert_eq!(t.events[2].value, -3);
}

#[test]
fn ill_formed_events_are_located() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("trace");
    let w = TraceWriter::create(&dir).unwrap();
    w.name(Table::Thread, 0, "main").unwrap();
    w.name(Table::Lock, 0, "l").unwrap();
    w.loc(0, "A.java:1", None).unwrap();
    let mut a = w.thread_log(0).unwrap();
    a.append(1, &Event::new(0, Kind::Acquire, 0, 0)).unwrap();
    a.append(2, &Event::new(0, Kind::Release, 0, 0)).unwrap();
    a.append(3, &Event::new(0, Kind::Release, 0, 0)).unwrap();
    a.append(4, &Event::new(0, Kind::Write, 9, 0)).unwrap();
    a.finish().unwrap();
    w.finish().unwrap();
    let err = read_dir(&dir).unwrap_err();
    match &err {
        TraceError::Event {
            path,
            event,
            thread,
            msg,
        } => {
            assert!(path.ends_with("t0.jrl"), "{}", path.display());
            assert_eq!((*event, thread.as_str()), (3, "main"));
            assert!(msg.contains("release of lock l"), "{msg}");
        }
        e => panic!("expected an event error, got {e}"),
    }
}

#[test]
fn undefined_ids_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("trace");
    let w = TraceWriter::create(&dir).unwrap();
    w.name(Table::Thread, 0, "main").unwrap();
    w.loc(0, "A.java:1", None).unwrap();
    let mut a = w.thread_log(0).unwrap();
    a.append(4, &Event::new(0, Kind::Write, 9, 0)).unwrap();
    a.finish().unwrap();
    w.finish().unwrap();
    let err = read_dir(&dir).unwrap_err().to_string();
    assert!(
        err.contains("t0.jrl") && err.contains("expected a variable id below 0"),
        "{err}"
    );
}

fn finished_trace(dir: &Path) -> Trace {
    let t = synthetic(60_000, 3);
    write_trace_with(
        &t,
        dir,
        WriterOptions {
            chunk_bytes: 4096,
            zstd_level: 3,
        },
    )
    .unwrap();
    t
}

#[test]
fn truncated_and_corrupted_files_give_located_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("trace");
    finished_trace(&dir);
    let log = dir.join("t0.jrl");
    let orig = std::fs::read(&log).unwrap();

    // Cut in the middle: no end frame and no open chunk, so it is a truncation.
    std::fs::write(&log, &orig[..orig.len() / 2]).unwrap();
    let err = read_dir(&dir).unwrap_err();
    match &err {
        TraceError::Binary { path, msg, .. } => {
            assert!(path.ends_with("t0.jrl"));
            assert!(msg.contains("truncated"), "{msg}");
        }
        e => panic!("expected a binary error, got {e}"),
    }

    // A flipped payload byte: CRC mismatch at that frame.
    let mut bad = orig.clone();
    let at = 32 + 32 + 5; // first frame's payload
    bad[at] ^= 0x40;
    std::fs::write(&log, &bad).unwrap();
    let err = read_dir(&dir).unwrap_err().to_string();
    assert!(
        err.contains("t0.jrl: at byte 32: expected a frame whose CRC matches"),
        "{err}"
    );

    // Bad magic.
    let mut bad = orig.clone();
    bad[0] = b'X';
    std::fs::write(&log, &bad).unwrap();
    let err = read_dir(&dir).unwrap_err().to_string();
    assert!(err.contains("at byte 0: expected the magic"), "{err}");

    // Truncated metadata.
    std::fs::write(&log, &orig).unwrap();
    let meta = dir.join("meta.jrl");
    let m = std::fs::read(&meta).unwrap();
    std::fs::write(&meta, &m[..m.len() - 3]).unwrap();
    let err = read_dir(&dir).unwrap_err().to_string();
    assert!(err.contains("meta.jrl"), "{err}");

    // Not a trace directory at all.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert!(TraceReader::open(&empty)
        .unwrap_err()
        .to_string()
        .contains("not a jrace trace directory"));
}

#[test]
fn damaged_files_never_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("trace");
    finished_trace(&dir);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
    let names = ["t0.jrl", "t3.jrl", "meta.jrl"];
    for round in 0..150 {
        let name = names[round % names.len()];
        let path = dir.join(name);
        let orig = std::fs::read(&path).unwrap();
        let mut bad = orig.clone();
        match round % 3 {
            0 => bad.truncate(rng.gen_range(0..orig.len())),
            1 => {
                for _ in 0..rng.gen_range(1..4) {
                    let i = rng.gen_range(0..bad.len());
                    bad[i] = rng.gen();
                }
            }
            _ => {
                // Also a stale open chunk with random content.
                let i = rng.gen_range(0..bad.len());
                bad[i] ^= 1;
                let mut open = vec![0u8; 64 + 4096];
                open[..8].copy_from_slice(b"JRACEOPN");
                open[8] = 1;
                open[16] = rng.gen_range(0..3);
                for b in open[64..64 + rng.gen_range(0..200)].iter_mut() {
                    *b = rng.gen();
                }
                std::fs::write(dir.join(name.replace(".jrl", ".open")), &open).unwrap();
            }
        }
        std::fs::write(&path, &bad).unwrap();
        // Either an error or a trace: never a panic. Decoding the thread logs on more
        // threads changes nothing: the same events, then the same error.
        let _ = read_dir(&dir);
        if round % 5 == 0 {
            let one = read_with(&dir, 1);
            assert_eq!(one, read_with(&dir, 3), "round {round}");
            // In batches: the same events, then the same error.
            assert_eq!(one, read_batched(&dir, 2, 7), "round {round}, batches");
        }
        std::fs::write(&path, &orig).unwrap();
        let _ = std::fs::remove_file(dir.join(name.replace(".jrl", ".open")));
    }
    read_dir(&dir).expect("restored trace reads");
    let (events, err) = read_with(&dir, 4);
    assert_eq!((events.len(), err), (read_with(&dir, 1).0.len(), None));
}

#[test]
fn a_reader_dropped_early_stops_its_decoders() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("trace");
    finished_trace(&dir);
    for threads in [1, 2, 5] {
        for take in [0, 1, 5000] {
            let mut r = TraceReader::open_with(&dir, threads).unwrap();
            for _ in 0..take {
                r.next_event().unwrap().unwrap();
            }
            drop(r); // joins the decoders: a hang here fails the test by timeout
        }
    }
}

#[test]
fn torn_record_in_open_chunk_is_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("trace");
    let w = TraceWriter::create(&dir).unwrap();
    w.name(Table::Thread, 0, "main").unwrap();
    w.name(Table::Static, 0, "x").unwrap();
    w.var(0, 0, "x").unwrap();
    w.loc(0, "A.java:1", None).unwrap();
    let mut a = w.thread_log(0).unwrap();
    for i in 0..10 {
        a.append(
            i,
            &Event::new(0, Kind::Write, 0, 0).with_value(1000 + i as i64),
        )
        .unwrap();
    }
    // Simulate a kill: neither the log nor the writer is finished.
    std::mem::forget(a);
    std::mem::forget(w);
    let open = dir.join("t0.open");
    let mut data = std::fs::read(&open).unwrap();
    let end = 64 + data[64..].iter().rposition(|&b| b != 0).unwrap() + 1;
    // A torn record: body bytes written, tag byte not yet.
    data[end + 1] = 0x85;
    data[end + 2] = 0x07;
    std::fs::write(&open, &data).unwrap();
    let (t, r) = read_dir(&dir).unwrap();
    assert_eq!(t.events.len(), 10);
    assert_eq!(t.events[9].value, 1009);
    assert!(!r.has_branches(), "no branches key and no branch events");
}

/// Worst case for the encoding: ids, locations and values drawn at random (nothing for
/// deltas or zstd to find). Printed for FORMAT.md; bounded loosely.
#[test]
fn size_of_random_trace() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
    let mut s = Symbols::default();
    let threads: Vec<ThreadId> = (0..8).map(|i| s.thread(&format!("t{i}"))).collect();
    let vars: Vec<VarId> = (0..20_000).map(|i| s.var(&format!("v{i}"))).collect();
    let locs: Vec<LocId> = (0..2_000).map(|i| s.loc(&format!("A.java:{i}"))).collect();
    let mut ev = Vec::new();
    while ev.len() < 200_000 {
        let t = threads[rng.gen_range(0..threads.len())];
        for _ in 0..rng.gen_range(1..50) {
            let k = if rng.gen_bool(0.3) {
                Kind::Write
            } else {
                Kind::Read
            };
            let v = vars[rng.gen_range(0..vars.len())];
            let val = if rng.gen_bool(0.5) {
                rng.gen_range(0..100)
            } else {
                rng.gen_range(0..1 << 20)
            };
            ev.push(Event::new(t, k, v, locs[rng.gen_range(0..locs.len())]).with_value(val));
        }
    }
    let t = Trace {
        symbols: s,
        events: ev,
        has_branches: false,
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("trace");
    write_trace(&t, &dir).unwrap();
    let logs: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != "meta.jrl")
        .map(|e| e.metadata().unwrap().len())
        .sum();
    let per_event = logs as f64 / t.events.len() as f64;
    eprintln!(
        "random trace: {} events, {per_event:.2} bytes/event in thread logs (metadata excluded)",
        t.events.len()
    );
    assert!(per_event < 8.0);
}

/// A trace the agent recorded (`recorder=jrace-agent`): a plain read stamped after a write
/// it did not see is returned before that write, with the `begin` in front of it, when its
/// thread's `fork` was returned; a read no move explains, one whose `fork` comes later, a
/// volatile read, and every event of another writer's trace keep their stamp's place.
/// Writes a trace of threads `t0`, `t1`, ... (one per log, each event at its stamp), with
/// the static variables and locks named in order, as the agent (`recorder=jrace-agent`)
/// or as another writer.
fn write_stamped(
    dir: &Path,
    statics: &[&str],
    locks: &[&str],
    agent: bool,
    logs: &[(ThreadId, Vec<(u64, Event)>)],
) {
    let w = TraceWriter::create(dir).unwrap();
    for (t, _) in logs {
        w.name(Table::Thread, *t, &format!("t{t}")).unwrap();
    }
    for (x, n) in statics.iter().enumerate() {
        w.name(Table::Static, x as u32, n).unwrap();
        w.var(x as u32, x as u32, n).unwrap();
    }
    for (l, n) in locks.iter().enumerate() {
        w.name(Table::Lock, l as u32, n).unwrap();
    }
    w.loc(0, "A.java:1", None).unwrap();
    if agent {
        w.set_meta("recorder", "jrace-agent").unwrap();
    }
    for (t, evs) in logs {
        let mut l = w.thread_log(*t).unwrap();
        for (s, e) in evs {
            l.append(*s, e).unwrap();
        }
        l.finish().unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn agent_traces_return_a_stale_read_before_the_write_it_did_not_see() {
    // Per thread, (stamp, event) in the thread's order.
    let ev = |t: ThreadId, k: Kind, target: u32| Event::new(t, k, target, 0);
    let logs: Vec<(ThreadId, Vec<(u64, Event)>)> = vec![
        (
            0,
            vec![
                (1, ev(0, Kind::Begin, 0)),
                (2, ev(0, Kind::Fork, 1)),
                (3, ev(0, Kind::Fork, 2)),
                (20, ev(0, Kind::Fork, 3)),
            ],
        ),
        (
            1,
            vec![
                (4, ev(1, Kind::Begin, 0)),
                (6, ev(1, Kind::Write, 0).with_value(1)), // x = 1
                (12, ev(1, Kind::Write, 1).with_value(1)), // z = 1
                (14, ev(1, Kind::Write, 1).with_value(2)), // z = 2
                (16, ev(1, Kind::Write, 2).with_value(1)), // u = 1
                (18, ev(1, Kind::VWrite, 4).with_value(1)), // volatile s = 1
                (19, ev(1, Kind::Write, 3).with_value(9)), // v = 9
            ],
        ),
        (
            2,
            vec![
                (7, ev(2, Kind::Begin, 0)),
                (7, ev(2, Kind::Read, 0).with_value(0)), // x: 0, before x = 1
                (8, ev(2, Kind::Branch, 0)),
                (15, ev(2, Kind::Read, 1).with_value(7)), // z: 7, no write explains it
                (17, ev(2, Kind::Read, 2).with_value(1)), // u: 1, as stamped
                (18, ev(2, Kind::VRead, 4).with_value(0)), // volatile: never moved
            ],
        ),
        (
            3,
            vec![
                (21, ev(3, Kind::Begin, 0)),
                (21, ev(3, Kind::Read, 3).with_value(0)), // v: its fork comes after v = 9
            ],
        ),
    ];
    let write =
        |dir: &Path, agent: bool| write_stamped(dir, &["x", "z", "u", "v", "s"], &[], agent, &logs);
    let order = |t: &Trace| -> Vec<(ThreadId, Kind, u32)> {
        t.events
            .iter()
            .map(|e| (e.thread, e.kind, e.target))
            .collect()
    };
    let by_stamp = [
        (0, Kind::Begin, 0),
        (0, Kind::Fork, 1),
        (0, Kind::Fork, 2),
        (1, Kind::Begin, 0),
        (1, Kind::Write, 0),
        (2, Kind::Begin, 0),
        (2, Kind::Read, 0),
        (2, Kind::Branch, 0),
        (1, Kind::Write, 1),
        (1, Kind::Write, 1),
        (2, Kind::Read, 1),
        (1, Kind::Write, 2),
        (2, Kind::Read, 2),
        (1, Kind::VWrite, 4),
        (2, Kind::VRead, 4),
        (1, Kind::Write, 3),
        (0, Kind::Fork, 3),
        (3, Kind::Begin, 0),
        (3, Kind::Read, 3),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("plain");
    write(&plain, false);
    let (t, r) = read_dir(&plain).unwrap();
    assert_eq!(order(&t), by_stamp, "another writer's stamps are its order");
    assert_eq!(r.reads_moved(), 0);

    let agent = tmp.path().join("agent");
    write(&agent, true);
    let (t, r) = read_dir(&agent).unwrap();
    let mut expected = by_stamp.to_vec();
    // t2's begin and read of x = 0 go before x = 1.
    let w = expected.remove(4);
    expected.insert(6, w);
    assert_eq!(order(&t), expected);
    assert_eq!(r.reads_moved(), 1);
}

/// Agent traces: a plain read stamped before the write whose value it has (a
/// compare-and-set's record follows its store; the read takes no lock) waits until that
/// write, with the plain reads and branches of its thread up to the write's stamp; not
/// when its thread synchronizes before that stamp, nor in another writer's trace.
#[test]
fn agent_traces_hold_a_read_until_the_write_it_saw() {
    let ev = |t: ThreadId, k: Kind, target: u32| Event::new(t, k, target, 0);
    // x0 = slot (compare-and-set), x1 = box.a (plain), x2 = other slot, lock 0.
    let logs = |sync_first: bool| -> Vec<(ThreadId, Vec<(u64, Event)>)> {
        let mut reader = vec![
            (6, ev(2, Kind::Begin, 0)),
            (7, ev(2, Kind::Read, 0).with_value(0)), // slot: null, spinning
            (8, ev(2, Kind::Branch, 0)),
            (10, ev(2, Kind::Read, 0).with_value(9)), // slot: the box, before its CAS record
            (11, ev(2, Kind::Branch, 0)),
            (12, ev(2, Kind::Read, 1).with_value(42)), // box.a
            (30, ev(2, Kind::Read, 2).with_value(1)),
        ];
        if sync_first {
            reader.insert(5, (11, ev(2, Kind::Acquire, 0)));
            reader.insert(6, (11, ev(2, Kind::Release, 0)));
        }
        vec![
            (
                0,
                vec![
                    (1, ev(0, Kind::Begin, 0)),
                    (2, ev(0, Kind::Fork, 1)),
                    (3, ev(0, Kind::Fork, 2)),
                ],
            ),
            (
                1,
                vec![
                    (4, ev(1, Kind::Begin, 0)),
                    (5, ev(1, Kind::Write, 1).with_value(42)), // box.a = 42
                    (20, ev(1, Kind::VWrite, 0).with_value(9)), // CAS slot: null -> box
                    (21, ev(1, Kind::Write, 2).with_value(1)),
                ],
            ),
            (2, reader),
        ]
    };
    let write = |dir: &Path, agent: bool, sync_first: bool| {
        let logs = logs(sync_first);
        write_stamped(dir, &["slot", "a", "other"], &["L"], agent, &logs)
    };
    let order = |t: &Trace| -> Vec<(ThreadId, Kind, u32)> {
        t.events
            .iter()
            .filter(|e| e.thread != 0)
            .map(|e| (e.thread, e.kind, e.target))
            .collect()
    };
    let tmp = tempfile::tempdir().unwrap();
    let by_stamp = vec![
        (1, Kind::Begin, 0),
        (1, Kind::Write, 1),
        (2, Kind::Begin, 0),
        (2, Kind::Read, 0),
        (2, Kind::Branch, 0),
        (2, Kind::Read, 0),
        (2, Kind::Branch, 0),
        (2, Kind::Read, 1),
        (1, Kind::VWrite, 0),
        (1, Kind::Write, 2),
        (2, Kind::Read, 2),
    ];
    let plain = tmp.path().join("plain");
    write(&plain, false, false);
    let (t, r) = read_dir(&plain).unwrap();
    assert_eq!(order(&t), by_stamp, "another writer's stamps are its order");
    assert_eq!(r.reads_moved(), 0);

    let agent = tmp.path().join("agent");
    write(&agent, true, false);
    let (t, r) = read_dir(&agent).unwrap();
    let held = vec![
        (1, Kind::Begin, 0),
        (1, Kind::Write, 1),
        (2, Kind::Begin, 0),
        (2, Kind::Read, 0),
        (2, Kind::Branch, 0),
        (1, Kind::VWrite, 0),
        (2, Kind::Read, 0),
        (2, Kind::Branch, 0),
        (2, Kind::Read, 1),
        (1, Kind::Write, 2),
        (2, Kind::Read, 2),
    ];
    assert_eq!(order(&t), held, "the read waits for the compare-and-set");
    assert_eq!(r.reads_moved(), 1);

    // The reader's lock before the write's stamp: its events stay where they are.
    let synced = tmp.path().join("synced");
    write(&synced, true, true);
    let (t, r) = read_dir(&synced).unwrap();
    let kinds: Vec<_> = order(&t).into_iter().map(|(th, k, _)| (th, k)).collect();
    let cas = kinds.iter().position(|&e| e == (1, Kind::VWrite)).unwrap();
    let acq = kinds.iter().position(|&e| e == (2, Kind::Acquire)).unwrap();
    assert!(acq < cas, "{kinds:?}");
    assert_eq!(r.reads_moved(), 0);
}

/// A trace says why and where it was cut: the agent's `cut` metadata (the size limit, a
/// write that failed), non-daemon threads that had not ended in an agent's finished trace
/// (an exit with threads running); a finished trace with every non-daemon thread ended,
/// or one another writer made, is not cut. (A killed writer's trace: tests/it/killed_writer.rs.)
#[test]
fn truncation_says_why_a_trace_was_cut() {
    let write = |dir: &Path, meta: &[(&str, &str)], worker_ends: bool| {
        let w = TraceWriter::create(dir).unwrap();
        w.name(Table::Thread, 0, "main").unwrap();
        w.name(Table::Thread, 1, "worker").unwrap();
        w.name(Table::Static, 0, "x").unwrap();
        w.var(0, 0, "x").unwrap();
        w.loc(0, "A.java:1", None).unwrap();
        for (k, v) in meta {
            w.set_meta(k, v).unwrap();
        }
        let mut m = w.thread_log(0).unwrap();
        m.append(1, &Event::new(0, Kind::Begin, 0, 0)).unwrap();
        m.append(2, &Event::new(0, Kind::Fork, 1, 0)).unwrap();
        m.append(6, &Event::new(0, Kind::End, 0, 0)).unwrap();
        m.finish().unwrap();
        let mut t = w.thread_log(1).unwrap();
        t.append(3, &Event::new(1, Kind::Begin, 0, 0)).unwrap();
        t.append(4, &Event::new(1, Kind::Write, 0, 0).with_value(1))
            .unwrap();
        if worker_ends {
            t.append(5, &Event::new(1, Kind::End, 0, 0)).unwrap();
        }
        t.finish().unwrap();
        w.finish().unwrap();
    };
    let agent = ("recorder", "jrace-agent");
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, bool, Option<CutReason>);
    let cases: Vec<Case> = vec![
        ("all-ended", vec![agent], true, None),
        ("exit", vec![agent], false, Some(CutReason::Exit)),
        // A daemon thread may run on at a normal exit.
        ("daemon", vec![agent, ("daemon.1", "1")], false, None),
        ("other-writer", vec![], false, None),
        (
            "max-mb",
            vec![
                agent,
                ("cut", "max_mb"),
                ("cut_detail", "the trace reached 5 MB"),
            ],
            false,
            Some(CutReason::SizeLimit),
        ),
        (
            "max-mb-old",
            vec![agent, ("cut", "1")],
            true,
            Some(CutReason::SizeLimit),
        ),
        (
            "write-error",
            vec![agent, ("cut", "write_error")],
            false,
            Some(CutReason::WriteError),
        ),
        (
            "internal-error",
            vec![agent, ("cut", "internal_error")],
            false,
            Some(CutReason::InternalError),
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (name, meta, ends, want) in cases {
        let dir = tmp.path().join(name);
        write(&dir, &meta, ends);
        let mut r = TraceReader::open(&dir).unwrap();
        while r.next_event().unwrap().is_some() {}
        let got = r.truncation();
        assert_eq!(got.as_ref().map(|c| c.reason), want, "{name}");
        if let Some(c) = got {
            let sym = r.symbols();
            let running: Vec<&str> = c.running.iter().map(|&t| sym.thread_name(t)).collect();
            assert_eq!(
                running,
                if ends { vec![] } else { vec!["worker"] },
                "{name}"
            );
            assert_eq!(
                c.detail.is_some(),
                meta.iter().any(|(k, _)| *k == "cut_detail"),
                "{name}"
            );
        }
    }
    // A `.std` file cannot tell.
    let mut src = jrace_trace::std_format::StdReader::open(&{
        let p = tmp.path().join("t.std");
        std::fs::write(&p, "main|fork(w)|1\nw|begin|2\nw|w(x,1)|3\n").unwrap();
        p
    })
    .unwrap();
    while src.next_event().unwrap().is_some() {}
    assert!(src.truncation().is_none());
}
