//! The jrace binary's tests, end to end: one test binary with a module per area, so that
//! the suite links once. One area: `cargo test --release --test it -- record_families::`.
//!
//! Most areas need the agent built next to the binary (`cargo build --release
//! --workspace`) and `java` on the PATH (they print a note and pass without it).

mod common;
#[path = "common/harness.rs"]
mod harness;
#[path = "common/truth.rs"]
mod truth;

mod cli;
mod ordering;
mod recipes;
mod record_classic;
mod record_deadlocks;
mod record_families;
mod record_juc;
mod record_rdit;
mod record_run;
mod record_tree;
mod replay;
mod tree_cli;
mod witness_cli;
mod witness_view;
