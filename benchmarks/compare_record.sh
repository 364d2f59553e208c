#!/usr/bin/env bash
# Recording cost of this checkout against another revision's agent, in one run: for each
# workload, the two agents alternate (A B A B ...), RUNS times each, the JVM timed whole;
# then events, bytes/event and the trace's size for each. Appends the table to
# benchmarks/RESULTS.md with the command, the machine and the date.
#
#   benchmarks/compare_record.sh REV                 # e.g. cf8f909 (builds REV's agent
#                                                    # in a worktree under target/)
#   RUNS=3 WORKLOADS=h2 benchmarks/compare_record.sh REV
set -euo pipefail
cd "$(dirname "$0")/.."
REV=${1:?usage: benchmarks/compare_record.sh REV}
RUNS=${RUNS:-5}
WORKLOADS=${WORKLOADS:-loops,h2,derby}
for p in libh2-java libderby-java; do
  dpkg -s $p >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $p >/dev/null; }
done
cargo build --release -q --workspace
OLD=$PWD/target/compare-$REV
if [ ! -x "$OLD/target/release/jrace" ]; then
  rm -rf "$OLD"
  git worktree add -f "$OLD" "$REV" >/dev/null
  (cd "$OLD" && CARGO_TARGET_DIR="$OLD/target" cargo build --release -q --workspace)
fi
CLASSES=$(mktemp -d)
javac -d "$CLASSES" java-harness/src/workloads/Loops.java java-harness/src/workloads/Jdbc.java
WORK=$(mktemp -d)

declare -A CMD
CMD[loops]="-cp $CLASSES workloads.Loops 4 2000000"
CMD[h2]="-cp $CLASSES:/usr/share/java/h2.jar workloads.Jdbc h2 4 1000"
CMD[derby]="-cp $CLASSES:/usr/share/java/derby.jar workloads.Jdbc derby 4 1000"

rows=""
for w in ${WORKLOADS//,/ }; do
  res=$(python3 - "$RUNS" "$WORK/$w" "$OLD/target/release/libjrace_agent.so" \
    "$PWD/target/release/libjrace_agent.so" ${CMD[$w]} <<'PY'
import shutil, statistics, subprocess, sys, time
runs, out, old, new = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
cmd = sys.argv[5:]
def once(cmdline):
    t = time.monotonic()
    subprocess.run(cmdline, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.monotonic() - t
times = {"none": [], "old": [], "new": []}
for _ in range(runs):
    times["none"].append(once(["java"] + cmd))
    for k, agent in (("old", old), ("new", new)):
        shutil.rmtree(f"{out}-{k}", ignore_errors=True)
        times[k].append(once(["java", f"-agentpath:{agent}=out={out}-{k}"] + cmd))
print(" ".join(f"{statistics.median(times[k]):.2f}" for k in ("none", "old", "new")))
PY
)
  read -r none told tnew <<<"$res"
  stat() { "$PWD/target/release/jrace" stats "$1"; }
  eo=$(stat "$WORK/$w-old" | awk '/^events:/ {print $2}')
  en=$(stat "$WORK/$w-new" | awk '/^events:/ {print $2}')
  bo=$(stat "$WORK/$w-old" | sed -n 's/.*(\([0-9.]*\) bytes\/event).*/\1/p')
  bn=$(stat "$WORK/$w-new" | sed -n 's/.*(\([0-9.]*\) bytes\/event).*/\1/p')
  so=$(du -sm "$WORK/$w-old" | cut -f1)
  sn=$(du -sm "$WORK/$w-new" | cut -f1)
  ratio=$(python3 -c "print(f'{$tnew/$told:.2f}')")
  rows+="| $w | $none | $told | $tnew | $ratio | $eo | $en | $bo | $bn | $so | $sn |"$'\n'
done
table="| workload | no agent (s) | $REV (s) | this (s) | this/$REV | events $REV | events this | bytes/event $REV | bytes/event this | MB $REV | MB this |
|---|---|---|---|---|---|---|---|---|---|---|
$rows"
echo "$table"
{
  echo
  echo "### Recording cost against $REV ($(date -u +%Y-%m-%d))"
  echo
  echo "Command: \`RUNS=$RUNS WORKLOADS=$WORKLOADS benchmarks/compare_record.sh $REV\` (median wall time of"
  echo "$RUNS alternating runs of the whole JVM; $(nproc) cores, $(java -version 2>&1 | head -1))."
  echo
  echo "$table"
} >> benchmarks/RESULTS.md
