#!/usr/bin/env bash
# Set up a fresh machine, build jrace, and run the demo: analyze a recorded run of the
# bundled racy bank program and print the report.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-deps.sh
cargo build --release --quiet
./target/release/jrace demo
