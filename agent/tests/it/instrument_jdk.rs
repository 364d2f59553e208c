//! The instrumenter on real code: every class of the JDK's `java.base` (all hooks on) is
//! instrumented, patched into the JDK with `--patch-module java.base=…` together with a
//! do-nothing `jrace.rt.R` (generated from agent/runtime/jrace/rt/R.java: same methods, empty
//! bodies), and every class is loaded and linked (= verified) under `-Xverify:all` with the
//! same outcome as on the unpatched JDK; an instrumented test program then runs on the
//! instrumented JDK and prints what it prints without any instrumentation. The jars under
//! /usr/share/java (whichever are installed) are instrumented too, and their classes loaded
//! with the same outcomes as the originals'. Failed methods must be rare; the rate
//! (classes/s) is printed.
use crate::common;

use jrace_agent::instrument::{instrument, Options};
use jrace_agent::sites::SiteList;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn java_tools() -> Option<(PathBuf, PathBuf)> {
    let home = common::java_home()?;
    Some((common::tool(&home, "java")?, common::tool(&home, "javac")?))
}

fn run(cmd: &mut Command) -> (String, String, bool) {
    let o = cmd.output().expect("run java");
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.success(),
    )
}

fn here(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

#[derive(Default, Debug)]
struct Stats {
    classes: usize,
    changed: usize,
    methods: u64,
    failed: Vec<String>,
    reduced: Vec<String>,
    sync_skipped: usize,
    errors: Vec<String>,
    bytes_in: usize,
    bytes_out: usize,
    secs: f64,
}

/// Instruments every class under `from` into `to` (unchanged ones copied); `skip` names
/// relative paths to leave out entirely.
fn instrument_tree(
    from: &Path,
    to: &Path,
    sites: &mut SiteList,
    st: &mut Stats,
    skip: impl Fn(&Path) -> bool,
) {
    let opts = Options::default();
    for f in common::class_files(from) {
        let rel = f.strip_prefix(from).unwrap();
        if skip(rel) {
            continue;
        }
        let bytes = std::fs::read(&f).unwrap();
        let t = Instant::now();
        let o = instrument(&bytes, &opts, sites);
        st.secs += t.elapsed().as_secs_f64();
        st.classes += 1;
        st.methods += o.methods as u64;
        st.bytes_in += bytes.len();
        if let Some(e) = &o.error {
            st.errors.push(format!("{}: {e}", rel.display()));
        }
        st.sync_skipped += o.sync_skipped as usize;
        for m in &o.failures {
            if m.contains("without sync hooks") {
                continue;
            }
            if m.contains("reduced to sync hooks") {
                st.reduced.push(format!("{}.{m}", rel.display()));
            } else {
                st.failed.push(format!("{}.{m}", rel.display()));
            }
        }
        let out = to.join(rel);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let b = match &o.bytes {
            Some(b) => {
                st.changed += 1;
                b.as_slice()
            }
            None => &bytes,
        };
        st.bytes_out += b.len();
        std::fs::write(&out, b).unwrap();
    }
}

fn report(what: &str, st: &Stats) {
    println!(
        "{what}: {} classes ({} changed), {} methods, {} reduced to sync hooks, {} failed ({:.3}%), {} synchronized without sync hooks, {} class errors; \
         instrumenting {:.2}s = {:.0} classes/s, {:.1} MB/s; size {:.1} -> {:.1} MB",
        st.classes,
        st.changed,
        st.methods,
        st.reduced.len(),
        st.failed.len(),
        100.0 * st.failed.len() as f64 / st.methods.max(1) as f64,
        st.sync_skipped,
        st.errors.len(),
        st.secs,
        st.classes as f64 / st.secs.max(1e-9),
        st.bytes_in as f64 / 1e6 / st.secs.max(1e-9),
        st.bytes_in as f64 / 1e6,
        st.bytes_out as f64 / 1e6
    );
    for f in st.failed.iter().chain(&st.reduced).take(15) {
        println!("  {f}");
    }
    for f in st.errors.iter().take(5) {
        println!("  error {f}");
    }
}

/// A `jrace.rt.R` with the runtime class's methods, its natives given bodies that do
/// nothing (a site flag of 1: nothing to lock), and the `jrace.rt.U` the agent generates,
/// compiled into `out`.
fn null_stub(javac: &Path, dir: &Path, out: &Path) {
    let real = std::fs::read_to_string(here("runtime/jrace/rt/R.java")).unwrap();
    let mut src = String::new();
    for line in real.lines() {
        let t = line.trim_start();
        if t.contains("static native ") && t.ends_with(");") {
            let body = if t.contains("native int ") {
                ") { return 1; }"
            } else {
                ") {}"
            };
            src += &line.replace(" native ", " ").replace(");", body);
        } else {
            src += line;
        }
        src.push('\n');
    }
    let p = dir.join("nullstub/jrace/rt/R.java");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, src).unwrap();
    let u = dir.join("nullstub/jrace/rt/U.java");
    std::fs::write(&u, jrace_agent::unsafe_ops::java_source()).unwrap();
    // U wraps sun.misc.Unsafe too: javac's warning about it on every line is noise.
    assert!(Command::new(javac)
        .arg("-XDignore.symbol.file")
        .arg("--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED")
        .arg("-d")
        .arg(out)
        .arg(&p)
        .arg(&u)
        .status()
        .unwrap()
        .success());
}

/// The small `instr.Big` that `instr.Many` calls, written under `dir/src`.
fn write_big(dir: &Path) -> PathBuf {
    let big = dir.join("src/instr/Big.java");
    std::fs::create_dir_all(big.parent().unwrap()).unwrap();
    std::fs::write(
        &big,
        "package instr;\npublic class Big {\n  static int[] a = new int[4];\n  \
         public static long run(int n) { long s = 0; for (int i = 0; i < n; i++) { a[i & 3] += i; s += a[i & 3]; } return s; }\n  \
         public static int wide(int x) { return x * 2; }\n}\n",
    )
    .unwrap();
    big
}

fn class_names(dir: &Path, skip: impl Fn(&Path) -> bool) -> String {
    let mut names = String::new();
    for f in common::class_files(dir) {
        let rel = f.strip_prefix(dir).unwrap();
        if !skip(rel) {
            names += &rel.with_extension("").to_string_lossy().replace('/', ".");
            names.push('\n');
        }
    }
    names
}

fn not_a_class(rel: &Path) -> bool {
    rel.file_name().is_some_and(|n| n == "module-info.class")
        || rel.starts_with("META-INF")
        || rel.to_string_lossy().contains('-')
}

/// java, javac and the extracted JDK classes, or None (said why) when there are none.
fn java_and_jdk_classes() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let Some((java, javac)) = java_tools() else {
        println!("SKIPPED: no JDK with java and javac found");
        return None;
    };
    match common::jdk_classes() {
        Ok(d) => Some((java, javac, d)),
        Err(why) => {
            println!("SKIPPED: {why}");
            None
        }
    }
}

/// `java` under `-Xverify:all` in `dir`, with java.base patched from `patch` when given.
fn jdk_cmd(java: &Path, dir: &Path, patch: Option<&Path>) -> Command {
    let mut c = Command::new(java);
    c.current_dir(dir).arg("-Xverify:all").arg("-Xshare:off");
    if let Some(patch) = patch {
        c.arg(format!("--patch-module=java.base={}", patch.display()))
            .arg("--add-exports=java.base/jrace.rt=ALL-UNNAMED");
    }
    c
}

/// LoadAll's per-class outcomes on the original and the instrumented classes are equal.
fn assert_same_outcomes(out0: &str, out1: &str) {
    let diffs: Vec<_> = out0
        .lines()
        .zip(out1.lines())
        .filter(|(a, b)| a != b)
        .take(20)
        .collect();
    assert!(
        diffs.is_empty() && out0.lines().count() == out1.lines().count(),
        "outcomes differ: {diffs:?}"
    );
}

#[test]
fn instrumented_java_base_verifies_and_runs() {
    let Some((java, javac, jdk)) = java_and_jdk_classes() else {
        return;
    };
    let t = Instant::now();
    let dir = common::scratch("instr-jdk");
    let base = jdk.join("java.base");
    let patch = dir.join("patch");
    let mut sites = SiteList::default();
    let mut st = Stats::default();
    instrument_tree(&base, &patch, &mut sites, &mut st, |rel| {
        rel.file_name().is_some_and(|n| n == "module-info.class")
    });
    report("java.base", &st);
    println!("  {} sites", sites.sites.len());
    assert!(st.classes > 5000);
    assert!(st.errors.is_empty());
    assert!(
        ((st.failed.len() + st.reduced.len()) as f64) < 0.002 * st.methods as f64,
        "too many failed methods"
    );
    // Object is left alone.
    assert_eq!(
        std::fs::read(patch.join("java/lang/Object.class")).unwrap(),
        std::fs::read(base.join("java/lang/Object.class")).unwrap()
    );
    null_stub(&javac, &dir, &patch);

    // The driver and two applications (Many with a small Big of its own: threads,
    // executors, j.u.c. locks and collections, streams), compiled and instrumented.
    let app = dir.join("app");
    let big = write_big(&dir);
    assert!(Command::new(&javac)
        .arg("-d")
        .arg(&app)
        .arg(here("tests/java/cftest/LoadAll.java"))
        .arg(here("tests/java/instr/instr/Events.java"))
        .arg(here("tests/java/instr/instr/Many.java"))
        .arg(&big)
        .status()
        .unwrap()
        .success());
    let app_inst = dir.join("app-inst");
    let mut ast = Stats::default();
    instrument_tree(&app, &app_inst, &mut sites, &mut ast, |_| false);

    let list = dir.join("names.txt");
    std::fs::write(&list, class_names(&base, not_a_class)).unwrap();
    let java_cmd = |patched: bool| jdk_cmd(&java, &dir, patched.then_some(patch.as_path()));
    let (out0, err0, ok0) = run(java_cmd(false)
        .arg("-cp")
        .arg(&app)
        .arg("cftest.LoadAll")
        .arg(&list));
    assert!(ok0, "driver failed on the unmodified JDK: {err0}");
    let (out1, err1, ok1) = run(java_cmd(true)
        .arg("-cp")
        .arg(&app)
        .arg("cftest.LoadAll")
        .arg(&list));
    assert!(
        ok1 && !err1.contains("VerifyError"),
        "driver failed on the instrumented JDK:\n{}",
        &err1[..err1.len().min(4000)]
    );
    assert_same_outcomes(&out0, &out1);
    let linked = out1.lines().filter(|l| l.ends_with(" OK")).count();

    // The application: plain on the plain JDK, instrumented on the instrumented JDK.
    let (m0, e0, ok) = run(java_cmd(false).arg("-cp").arg(&app).arg("instr.Events"));
    assert!(ok, "{e0}");
    let loaded = dir.join("loaded.txt");
    let (m1, e1, ok) = run(java_cmd(true)
        .arg(format!("-Xlog:class+load=info:file={}", loaded.display()))
        .arg("-cp")
        .arg(&app_inst)
        .arg("instr.Events"));
    assert!(ok && !e1.contains("Error"), "{e1}");
    assert_eq!(m0, m1);
    // The instrumented JDK really ran: R was loaded from the patch, before the application.
    let loaded = std::fs::read_to_string(&loaded).unwrap();
    let r_at = loaded.find("jrace.rt.R ").expect("jrace.rt.R loaded");
    assert!(r_at < loaded.find("instr.Events ").unwrap());
    let (n0, e0, ok) = run(java_cmd(false).arg("-cp").arg(&app).arg("instr.Many"));
    assert!(ok, "{e0}");
    let (n1, e1, ok) = run(java_cmd(true).arg("-cp").arg(&app_inst).arg("instr.Many"));
    assert!(ok && !e1.contains("Error"), "{e1}");
    assert_eq!(n0, n1);
    println!(
        "{linked} java.base classes loaded+verified under -Xverify:all with identical outcomes; \
         instrumented Events and Many on the instrumented JDK print the same; {:.1}s in all",
        t.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The JDK as the agent instruments it: the classes of `jrace_agent::jdksync` (and the
/// executor classes `jdkhooks` hooks) in JDK mode, their synchronization only, the rest
/// unchanged; patched into the JDK, every class of java.base loads and links under
/// `-Xverify:all` as on the unpatched JDK, and the instrumented test programs (threads,
/// executors, j.u.c locks and collections, streams) print the same on it.
#[test]
fn jdk_mode_classes_verify_and_run() {
    use jrace_agent::{jdkhooks, jdksync};
    let Some((java, javac, jdk)) = java_and_jdk_classes() else {
        return;
    };
    let dir = common::scratch("instr-jdkmode");
    let base = jdk.join("java.base");
    let patch = dir.join("patch");
    let mut sites = SiteList::default();
    let (mut classes, mut changed, mut failed) = (0, 0, Vec::new());
    for f in common::class_files(&base) {
        let rel = f.strip_prefix(&base).unwrap();
        let name = rel.with_extension("").to_string_lossy().into_owned();
        let quiet_only = jdksync::quiet_only_class(&name);
        if !(jdksync::is_jdk_sync_class(&name)
            || quiet_only
            || jdkhooks::HOOKED.contains(&name.as_str()))
        {
            continue;
        }
        classes += 1;
        let bytes = std::fs::read(&f).unwrap();
        let mut cur = None;
        if jdksync::is_jdk_sync_class(&name) || quiet_only {
            let opts = Options {
                branches: false,
                tasks: false,
                calls: true,
                jdk: true,
                quiet_only,
            };
            let o = jrace_agent::instrument::instrument_with(
                &bytes,
                &opts,
                None,
                &|_, _| None,
                &mut sites,
            );
            if let Some(e) = o.error {
                failed.push(format!("{name}: {e}"));
            }
            failed.extend(
                o.failures
                    .iter()
                    .filter(|m| !m.contains("without sync hooks"))
                    .map(|m| format!("{name}.{m}")),
            );
            cur = o.bytes;
        }
        if jdkhooks::HOOKED.contains(&name.as_str()) {
            if let Ok(Some(b)) =
                jdkhooks::hook_class(&name, cur.as_deref().unwrap_or(&bytes), &mut sites)
            {
                cur = Some(b);
            }
        }
        if let Some(b) = cur {
            changed += 1;
            let out = patch.join(rel);
            std::fs::create_dir_all(out.parent().unwrap()).unwrap();
            std::fs::write(&out, b).unwrap();
        }
    }
    println!(
        "{classes} JDK classes in JDK mode, {changed} changed, {} sites; failed: {failed:?}",
        sites.sites.len()
    );
    assert!(classes > 300 && changed > 200, "{classes} {changed}");
    assert!(failed.is_empty(), "{failed:?}");
    null_stub(&javac, &dir, &patch);
    let app = dir.join("app");
    let big = write_big(&dir);
    assert!(Command::new(&javac)
        .arg("-d")
        .arg(&app)
        .arg(here("tests/java/cftest/LoadAll.java"))
        .arg(here("tests/java/instr/instr/Many.java"))
        .arg(&big)
        .status()
        .unwrap()
        .success());
    let list = dir.join("names.txt");
    std::fs::write(&list, class_names(&base, not_a_class)).unwrap();
    let java_cmd = |patched: bool| jdk_cmd(&java, &dir, patched.then_some(patch.as_path()));
    let load = |patched| {
        run(java_cmd(patched)
            .arg("-cp")
            .arg(&app)
            .arg("cftest.LoadAll")
            .arg(&list))
    };
    let (out0, err0, ok0) = load(false);
    assert!(ok0, "driver failed on the unmodified JDK: {err0}");
    let (out1, err1, ok1) = load(true);
    assert!(
        ok1 && !err1.contains("VerifyError"),
        "driver failed on the JDK-mode JDK:\n{}",
        &err1[..err1.len().min(4000)]
    );
    assert_same_outcomes(&out0, &out1);
    let (m0, e0, ok) = run(java_cmd(false).arg("-cp").arg(&app).arg("instr.Many"));
    assert!(ok, "{e0}");
    let (m1, e1, ok) = run(java_cmd(true).arg("-cp").arg(&app).arg("instr.Many"));
    assert!(ok && !e1.contains("Error"), "{e1}");
    assert_eq!(m0, m1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every jar under /usr/share/java (skipped when there is none): instrumented, and each
/// class loaded (verified) with the same outcome as the original.
#[test]
fn instrumented_debian_jars_verify() {
    let Some((java, javac)) = java_tools() else {
        println!("SKIPPED: no JDK with java and javac found");
        return;
    };
    let mut jars: Vec<PathBuf> = std::fs::read_dir("/usr/share/java")
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jar"))
                .filter_map(|p| std::fs::canonicalize(p).ok())
                .collect()
        })
        .unwrap_or_default();
    jars.sort();
    jars.dedup();
    if jars.is_empty() {
        println!("SKIPPED: no jars in /usr/share/java");
        return;
    }
    let dir = common::scratch("instr-jars");
    let (orig_root, inst_root) = (dir.join("orig"), dir.join("inst"));
    let mut sites = SiteList::default();
    let mut st = Stats::default();
    let (mut cp_orig, mut cp_inst, mut names) = (Vec::new(), Vec::new(), String::new());
    for (k, jar) in jars.iter().enumerate() {
        let o = orig_root.join(k.to_string());
        std::fs::create_dir_all(&o).unwrap();
        let ok = Command::new("unzip")
            .arg("-qq")
            .arg("-o")
            .arg(jar)
            .arg("-d")
            .arg(&o)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            println!("  (could not unzip {})", jar.display());
            continue;
        }
        let i = inst_root.join(k.to_string());
        instrument_tree(&o, &i, &mut sites, &mut st, |_| false);
        names += &class_names(&o, not_a_class);
        cp_orig.push(o.display().to_string());
        cp_inst.push(i.display().to_string());
    }
    report(&format!("{} jars in /usr/share/java", jars.len()), &st);
    assert!(
        st.errors.is_empty(),
        "{:?}",
        &st.errors[..st.errors.len().min(5)]
    );
    assert!(
        ((st.failed.len() + st.reduced.len()) as f64) < 0.002 * st.methods as f64,
        "too many failed methods"
    );
    let stub = dir.join("stub");
    null_stub(&javac, &dir, &stub);
    let driver = dir.join("driver");
    assert!(Command::new(&javac)
        .arg("-d")
        .arg(&driver)
        .arg(here("tests/java/cftest/LoadAll.java"))
        .status()
        .unwrap()
        .success());
    cp_inst.push(stub.display().to_string());
    let list = dir.join("names.txt");
    std::fs::write(&list, &names).unwrap();
    let load = |cp: &[String]| {
        run(Command::new(&java)
            .arg("-Xverify:all")
            .arg("--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED")
            .arg("-cp")
            .arg(format!("{}:{}", driver.display(), cp.join(":")))
            .arg("cftest.LoadAll")
            .arg(&list))
    };
    let t = Instant::now();
    let (out0, err0, ok0) = load(&cp_orig);
    assert!(ok0, "{}", &err0[..err0.len().min(3000)]);
    let (out1, err1, ok1) = load(&cp_inst);
    assert!(ok1, "{}", &err1[..err1.len().min(3000)]);
    let verify_errors: Vec<&str> = err1.lines().filter(|l| l.contains("VerifyError")).collect();
    assert!(verify_errors.is_empty(), "{verify_errors:?}");
    assert_same_outcomes(&out0, &out1);
    println!(
        "{} jar classes loaded with identical outcomes ({} linked OK) in {:.1}s",
        out1.lines().count(),
        out1.lines().filter(|l| l.ends_with(" OK")).count(),
        t.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The instrumenter's speed on java.base, classes in memory (no file I/O), best of three
/// runs: `cargo test --release -p jrace-agent --test it -- instrument_jdk:: --ignored --nocapture`.
#[test]
#[ignore]
fn bench_instrument_java_base() {
    let jdk = match common::jdk_classes() {
        Ok(d) => d,
        Err(why) => {
            println!("SKIPPED: {why}");
            return;
        }
    };
    let classes: Vec<Vec<u8>> = common::class_files(&jdk.join("java.base"))
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .collect();
    let bytes: usize = classes.iter().map(Vec::len).sum();
    for opts in [
        Options::default(),
        Options {
            branches: false,
            tasks: true,
            calls: true,
            ..Default::default()
        },
    ] {
        let mut best = f64::MAX;
        for _ in 0..3 {
            let mut sites = SiteList::default();
            let t = Instant::now();
            for c in &classes {
                std::hint::black_box(instrument(c, &opts, &mut sites));
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        let mut ci = f64::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            for c in &classes {
                std::hint::black_box(jrace_agent::instrument::class_info(c));
            }
            ci = ci.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{opts:?}: {} classes in {best:.3}s = {:.0} classes/s, {:.1} MB/s; class_info {:.1} µs/class",
            classes.len(),
            classes.len() as f64 / best,
            bytes as f64 / 1e6 / best,
            ci * 1e6 / classes.len() as f64
        );
    }
}
