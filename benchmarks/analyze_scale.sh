#!/usr/bin/env bash
# Analysis at real scale (issue 15): records the H2 and Derby JDBC workloads once (kept
# under OUT, not committed) and generates a synthetic trace, then times `jrace analyze`
# on each: the default detectors, hb alone and mcm (wall time and max RSS from
# /usr/bin/time, each detector's own seconds and races from the JSON report).
#
#   benchmarks/analyze_scale.sh                     # h2, derby, synth, sites
#   (sites: 10 M events, 800 K variables, each accessed from 300 sites)
#   TRACES=derby DETECTORS=mcm benchmarks/analyze_scale.sh
#   TX=300 OUT=/tmp/scale benchmarks/analyze_scale.sh   # 4 threads x 300 transactions
#   JRACE=/path/to/old/jrace benchmarks/analyze_scale.sh  # another build, same traces
#
# To compare two builds race signature by race signature on these traces, see
# benchmarks/mcm_compare.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/jrace-scale}
TX=${TX:-1000}
TRACES=${TRACES:-h2,derby,synth,sites}
RUNS_SETS=${DETECTORS:-default,hb,mcm}
mkdir -p "$OUT"
for p in libh2-java libderby-java; do
  dpkg -s $p >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $p >/dev/null; }
done
cargo build --release -q --workspace
JRACE=${JRACE:-$PWD/target/release/jrace}
if [ ! -d "$OUT/classes/workloads" ]; then
  javac -d "$OUT/classes" java-harness/src/workloads/Jdbc.java
fi
declare -A CMD=(
  [h2]="-cp $OUT/classes:/usr/share/java/h2.jar workloads.Jdbc h2 4 $TX"
  [derby]="-cp $OUT/classes:/usr/share/java/derby.jar workloads.Jdbc derby 4 $TX"
)
for t in ${TRACES//,/ }; do
  case $t in
    synth)
      [ -d "$OUT/synth/synth.trace" ] || target/release/jrace-bench gen --events 1000000 \
        --threads 8 --locks 300 --vars 100000 -o "$OUT/synth" >/dev/null 2>&1
      trace=$OUT/synth/synth.trace ;;
    sites)
      [ -d "$OUT/sites/synth.trace" ] || target/release/jrace-bench gen --events 10000000 \
        --threads 8 --vars 800000 --sites 300 -o "$OUT/sites" >/dev/null 2>&1
      trace=$OUT/sites/synth.trace ;;
    h2|derby)
      trace=$OUT/$t-$TX.trace
      if [ ! -d "$trace" ]; then
        # shellcheck disable=SC2086
        (cd "$OUT" && "$JRACE" record -o "$trace" -- java ${CMD[$t]} >/dev/null 2>&1)
      fi ;;
    *) echo "unknown trace $t (expected h2, derby, synth or sites)" >&2; exit 2 ;;
  esac
  events=$("$JRACE" stats "$trace" 2>/dev/null | awk '/^events:/ {print $2}')
  for d in ${RUNS_SETS//,/ }; do
    opt=(-d "$d"); [ "$d" = default ] && opt=()
    /usr/bin/time -f "%e %M" -o "$OUT/time" "$JRACE" analyze "$trace" "${opt[@]}" \
      --format json -o "$OUT/report.json" 2>/dev/null
    read -r wall rss <"$OUT/time"
    python3 - "$t" "$events" "$d" "$wall" "$rss" "$OUT/report.json" <<'PY'
import json, sys
t, events, d, wall, rss, path = sys.argv[1:]
dets = json.load(open(path))["detectors"]
per = ", ".join(f"{x['name']} {x['seconds']:.1f} s / {x['races']} races"
                + (f" / {x['unknown']} unknown" if x.get("unknown") else "") for x in dets)
print(f"{t:6} {int(events):>11,} events  {d:8} wall {float(wall):6.1f} s  max RSS "
      f"{int(rss) / 1024 / 1024:4.1f} GB  ({per})")
PY
  done
done
