#!/usr/bin/env bash
# Set up a fresh machine and run every test: unit tests, the notes' test vectors,
# property tests against the brute-force oracle, the killed-writer test and the
# command-line tests.
set -euo pipefail
cd "$(dirname "$0")/.."
JRACE_SETUP_TESTS=1 source scripts/setup-deps.sh
cargo test --workspace --release
