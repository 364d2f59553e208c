#!/usr/bin/env bash
# TREE (issue 6): the share of events the redundant-access filter drops, and hb/lockset
# analysis time with and without it.
#
# - Synthetic traces (benchmarks/run.sh's generator): `jrace stats` (what each mode would
#   drop), then `jrace analyze` with -d hb and -d lockset, without and with the pre-pass
#   (`--tree=hb` for both, `--tree=lockset` for lockset): the whole command's wall time
#   (reading + filter + detector, best of RUNS) and the detector's own seconds (JSON).
# - An agent trace: the H2 JDBC workload of benchmarks/record.sh recorded without and with
#   `jrace record --tree` (wall time of the recording, events, size on disk, accesses the
#   agent dropped), and the same analyses on both recordings.
#
#   benchmarks/tree.sh                         # 1 M and 10 M synthetic events, and H2
#   SIZES=1000000 WORKLOAD=none benchmarks/tree.sh
#   (NO_BUILD=1 skips the build; RESULTS=FILE appends elsewhere than RESULTS.md)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
SIZES=${SIZES:-1000000,10000000}
WORKLOAD=${WORKLOAD:-h2}
[ "${NO_BUILD:-0}" = 1 ] || cargo build --release -q --workspace
JRACE=$PWD/target/release/jrace
BIN=$PWD/target/release/jrace-bench

# "wall detector_seconds races" of the best of $RUNS runs of `jrace analyze $@ --format json`.
analyze() {
  python3 - "$RUNS" "$JRACE" "$@" <<'PY'
import json, subprocess, sys, time
runs, jrace, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
best = None
for _ in range(runs):
    t = time.monotonic()
    p = subprocess.run([jrace, "analyze", *args, "--format", "json"], capture_output=True, check=True)
    wall = time.monotonic() - t
    doc = json.loads(p.stdout)
    d = doc["detectors"][0]
    r = (wall, d["seconds"], d["races"])
    best = r if best is None or r[0] < best[0] else best
print(f"{best[0]:.2f} {best[1]:.2f} {best[2]}")
PY
}

# Rows of the analysis table for trace $1 (label $2).
rows_for() {
  local t=$1 label=$2 out=""
  for spec in "hb|" "hb|--tree=hb" "lockset|" "lockset|--tree=hb" "lockset|--tree=lockset"; do
    local det=${spec%%|*} tree=${spec#*|}
    read -r wall secs races < <(analyze "$t" -d "$det" $tree)
    out+="| $label | $det | ${tree:-none} | $wall | $secs | $races |"$'\n'
  done
  printf '%s' "$out"
}

drop_rows=""
analysis_rows=""
for n in ${SIZES//,/ }; do
  dir=benchmarks/out/e$n-t8
  if [ ! -d "$dir/synth.trace" ]; then
    $BIN gen --events "$n" --threads 8 --locks 300 --vars 100000 -o "$dir"
  fi
  st=$($JRACE stats "$dir/synth.trace")
  hbd=$(echo "$st" | sed -n 's/^tree filter, mode hb: *would drop \([0-9]*\) of [0-9]* events (\(.*\))/\1 (\2)/p')
  lsd=$(echo "$st" | sed -n 's/^tree filter, mode lockset: *would drop \([0-9]*\) of [0-9]* events (\(.*\))/\1 (\2)/p')
  ev=$(echo "$st" | awk '/^events:/ {print $2}')
  drop_rows+="| synthetic $n | $ev | $hbd | $lsd |"$'\n'
  analysis_rows+=$(rows_for "$dir/synth.trace" "synthetic $n")$'\n'
done

record_rows=""
if [ "$WORKLOAD" = h2 ]; then
  dpkg -s libh2-java >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libh2-java >/dev/null; }
  CLASSES=$(mktemp -d)
  javac -d "$CLASSES" java-harness/src/workloads/Jdbc.java
  WORK=$(mktemp -d)
  for tree in "" "--tree"; do
    out=$WORK/h2${tree:+-tree}
    t0=$(date +%s.%N)
    $JRACE record -o "$out" $tree -- java -cp "$CLASSES:/usr/share/java/h2.jar" workloads.Jdbc h2 4 1000 >/dev/null
    t1=$(date +%s.%N)
    st=$($JRACE stats "$out")
    ev=$(echo "$st" | awk '/^events:/ {print $2}')
    size=$(echo "$st" | sed -n 's/^size on disk: \([0-9]*\) bytes.*/\1/p')
    dropped=$(echo "$st" | awk '/recorder: tree_dropped/ {print $NF}')
    hbd=$(echo "$st" | sed -n 's/^tree filter, mode hb: *would drop \([0-9]*\) of [0-9]* events (\(.*\))/\1 (\2)/p')
    record_rows+="| h2 ${tree:-(no filter)} | $(python3 -c "print(f'{$t1-$t0:.1f}')") | $ev | $(python3 -c "print(f'{$size/1048576:.1f}')") | ${dropped:--} | $hbd |"$'\n'
    analysis_rows+=$(rows_for "$out" "h2 recorded ${tree:-without filter}")$'\n'
  done
  drop_rows+="| h2 (agent trace, no filter) | $(echo "$record_rows" | head -1 | cut -d'|' -f4) | $(echo "$record_rows" | head -1 | cut -d'|' -f7) | see below |"$'\n'
  rm -rf "$WORK" "$CLASSES"
fi

report="What the filter drops (\`jrace stats\`):

| trace | events | hb mode drops | lockset mode drops |
|---|---|---|---|
$drop_rows
Analysis, best of $RUNS (wall: the whole \`jrace analyze\` command, reading and filter included;
detector: the detector's own seconds from the JSON report):

| trace | detector | pre-pass | wall (s) | detector (s) | races |
|---|---|---|---|---|---|
$analysis_rows"
if [ -n "$record_rows" ]; then
  report+="
Recording the H2 workload (\`workloads.Jdbc h2 4 1000\`) with \`jrace record\` (one run each):

| recording | wall (s) | events | MB on disk | dropped by the agent | hb mode would drop (stats) |
|---|---|---|---|---|---|
$record_rows"
fi
echo "$report"
{
  echo
  echo "## $(date -u +%Y-%m-%d) — TREE: events dropped and analysis time"
  echo
  echo "Command: \`RUNS=$RUNS SIZES=$SIZES WORKLOAD=$WORKLOAD benchmarks/tree.sh\`"
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), release build"
  echo
  echo "$report"
} >> "${RESULTS:-benchmarks/RESULTS.md}"
