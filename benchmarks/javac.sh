#!/usr/bin/env bash
# Compiles java-harness/src into DIR as build.rs does: every source together, except the
# real-workload drivers whose first lines name a `// CLASSPATH:` (Debian jars, one `*` per
# file name allowed), each compiled on its own against those jars when they all exist
# and skipped (with a note) otherwise.
#
#   benchmarks/javac.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: benchmarks/javac.sh DIR}
mkdir -p "$out"
plain=()
drivers=()
while IFS= read -r f; do
  if head -5 "$f" | grep -q '^// CLASSPATH:'; then drivers+=("$f"); else plain+=("$f"); fi
done < <(find java-harness/src -name '*.java' | sort)
javac -g --release 17 -nowarn -d "$out" "${plain[@]}"
for f in "${drivers[@]}"; do
  cp=$out
  ok=1
  line=$(head -5 "$f" | sed -n 's|^// CLASSPATH:[[:space:]]*||p')
  for pat in ${line//:/ }; do
    jar=$(compgen -G "$pat" | sort | head -1 || true)
    if [ -z "$jar" ]; then
      echo "note: $f needs $pat: not built" >&2
      ok=0
      break
    fi
    cp+=":$jar"
  done
  [ $ok = 1 ] && javac -g --release 17 -nowarn -cp "$cp" -d "$out" "$f"
done
exit 0
