//! Insertion validity: code is inserted before (and after) every instruction of every
//! method, the classes are written, and a real JVM running with `-Xverify:all` must accept
//! them and behave exactly as before.
//!
//! * Test programs (`tests/java/cftest`, plus a generated `Big` class with methods long
//!   enough to need `goto_w`, trampolines for conditional branches, `wide` locals, and one
//!   method too large to rewrite): `getstatic System.out; pop` before every instruction
//!   (a new constant-pool entry, one extra stack slot) and `bipush 7; pop` after every
//!   instruction that falls through. The rewritten program's output must equal the
//!   original's.
//! * The JDK: every class of `java.base` is rewritten with `iconst_0; pop` before and after
//!   every instruction and put in front of the real ones with `--patch-module java.base=…`
//!   (user class loaders may not define `java.*` classes; patching keeps their names and
//!   lets boot classes be verified, which `-Xverify:all` does). A driver loads and links
//!   (= verifies) every one of them; the outcome per class must equal the unpatched run,
//!   with no VerifyError, and the test program must still print the same under the
//!   patched JDK.
use crate::common;

use jrace_agent::classfile::edit::CodeEditor;
use jrace_agent::classfile::insn::{op, Arg, Insn};
use jrace_agent::classfile::ClassFile;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Default, Debug)]
struct Stats {
    classes: usize,
    methods: usize,
    refused: Vec<String>,
    insertions: usize,
    widened: u32,
    trampolines: u32,
}

enum Probe {
    /// `getstatic java/lang/System.out; pop` before, `iconst_0; pop` after.
    Getstatic,
    /// `iconst_0; pop` before and after.
    Iconst,
}

fn instrument(bytes: &[u8], probe: &Probe, st: &mut Stats) -> Vec<u8> {
    let mut c = ClassFile::parse(bytes).expect("parse");
    let before = match probe {
        Probe::Getstatic => {
            let f = c
                .constant_pool
                .add_fieldref("java/lang/System", "out", "Ljava/io/PrintStream;")
                .unwrap();
            vec![Insn::with(op::GETSTATIC, Arg::Cp(f)), Insn::new(op::POP)]
        }
        Probe::Iconst => vec![Insn::new(op::ICONST_0), Insn::new(op::POP)],
    };
    // Three bytes after (odd, so switch padding changes), two or four before.
    let after = match probe {
        Probe::Getstatic => vec![Insn::with(op::BIPUSH, Arg::I8(7)), Insn::new(op::POP)],
        Probe::Iconst => vec![Insn::new(op::ICONST_0), Insn::new(op::POP)],
    };
    st.classes += 1;
    for mi in 0..c.methods.len() {
        let Some(code) = c.methods[mi].code() else {
            continue;
        };
        let orig = code.clone();
        let mut ed = CodeEditor::new(code).expect("decode");
        for i in 0..ed.len() {
            ed.insert_before(i, &before, 1).unwrap();
            let ins = &ed.instructions()[i].1;
            if !ins.is_unconditional() && ins.op != op::JSR && ins.op != op::JSR_W {
                ed.insert_after(i, &after, 1).unwrap();
                st.insertions += 1;
            }
            st.insertions += 1;
        }
        let cp_before = c.constant_pool.len();
        match ed.apply(&mut c, mi) {
            Ok(s) => {
                st.methods += 1;
                st.widened += s.widened;
                st.trampolines += s.trampolines;
            }
            Err(e) => {
                assert_eq!(
                    c.methods[mi].code().unwrap(),
                    &orig,
                    "a refused method must be left unchanged"
                );
                assert_eq!(c.constant_pool.len(), cp_before);
                st.refused.push(format!(
                    "{}.{}: {e}",
                    c.name().unwrap(),
                    c.method_name(&c.methods[mi])
                ));
            }
        }
    }
    c.to_bytes()
}

fn java_tools() -> Option<(PathBuf, PathBuf)> {
    let home = common::java_home()?;
    Some((common::tool(&home, "java")?, common::tool(&home, "javac")?))
}

/// The generated class: a loop whose body is long enough that, once instrumented, its
/// backward `goto` needs `goto_w` and its forward exit test a trampoline; a method with more
/// than 256 locals (wide loads, stores and iinc); and one method too large to instrument.
fn big_java() -> String {
    let mut s = String::from("package cftest;\npublic class Big {\n  public static long run(int n) {\n    long s = 0;\n    for (int i = 0; i < n; i++) {\n      int v = i * 31 + 7;\n");
    for k in 0..420 {
        s += &format!(
            "      if ((v ^ {k}) > {}) {{ s += v + {k}; }} else {{ s -= {k}; }}\n",
            k * 3
        );
    }
    s += "    }\n    return s + huge(n);\n  }\n  public static int wideLocals(int x) {\n    int l0 = x;\n";
    for k in 1..300 {
        s += &format!("    int l{k} = l{} + {k};\n", k - 1);
    }
    s += "    l299 += 5;\n    l299 += 1000;\n    return l299 + l1;\n  }\n  static long huge(int n) {\n    long s = 0;\n    for (int i = 0; i < n; i++) {\n      int v = i * 17;\n";
    for k in 0..1500 {
        s += &format!(
            "      if ((v ^ {k}) > {}) {{ s += v + {k}; }} else {{ s -= {k}; }}\n",
            k * 5
        );
    }
    s += "    }\n    return s;\n  }\n}\n";
    s
}

fn run(cmd: &mut Command) -> (String, String, bool) {
    let o = cmd.output().expect("run java");
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.success(),
    )
}

fn compile_test_programs(javac: &Path, dir: &Path) -> PathBuf {
    let src = dir.join("src");
    let orig = dir.join("orig");
    std::fs::create_dir_all(src.join("cftest")).unwrap();
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/cftest");
    let mut files = Vec::new();
    for e in std::fs::read_dir(&here).unwrap().flatten() {
        let to = src.join("cftest").join(e.file_name());
        std::fs::copy(e.path(), &to).unwrap();
        files.push(to);
    }
    let big = src.join("cftest/Big.java");
    std::fs::write(&big, big_java()).unwrap();
    files.push(big);
    let st = Command::new(javac)
        .arg("-g")
        .arg("-d")
        .arg(&orig)
        .args(&files)
        .status()
        .unwrap();
    assert!(st.success(), "javac failed");
    orig
}

fn instrument_tree(
    from: &Path,
    to: &Path,
    probe: &Probe,
    st: &mut Stats,
    filter: impl Fn(&Path) -> bool,
) {
    for f in common::class_files(from) {
        let rel = f.strip_prefix(from).unwrap();
        if !filter(rel) {
            continue;
        }
        let out = to.join(rel);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        std::fs::write(&out, instrument(&std::fs::read(&f).unwrap(), probe, st)).unwrap();
    }
}

#[test]
fn instrumented_test_programs_verify_and_behave_the_same() {
    let Some((java, javac)) = java_tools() else {
        println!("SKIPPED: no JDK with java and javac found");
        return;
    };
    let dir = common::scratch("insert-app");
    let orig = compile_test_programs(&javac, &dir);
    let inst = dir.join("inst");
    let mut st = Stats::default();
    instrument_tree(&orig, &inst, &Probe::Getstatic, &mut st, |_| true);
    println!(
        "test programs: {} classes, {} methods rewritten ({} insertions, {} goto widened, {} trampolines), {} refused: {:?}",
        st.classes, st.methods, st.insertions, st.widened, st.trampolines, st.refused.len(), st.refused
    );
    assert!(
        st.widened > 0 && st.trampolines > 0,
        "Big.run should need goto_w and trampolines"
    );
    assert_eq!(
        st.refused.len(),
        1,
        "exactly Big.huge is too large: {:?}",
        st.refused
    );
    assert!(st.refused[0].starts_with("cftest/Big.huge"));

    let (out0, err0, ok0) = run(Command::new(&java)
        .arg("-Xverify:all")
        .arg("-cp")
        .arg(&orig)
        .arg("cftest.Main"));
    assert!(ok0, "original program failed: {err0}");
    let (out1, err1, ok1) = run(Command::new(&java)
        .arg("-Xverify:all")
        .arg("-cp")
        .arg(&inst)
        .arg("cftest.Main"));
    assert!(
        ok1 && !err1.contains("VerifyError"),
        "instrumented program failed:\n{err1}"
    );
    assert_eq!(out0, out1, "instrumented program prints something else");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The driver must notice a class that does not verify; otherwise the JDK test proves
/// nothing.
#[test]
fn the_verification_driver_detects_broken_code() {
    let Some((java, javac)) = java_tools() else {
        println!("SKIPPED: no JDK with java and javac found");
        return;
    };
    let dir = common::scratch("insert-broken");
    let orig = compile_test_programs(&javac, &dir);
    // A `pop` on an empty stack at the start of every method of Main$Box.
    let p = orig.join("cftest/Main$Box.class");
    let mut c = ClassFile::parse(&std::fs::read(&p).unwrap()).unwrap();
    for mi in 0..c.methods.len() {
        let mut ed = CodeEditor::new(c.methods[mi].code().unwrap()).unwrap();
        ed.insert_before(0, &[Insn::new(op::POP)], 0).unwrap();
        ed.apply(&mut c, mi).unwrap();
    }
    std::fs::write(&p, c.to_bytes()).unwrap();
    let list = dir.join("names.txt");
    std::fs::write(&list, "cftest.Main$Box\ncftest.Main$Pair\n").unwrap();
    let (out, _, ok) = run(Command::new(&java)
        .arg("-Xverify:all")
        .arg("-cp")
        .arg(&orig)
        .arg("cftest.LoadAll")
        .arg(&list));
    assert!(ok);
    assert_eq!(
        out,
        "cftest.Main$Box java.lang.VerifyError\ncftest.Main$Pair OK\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn instrumented_java_base_verifies_and_runs() {
    let Some((java, javac)) = java_tools() else {
        println!("SKIPPED: no JDK with java and javac found");
        return;
    };
    let jdk = match common::jdk_classes() {
        Ok(d) => d,
        Err(why) => {
            println!("SKIPPED: {why}");
            return;
        }
    };
    let t = std::time::Instant::now();
    let dir = common::scratch("insert-jdk");
    let orig = compile_test_programs(&javac, &dir);
    let base = jdk.join("java.base");
    let patch = dir.join("patch");
    let mut st = Stats::default();
    let skip = |rel: &Path| rel.file_name().is_some_and(|n| n == "module-info.class");
    // HotSpot crashes at startup (SIGSEGV in Reference.<clinit>) when java.lang.Object's
    // methods are not exactly as shipped (its `<init>` is special to the interpreter); the
    // agent must never touch Object, so neither does this test.
    instrument_tree(&base, &patch, &Probe::Iconst, &mut st, |rel| {
        !skip(rel) && rel != Path::new("java/lang/Object.class")
    });
    let t_inst = t.elapsed();
    let mut names = String::new();
    for f in common::class_files(&base) {
        let rel = f.strip_prefix(&base).unwrap();
        if !skip(rel) {
            names += &rel.with_extension("").to_string_lossy().replace('/', ".");
            names.push('\n');
        }
    }
    let list = dir.join("names.txt");
    std::fs::write(&list, &names).unwrap();
    let load = |patched: bool| {
        let mut c = Command::new(&java);
        c.arg("-Xverify:all").arg("-Xshare:off");
        if patched {
            c.arg(format!("--patch-module=java.base={}", patch.display()));
        }
        run(c
            .current_dir(&dir)
            .arg("-cp")
            .arg(&orig)
            .arg("cftest.LoadAll")
            .arg(&list))
    };
    let (base_out, base_err, ok0) = load(false);
    assert!(ok0, "driver failed on the unmodified JDK: {base_err}");
    let (out, err, ok1) = load(true);
    assert!(
        ok1,
        "driver failed on the instrumented JDK:\n{}\n{}",
        &err[..err.len().min(4000)],
        &out[out.len().saturating_sub(2000)..]
    );
    assert!(
        !err.contains("VerifyError"),
        "{}",
        &err[..err.len().min(4000)]
    );
    let linked = out.lines().filter(|l| l.ends_with(" OK")).count();
    let diffs: Vec<_> = base_out
        .lines()
        .zip(out.lines())
        .filter(|(a, b)| a != b)
        .take(20)
        .collect();
    assert!(
        diffs.is_empty() && base_out.lines().count() == out.lines().count(),
        "outcomes differ: {diffs:?}"
    );

    let main = |patched: bool| {
        let mut c = Command::new(&java);
        c.arg("-Xverify:all").arg("-Xshare:off");
        if patched {
            c.arg(format!("--patch-module=java.base={}", patch.display()));
        }
        run(c.current_dir(&dir).arg("-cp").arg(&orig).arg("cftest.Main"))
    };
    // The same driver must see a VerifyError from a broken boot class, or the check above
    // proves nothing: BitSet with a `pop` on an empty stack at the start of every method.
    let broken = dir.join("broken");
    let bitset =
        ClassFile::parse(&std::fs::read(base.join("java/util/BitSet.class")).unwrap()).unwrap();
    let mut c = bitset.clone();
    for mi in 0..c.methods.len() {
        if let Some(code) = c.methods[mi].code() {
            let mut ed = CodeEditor::new(code).unwrap();
            ed.insert_before(0, &[Insn::new(op::POP)], 0).unwrap();
            ed.apply(&mut c, mi).unwrap();
        }
    }
    std::fs::create_dir_all(broken.join("java/util")).unwrap();
    std::fs::write(broken.join("java/util/BitSet.class"), c.to_bytes()).unwrap();
    std::fs::write(dir.join("bitset.txt"), "java.util.BitSet\n").unwrap();
    let (b, _, _) = run(Command::new(&java)
        .current_dir(&dir)
        .arg("-Xverify:all")
        .arg("-Xshare:off")
        .arg(format!("--patch-module=java.base={}", broken.display()))
        .arg("-cp")
        .arg(&orig)
        .arg("cftest.LoadAll")
        .arg(dir.join("bitset.txt")));
    assert_eq!(b, "java.util.BitSet java.lang.VerifyError\n");

    let (m0, _, _) = main(false);
    let (m1, e1, ok) = main(true);
    assert!(
        ok && !e1.contains("VerifyError"),
        "test program under the instrumented JDK: {e1}"
    );
    assert_eq!(m0, m1);
    println!(
        "java.base: {} classes, {} methods rewritten ({} insertions, {} goto widened, {} trampolines), {} refused, \
         {linked} classes loaded+verified under -Xverify:all with identical outcomes; {:.1}s (instrumenting {:.1}s)",
        st.classes,
        st.methods,
        st.insertions,
        st.widened,
        st.trampolines,
        st.refused.len(),
        t.elapsed().as_secs_f64(),
        t_inst.as_secs_f64()
    );
    for r in &st.refused {
        println!("  refused {r}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
