//! `jrace demo`: records the bundled racy bank program under the agent and prints its
//! report; without a JVM, analyzes the same program's bundled trace.

use crate::{analyze_source, detector_names, emit, open, record, Format};
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const DEMO_TRACE: &str = include_str!("../examples/bank.std");

/// Records java-harness/src/demo/Bank.java under the agent; `None` when this machine
/// cannot (no JVM, no agent, no compiled harness), with the reason.
fn demo_record(dir: &Path) -> std::result::Result<PathBuf, String> {
    let classes = PathBuf::from(env!("JRACE_HARNESS_CLASSES"));
    if !classes.join("demo/Bank.class").is_file() {
        return Err(format!("{} has no demo/Bank.class", classes.display()));
    }
    record::agent_path().map_err(|e| e.to_string())?;
    let trace = dir.join("bank.trace");
    let opts = record::RecordOptions {
        output: Some(trace.clone()),
        ..Default::default()
    };
    let cmd = vec![
        "java".to_string(),
        "-cp".to_string(),
        classes.to_string_lossy().into_owned(),
        "demo.Bank".to_string(),
    ];
    match record::record(&opts, &cmd) {
        Ok((t, s)) if s.success() => Ok(t),
        Ok((_, s)) => Err(format!("java exited with status {}", record::exit_code(s))),
        Err(e) => Err(format!("{e:#}")),
    }
}

pub(crate) fn demo() -> Result<ExitCode> {
    let dir = std::env::temp_dir().join(format!("jrace-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    eprintln!(
        "jrace demo: recording a small bank program (2 tellers, 1 auditor: \
         java-harness/src/demo/Bank.java) under the agent"
    );
    match demo_record(&dir) {
        Ok(trace) => {
            eprintln!("            trace: {}\n", trace.display());
            let names = detector_names(&["all".to_owned()])?;
            let t2 = trace.clone();
            let rep = analyze_source(&trace, &|| open(&t2), &names, false, &Default::default())?;
            emit(&rep, Format::Text, None, "", &Default::default())?;
            let _ = std::fs::remove_dir_all(&dir);
            return Ok(ExitCode::SUCCESS);
        }
        Err(why) => {
            eprintln!("jrace demo: cannot record here ({why}); analyzing a recorded run instead")
        }
    }
    let path = dir.join("bank.std");
    std::fs::write(&path, DEMO_TRACE)?;
    eprintln!(
        "jrace demo: analyzing a recorded run of a small bank program (2 tellers, 1 auditor)"
    );
    eprintln!(
        "            trace: {} ({} lines)\n",
        path.display(),
        DEMO_TRACE.lines().count()
    );
    let names = detector_names(&["all".to_owned()])?;
    let p2 = path.clone();
    let rep = analyze_source(&path, &|| open(&p2), &names, false, &Default::default())?;
    emit(&rep, Format::Text, None, "", &Default::default())?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(ExitCode::SUCCESS)
}
