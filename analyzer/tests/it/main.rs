//! The analyzer's integration tests: the test vectors, property tests of every sound
//! detector against the brute-force oracle on random traces, and mcm/said beyond the
//! vectors, as one test binary with a module per area (one link). One area: `cargo test
//! --release -p jrace-analyzer --test it -- prop_mcm::`.

mod mcm;
mod prop_deadlock;
mod prop_m2;
mod prop_mcm;
mod prop_oracle;
mod prop_stale_reads;
mod prop_tree;
mod prop_wcp_cp;
mod prop_witness;
mod vectors;
