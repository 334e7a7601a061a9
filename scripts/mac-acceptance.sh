#!/usr/bin/env bash
# The macOS acceptance run (issue 40; docs/macos.md): what a maintainer runs on an Apple-silicon Mac to find out,
# step by step, how much of kosa8 works there, and to get the figures for BENCHMARKS.md.
#
#   scripts/mac-acceptance.sh [--no-suite]
#
# Needs: macOS 13 or later on Apple silicon, Homebrew's `qemu` (qemu-system-aarch64, qemu-img), a Java 25 JDK
# (`brew install --cask temurin@25`, or JAVA_HOME), Maven (`brew install maven`). Runs in a kosa8 home of its
# own (KOSA8_HOME=$PWD/host/target/mac-home), so nothing of the user's is touched.
#
# Each step runs whatever the one before did, records pass or fail with its time and the last lines of its
# output, and the run goes on: the table at the end says what works on this Mac today and what does not. Steps:
#   1. the host: macOS version, architecture, QEMU's version and HVF, Java 25
#   2. `kosa8 doctor`
#   3. `kosa8 image build` (an arm64 image: the host's architecture), its time
#   4. `kosa8 run -- uname -m` must print aarch64, under HVF
#   5. the checkpoint mode the daemon chose (file RAM: macOS has no userfaultfd), and a checkpoint and a rewind of
#      a running guest whose counter must go on from the checkpoint's instant
#   6. the integration suite (./run-tests), unless --no-suite: about 30 minutes under HVF
#   7. the checkpoint/rewind benchmark (bench/wall.sh 3 2000 sandbox)
# Prints a Markdown table to paste into docs/macos.md ("What has been verified") and the benchmark's table for
# BENCHMARKS.md; the full log of every step is in host/target/mac-acceptance/.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out="$repo/host/target/mac-acceptance"
mkdir -p "$out"
export KOSA8_HOME="$repo/host/target/mac-home"
k="$repo/kosa8"
suite=1
[[ ${1:-} == --no-suite ]] && suite=0
rows=()

# step NAME COMMAND...: runs it, its output to the step's log; records pass/fail, seconds, the last line
step() {
  local name=$1 log="$out/$(printf '%s' "$1" | tr -c 'a-zA-Z0-9' '-').log" t0 t1 rc
  shift
  echo "== $name" >&2
  t0=$(date +%s)
  "$@" > "$log" 2>&1
  rc=$?
  t1=$(date +%s)
  local last
  last=$(grep -v '^\s*$' "$log" | tail -1 | tr '|' '/' | cut -c1-160)
  rows+=("| $name | $([[ $rc == 0 ]] && echo pass || echo "**fail** ($rc)") | $((t1 - t0)) s | ${last} |")
  echo "   $([[ $rc == 0 ]] && echo pass || echo "fail ($rc)"), $((t1 - t0)) s: $last" >&2
  return $rc
}

host() {
  sw_vers
  uname -m
  [[ $(uname -s) == Darwin && $(uname -m) == arm64 ]] || { echo "not an Apple-silicon Mac"; return 1; }
  qemu-system-aarch64 --version | head -1
  qemu-system-aarch64 -accel help | grep -q hvf || { echo "this QEMU has no HVF"; return 1; }
  "${JAVA_HOME:-/usr}/bin/java" -version 2>&1 | head -1
  "${JAVA_HOME:-/usr}/bin/java" -version 2>&1 | grep -q '"25' || { echo "Java 25 is needed (JAVA_HOME)"; return 1; }
}

run_aarch64() {
  local m
  m=$("$k" run --workspace none -- uname -m) || return 1
  echo "guest: $m"
  [[ $m == aarch64 ]]
}

checkpoint_rewind() {
  local id cp n0 n1
  "$k" doctor | grep -i checkpoint
  id=$("$k" create --memory 512M --workspace none) || return 1
  "$k" exec "$id" -- sh -c "nohup sh -c 'i=0; while :; do i=\$((i+1)); echo \$i >> /root/c; sleep 0.2; done' \
    > /dev/null 2>&1 &"
  sleep 2
  cp=$("$k" checkpoint "$id" --wait) || { "$k" rm -f "$id"; return 1; }
  n0=$("$k" exec "$id" -- sh -c 'wc -l < /root/c')
  sleep 2
  "$k" rewind "$id" "$cp" || { "$k" rm -f "$id"; return 1; }
  sleep 2
  n1=$("$k" exec "$id" -- sh -c 'wc -l < /root/c; seq 1 $(wc -l < /root/c) | cmp - /root/c && echo consecutive')
  "$k" inspect "$id" | grep -E '"accelerator"|"arch"'
  "$k" rm -f "$id"
  echo "at the checkpoint: $n0 lines; after the rewind: $n1"
  [[ $n1 == *consecutive* ]]
}

step "host: macOS, arm64, QEMU with HVF, Java 25" host
step "kosa8 doctor" "$k" doctor
step "kosa8 image build" "$k" image build
step "kosa8 run -- uname -m prints aarch64" run_aarch64
step "checkpoint (file RAM) and rewind, the counter consecutive" checkpoint_rewind
if (( suite )); then
  step "./run-tests (the integration suite)" "$repo/run-tests"
fi
step "bench/wall.sh 3 2000 sandbox" "$repo/bench/wall.sh" 3 2000 sandbox

echo
echo "### macOS acceptance, $(date -u +%Y-%m-%d), $(git -C "$repo" rev-parse --short HEAD), $(sw_vers -productVersion 2>/dev/null), $(sysctl -n machdep.cpu.brand_string 2>/dev/null)"
echo
echo "| step | result | time | last line |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "The benchmark's table (for BENCHMARKS.md, \"Every host\"):"
grep '^|' "$out/bench-wall-sh-3-2000-sandbox.log" 2>/dev/null || echo "(the benchmark did not run to its end; see its log)"
