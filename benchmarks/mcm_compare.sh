#!/usr/bin/env bash
# mcm before and after a change, trace by trace and race signature by race signature.
#
#   benchmarks/mcm_compare.sh OLD_JRACE NEW_JRACE TRACE...
#
# OLD_JRACE and NEW_JRACE are two builds of the `jrace` binary (e.g. one from a git
# worktree of the previous commit); TRACE is a recorded trace directory or a `.std` file
# (benchmarks/workloads.sh with KEEP=1 leaves the H2 and Derby traces; `jrace-bench gen`
# writes synthetic ones). For each trace it runs `jrace analyze TRACE -d mcm --format json`
# with each binary, alternating (RUNS times each, default 1), and prints the wall time,
# the max RSS, mcm's own seconds, its races and unknowns, and every race signature
# (variable and location pair) only one of the two reports. Exits 1 when NEW misses a
# signature OLD reports. OPTS adds options to both (e.g. OPTS="--window 20000").
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
OLD=$1 NEW=$2
shift 2
RUNS=${RUNS:-1}
TMP=$(mktemp -d /tmp/jrace-mcm-compare-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
status=0
for trace in "$@"; do
  for r in $(seq "$RUNS"); do
    for side in old new; do
      bin=$OLD; [ $side = new ] && bin=$NEW
      # shellcheck disable=SC2086
      /usr/bin/time -f "%e %M" -o "$TMP/$side.time" "$bin" analyze "$trace" -d mcm ${OPTS:-} \
        --format json -o "$TMP/$side.json" >/dev/null 2>"$TMP/$side.err" || {
        echo "$side failed on $trace:" >&2; tail -5 "$TMP/$side.err" >&2; exit 2; }
      cp "$TMP/$side.time" "$TMP/$side.$r.time"
    done
  done
  python3 - "$trace" "$TMP" "$RUNS" <<'PY' || status=1
import json, sys
trace, tmp, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def load(side):
    d = json.load(open(f"{tmp}/{side}.json"))
    det = d["detectors"][0]
    sigs = {(r["variable"],) + tuple(sorted(a["location"] for a in r["accesses"])) for r in d["races"]}
    times = [open(f"{tmp}/{side}.{k}.time").read().split() for k in range(1, runs + 1)]
    wall = min(float(t[0]) for t in times)
    rss = max(int(t[1]) for t in times) / 1024 / 1024
    return det, sigs, wall, rss
(od, os_, ow, orss), (nd, ns, nw, nrss) = load("old"), load("new")
print(f"{trace}")
for name, d, w, m in (("old", od, ow, orss), ("new", nd, nw, nrss)):
    print(f"  {name}: wall {w:.1f} s, max RSS {m:.1f} GB, mcm {d['seconds']:.1f} s, "
          f"{d['races']} races, {d.get('unknown', 0)} unknown")
for s in sorted(os_ - ns):
    print("  only old:", s)
for s in sorted(ns - os_):
    print("  only new:", s)
print("  signatures: " + ("same" if os_ == ns else f"{len(os_ & ns)} common, {len(os_ - ns)} only old, {len(ns - os_)} only new"))
sys.exit(1 if os_ - ns else 0)
PY
done
exit $status
