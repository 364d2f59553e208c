//! `jrace analyze --witness` end to end: every race shb reports carries a witness, and
//! each witness passes a check written here independently of the analyzer (program order
//! per thread, lock exclusion, reads seeing their recorded values, the racing accesses
//! last), on the bundled bank example.

use crate::common;
use serde_json::Value;
use std::collections::HashMap;

use common::{jrace, root};

/// One `.std` event line, parsed just enough for the check.
#[derive(Debug, Clone)]
struct Ev {
    thread: String,
    op: String,
    arg: String,
    value: Option<i64>,
}

/// Event lines of a `.std` file (no `req`/`dummy`/transaction lines in the example).
fn events(text: &str) -> Vec<Ev> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut f = l.split('|');
            let thread = f.next().unwrap().trim().to_owned();
            let opf = f.next().unwrap().trim();
            let (op, args) = match opf.split_once('(') {
                Some((o, a)) => (o.to_owned(), a.trim_end_matches(')').to_owned()),
                None => (opf.to_owned(), String::new()),
            };
            let (arg, value) = match args.split_once(',') {
                Some((a, v)) => (a.to_owned(), Some(v.trim().parse().unwrap())),
                None => (args, None),
            };
            Ev {
                thread,
                op,
                arg,
                value,
            }
        })
        .collect()
}

/// The independent check of one witness (1-based event numbers).
fn check_witness(evs: &[Ev], race: &Value, w: &[Value]) -> Result<(), String> {
    let steps: Vec<(String, usize)> = w
        .iter()
        .map(|s| {
            (
                s["thread"].as_str().unwrap().to_owned(),
                s["event"].as_u64().unwrap() as usize,
            )
        })
        .collect();
    if steps.len() < 2 {
        return Err("fewer than two steps".into());
    }
    // The last two entries are the two accesses (either order).
    let acc: Vec<(String, usize)> = race["accesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["thread"].as_str().unwrap().to_owned(),
                a["event"].as_u64().unwrap() as usize,
            )
        })
        .collect();
    let tail = &steps[steps.len() - 2..];
    if !(tail == &acc[..] || (tail[0] == acc[1] && tail[1] == acc[0])) {
        return Err(format!("ends with {tail:?}, accesses are {acc:?}"));
    }
    // Per thread, the witness runs a prefix of the thread's events in program order.
    let mut per_thread: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, e) in evs.iter().enumerate() {
        per_thread.entry(&e.thread).or_default().push(i + 1);
    }
    let mut next: HashMap<&str, usize> = HashMap::new();
    let mut owner: HashMap<&str, &str> = HashMap::new();
    let mut value: HashMap<&str, i64> = HashMap::new();
    for (k, (thread, n)) in steps.iter().enumerate() {
        let e = evs
            .get(n - 1)
            .ok_or(format!("step {}: no event {n}", k + 1))?;
        if &e.thread != thread {
            return Err(format!(
                "step {}: event {n} is by {}, not {thread}",
                k + 1,
                e.thread
            ));
        }
        let p = next.entry(&e.thread).or_default();
        if per_thread[e.thread.as_str()][*p] != *n {
            return Err(format!("step {}: event {n} out of program order", k + 1));
        }
        *p += 1;
        let racing = k + 2 >= steps.len();
        match e.op.as_str() {
            "acq" => {
                if owner.get(e.arg.as_str()).is_some_and(|o| *o != e.thread) {
                    return Err(format!("step {}: {} acquires a held lock", k + 1, e.thread));
                }
                owner.insert(&e.arg, &e.thread);
            }
            "rel" => {
                owner.remove(e.arg.as_str());
            }
            "w" | "vw" => {
                value.insert(&e.arg, e.value.unwrap());
            }
            "r" | "vr" if !racing => {
                let seen = value.get(e.arg.as_str()).copied().unwrap_or(0);
                if Some(seen) != e.value {
                    return Err(format!(
                        "step {}: read of {} sees {seen}, recorded {:?}",
                        k + 1,
                        e.arg,
                        e.value
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[test]
fn bank_example_witnesses_pass_an_independent_check() {
    let path = root().join("examples/bank.std");
    let text = std::fs::read_to_string(&path).unwrap();
    let evs = events(&text);
    let out = jrace(&[
        "analyze",
        path.to_str().unwrap(),
        "-d",
        "all",
        "--format",
        "json",
        "--witness",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("warning"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let races = v["races"].as_array().unwrap();
    let mut shb = 0;
    let mut witnessed = 0;
    for r in races {
        let w = r
            .get("witness")
            .expect("with --witness every race has the field");
        let by_shb = r["detectors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d == "shb");
        shb += usize::from(by_shb);
        match w {
            Value::Array(steps) => {
                witnessed += 1;
                check_witness(&evs, r, steps)
                    .unwrap_or_else(|e| panic!("race {}: {e}\n{w}", r["id"]));
                // The check itself must notice a broken schedule: swap the first two
                // steps of one thread, or put the racing pair first.
                let mut bad = steps.clone();
                let t0 = &bad[0]["thread"].clone();
                if let Some(j) = (1..bad.len() - 2).find(|&j| &bad[j]["thread"] == t0) {
                    bad.swap(0, j);
                    assert!(check_witness(&evs, r, &bad).is_err(), "swap accepted");
                }
                let mut bad = steps.clone();
                bad.rotate_right(2);
                assert!(check_witness(&evs, r, &bad).is_err(), "rotation accepted");
            }
            Value::Null => assert!(!by_shb, "shb race {} has no witness", r["id"]),
            _ => panic!("witness is neither a list nor null: {w}"),
        }
    }
    assert!(shb >= 2, "the example has shb races");
    assert!(witnessed >= shb);
}

#[test]
fn witness_field_absent_without_flag_and_null_when_none() {
    let path = root().join("examples/bank.std");
    let out = jrace(&["analyze", path.to_str().unwrap(), "--format", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in v["races"].as_array().unwrap() {
        assert!(r.get("witness").is_none(), "{r}");
    }
    // hb reports (1, 4), but t2's read of y must see the write after t1's write of x:
    // no reordering puts the two accesses of x side by side.
    let dir = std::env::temp_dir().join(format!("jrace-witness-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("rf.std");
    std::fs::write(&f, "t1|w(x)|1\nt1|w(y)|2\nt2|r(y)|3\nt2|r(x)|4\n").unwrap();
    let out = jrace(&[
        "analyze",
        f.to_str().unwrap(),
        "-d",
        "hb,shb",
        "--format",
        "json",
        "--witness",
    ]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let races = v["races"].as_array().unwrap();
    let x = races
        .iter()
        .find(|r| r["variable"] == "x")
        .unwrap_or_else(|| panic!("hb reports x: {v}"));
    assert_eq!(x["detectors"], serde_json::json!(["hb"]));
    assert!(x["witness"].is_null(), "{v}");
    // The race on y (2, 3) is real, and shb's: it has a witness ending with 2, 3.
    let y = races.iter().find(|r| r["variable"] == "y").unwrap();
    let steps: Vec<u64> = y["witness"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["event"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, [1, 2, 3], "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}
