#!/usr/bin/env bash
# Whole commands timed against each other on a shared, noisy machine: each command in turn, RUNS rounds interleaved
# (one warm-up round first), then each one's median wall time (with its quartiles) and median CPU time (user+sys,
# from /usr/bin/time, 10 ms steps). Used for the CLI start-up breakdown and A/B in docs/performance.md (issue 37).
#
#   bench/interleave.sh RUNS 'NAME=COMMAND' ...     e.g. bench/interleave.sh 9 'bare=java -version' 'v=./kosa8 --version'
#
# Each COMMAND runs under `bash -c`, its output thrown away; the bash start is in every figure alike.
set -euo pipefail
runs=$1
shift
tf=$(mktemp /tmp/kosa8-interleave.XXXXXX)
trap 'rm -f "$tf"' EXIT
declare -A t c
names=()
for spec in "$@"; do names+=("${spec%%=*}"); done
for ((r = 0; r < runs + 1; r++)); do
  for spec in "$@"; do
    n=${spec%%=*} cmd=${spec#*=}
    /usr/bin/time -o "$tf" -f "%e %U %S" bash -c "$cmd" >/dev/null 2>&1 || true
    read -r e u s < <(tail -1 "$tf")
    if (( r > 0 )); then
      t[$n]+="$(awk -v e="$e" 'BEGIN{printf "%d", e*1000}') "
      c[$n]+="$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%d", (u+s)*1000}') "
    fi
  done
done
q() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk -v p="$2" '{v[NR]=$1} END{i=int(p*NR+0.5); if(i<1)i=1; if(i>NR)i=NR; print v[i]}'; }
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $runs rounds, interleaved"
for n in "${names[@]}"; do
  printf '%-24s wall p50 %5s ms (p25 %4s, p75 %4s)   cpu p50 %4s ms\n' "$n" "$(q "${t[$n]}" 0.5)" "$(q "${t[$n]}" 0.25)" \
    "$(q "${t[$n]}" 0.75)" "$(q "${c[$n]}" 0.5)"
done
