#!/usr/bin/env bash
# An arm64 guest under emulation on this x86-64 host (issue 40; docs/arm64.md), each figure against the same
# operation on an x86-64 guest in the same run, as the caller waits:
#
#   bench/arm64.sh [ROUNDS]
#
# Rows: `create --arch arm64` (a cold boot: no template is made for another architecture) against `create` of an
# x86-64 guest (from its booted template, as a user gets it), then in one sandbox of each: `exec ID -- true`,
# a guest shell loop of 20,000 steps (the emulation's cost on guest code), a checkpoint's pause as the CLI
# reports it and `rewind`'s wall time. 512 MiB guests, no folder. ROUNDS defaults to 3. Builds kosa8's arm64
# image first if it is missing (10-15 minutes here). Uses the kosa8 home of the environment (KOSA8_HOME, else
# the XDG default). Writes the result under bench/results/ (bench/lib.sh).
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init arm64 "$@"
rounds=${1:-3}
ensure_programs qemu-system-aarch64=qemu-system-arm

"$k" image build --arch arm64 >/dev/null 2>&1 || "$k" image build --arch arm64 # the second says why it failed
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# one round for ARCH: "CREATE_MS EXEC_MS LOOP_MS PAUSE_MS REWIND_MS"
round() {
  local t id create exec loop pause rewind
  t=$(date +%s%N); id=$("$k" create --arch "$1" --memory 512M --workspace none); create=$(ms "$t")
  "$k" exec "$id" -- true # the first exec warms the agent's paths, as in the other benchmarks
  t=$(date +%s%N); "$k" exec "$id" -- true; exec=$(ms "$t")
  t=$(date +%s%N); "$k" exec "$id" -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'; loop=$(ms "$t")
  pause=$("$k" checkpoint "$id" --wait 2>&1 >/dev/null | sed -n 's/.*stood still for \([0-9]*\) ms.*/\1/p')
  t=$(date +%s%N); "$k" rewind "$id" >/dev/null; rewind=$(ms "$t")
  "$k" rm -f "$id" >/dev/null
  echo "$create $exec $loop ${pause:--} $rewind"
}

column() { awk -v c="$1" '{print $c}' <<<"$2" | grep -v -- - | tr '\n' ' '; }

"$k" rm -f "$("$k" create --memory 512M --workspace none)" >/dev/null # the x86-64 template, made once
echo "round arch: create ms, exec true ms, 20,000-step shell loop ms, checkpoint pause ms, rewind ms"
arm="" x86=""
for ((r = 1; r <= rounds; r++)); do
  a=$(round arm64); echo "round $r arm64: $a"; arm+="$a"$'\n'
  x=$(round amd64); echo "round $r amd64: $x"; x86+="$x"$'\n'
done
names=("\`create --arch arm64\` (cold boot) against \`create\` of an x86-64 guest (from its template)"
  "\`exec ID -- true\` in an arm64 guest against an x86-64 guest"
  "a 20,000-step shell loop in an arm64 guest against an x86-64 guest"
  "a checkpoint's pause, arm64 guest against x86-64 guest"
  "\`rewind\`, arm64 guest against x86-64 guest")
for c in 1 2 3 4 5; do
  echo "${names[c-1]}: $(column "$c" "$arm" | median) ms against $(column "$c" "$x86" | median) ms"
  bench_row name="${names[c-1]}" unit=ms samples="$(column "$c" "$arm")" baseline_name="the x86-64 guest" \
    baseline_samples="$(column "$c" "$x86")"
done
bench_write
