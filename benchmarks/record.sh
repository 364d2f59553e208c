#!/usr/bin/env bash
# Recording overhead (issue 3): runs each workload without and with the agent (best of
# RUNS wall-clock times of the whole JVM), and reports the slowdown, the events recorded,
# bytes per event on disk, events recorded per second and the time spent instrumenting
# classes. Appends a table to benchmarks/RESULTS.md with the command, machine and date.
#
#   benchmarks/record.sh              # all workloads (installs Debian's H2 and Derby)
#   RUNS=1 WORKLOADS=loops benchmarks/record.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
WORKLOADS=${WORKLOADS:-loops,h2,derby}
BRANCHES=${BRANCHES:-1}
if [[ $WORKLOADS == *h2* || $WORKLOADS == *derby* ]]; then
  for p in libh2-java libderby-java; do
    dpkg -s $p >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $p >/dev/null; }
  done
fi
cargo build --release -q --workspace
CLASSES=$(mktemp -d)
javac -d "$CLASSES" java-harness/src/workloads/Loops.java java-harness/src/workloads/Jdbc.java
AGENT=$PWD/target/release/libjrace_agent.so
JRACE=$PWD/target/release/jrace
WORK=$(mktemp -d)
opt=""
[ "$BRANCHES" = 0 ] && opt=",branches=0"

declare -A CMD
CMD[loops]="-cp $CLASSES workloads.Loops 4 2000000"
CMD[h2]="-cp $CLASSES:/usr/share/java/h2.jar workloads.Jdbc h2 4 1000"
CMD[derby]="-cp $CLASSES:/usr/share/java/derby.jar workloads.Jdbc derby 4 1000"

# Best wall time of $RUNS runs of `java $@` (seconds).
best() {
  python3 - "$RUNS" "$@" <<'PY'
import subprocess, sys, time
runs = int(sys.argv[1]); cmd = sys.argv[2:]
best = None
for _ in range(runs):
    t = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    d = time.monotonic() - t
    best = d if best is None else min(best, d)
print(f"{best:.2f}")
PY
}

rows=""
for w in ${WORKLOADS//,/ }; do
  base=$(best java ${CMD[$w]})
  rec=$(python3 - "$RUNS" "$WORK/$w" "$AGENT" "$opt" ${CMD[$w]} <<'PY'
import shutil, subprocess, sys, time
runs, out, agent, opt = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
cmd = sys.argv[5:]
best = None
for i in range(runs):
    shutil.rmtree(out, ignore_errors=True)
    t = time.monotonic()
    subprocess.run(["java", f"-agentpath:{agent}=out={out}{opt}"] + cmd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    d = time.monotonic() - t
    best = d if best is None else min(best, d)
print(f"{best:.2f}")
PY
)
  stats=$($JRACE stats "$WORK/$w")
  events=$(echo "$stats" | awk '/^events:/ {print $2}')
  bpe=$(echo "$stats" | sed -n 's/.*(\([0-9.]*\) bytes\/event).*/\1/p')
  inst=$(echo "$stats" | awk '/recorder: instrument_ms/ {print $NF}')
  classes=$(echo "$stats" | awk '/recorder: instrumented_classes/ {print $NF}')
  slow=$(python3 -c "print(f'{$rec/$base:.1f}x')")
  eps=$(python3 -c "print(f'{$events/$rec/1e6:.1f}')")
  rows+="| $w | $base | $rec | $slow | $events | $bpe | $eps | $classes | $inst |"$'\n'
done
table="| workload | without agent (s) | with agent (s) | slowdown | events | bytes/event | M events/s recorded | classes instrumented | instrumenting (ms) |
|---|---|---|---|---|---|---|---|---|
$rows"
echo "$table"
{
  echo
  echo "## $(date -u +%Y-%m-%d) — recording overhead (branches=$BRANCHES)"
  echo
  echo "Command: \`RUNS=$RUNS WORKLOADS=$WORKLOADS BRANCHES=$BRANCHES benchmarks/record.sh\`"
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(java -version 2>&1 | head -1). Times are whole-JVM wall clock, best of $RUNS; the workloads use 4 threads."
  echo
  echo "$table"
} >> benchmarks/RESULTS.md
rm -rf "$WORK" "$CLASSES"
