#!/usr/bin/env bash
# The workspace scan inside a checkpoint's pause (issue 6), A/B between two builds of kosa8: a folder of FILES
# files of 2 KiB in 100 directories is scanned by each jar in turn (ABAB, ROUNDS times), each run a fresh JVM
# doing 40 scans; prints each run's p50 (after ten warm-up scans) and first scan, then the median p50 per jar.
#
#   bench/folder-scan.sh JAR_A JAR_B [ROUNDS] [FILES]
#
# Build the other jar in a worktree: git worktree add /tmp/a REV && (cd /tmp/a && mvn -o -q package -DskipTests)
set -euo pipefail
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
source "$repo/scripts/host-setup.sh"
select_java25
a=${1:?JAR_A}; b=${2:?JAR_B}; rounds=${3:-3}; files=${4:-10000}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
python3 - "$dir/folder" "$files" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%d" % (i % 100)); os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%d" % i), "wb") as f: f.write(os.urandom(2048))
PY
declare -A p50s
for ((r = 1; r <= rounds; r++)); do
  for jar in "$a" "$b"; do
    read -r p50 first < <("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$jar" \
      "$repo/bench/FolderScanBench.java" "$dir/folder")
    echo "round $r $jar: scan p50 $p50 ms (first $first ms)"
    p50s[$jar]+="$p50 "
  done
done
for jar in "$a" "$b"; do
  echo "$jar: median p50 $(tr ' ' '\n' <<<"${p50s[$jar]}" | grep . | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}') ms"
done
