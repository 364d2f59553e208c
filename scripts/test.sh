#!/usr/bin/env bash
# Set up a fresh machine and run every test: unit tests, the test vectors (tests/vectors/),
# property tests against the brute-force oracle, the killed-writer test, the
# command-line tests and the recorder's end-to-end tests (Java programs run under the agent).
set -euo pipefail
cd "$(dirname "$0")/.."
JRACE_SETUP_TESTS=1 source scripts/setup-deps.sh
# Build everything first: the recorder tests run target/release/jrace with the agent
# library next to it, which `cargo test` alone does not put there.
cargo build --workspace --release
cargo test --workspace --release
