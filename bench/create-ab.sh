#!/usr/bin/env bash
# Create A/B (issue 6): `kosa8 create` from a template, and that sandbox's first checkpoint, under two builds of
# kosa8, interleaved, so a change to what a template holds is judged against the build before it in one run.
#
#   bench/create-ab.sh CHECKOUT_A CHECKOUT_B [ROUNDS]
#
# Each build runs with its own kosa8 home (KOSA8_HOME_A / KOSA8_HOME_B, default /tmp/kosa8-ab-a and -b); the 1 GiB
# template of each is made afresh first (a template made by another build would say nothing of this one). Each
# round, A then B: `create --memory 1G --workspace none` (timed as the caller waits; from the daemon's log, the
# split of the guest's wake, its agent's Hello then the thaw's answer, and the `trust` step, the sandbox's CA put in
# the guest), then one checkpoint (its pause, as the CLI reports it), then `rm`. ROUNDS defaults to 5. Prints each
# round and the medians.
set -euo pipefail
a=$(cd "$1" && pwd); b=$(cd "$2" && pwd)
rounds=${3:-5}
home_a=${KOSA8_HOME_A:-/tmp/kosa8-ab-a}; home_b=${KOSA8_HOME_B:-/tmp/kosa8-ab-b}

fresh_template() {
  local repo=$1
  export KOSA8_HOME=$2
  "$repo/kosa8" daemon stop >/dev/null 2>&1 || true
  rm -rf "$KOSA8_HOME/data/templates"
  local id
  id=$("$repo/kosa8" create --memory 1G --workspace none) # makes the template
  "$repo/kosa8" rm -f "$id" >/dev/null
}

# one round of one build: "CREATE_MS HELLO_MS THAW_MS PAUSE_MS TRUST_MS"
round() {
  local repo=$1
  export KOSA8_HOME=$2
  local t0 t1 id pause woke
  t0=$(date +%s%N)
  id=$("$repo/kosa8" create --memory 1G --workspace none)
  t1=$(date +%s%N)
  woke=$(grep "sandbox $id: guest of .* woke" "$KOSA8_HOME/data/kosa8d.log" | tail -1 \
    | sed -n "s/.*Hello \([0-9]*\) ms after the machine ran, the thaw's answer \([0-9]*\) ms.*/\1 \2/p")
  trust=$(grep "sandbox $id: restored from its template" "$KOSA8_HOME/data/kosa8d.log" | tail -1 \
    | sed -n 's/.*trust \([0-9]*\) ms.*/\1/p')
  pause=$("$repo/kosa8" checkpoint "$id" 2>&1 >/dev/null | sed -n 's/.*stood still for \([0-9]*\) ms.*/\1/p')
  "$repo/kosa8" rm -f "$id" >/dev/null
  echo "$(( (t1 - t0) / 1000000 )) ${woke:-- -} ${pause:--} ${trust:--}"
}

median() { sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

fresh_template "$a" "$home_a"
fresh_template "$b" "$home_b"
ra=(); rb=()
echo "round: create ms, agent's Hello ms, thaw's answer ms, first checkpoint's pause ms, trust ms"
for ((r = 1; r <= rounds; r++)); do
  x=$(round "$a" "$home_a"); ra+=("$x"); echo "A round $r: $x"
  x=$(round "$b" "$home_b"); rb+=("$x"); echo "B round $r: $x"
done
for build in A B; do
  if [[ $build == A ]]; then rows=("${ra[@]}"); repo=$a; else rows=("${rb[@]}"); repo=$b; fi
  line="$build ($(git -C "$repo" rev-parse --short HEAD)): medians"
  for col in 1 2 3 4 5; do
    line+=" $(printf '%s\n' "${rows[@]}" | awk -v c=$col '{print $c}' | grep -v -- - | median)"
  done
  echo "$line (create, Hello, thaw, pause, trust; ms)"
done
