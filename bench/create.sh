#!/usr/bin/env bash
# Creates from a template (issue 6): `kosa8 create` of a 1 GiB sandbox from its template, and that sandbox's first
# checkpoint, for judging a change to what a template holds against the build before it:
# `bench/ab.sh create A B [ROUNDS]`, which runs this on each build in turn.
#
#   bench/create.sh [ROUNDS]
#
# The 1 GiB template is made afresh first (a template made by another build would say nothing of this one). Each
# round: `create --memory 1G --workspace none` (timed as the caller waits; from the daemon's log, the split of the
# guest's wake, its agent's Hello then the thaw's answer, and the `trust` step, the sandbox's CA put in the guest),
# then one checkpoint (its pause, as the CLI reports it), then `rm`. ROUNDS defaults to 5. There is no baseline in
# a run: the build before is the baseline, in bench/ab.sh. Uses the kosa8 home of the environment (KOSA8_HOME, else
# the XDG default), whose daemon is stopped first and whose templates are deleted. Prints each round and the
# medians, and writes the result under bench/results/ (bench/lib.sh).
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init create "$@"
rounds=${1:-5}
if [[ -n ${KOSA8_HOME:-} ]]; then data=$KOSA8_HOME/data; else data=${XDG_DATA_HOME:-$HOME/.local/share}/kosa8; fi

"$k" daemon stop >/dev/null 2>&1 || true
rm -rf "$data/templates"
id=$("$k" create --memory 1G --workspace none) # makes the template
"$k" rm -f "$id" >/dev/null

# one round: "CREATE_MS HELLO_MS THAW_MS PAUSE_MS TRUST_MS"
round() {
  local t0 t1 id pause woke trust
  t0=$(date +%s%N)
  id=$("$k" create --memory 1G --workspace none)
  t1=$(date +%s%N)
  woke=$(grep "sandbox $id: guest of .* woke" "$data/kosa8d.log" | tail -1 \
    | sed -n "s/.*Hello \([0-9]*\) ms after the machine ran, the thaw's answer \([0-9]*\) ms.*/\1 \2/p")
  trust=$(grep "sandbox $id: restored from its template" "$data/kosa8d.log" | tail -1 \
    | sed -n 's/.*trust \([0-9]*\) ms.*/\1/p')
  pause=$("$k" checkpoint "$id" 2>&1 >/dev/null | sed -n 's/.*stood still for \([0-9]*\) ms.*/\1/p')
  "$k" rm -f "$id" >/dev/null
  echo "$(( (t1 - t0) / 1000000 )) ${woke:-- -} ${pause:--} ${trust:--}"
}

column() { awk -v c="$1" '{print $c}' <<<"$2" | grep -v -- - | tr '\n' ' '; }

echo "round: create ms, agent's Hello ms, thaw's answer ms, first checkpoint's pause ms, trust ms"
all=""
for ((r = 1; r <= rounds; r++)); do
  x=$(round); echo "round $r: $x"
  all+="$x"$'\n'
done
line="medians"
for c in 1 2 3 4 5; do line+=" $(column "$c" "$all" | median)"; done
echo "$line (create, Hello, thaw, pause, trust; ms)"
none="none in a run: the build before, in bench/ab.sh"
bench_row name="\`create --memory 1G\` from the template, as the caller waits" unit=ms samples="$(column 1 "$all")" \
  baseline_name="$none"
bench_row name="the agent's Hello after the machine ran" unit=ms samples="$(column 2 "$all")" baseline_name="$none"
bench_row name="the thaw's answer after the Hello" unit=ms samples="$(column 3 "$all")" baseline_name="$none"
bench_row name="the first checkpoint's pause" unit=ms samples="$(column 4 "$all")" baseline_name="$none"
bench_row name="the \`trust\` step (the sandbox's CA into the guest)" unit=ms samples="$(column 5 "$all")" \
  baseline_name="$none"
bench_write
