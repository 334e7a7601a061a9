#!/usr/bin/env bash
# Rewind A/B (issue 6): the same rewinds under two builds of kosa8, interleaved, so a change to the rewind is
# judged against the build before it in one run on one machine (one run of bench/checkpoint.sh moves by 20% or
# more between runs here, and takes only a few rewinds).
#
#   bench/rewind-ab.sh CHECKOUT_A CHECKOUT_B [ROUNDS] [REWINDS]
#
# Each round, A then B: a 1 GiB sandbox whose folder is a workspace of 10,000 files of 20 KB (about 200 MB, made
# once), a guest process that keeps dirtying half its memory, three checkpoints 8 s apart, then REWINDS rewinds
# (default 8) to one of them at random, 4 s apart; each as long as the daemon reports it ("rewound ... in N ms").
# ROUNDS defaults to 2. Before the first, each build runs one round of 3 rewinds that is not counted: a daemon
# just started (as after every rebuild) runs its first rewinds cold: measured up to 0.5 s slower each.
# Each checkout runs with its own kosa8 home, KOSA8_HOME_A and KOSA8_HOME_B (default
# /tmp/kosa8-ab-a and -b; the image is built there on first use): two builds cannot share one daemon. Prints each
# round's times, the size of the sandbox's hot-pages list at its end, and the medians over all rounds.
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
a=$(cd "$1" && pwd); b=$(cd "$2" && pwd)
rounds=${3:-2}; rewinds=${4:-8}
home_a=${KOSA8_HOME_A:-/tmp/kosa8-ab-a}; home_b=${KOSA8_HOME_B:-/tmp/kosa8-ab-b}
ws=${KOSA8_AB_WORKSPACE:-/tmp/kosa8-ab-workspace}
if [[ ! -d $ws ]]; then
  echo "making the workspace $ws (10,000 files, 200 MB)..." >&2
  for d in $(seq -w 0 99); do
    mkdir -p "$ws/d$d"
    for f in $(seq -w 0 99); do head -c 20000 /dev/urandom > "$ws/d$d/f$f.txt"; done
  done
fi

# one round of one build: prints the rewinds' milliseconds, then "| hot N pages"
round() {
  local repo=$1 rewinds=${3:-$rewinds}
  export KOSA8_HOME=$2
  local id
  id=$("$repo/kosa8" create --memory 1G --workspace "$ws")
  dirty_memory "$repo/kosa8" "$id" 512
  sleep 10
  local cps=() k c out=""
  for k in 1 2 3; do
    cps+=("$("$repo/kosa8" checkpoint "$id" 2>/dev/null | head -1)")
    sleep 8
  done
  for ((k = 0; k < rewinds; k++)); do
    c=${cps[$((RANDOM % 3))]}
    out+=" $("$repo/kosa8" rewind "$id" "$c" 2>&1 | sed -n 's/.* in \([0-9]*\) ms.*/\1/p')"
    sleep 4
  done
  local hot
  hot=$(find "$KOSA8_HOME/data/sandboxes/$id" -name hot-pages -printf '%s' 2>/dev/null || true)
  "$repo/kosa8" rm -f "$id" >/dev/null
  echo "$out | hot $(( ${hot:-4} / 4 - 1 )) pages"
}

median() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

echo "warm-up (not counted): A $(round "$a" "$home_a" 3); B $(round "$b" "$home_b" 3)"
all_a=""; all_b=""
for ((r = 1; r <= rounds; r++)); do
  ra=$(round "$a" "$home_a"); echo "A round $r: $ra"
  rb=$(round "$b" "$home_b"); echo "B round $r: $rb"
  all_a+=" ${ra%%|*}"; all_b+=" ${rb%%|*}"
done
echo "A ($(git -C "$a" rev-parse --short HEAD)): median $(echo "$all_a" | median) ms over $(echo "$all_a" | wc -w) rewinds"
echo "B ($(git -C "$b" rev-parse --short HEAD)$(git -C "$b" diff --quiet || echo '+changes')): median $(echo "$all_b" | median) ms over $(echo "$all_b" | wc -w) rewinds"
