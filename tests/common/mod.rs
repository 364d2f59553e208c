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
