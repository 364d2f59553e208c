//! Compiles java-harness/ with javac so that tests and the demo can run its programs.
//! The classes go to `$OUT_DIR/java-harness`, exported as `JRACE_HARNESS_CLASSES`. A
//! machine without javac still builds jrace (with a warning): only the Java tests need it.
//!
//! A source whose first lines hold `// CLASSPATH: JAR[:JAR...]` (a real-workload driver
//! against a Debian jar, e.g. `/usr/share/java/lucene-core-*.jar`; one `*` per file name
//! allowed) is compiled on its own against those jars, and only when they all exist: a
//! missing jar skips that driver and never breaks the build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn java_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            java_sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "java") {
            out.push(p);
        }
    }
}

/// The jars of a `// CLASSPATH:` line in the first lines of `src`, if it has one:
/// `Some(Ok(jars))` when they all exist, `Some(Err(missing))` otherwise.
fn classpath_of(src: &Path) -> Option<Result<Vec<PathBuf>, String>> {
    let text = std::fs::read_to_string(src).ok()?;
    let line = text
        .lines()
        .take(5)
        .find_map(|l| l.trim().strip_prefix("// CLASSPATH:"))?;
    let mut jars = Vec::new();
    for pat in line.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        println!(
            "cargo:rerun-if-changed={}",
            Path::new(pat).parent()?.display()
        );
        match resolve(Path::new(pat)) {
            Some(j) => jars.push(j),
            None => return Some(Err(pat.to_string())),
        }
    }
    Some(Ok(jars))
}

/// `dir/pre*post` to the first matching file (sorted), or the path itself when it exists.
fn resolve(pat: &Path) -> Option<PathBuf> {
    let name = pat.file_name()?.to_str()?;
    let Some((pre, post)) = name.split_once('*') else {
        return pat.is_file().then(|| pat.to_path_buf());
    };
    let mut hits: Vec<PathBuf> = std::fs::read_dir(pat.parent()?)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.len() >= pre.len() + post.len() && n.starts_with(pre) && n.ends_with(post)
            })
        })
        .collect();
    hits.sort();
    hits.into_iter().next()
}

fn main() {
    println!("cargo:rerun-if-changed=java-harness/src");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("java-harness");
    println!("cargo:rustc-env=JRACE_HARNESS_CLASSES={}", out.display());
    let mut all = Vec::new();
    java_sources(Path::new("java-harness/src"), &mut all);
    if all.is_empty() {
        return;
    }
    let mut srcs = Vec::new();
    let mut drivers = Vec::new();
    for src in all {
        match classpath_of(&src) {
            None => srcs.push(src),
            Some(cp) => drivers.push((src, cp)),
        }
    }
    let _ = std::fs::create_dir_all(&out);
    let javac = std::env::var("JAVA_HOME")
        .map(|h| PathBuf::from(h).join("bin/javac"))
        .ok()
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("javac"));
    match Command::new(&javac)
        .arg("-g")
        .arg("--release")
        .arg("17")
        .arg("-d")
        .arg(&out)
        .args(&srcs)
        .status()
    {
        Ok(s) if s.success() => {}
        Ok(s) => {
            println!("cargo:warning=javac failed ({s}); the Java harness is not available");
            return;
        }
        Err(e) => {
            println!("cargo:warning=javac not found ({e}); the Java harness is not available");
            return;
        }
    }
    for (src, cp) in drivers {
        let Ok(jars) = cp else {
            continue; // its library is not installed: the driver is simply not built
        };
        let mut classpath = out.clone().into_os_string();
        for j in &jars {
            classpath.push(":");
            classpath.push(j);
        }
        let ok = Command::new(&javac)
            .arg("-g")
            .arg("--release")
            .arg("17")
            .arg("-nowarn")
            .arg("-cp")
            .arg(&classpath)
            .arg("-d")
            .arg(&out)
            .arg(&src)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            println!("cargo:warning=javac failed on {}", src.display());
        }
    }
}
