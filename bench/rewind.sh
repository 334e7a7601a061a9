#!/usr/bin/env bash
# Rewinds, many, for judging a change to the rewind (issue 6): one run of bench/checkpoint.sh takes only a few
# rewinds and moves by 20% or more between runs here, so a change is judged by rounds of this one interleaved with
# the build before it: `bench/ab.sh rewind A B [ROUNDS] [REWINDS]`, which runs it on each build in turn.
#
#   bench/rewind.sh [ROUNDS] [REWINDS] [WARM_UP]
#
# Each round: a 1 GiB sandbox whose folder is a workspace of 10,000 files of 20 KB (about 200 MB, made once, in
# KOSA8_AB_WORKSPACE, default /tmp/kosa8-ab-workspace), a guest process that keeps dirtying half its memory, three
# checkpoints 8 s apart, then REWINDS rewinds (default 8) to one of them at random, 4 s apart; each as long as the
# daemon reports it ("rewound ... in N ms"). ROUNDS defaults to 2. First a round of WARM_UP rewinds (default 3; 0
# for none) that is not counted: a daemon just started (as after every rebuild) runs its first rewinds cold,
# measured up to 0.5 s slower each. There is no baseline in a run: the build before is the baseline, in bench/ab.sh.
# Uses the kosa8 home of the environment (KOSA8_HOME, else the XDG default; the image is built there on first use).
# Prints each round's times and the size of the sandbox's hot-pages list at its end, and writes the result under
# bench/results/ (bench/lib.sh).
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init rewind "$@"
rounds=${1:-2}; rewinds=${2:-8}; warm=${3:-3}
ws=${KOSA8_AB_WORKSPACE:-/tmp/kosa8-ab-workspace}
if [[ -n ${KOSA8_HOME:-} ]]; then data=$KOSA8_HOME/data; else data=${XDG_DATA_HOME:-$HOME/.local/share}/kosa8; fi
if [[ ! -d $ws ]]; then
  echo "making the workspace $ws (10,000 files, 200 MB)..." >&2
  for d in $(seq -w 0 99); do
    mkdir -p "$ws/d$d"
    for f in $(seq -w 0 99); do head -c 20000 /dev/urandom > "$ws/d$d/f$f.txt"; done
  done
fi

# one round: prints the rewinds' milliseconds, then "| hot N pages"
round() {
  local rewinds=$1 id
  id=$("$k" create --memory 1G --workspace "$ws")
  dirty_memory "$k" "$id" 512
  sleep 10
  local cps=() n c out=""
  for n in 1 2 3; do
    cps+=("$("$k" checkpoint "$id" 2>/dev/null | head -1)")
    sleep 8
  done
  for ((n = 0; n < rewinds; n++)); do
    c=${cps[$((RANDOM % 3))]}
    out+=" $("$k" rewind "$id" "$c" 2>&1 | sed -n 's/.* in \([0-9]*\) ms.*/\1/p')"
    sleep 4
  done
  local hot
  hot=$(find "$data/sandboxes/$id" -name hot-pages -printf '%s' 2>/dev/null || true)
  "$k" rm -f "$id" >/dev/null
  echo "$out | hot $(( ${hot:-4} / 4 - 1 )) pages"
}

if (( warm > 0 )); then echo "warm-up (not counted): $(round "$warm")"; fi
all="" hot=""
for ((r = 1; r <= rounds; r++)); do
  x=$(round "$rewinds"); echo "round $r: $x"
  all+=" ${x%%|*}"; hot+=" $(sed -n 's/.*hot \(-*[0-9]*\) pages/\1/p' <<<"$x")"
done
echo "median $(median <<<"$all") ms over $(wc -w <<<"$all") rewinds"
bench_row name="rewind of a 1 GiB sandbox with a 10,000-file workspace, as the daemon reports it" unit=ms \
  samples="$all" baseline_name="none in a run: the build before, in bench/ab.sh" goal="<= 350 ms p50"
bench_row name="hot-pages list at a round's end" unit=pages samples="$hot" baseline_name="none"
bench_write
