#!/usr/bin/env bash
# Checks the README's recipe for a Maven project's tests: runs the tests of
# java-harness/maven-example under the agent through surefire's argLine (one trace per
# test JVM: out=DIR/%p) and analyzes the traces; the example's test has one race
# (ex.Counter.hits). Needs Maven and access to Maven Central (junit, surefire).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p jrace -p jrace-agent
AGENT=$PWD/target/release/libjrace_agent.so
OUT=$(mktemp -d)
(cd java-harness/maven-example &&
  mvn -q -B test "-Djrace.argLine=-agentpath:$AGENT=out=$OUT/%p,exclude=org.junit.*;junit.*;org.apache.maven.*;org.hamcrest.*")
# One report for every test JVM.
./target/release/jrace analyze "$OUT" -d hb,shb
found=0
./target/release/jrace analyze "$OUT" -d shb --format json | grep -q '"ex.Counter.hits"' && found=1
rm -rf "$OUT"
[ "$found" = 1 ] && echo "maven recipe: ok (ex.Counter.hits reported)" || { echo "maven recipe: the race was not reported" >&2; exit 1; }
