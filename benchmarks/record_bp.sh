#!/usr/bin/env bash
# BarrierPair recording overhead (issue 6): the H2 JDBC workload (java-harness/src/workloads/
# Jdbc.java, Debian's libh2-java) with EXCLUDE (default org.h2.*) excluded, recorded
#   - without the agent,
#   - with the agent and no BarrierPairs,
#   - with --barrier-pairs (the default: roots per call, snapshots expanded by the reader),
#   - with --barrier-pairs and bp_walk=1 (the reachable set walked at every call),
# best of RUNS whole-JVM wall-clock times (RUNS_WALK for the slow walk), with the log size
# on disk, the events, and the BarrierPair counts of `jrace stats`. Prints a Markdown
# table (paste it into benchmarks/RESULTS.md with the command and machine).
#
#   benchmarks/record_bp.sh
#   RUNS=5 RUNS_WALK=1 THREADS=4 STATEMENTS=1000 benchmarks/record_bp.sh
#   EXCLUDE='org.h2.mvstore.*' RUNS_WALK=0 benchmarks/record_bp.sh   # H2 traced, its store not
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
RUNS_WALK=${RUNS_WALK:-1}
THREADS=${THREADS:-4}
STATEMENTS=${STATEMENTS:-1000}
EXCLUDE=${EXCLUDE:-org.h2.*}
dpkg -s libh2-java >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libh2-java >/dev/null; }
cargo build --release -q -p jrace-agent
cargo build --release -q
CLASSES=$(mktemp -d)
WORK=$(mktemp -d)
trap 'rm -rf "$CLASSES" "$WORK"' EXIT
javac -d "$CLASSES" java-harness/src/workloads/Jdbc.java
AGENT=$PWD/target/release/libjrace_agent.so
JRACE=$PWD/target/release/jrace
CMD=(-cp "$CLASSES:/usr/share/java/h2.jar" workloads.Jdbc h2 "$THREADS" "$STATEMENTS")

# best RUNS OUT AGENT_OPTIONS: best wall time (s) of RUNS runs; OUT keeps the last trace.
best() {
  python3 - "$@" "${CMD[@]}" <<'PY'
import shutil, subprocess, sys, time
runs, out, opts, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
agent = sys.argv[0]
best = None
for _ in range(runs):
    shutil.rmtree(out, ignore_errors=True)
    pre = [] if opts == "-" else [f"-agentpath:{opts.replace('OUT', out)}"]
    t = time.monotonic()
    subprocess.run(["java"] + pre + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    d = time.monotonic() - t
    best = d if best is None else min(best, d)
print(f"{best:.2f}")
PY
}

base=$(best "$RUNS" "$WORK/none" -)
rows=""
modes="nobp bp"
[ "$RUNS_WALK" -gt 0 ] && modes+=" walk"
for mode in $modes; do
  case $mode in
    nobp) opts="$AGENT=out=OUT,exclude=$EXCLUDE"; runs=$RUNS; label="agent, $EXCLUDE excluded";;
    bp)   opts="$AGENT=out=OUT,exclude=$EXCLUDE,barrier=1"; runs=$RUNS; label="+ --barrier-pairs (snapshots)";;
    walk) opts="$AGENT=out=OUT,exclude=$EXCLUDE,barrier=1,bp_walk=1"; runs=$RUNS_WALK; label="+ --barrier-pairs, bp_walk=1 (walk per call)";;
  esac
  t=$(best "$runs" "$WORK/$mode" "$opts")
  stats=$($JRACE stats "$WORK/$mode")
  events=$(echo "$stats" | awk '/^events:/ {print $2}')
  bytes=$(du -sb "$WORK/$mode" | cut -f1)
  bp=$(echo "$stats" | sed -n 's/^barrier pairs: \([0-9]*\) recorded, \([0-9]*\) widened.*max |D| \([0-9]*\).*snapshots: \([0-9-]*\) objects, \([0-9-]*\) edges/\1 | \2 | \3 | \4 \/ \5/p')
  [ -z "$bp" ] && bp="0 | - | - | -"
  slow=$(python3 -c "print(f'{$t/$base:.2f}x')")
  rows+="| $label | $t | $slow | $events | $bytes | $bp |"$'\n'
done
echo "| run | wall (s) | vs no agent ($base s) | events | trace bytes | BarrierPairs | widened to * | largest set | snapshot objects / edges |"
echo "|---|---|---|---|---|---|---|---|---|"
echo -n "$rows"
echo
echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(java -version 2>&1 | head -1); EXCLUDE=$EXCLUDE RUNS=$RUNS RUNS_WALK=$RUNS_WALK THREADS=$THREADS STATEMENTS=$STATEMENTS"
