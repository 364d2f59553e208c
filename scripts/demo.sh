#!/usr/bin/env bash
# Set up a fresh machine, build jrace and its agent, and run the demo: record the bundled
# racy bank program (java-harness/src/demo/Bank.java) under the agent and print the report.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-deps.sh
cargo build --release --quiet -p jrace -p jrace-agent
./target/release/jrace demo
