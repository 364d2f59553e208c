//! Times the instrumenter over every class file under a directory (default options, no
//! BarrierPairs), as the agent would transform them at load time:
//!
//! `cargo run --release -p jrace-agent --example instrument_bench -- DIR [ROUNDS]`
//!
//! Prints the classes, their bytes before and after, and milliseconds per round.

use jrace_agent::instrument::{instrument, Options};
use jrace_agent::sites::SiteList;
use std::path::{Path, PathBuf};

fn class_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            class_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "class") {
            out.push(p);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: instrument_bench DIR [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(5);
    let mut files = Vec::new();
    class_files(Path::new(dir), &mut files);
    files.sort();
    let classes: Vec<Vec<u8>> = files.iter().filter_map(|f| std::fs::read(f).ok()).collect();
    let before: usize = classes.iter().map(Vec::len).sum();
    let opts = Options::default();
    for round in 0..rounds {
        let mut sites = SiteList::default();
        let (mut after, mut failed) = (0usize, 0usize);
        let t0 = std::time::Instant::now();
        for c in &classes {
            let o = instrument(c, &opts, &mut sites);
            after += o.bytes.as_ref().map_or(c.len(), Vec::len);
            failed += o.error.is_some() as usize;
        }
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        println!(
            "round {round}: {} classes, {before} -> {after} bytes, {failed} refused, {ms:.1} ms",
            classes.len()
        );
    }
}
