#!/usr/bin/env bash
# Generates the synthetic benchmark traces (10 M events, 8 threads, 300 locks, 100 K
# variables by default) as .std and as a binary trace directory, measures parsing,
# reading and every detector on one core, and appends the results to
# benchmarks/RESULTS.md with the command, the machine and the date.
#
#   benchmarks/run.sh                      # the full 10 M-event run
#   EVENTS=1000000 benchmarks/run.sh       # a quicker one
#   DETECTORS=hb,shb benchmarks/run.sh     # only some detectors
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS=${EVENTS:-10000000}
THREADS=${THREADS:-8}
LOCKS=${LOCKS:-300}
VARS=${VARS:-100000}
DETECTORS=${DETECTORS:-hb,shb,wcp,cp,lockset}
OUT=benchmarks/out/e$EVENTS-t$THREADS
cargo build --release -q -p jrace-bench
BIN=target/release/jrace-bench
if [ ! -f "$OUT/synth.std" ] || [ ! -d "$OUT/synth.trace" ]; then
  $BIN gen --events "$EVENTS" --threads "$THREADS" --locks "$LOCKS" --vars "$VARS" -o "$OUT"
fi
# One core, as the issue asks: pin the measurement to CPU 0 when taskset exists.
PIN=""
command -v taskset >/dev/null && PIN="taskset -c 0"
table=$($PIN $BIN measure "$OUT/synth.std" "$OUT/synth.trace" "$DETECTORS")
echo "$table"
{
  echo
  echo "## $(date -u +%Y-%m-%d) — synthetic trace, $EVENTS events, $THREADS threads, $LOCKS locks, $VARS variables"
  echo
  echo "Command: \`EVENTS=$EVENTS THREADS=$THREADS LOCKS=$LOCKS VARS=$VARS DETECTORS=$DETECTORS benchmarks/run.sh\`"
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), release build, one core (${PIN:-unpinned})"
  echo
  echo "$table"
} >> benchmarks/RESULTS.md
