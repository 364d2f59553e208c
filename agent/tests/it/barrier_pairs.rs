//! BarrierPair instrumentation (`barrier=1`, issue 6) on a test program
//! (tests/java/bp): `bp.Main` is instrumented with `bplib.*` excluded and run under
//! `-Xverify:all` against the logging stub of `jrace.rt.R` (tests/java/instr/stub), which
//! keeps the thread's BarrierPair depth as the runtime does and logs how many pairs each
//! unwind closes. Checked: the output is unchanged; per scenario, which calls get
//! `bpenter*` (with which roots and token) and `bpexit`, and that every exit by an
//! exception is closed by `bpunwind` (in the method's own handler, or in its catch-all
//! handler before a synchronized method's monitor is released, or after a constructor's
//! `this(...)` call); statically empty and modelled calls get none; a callback from
//! excluded code runs between `bpenter` and `bpexit`.
use crate::common;

use jrace_agent::instrument::{instrument_with, Barrier, Options};
use jrace_agent::sites::{Site, SiteKind, SiteList};
use std::path::{Path, PathBuf};
use std::process::Command;

fn here(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn javac(javac: &Path, out: &Path, files: &[PathBuf]) {
    let st = Command::new(javac)
        .arg("-g")
        .arg("-d")
        .arg(out)
        .args(files)
        .status()
        .unwrap();
    assert!(st.success(), "javac failed");
}

fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

#[derive(Debug, Clone)]
struct Ev {
    hook: String,
    site: Site,
    args: Vec<String>,
}

fn parse_log(log: &str, sites: &SiteList) -> Vec<Ev> {
    log.lines()
        .map(|l| {
            let (body, _thread) = l.rsplit_once(" T=").unwrap();
            let mut w = body.split(' ');
            let hook = w.next().unwrap().to_string();
            let site: usize = w.next().unwrap().parse().unwrap();
            Ev {
                hook,
                site: sites.sites[site].clone(),
                // References as their class only; lambdas as `lambda`.
                args: w
                    .map(|a| {
                        let c = a.split('@').next().unwrap();
                        if c.contains("$$Lambda") {
                            "lambda".to_string()
                        } else {
                            c.to_string()
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The BarrierPair hooks of one method, as `hook args… [callee]`.
fn bp_seq(evs: &[Ev], method: &str) -> Vec<String> {
    evs.iter()
        .filter(|e| e.site.loc.class.as_ref() == "bp.Main" && e.site.loc.method.as_ref() == method)
        .filter(|e| e.hook.starts_with("bp"))
        .map(|e| {
            let callee = match &e.site.kind {
                SiteKind::Barrier { name, .. } if e.hook.starts_with("bpenter") => {
                    format!(" [{name}]")
                }
                _ => String::new(),
            };
            format!("{} {}{callee}", e.hook, e.args.join(" "))
                .trim_end()
                .to_string()
        })
        .collect()
}

#[test]
fn barrier_pairs_bracket_calls_into_excluded_code() {
    let Some(home) = common::java_home() else {
        println!("SKIPPED: no JDK");
        return;
    };
    let (Some(java), Some(javac_bin)) = (common::tool(&home, "java"), common::tool(&home, "javac"))
    else {
        println!("SKIPPED: no java/javac");
        return;
    };
    let dir = common::scratch("barrier-pairs");
    let orig = dir.join("orig");
    let mut files = sources(&here("tests/java/bp/bp"));
    files.extend(sources(&here("tests/java/bp/bplib")));
    javac(&javac_bin, &orig, &files);
    let stub = dir.join("stub");
    javac(
        &javac_bin,
        &stub,
        &[here("tests/java/instr/stub/jrace/rt/R.java")],
    );

    // Instrument bp/** with bplib.* (and the JDK) excluded; copy bplib unchanged.
    let inst = dir.join("inst");
    let excluded = |owner: &str| {
        ["bplib/", "java/", "javax/", "jdk/", "sun/"]
            .iter()
            .any(|p| owner.starts_with(p))
    };
    let bp = Barrier {
        excluded: &excluded,
        globals: false,
    };
    let mut sites = SiteList::default();
    let (mut bp_sites, mut skipped) = (0, 0);
    for f in common::class_files(&orig) {
        let rel = f.strip_prefix(&orig).unwrap();
        let bytes = std::fs::read(&f).unwrap();
        let out_path = inst.join(rel);
        std::fs::create_dir_all(out_path.parent().unwrap()).unwrap();
        if rel.starts_with("bplib") {
            std::fs::write(&out_path, &bytes).unwrap();
            continue;
        }
        let o = instrument_with(
            &bytes,
            &Options::default(),
            Some(&bp),
            &|_, _| None,
            &mut sites,
        );
        assert!(o.error.is_none(), "{}: {:?}", rel.display(), o.error);
        assert!(o.failures.is_empty(), "{}: {:?}", rel.display(), o.failures);
        bp_sites += o.bp_sites;
        skipped += o.bp_skipped_empty;
        std::fs::write(&out_path, o.bytes.as_deref().unwrap_or(&bytes)).unwrap();
    }
    println!("{bp_sites} BarrierPair sites, {skipped} statically empty calls skipped");
    assert!(bp_sites >= 30, "{bp_sites}");
    // twice, upper, length, new Lib(), new ArrayList(), Integer.valueOf, Object.<init>
    // (Main, Sub's field-less super chain), Base.<init>(String), ...
    assert!(skipped >= 6, "{skipped}");

    let run = |cp: String, log: Option<&Path>| {
        let mut c = Command::new(&java);
        c.arg("-Xverify:all");
        if let Some(l) = log {
            c.arg(format!("-Djrace.log={}", l.display()));
        }
        let o = c.arg("-cp").arg(cp).arg("bp.Main").output().unwrap();
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
            o.status.success(),
        )
    };
    let (o0, e0, ok0) = run(orig.display().to_string(), None);
    assert!(ok0, "uninstrumented run failed: {e0}");
    let log = dir.join("events.log");
    let (o1, e1, ok1) = run(format!("{}:{}", inst.display(), stub.display()), Some(&log));
    assert!(
        ok1 && !e1.contains("VerifyError"),
        "instrumented run:\n{e1}"
    );
    assert_eq!(o0, o1, "the output changed");
    assert_eq!(e0, e1, "stderr changed");
    assert!(o1.contains("done"));

    let evs = parse_log(&std::fs::read_to_string(&log).unwrap(), &sites);
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();

    assert_eq!(
        bp_seq(&evs, "roots"),
        s(&[
            "bpenter2 -1 bplib.Lib java.lang.String [put]",
            "bpexit",
            "bpenter1 0 bplib.Lib [get]",
            "bpexit",
            "bpenter3 0 bplib.Lib java.lang.String null [two]",
            "bpexit",
            "bpenterN 0 bplib.Lib bplib.Lib java.lang.String bplib.Lib [three]",
            "bpexit",
            "bpenterN 0 bplib.Lib java.lang.String bplib.Lib null [four]",
            "bpexit",
            "bpenter2 0 java.io.PrintStream java.lang.String [println]",
            "bpexit",
            "bpenter1 0 bplib.Lib [size]",
            "bpexit",
            "bpenter2 0 java.io.PrintStream java.lang.String [println]",
            "bpexit",
        ])
    );
    assert_eq!(
        bp_seq(&evs, "constructors"),
        s(&["bpenter1 -1 bplib.Lib [<init>]", "bpexit"])
    );
    assert_eq!(
        bp_seq(&evs, "caughtHere"),
        s(&[
            "bpenter2 -1 bplib.Lib java.lang.String [fail]",
            "bpunwind closed=1",
            "bpenter1 0 java.lang.IllegalStateException [getMessage]",
            "bpexit",
            "bpenter2 0 java.io.PrintStream java.lang.String [println]",
            "bpexit",
        ])
    );
    assert_eq!(
        bp_seq(&evs, "throwsOut"),
        s(&[
            "bpenter2 -1 bplib.Lib java.lang.String [fail]",
            "bpunwind closed=1",
        ])
    );
    // The caller's handler finds nothing left open.
    assert_eq!(
        bp_seq(&evs, "caller"),
        s(&[
            "bpunwind",
            "bpenter1 -1 java.lang.IllegalStateException [getMessage]",
            "bpexit",
            "bpenter2 0 java.io.PrintStream java.lang.String [println]",
            "bpexit",
        ])
        .into_iter()
        .map(|x| if x == "bpunwind" {
            "bpunwind closed=0".into()
        } else {
            x
        })
        .collect::<Vec<_>>()
    );
    // Synchronized: the BarrierPair ends before the monitor is released.
    let sync: Vec<String> = evs
        .iter()
        .filter(|e| e.site.loc.method.as_ref() == "syncThrows")
        .map(|e| e.hook.clone())
        .filter(|h| h.starts_with("bp") || h.starts_with('s'))
        .collect();
    assert_eq!(
        sync,
        s(&["senter", "bpenter1", "bpunwind", "sthrow"]),
        "{sync:?}"
    );
    assert_eq!(
        bp_seq(&evs, "callsNative"),
        s(&[
            "bpenter1 -1 java.lang.Object [nat]",
            "bpunwind closed=1",
            "bpenter2 0 java.io.PrintStream java.lang.String [println]",
            "bpexit",
        ])
    );
    // The callback's write happens between bpenter and bpexit.
    let k = evs
        .iter()
        .position(|e| e.site.loc.method.as_ref() == "callback" && e.hook == "bpenter2")
        .expect("callback's bpenter");
    assert_eq!(evs[k].args, ["-1", "bplib.Lib", "lambda"]);
    assert!(
        evs[k + 1].hook == "wrI" && evs[k + 1].site.loc.method.starts_with("lambda$callback"),
        "{:?}",
        &evs[k..k + 3]
    );
    assert!(evs[k + 2].hook == "bpexit" && evs[k + 2].site.loc.method.as_ref() == "callback");
    // Modelled calls: no BarrierPair (Thread.<init> and println have one).
    assert_eq!(
        bp_seq(&evs, "modelled"),
        s(&[
            "bpenter1 -1 lambda [<init>]",
            "bpexit",
            "bpenter2 0 java.io.PrintStream java.lang.String [println]",
            "bpexit",
        ])
    );
    let modelled: Vec<String> = evs
        .iter()
        .filter(|e| e.site.loc.method.as_ref() == "modelled" && e.hook == "before")
        .filter_map(|e| match &e.site.kind {
            SiteKind::Call { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(modelled, s(&["add", "start", "join", "notifyAll", "size"]));
    // Constructors: calls before super(...) (arguments), after it, and an exception after
    // this(...) closed by the constructor's catch-all handler.
    let init: Vec<String> = evs
        .iter()
        .filter(|e| e.site.loc.class.as_ref() == "bp.Main$Sub" && e.hook.starts_with("bp"))
        .map(|e| {
            let callee = match &e.site.kind {
                SiteKind::Barrier { name, .. } if e.hook.starts_with("bpenter") => {
                    format!(" [{name}]")
                }
                _ => String::new(),
            };
            format!("{} {}{callee}", e.hook, e.args.join(" "))
        })
        .collect();
    let sub_ok = [
        "bpenter1 -1 bplib.Lib [get]",
        "bpexit ",
        "bpenter1 0 null [valueOf]",
        "bpexit ",
        "bpenter2 0 bplib.Lib bp.Main$Sub [put]",
        "bpexit ",
        "bpenter1 0 bplib.Lib [get]",
        "bpexit ",
    ];
    let mut want = s(&sub_ok);
    // new Sub(l, true): this(l) (l holds "x": valueOf gets it), then fail.
    want.extend(s(&[
        "bpenter1 -1 bplib.Lib [get]",
        "bpexit ",
        "bpenter1 0 java.lang.String [valueOf]",
        "bpexit ",
        "bpenter2 0 bplib.Lib bp.Main$Sub [put]",
        "bpexit ",
        "bpenter1 0 bplib.Lib [get]",
        "bpexit ",
        "bpenter2 -1 bplib.Lib java.lang.String [fail]",
        "bpunwind closed=1",
    ]));
    assert_eq!(init, want);
    // The loop: every odd iteration throws and is closed in the handler.
    let lp = bp_seq(&evs, "loop");
    assert_eq!(lp.len(), 10, "{lp:?}");
    for (i, pair) in lp.chunks(2).enumerate() {
        let tok = if i == 0 { "-1" } else { "0" };
        if i % 2 == 0 {
            assert_eq!(
                pair,
                [
                    format!("bpenter2 {tok} bplib.Lib null [put]"),
                    "bpexit".into()
                ]
            );
        } else {
            assert_eq!(
                pair,
                [
                    format!("bpenter2 {tok} bplib.Lib java.lang.String [fail]"),
                    "bpunwind closed=1".into()
                ]
            );
        }
    }
    // Balanced: every bpenter is closed by a bpexit or an unwind.
    let enters = evs.iter().filter(|e| e.hook.starts_with("bpenter")).count();
    let exits = evs.iter().filter(|e| e.hook == "bpexit").count();
    let closed: usize = evs
        .iter()
        .filter(|e| e.hook == "bpunwind")
        .map(|e| {
            e.args[0]
                .trim_start_matches("closed=")
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(enters, exits + closed);
    let _ = std::fs::remove_dir_all(&dir);
}
