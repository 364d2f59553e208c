//! `jrace convert`: a trace between the `.std` text format and the binary trace directory.

use crate::{open, recorded_tree, ConvertTo};
use anyhow::{Context, Result};
use jrace_trace::tree;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

pub(crate) fn convert(path: &Path, to: ConvertTo, output: &Path) -> Result<ExitCode> {
    let filtered = recorded_tree(path)?;
    if let Some(m) = filtered {
        eprintln!(
            "jrace: warning: {} was recorded with the TREE filter (mode {m}); the converted trace \
             does not carry that fact, so only analyze it with -d {}",
            path.display(),
            m.consumers().join(",")
        );
    }
    match to {
        ConvertTo::Std => {
            let mut src = open(path)?;
            let f = std::fs::File::create(output)
                .with_context(|| format!("cannot create {}", output.display()))?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
            if let Some(m) = filtered {
                writeln!(
                    w,
                    "# recorded with the TREE filter ({}={}): only {} may analyze this trace",
                    tree::META_FILTERED,
                    m.flag(),
                    m.consumers().join(",")
                )?;
            }
            while let Some(e) = src.next_event()? {
                jrace_trace::std_format::format_event(&e, src.symbols(), &mut w)?;
                w.write_all(b"\n")?;
            }
            w.flush()
                .with_context(|| format!("cannot write {}", output.display()))?;
        }
        ConvertTo::Bin => {
            let trace = jrace_trace::load(path)?;
            jrace_trace::binlog::write_trace(&trace, output)
                .with_context(|| format!("cannot write trace directory {}", output.display()))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
