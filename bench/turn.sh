#!/usr/bin/env bash
# Turn checkpoints (issue 36): how long an agent's tool call waits for its turn checkpoint, at 1 GiB, as the hook
# feels it. Each round, in one running sandbox whose guest keeps dirtying 256 MiB: the wall time of
# `kosa8 exec ID -- /run/kosa8/kosa8-guest checkpoint -m turn` less that of `kosa8 exec ID -- true` in the same
# round (the exec's own cost, which an agent's hook, already in the guest, does not pay); the baseline is what the
# user waits for the same checkpoint from the host, `kosa8 checkpoint ID`, in the same round. Goal: 0.5 s (the
# figure the speed issue sets for `kosa8 checkpoint`).
#
#   bench/turn.sh [ROUNDS]
#
# ROUNDS defaults to 5 (the daemon's default bounds allow 5 turn checkpoints at once; rounds are 12 s apart past
# that). Uses the kosa8 home of the environment (KOSA8_HOME, else the XDG default) and its daemon; the image must
# exist. Prints each round and writes its result under bench/results/ (bench/lib.sh); progress goes to stderr.
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init turn "$@"
rounds=${1:-5}

ms() { echo $(( ($2 - $1) / 1000000 )); }
id=$("$k" create --memory 1G --workspace none)
trap '"$k" rm -f "$id" >/dev/null 2>&1 || true' EXIT
dirty_memory "$k" "$id" 256
"$k" checkpoint "$id" -m warm-up >/dev/null 2>&1 # the first checkpoint stores every page; later ones what changed

turn=() exec_true=() cli=()
for ((r = 1; r <= rounds; r++)); do
  (( r > 5 )) && sleep 12
  t0=$(date +%s%N); "$k" exec "$id" -- true; t1=$(date +%s%N)
  "$k" exec "$id" -- /run/kosa8/kosa8-guest checkpoint -m "turn $r" >/dev/null; t2=$(date +%s%N)
  "$k" checkpoint "$id" -m "cli $r" >/dev/null 2>&1; t3=$(date +%s%N)
  e=$(ms "$t0" "$t1"); g=$(ms "$t1" "$t2"); c=$(ms "$t2" "$t3")
  exec_true+=("$e"); turn+=("$(( g - e ))"); cli+=("$c")
  echo "round $r: exec true $e ms, exec kosa8-guest checkpoint $g ms (turn $(( g - e )) ms), kosa8 checkpoint $c ms" >&2
done

t=$(printf '%s\n' "${turn[@]}" | median)
c=$(printf '%s\n' "${cli[@]}" | median)
printf '| turn checkpoint, as the hook waits (1 GiB, 256 MiB dirtied) | %s ms | `kosa8 checkpoint` %s ms | goal 500 ms |\n' "$t" "$c"
bench_row name="turn checkpoint blocks the tool call (1 GiB)" unit=ms samples="${turn[*]}" \
  baseline_name="kosa8 checkpoint, same sandbox, same round" baseline_samples="${cli[*]}" goal=500
bench_write
