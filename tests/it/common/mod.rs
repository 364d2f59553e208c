//! Helpers shared by the command-line tests.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `jrace` binary built for these tests.
pub fn jrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jrace"))
        .args(args)
        .output()
        .expect("jrace runs")
}

/// The repository root.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The DOM of a local HTML page after headless Chromium ran its scripts, and Chromium's
/// log; `None` (with a note) when `/usr/bin/chromium` is not installed. `profile` is a
/// scratch directory for Chromium's user data.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn chromium_dom(page: &std::path::Path, profile: &std::path::Path) -> Option<(String, String)> {
    let chromium = std::path::Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        println!("skipped the browser check: /usr/bin/chromium is not installed");
        return None;
    }
    std::fs::create_dir_all(profile).unwrap();
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!("--user-data-dir={}", profile.display()),
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            &format!("file://{}", page.display()),
        ])
        .output()
        .expect("chromium runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "chromium failed: {err}");
    Some((String::from_utf8_lossy(&out.stdout).into_owned(), err))
}

/// `jrace convert TRACE --to TO -o OUT`, which must succeed.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn convert(trace: &std::path::Path, to: &str, out: &std::path::Path) {
    let c = jrace(&[
        "convert",
        trace.to_str().unwrap(),
        "--to",
        to,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        c.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&c.stderr)
    );
}

/// [`convert`] to `.std`, then the text written.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn convert_to_std(trace: &std::path::Path, out: &std::path::Path) -> String {
    convert(trace, "std", out);
    std::fs::read_to_string(out).unwrap()
}

/// A binary trace directory (as the agent writes) holding the `.std` text `std`, one log
/// per thread; with `filtered`, the metadata of a recording filtered in that TREE mode.
#[allow(dead_code)]
pub fn binary_trace(std: &str, filtered: Option<jrace_trace::tree::Mode>, dir: &std::path::Path) {
    use jrace_trace::binlog::{Table, TraceWriter};
    let t = jrace_trace::std_format::parse_str(std, "t.std").unwrap();
    let _ = std::fs::remove_dir_all(dir);
    let w = TraceWriter::create(dir).unwrap();
    let s = &t.symbols;
    for (id, n) in s.threads.names().iter().enumerate() {
        w.name(Table::Thread, id as u32, n).unwrap();
    }
    for (id, n) in s.statics.names().iter().enumerate() {
        w.name(Table::Static, id as u32, n).unwrap();
    }
    for (id, n) in s.locks.names().iter().enumerate() {
        w.name(Table::Lock, id as u32, n).unwrap();
    }
    for (id, n) in s.vars.names().iter().enumerate() {
        w.var(id as u32, s.var_static[id], n).unwrap();
    }
    for (id, n) in s.locs.names().iter().enumerate() {
        w.loc(id as u32, n, None).unwrap();
    }
    if let Some(mode) = filtered {
        w.set_meta(jrace_trace::tree::META_FILTERED, &mode.flag())
            .unwrap();
    }
    let mut logs = std::collections::HashMap::new();
    for (i, e) in t.events.iter().enumerate() {
        let log = logs
            .entry(e.thread)
            .or_insert_with(|| w.thread_log(e.thread).unwrap());
        log.append(i as u64, e).unwrap();
    }
    for (_, log) in logs {
        log.finish().unwrap();
    }
    w.finish().unwrap();
}
