# Shared by the bench scripts (source it, then call bench_init first).

# bench_init NAME "$@": sets repo (this checkout: the bench scripts and programs that run), build (the checkout
# whose kosa8 is measured: KOSA8_BENCH_BUILD, else this one; bench/ab.sh sets it to each commit's worktree in
# turn), k (that build's launcher) and jar (its jar, built if missing or older than its sources); selects Java 25;
# and exports what bench/BenchResult.java records of the run (the command that reproduces it, the checkouts).
bench_init() {
  bench_name=$1
  shift
  repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
  source "$repo/scripts/host-setup.sh"
  select_java25
  build=$(cd "${KOSA8_BENCH_BUILD:-$repo}" && pwd)
  k="$build/kosa8"
  jar="$build/host/target/kosa8.jar"
  "$k" --version >/dev/null # builds the jar if needed
  export KOSA8_BENCH_REPO=$repo KOSA8_BENCH_BUILD=$build
  local args=""
  (( $# )) && args=$(printf ' %q' "$@")
  export KOSA8_BENCH_COMMAND=${KOSA8_BENCH_COMMAND:-"bench/$(basename "$0")$args"}
  KOSA8_BENCH_STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  KOSA8_BENCH_LOAD=$(cat /proc/loadavg)
  export KOSA8_BENCH_STARTED KOSA8_BENCH_LOAD
  bench_rows=()
}

# bench_java PROGRAM.java ARGS...: runs a bench program of this checkout on the build's jar, with the daemon's GC;
# the program writes its own result (bench/BenchResult.java, found by the launcher beside it).
bench_java() {
  exec "$JAVA_HOME/bin/java" -XX:+UseSerialGC --enable-native-access=ALL-UNNAMED -cp "$jar" "$repo/bench/$1" "${@:2}"
}

# bench_row KEY=VALUE...: one row of the run's result. Keys: name, unit, better (lower or higher; default lower),
# figure (default: the median of samples), samples (space-separated), baseline_name, baseline (default: the median
# of baseline_samples), baseline_samples, ratio (figure/baseline, the default, or baseline/figure), goal. A row
# without a baseline says why in baseline_name.
bench_row() {
  local IFS=$'\t'
  bench_rows+=("$*")
}

# bench_write [FACT=VALUE...]: writes the run's JSON result under bench/results/ (or to KOSA8_BENCH_RESULT); facts
# override the host facts BenchResult finds itself (e.g. accelerator="none: no VM").
bench_write() {
  local f rc=0
  f=$(mktemp /tmp/kosa8-bench-rows.XXXXXX)
  printf '%s\n' "${bench_rows[@]}" > "$f"
  "$JAVA_HOME/bin/java" "$repo/bench/BenchResult.java" write "$bench_name" "$f" "$@" || rc=$?
  rm -f "$f"
  return $rc
}

# median: the median of the numbers on stdin, one a line or space-separated.
median() {
  tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {if (NR) print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'
}

# dirty_memory KOSA8 ID MIB: starts, in sandbox ID, a guest process that keeps writing to every page of MIB MiB
# (the workload the checkpoint benchmarks take their checkpoints and rewinds under); returns once it is started.
dirty_memory() {
  "$1" exec "$2" -- sh -c "nohup python3 -c '
b = bytearray($3 << 20)
i = 0
while True:
    for p in range(0, len(b), 4096): b[p] = i & 255
    i += 1
' > /dev/null 2>&1 &"
}
