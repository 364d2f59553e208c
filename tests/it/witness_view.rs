//! `jrace witness TRACE --race ID [--html FILE]` end to end on the bundled bank example:
//! the text view marks both racing rows and the departure from the recorded order, bad
//! ids exit 2, and the HTML page is self-contained, shows both accesses and (when
//! `/usr/bin/chromium` exists) loads in headless Chromium without a script error.

use crate::common;

use common::{jrace, root};
use std::path::{Path, PathBuf};

fn bank() -> String {
    root().join("examples/bank.std").display().to_string()
}

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The row lines marked `>>` in a text view.
fn race_rows(view: &str) -> Vec<&str> {
    view.lines().filter(|l| l.starts_with(">>")).collect()
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("jrace-wv-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn text_view_of_a_shb_race() {
    // Race 1 with the default detectors: Bank.transfers, teller-1's write (event 13)
    // and teller-2's read (event 20), reported by hb, shb and wcp.
    let out = jrace(&["witness", &bank(), "--race", "1"]);
    assert!(out.status.success(), "{out:?}");
    let v = text(&out);
    assert!(v.starts_with("race 1  Bank.transfers  write-read\n"), "{v}");
    assert!(v.contains("race found by hb,shb,wcp"), "{v}");
    let rows = race_rows(&v);
    assert_eq!(rows.len(), 2, "{v}");
    assert!(
        rows[0].contains("w(Bank.transfers,1)") && rows[0].contains(" 13 |"),
        "{v}"
    );
    assert!(
        rows[1].contains("r(Bank.transfers,1)") && rows[1].contains(" 20 |"),
        "{v}"
    );
    // The racing pair is last.
    let last: Vec<&str> = v
        .lines()
        .filter(|l| l.contains(" | "))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .take(2)
        .collect();
    assert!(last.iter().all(|l| l.starts_with(">>")), "{v}");
    // The prefix (main's five events) is elided, then the schedule departs.
    assert!(v.contains("... 5 events as recorded: main 5"), "{v}");
    assert!(
        v.contains("departs from the recorded order here: step 6 runs event 7 (teller-1) before event 6 (main)"),
        "{v}"
    );
    assert!(v.lines().any(|l| l.starts_with("^ ")), "{v}");
    // Columns: the racing threads first.
    let header = v
        .lines()
        .find(|l| l.contains("step") && l.contains("event"))
        .unwrap();
    let t1 = header.find("teller-1").unwrap();
    let t2 = header.find("teller-2").unwrap();
    let main = header.find("main").unwrap();
    assert!(t1 < t2 && t2 < main, "{header}");
    // Not a terminal: no colour.
    assert!(!v.contains('\x1b'), "{v}");
    assert!(v.contains("no common lock"), "{v}");
}

#[test]
fn text_view_of_a_race_only_wcp_and_m2_find() {
    // Bank.lastTeller: shb and hb order it, wcp (default set) and m2 predict it.
    for dets in [None, Some("all"), Some("m2")] {
        // Race ids follow the pairs' second events, so it is race 2 in each set.
        let mut args = vec![
            "witness".to_owned(),
            bank(),
            "--race".to_owned(),
            "2".to_owned(),
        ];
        if let Some(d) = dets {
            args.push("-d".into());
            args.push(d.into());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = jrace(&args);
        assert!(out.status.success(), "{dets:?}: {out:?}");
        let v = text(&out);
        assert!(
            v.starts_with("race 2  Bank.lastTeller  write-read"),
            "{dets:?}: {v}"
        );
        assert!(!v.contains("shb"), "{dets:?}: {v}");
        let rows = race_rows(&v);
        assert_eq!(rows.len(), 2, "{v}");
        assert!(
            rows[0].contains("w(Bank.lastTeller,1)") && rows[0].contains("Bank.java:26"),
            "{v}"
        );
        assert!(
            rows[1].contains("r(Bank.lastTeller,1)  {audit}") && rows[1].contains("Bank.java:34"),
            "{v}"
        );
        assert!(v.contains("departs from the recorded order here"), "{v}");
        assert!(
            v.contains(
                "second  teller-2  r(Bank.lastTeller,1)  Bank.java:34  event 32  holds {audit}"
            ),
            "{v}"
        );
    }
}

#[test]
fn bad_race_ids_exit_2() {
    for id in ["0", "4", "99"] {
        let out = jrace(&["witness", &bank(), "--race", id]);
        assert_eq!(out.status.code(), Some(2), "{id}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("no race {id}")), "{err}");
        assert!(err.contains("races 1 to 3"), "{err}");
        assert!(out.stdout.is_empty());
    }
    let out = jrace(&["witness", &bank(), "--race", "x"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = jrace(&["witness", &bank()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn race_without_witness_exits_2() {
    // Test trace TV6 (Said et al.'s Fig. 3): lockset warns on y (events 6 and 11), but no
    // schedule that keeps T2's read of x on its recorded writer runs them back to back.
    let dir = temp_dir("nowit");
    let p = dir.join("tv6.std");
    std::fs::write(
        &p,
        "T1|acq(L)|Account.java:10\nT1|w(x,10)|Account.java:11\nT1|rel(L)|Account.java:12\n\
         T2|acq(L)|Audit.java:30\nT2|r(x,10)|Audit.java:31\nT2|w(y,20)|Audit.java:32\n\
         T2|rel(L)|Audit.java:33\nT1|acq(L)|Account.java:10\nT1|w(x,20)|Account.java:11\n\
         T1|rel(L)|Account.java:12\nT1|w(y,30)|Account.java:14\n",
    )
    .unwrap();
    let p = p.display().to_string();
    let out = jrace(&["witness", &p, "--race", "1", "-d", "lockset"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("race 1 (write-write on y) has no witness"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

fn html_for(race: &str, dir: &Path) -> (PathBuf, String, String) {
    let file = dir.join(format!("race{race}.html"));
    let out = jrace(&[
        "witness",
        &bank(),
        "--race",
        race,
        "--html",
        &file.display().to_string(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(&file).unwrap();
    (file, page, text(&out))
}

#[test]
fn html_page_is_self_contained_and_shows_both_accesses() {
    let dir = temp_dir("html");
    for race in ["1", "2", "3"] {
        let (_, page, view) = html_for(race, &dir);
        // Same text view on stdout as without --html.
        let plain = text(&jrace(&["witness", &bank(), "--race", race]));
        assert_eq!(view, plain);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(
            !page.contains("http:") && !page.contains("https:"),
            "{page}"
        );
        assert!(!page.contains("<link"));
        assert!(!page.contains("src="), "no external resources");
        assert!(!page.contains("@import") && !page.contains("url("));
        assert_eq!(page.matches("id=\"race\"").count(), 1);
        assert_eq!(page.matches("class=\"race\"").count(), 2);
        assert!(page.contains("<details class=\"elided\">"));
        assert!(page.contains("departs from the recorded order here"));
        assert!(page.contains("<meta name=\"generator\" content=\"jrace "));
        // The JSON island parses and names the race.
        let start = page.find("id=\"jrace-witness\">").unwrap() + "id=\"jrace-witness\">".len();
        let end = start + page[start..].find("</script>").unwrap();
        let json: serde_json::Value = serde_json::from_str(&page[start..end]).unwrap();
        assert_eq!(json["race"]["id"].to_string(), race);
    }
    let (_, page, _) = html_for("1", &dir);
    for s in [
        "w(Bank.transfers,1)",
        "r(Bank.transfers,1)",
        "Bank.java:24",
        "Bank.transfers",
    ] {
        assert!(page.contains(s), "{s}");
    }
    let (_, page, _) = html_for("2", &dir);
    for s in [
        "w(Bank.lastTeller,1)",
        "r(Bank.lastTeller,1)",
        "Bank.java:26",
        "Bank.java:34",
    ] {
        assert!(page.contains(s), "{s}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn html_page_loads_in_headless_chromium() {
    let dir = temp_dir("chromium");
    for (race, accesses) in [
        ("1", ["w(Bank.transfers,1)", "r(Bank.transfers,1)"]),
        ("2", ["w(Bank.lastTeller,1)", "r(Bank.lastTeller,1)"]),
    ] {
        let (file, _, _) = html_for(race, &dir);
        let Some((dom, err)) = common::chromium_dom(&file, &dir.join(format!("profile{race}")))
        else {
            return;
        };
        assert!(!err.contains("Uncaught"), "script error: {err}");
        for a in accesses {
            assert!(dom.contains(a), "{a} missing from the DOM: {dom}");
        }
        assert_eq!(dom.matches("class=\"race\"").count(), 2, "{dom}");
        // The inline script ran: it adds the thread toggle.
        assert!(dom.contains("<button"), "{dom}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn many_threads_share_an_others_column() {
    // T1 races with T2; eight more threads take the lock L in between.
    let dir = temp_dir("many");
    let mut t = String::from("T1|w(x,1)|A.java:1\n");
    for i in 3..=10 {
        t +=
            &format!("T{i}|acq(L)|C.java:{i}\nT{i}|w(v{i},1)|C.java:{i}\nT{i}|rel(L)|C.java:{i}\n");
    }
    t += "T2|acq(L)|B.java:1\nT2|rel(L)|B.java:2\nT2|w(x,2)|B.java:3\n";
    let p = dir.join("many.std");
    std::fs::write(&p, t).unwrap();
    let html = dir.join("many.html");
    let out = jrace(&[
        "witness",
        &p.display().to_string(),
        "--race",
        "1",
        "--html",
        &html.display().to_string(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let v = text(&out);
    let header = v
        .lines()
        .find(|l| l.contains("step") && l.contains("event"))
        .unwrap();
    assert_eq!(header.matches('|').count(), 4, "T1, T2, others: {header}");
    assert!(header.contains("others"), "{header}");
    assert!(
        v.contains("the column `others` holds T3, T4, T5, T6, T7, T8, T9, T10"),
        "{v}"
    );
    assert!(v.contains("T10: w(v10,1)  {L}"), "{v}");
    let rows = race_rows(&v);
    assert_eq!(rows.len(), 2, "{v}");
    assert!(
        rows[0].contains("w(x,1)") && rows[1].contains("w(x,2)"),
        "{v}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("data-thread=\"others\""));
    assert_eq!(page.matches("class=\"race\"").count(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn adjacent_race_says_the_schedule_is_as_recorded() {
    let dir = temp_dir("adj");
    let p = dir.join("adj.std");
    std::fs::write(&p, "T1|w(x,1)|A.java:1\nT2|w(x,2)|B.java:3\n").unwrap();
    let out = jrace(&["witness", &p.display().to_string(), "--race", "1"]);
    assert!(out.status.success(), "{out:?}");
    let v = text(&out);
    assert_eq!(race_rows(&v).len(), 2, "{v}");
    assert!(v.contains("the schedule runs as recorded"), "{v}");
    assert!(!v.contains("departs"), "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Test trace TV5: only a cf witness exists (t2's read of y must see the initial value),
/// which mcm finds. The view says model cf, marks the stale read with `~` and explains it
/// below the table; `--context 1` shows the last elided row, `--wide` keeps long cells
/// whole.
#[test]
fn cf_witness_marks_the_stale_read_and_context_expands_the_prefix() {
    let dir = temp_dir("tv5");
    let p = dir.join("tv5.std");
    std::fs::write(
        &p,
        "t1|fork(t2)|1\nt1|acq(l)|2\nt1|w(x,1)|3\nt1|w(y,1)|4\nt1|rel(l)|5\nt2|begin|6\n\
         t2|acq(l)|7\nt2|r(y,1)|8\nt2|rel(l)|9\nt2|r(x,1)|10\nt2|br|11\nt2|w(z,1)|12\n\
         t2|end|13\nt1|join(t2)|14\nt1|r(z,1)|15\nt1|br|16\n",
    )
    .unwrap();
    let p = p.display().to_string();
    let out = jrace(&["witness", &p, "--race", "1", "-d", "mcm"]);
    assert!(out.status.success(), "{out:?}");
    let v = text(&out);
    assert!(v.contains("model cf"), "{v}");
    let rows = race_rows(&v);
    assert_eq!(rows.len(), 2, "{v}");
    assert!(
        rows[0].contains("w(x,1)") && rows[1].contains("r(x,1)"),
        "{v}"
    );
    // The canonical cf witness: 1 6 7 8 9 2 3 10, event 8 stale.
    let stale: Vec<&str> = v.lines().filter(|l| l.contains("~r(y,1)")).collect();
    assert_eq!(stale.len(), 1, "{v}");
    assert!(
        v.contains("~ step 4 (event 8): t2 reads from the initial value, not from event 4 as recorded (recorded value 1)."),
        "{v}"
    );
    assert!(v.contains("first 1 step as recorded"), "{v}");
    assert!(v.contains("... 1 event as recorded: t1 1"), "{v}");
    let html = dir.join("tv5.html");
    let out = jrace(&[
        "witness",
        &p,
        "--race",
        "1",
        "-d",
        "mcm",
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        page.matches("class=\"overtakes stale\"").count(),
        1,
        "{page}"
    );
    assert!(
        page.contains("model cf") && page.contains("\"model\":\"cf\""),
        "{page}"
    );
    assert!(
        page.contains("reads from the initial value, not from event 4"),
        "{page}"
    );

    let out = jrace(&["witness", &p, "--race", "1", "-d", "mcm", "--context", "1"]);
    assert!(out.status.success(), "{out:?}");
    let c = text(&out);
    assert!(
        !c.contains("as recorded: t1"),
        "the one elided row is shown\n{c}"
    );
    assert!(c.lines().any(|l| l.contains("fork(t2)")), "{c}");

    // A variable name longer than a cell.
    let long = dir.join("long.std");
    let name = "com.example.some.deeply.nested.pkg.Class.field";
    std::fs::write(
        &long,
        format!("T1|w({name},1)|A.java:1\nT2|w({name},2)|B.java:3\n"),
    )
    .unwrap();
    let long = long.display().to_string();
    let cut = text(&jrace(&["witness", &long, "--race", "1"]));
    let full = format!("w({name},1)");
    assert!(race_rows(&cut)[0].contains("..."), "{cut}");
    assert!(!race_rows(&cut)[0].contains(&full), "{cut}");
    let wide = text(&jrace(&["witness", &long, "--race", "1", "--wide"]));
    assert!(race_rows(&wide)[0].contains(&full), "{wide}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--minimize` keeps only the events the race needs: on bank's race 2 the schedule gets
/// shorter, still ends with the same two accesses, and is shown like any other.
#[test]
fn minimized_witness_is_shorter_and_ends_with_the_race() {
    let steps = |v: &str| -> usize {
        let l = v.lines().find(|l| l.starts_with("witness ")).unwrap();
        l.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let full = jrace(&["witness", &bank(), "--race", "2"]);
    let min = jrace(&["witness", &bank(), "--race", "2", "--minimize"]);
    assert!(full.status.success() && min.status.success(), "{min:?}");
    let (full, min) = (text(&full), text(&min));
    assert!(steps(&min) < steps(&full), "{full}\n{min}");
    assert_eq!(race_rows(&min).len(), 2, "{min}");
    let tail = |v: &str| {
        race_rows(v)
            .iter()
            .map(|l| {
                let cells = l.split('|').skip(1).collect::<Vec<_>>().join(" ");
                cells.split_whitespace().collect::<Vec<_>>().join(" ")
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(tail(&full), tail(&min), "the same racing rows");
}
