#!/usr/bin/env bash
# The workspace scan inside a checkpoint's pause (issue 6), alone: a folder of FILES files of 2 KiB in 100
# directories, scanned RUNS times by a fresh JVM each (bench/FolderScanBench.java: 40 scans, nothing changed between
# them, so each is a stat of every entry); prints each run's p50 (after ten warm-up scans) and first scan. No VM, no
# daemon: the cheapest benchmark here. There is no baseline in a run; two builds are compared with
# `bench/ab.sh folder-scan A B [RUNS] [FILES]`.
#
#   bench/folder-scan.sh [RUNS] [FILES]     (defaults 3 and 10000)
#
# Writes its result under bench/results/ (bench/lib.sh).
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init folder-scan "$@"
runs=${1:-3}
files=${2:-10000}
dir=$(mktemp -d /tmp/kosa8-folder-scan.XXXXXX)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir/folder" "$files" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%d" % (i % 100)); os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%d" % i), "wb") as f: f.write(os.urandom(2048))
PY
p50s=() firsts=()
for ((r = 1; r <= runs; r++)); do
  read -r p50 first < <("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$jar" \
    "$repo/bench/FolderScanBench.java" "$dir/folder")
  echo "run $r: scan p50 $p50 ms (first $first ms)"
  p50s+=("$p50") firsts+=("$first")
done
echo "median p50 $(median <<<"${p50s[*]}") ms over $runs runs of $files files"
none="none: compare builds with bench/ab.sh"
bench_row name="workspace scan p50, $files files unchanged" unit=ms samples="${p50s[*]}" baseline_name="$none"
bench_row name="first scan in a fresh JVM, $files files" unit=ms samples="${firsts[*]}" baseline_name="$none"
bench_write accelerator="none: no VM (host side only)"
