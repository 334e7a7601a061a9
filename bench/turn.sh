#!/usr/bin/env bash
# Turn checkpoints (issue 36): how long an agent's tool call waits for its turn checkpoint, at 1 GiB, as the hook
# feels it. Each round, in one running sandbox whose guest keeps dirtying 256 MiB: the wall time of
# `kosa8 exec ID -- /run/kosa8/kosa8-guest checkpoint -m turn` less that of `kosa8 exec ID -- true` in the same
# round (the exec's own cost, which an agent's hook, already in the guest, does not pay); the baseline is what the
# user waits for the same checkpoint from the host, `kosa8 checkpoint ID`, in the same round. Each is timed with no
# commit under way (a checkpoint waits for the commit before it: checkpoints taken faster than a commit takes pay
# for it, which the "back to back" figure shows). Goal: 0.5 s (the figure the speed issue sets for
# `kosa8 checkpoint`).
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

# until no checkpoint of the sandbox is pending: its commit has ended
idle() { while "$k" checkpoints "$id" 2>/dev/null | grep -q ' pending '; do sleep 1; done; }

turn=() exec_true=() cli=() b2b=()
for ((r = 1; r <= rounds; r++)); do
  (( r > 5 )) && sleep 12
  idle
  t0=$(date +%s%N); "$k" exec "$id" -- true; t1=$(date +%s%N)
  "$k" exec "$id" -- /run/kosa8/kosa8-guest checkpoint -m "turn $r" >/dev/null; t2=$(date +%s%N)
  idle
  t3=$(date +%s%N); "$k" checkpoint "$id" -m "cli $r" >/dev/null 2>&1; t4=$(date +%s%N)
  # at once, while that one commits: what a turn right after another pays
  "$k" checkpoint "$id" -m "back to back $r" >/dev/null 2>&1; t5=$(date +%s%N)
  e=$(ms "$t0" "$t1"); g=$(ms "$t1" "$t2"); c=$(ms "$t3" "$t4"); bb=$(ms "$t4" "$t5")
  exec_true+=("$e"); turn+=("$(( g - e ))"); cli+=("$c"); b2b+=("$bb")
  echo "round $r: exec true $e ms, exec kosa8-guest checkpoint $g ms (turn $(( g - e )) ms), kosa8 checkpoint $c ms," \
    "back to back $bb ms" >&2
  "$k" checkpoint rm "$id" "$("$k" checkpoints "$id" | awk '/back to back/ {print $1}' | tail -1)" >/dev/null 2>&1 || true
done

t=$(printf '%s\n' "${turn[@]}" | median)
c=$(printf '%s\n' "${cli[@]}" | median)
bb=$(printf '%s\n' "${b2b[@]}" | median)
printf '| turn checkpoint, as the hook waits (1 GiB, 256 MiB dirtied) | %s ms | `kosa8 checkpoint` %s ms | goal 500 ms |\n' "$t" "$c"
printf '| a checkpoint right after another (the first still committing) | %s ms | | |\n' "$bb"
bench_row name="turn checkpoint blocks the tool call (1 GiB)" unit=ms samples="${turn[*]}" \
  baseline_name="kosa8 checkpoint, same sandbox, same round" baseline_samples="${cli[*]}" goal=500
bench_row name="kosa8 checkpoint right after another, the first still committing (1 GiB)" unit=ms \
  samples="${b2b[*]}" baseline_name="none: what back-to-back turns pay, against the idle figure above"
bench_write
