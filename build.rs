//! Compiles java-harness/ with javac so that tests and the demo can run its programs.
//! The classes go to `$OUT_DIR/java-harness`, exported as `JRACE_HARNESS_CLASSES`. A
//! machine without javac still builds jrace (with a warning): only the Java tests need it.

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

fn main() {
    println!("cargo:rerun-if-changed=java-harness/src");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("java-harness");
    println!("cargo:rustc-env=JRACE_HARNESS_CLASSES={}", out.display());
    let mut srcs = Vec::new();
    java_sources(Path::new("java-harness/src"), &mut srcs);
    if srcs.is_empty() {
        return;
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
        Ok(s) => println!("cargo:warning=javac failed ({s}); the Java harness is not available"),
        Err(e) => {
            println!("cargo:warning=javac not found ({e}); the Java harness is not available")
        }
    }
}
