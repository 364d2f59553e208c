#!/usr/bin/env bash
# The real workloads (issue 8) end to end: installs the Debian packages that are missing
# (apt-get update first), builds jrace and the agent, compiles the harness and the drivers
# (benchmarks/javac.sh), and for each workload runs it without the agent, records it with
# `jrace record` under -Xverify:all, fails unless the program's output (stdout and
# stderr) and exit status are identical, and analyzes the trace with DETECTORS. Prints
# one line per workload; traces are deleted unless KEEP=1 (then under OUT) or a check
# failed.
#
#   benchmarks/workloads.sh                               # lucene,xalan,sunflow,jetty
#   WORKLOADS=sunflow,jetty DETECTORS=hb,shb,m2 benchmarks/workloads.sh
#   WORKLOADS=h2,derby benchmarks/workloads.sh            # the JDBC workloads too
#
# SKIP_BUILD=1 uses target/release as it is.
#
# The table with recording slowdown, per-detector times and bytes per event is
# benchmarks/table.py --workloads ... (same command lines).
set -euo pipefail
cd "$(dirname "$0")/.."
WORKLOADS=${WORKLOADS:-lucene,xalan,sunflow,jetty}
DETECTORS=${DETECTORS:-hb,shb,wcp,cp,lockset}
OUT=${OUT:-$(mktemp -d /tmp/jrace-workloads-XXXXXX)}
J=/usr/share/java
declare -A PKG=([lucene]=liblucene8-java [xalan]=libxalan2-java [sunflow]=libsunflow-java
  [jetty]=libjetty9-java [h2]=libh2-java [derby]=libderby-java)
declare -A CMD=(
  [lucene]="-cp CLASSES:$J/lucene-core-8.7.0.jar workloads.Lucene 4 100"
  [xalan]="-cp CLASSES:$J/xalan2.jar:$J/serializer.jar workloads.Xalan 4 4"
  [sunflow]="-cp CLASSES:$J/sunflow.jar workloads.Sunflow 4 64"
  [jetty]="-cp CLASSES:$J/jetty9-server.jar:$J/jetty9-http.jar:$J/jetty9-io.jar:$J/jetty9-util.jar:$J/servlet-api.jar workloads.Jetty 4 50"
  [h2]="-cp CLASSES:$J/h2.jar workloads.Jdbc h2 4 1000"
  [derby]="-cp CLASSES:$J/derby.jar workloads.Jdbc derby 4 1000"
)

missing=()
for w in ${WORKLOADS//,/ }; do
  [ -n "${CMD[$w]:-}" ] || { echo "unknown workload $w (expected one of ${!CMD[*]})" >&2; exit 2; }
  dpkg -s "${PKG[$w]}" >/dev/null 2>&1 || missing+=("${PKG[$w]}")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cargo build --release -q
  cargo build --release -q -p jrace-agent
fi
CLASSES=$OUT/classes
benchmarks/javac.sh "$CLASSES"
JRACE=$PWD/target/release/jrace

status=0
for w in ${WORKLOADS//,/ }; do
  read -r -a args <<<"${CMD[$w]//CLASSES/$CLASSES}"
  set +e
  java "${args[@]}" >"$OUT/$w.plain.out" 2>"$OUT/$w.plain.err"
  plain_rc=$?
  t0=$(date +%s.%N)
  $JRACE record -o "$OUT/$w.trace" -- java -Xverify:all "${args[@]}" >"$OUT/$w.rec.out" 2>"$OUT/$w.rec.err"
  rec_rc=$?
  t1=$(date +%s.%N)
  set -e
  # stderr is compared too, without the JDBC driver's timing line (`work ms=N`).
  if [ $plain_rc != 0 ] || [ $rec_rc != $plain_rc ] || ! cmp -s "$OUT/$w.plain.out" "$OUT/$w.rec.out" ||
    ! cmp -s <(grep -v '^work ms=' "$OUT/$w.plain.err") <(grep -v '^work ms=' "$OUT/$w.rec.err") ||
    grep -q VerifyError "$OUT/$w.rec.err"; then
    echo "$w: FAILED: status $plain_rc without the agent, $rec_rc recorded; outputs in $OUT/$w.{plain,rec}.{out,err}" >&2
    diff "$OUT/$w.plain.out" "$OUT/$w.rec.out" >&2 || true
    status=1
    continue
  fi
  events=$($JRACE stats "$OUT/$w.trace" | awk '/^events:/ {print $2}')
  summary=$($JRACE analyze "$OUT/$w.trace" -d "$DETECTORS" 2>&1 | awk '/^Trace:/ {p=1} p' | tr -s ' ' | paste -sd ';' -)
  printf '%s: output identical under -Xverify:all (%s); recorded in %.1f s, %s events; %s\n' \
    "$w" "$(head -c 120 "$OUT/$w.plain.out" | tr '\n' ' ')" "$(echo "$t1 - $t0" | bc)" "$events" "$summary"
  [ "${KEEP:-0}" = 1 ] || rm -rf "$OUT/$w.trace"
done
[ "${KEEP:-0}" = 1 ] || [ $status != 0 ] || rm -rf "$OUT"
exit $status
