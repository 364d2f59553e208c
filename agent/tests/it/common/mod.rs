//! Helpers shared by the class-file tests: find the JDK, extract its classes.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// `$JAVA_HOME`, else the JDK that `java` on the PATH belongs to.
pub fn java_home() -> Option<PathBuf> {
    if let Ok(h) = std::env::var("JAVA_HOME") {
        let p = PathBuf::from(h);
        if p.join("bin/java").exists() {
            return Some(p);
        }
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg("readlink -f \"$(command -v java)\"")
        .output()
        .ok()?;
    let java = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let home = java.parent()?.parent()?.to_path_buf();
    home.join("bin/java").exists().then_some(home)
}

pub fn tool(home: &Path, name: &str) -> Option<PathBuf> {
    let p = home.join("bin").join(name);
    p.exists().then_some(p)
}

/// A scratch directory unique to this test process.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("jrace-cf-{}-{}", name, std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Extracts the running JDK's classes (`jimage extract`) once per test process; returns
/// the directory (one subdirectory per module), or why it could not.
pub fn jdk_classes() -> Result<PathBuf, String> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        let home = java_home().ok_or("no JDK found (JAVA_HOME unset and no java on PATH)")?;
        let jimage = tool(&home, "jimage").ok_or(format!("no jimage in {}", home.display()))?;
        let modules = home.join("lib/modules");
        if !modules.exists() {
            return Err(format!("no {}", modules.display()));
        }
        // One extraction per JDK image, shared by test runs: extracted into a private
        // directory, then renamed into place, so concurrent runs never see half of it.
        let meta = std::fs::metadata(&modules).map_err(|e| e.to_string())?;
        let stamp = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        let dir = std::env::temp_dir().join(format!("jrace-jdk-classes-{}-{stamp}", meta.len()));
        if dir.join("java.base").is_dir() {
            return Ok(dir);
        }
        let tmp = scratch("jdk-extract");
        let st = Command::new(jimage)
            .arg("extract")
            .arg("--dir")
            .arg(&tmp)
            .arg(&modules)
            .status()
            .map_err(|e| format!("jimage: {e}"))?;
        if !st.success() {
            return Err(format!("jimage extract failed: {st}"));
        }
        if std::fs::rename(&tmp, &dir).is_err() {
            let _ = std::fs::remove_dir_all(&tmp); // another run won the race
        }
        Ok(dir)
    })
    .clone()
}

/// Every `.class` file under `dir`, sorted.
pub fn class_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "class") {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, &mut v);
    v.sort();
    v
}
