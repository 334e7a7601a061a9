#!/usr/bin/env bash
# Foundation benchmarks (issue 2), each with a baseline measured in the same run.
#
#   bench/foundation.sh [RUNS] [EXECS] [ROW...]
#
# RUNS: timings per figure, medians quoted (default 5). EXECS: exec round trips timed (default 100). ROW: which
# figures, any of cli run cold exec memory (default all; `run` and `cold` also time their baseline, a bare boot of
# the image's kernel to its init). `bench/foundation.sh 3 20 exec` is the quick one: a sandbox and 20 round trips.
# Uses the kosa8 home of the environment (KOSA8_HOME, else the XDG default); the image must exist (`kosa8 image
# build`). Prints a Markdown table on stdout and writes its result under bench/results/ (bench/lib.sh).
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init foundation "$@"
runs=${1:-5}
execs=${2:-100}
shift $(( $# < 2 ? $# : 2 ))
rows=("$@")
(( ${#rows[@]} )) || rows=(cli run cold exec memory)
wants() { [[ " ${rows[*]} " == *" $1 "* ]]; }

now() { date +%s%N; }
# times N CMD...: N timings (ms) of a command, space-separated
times_ms() {
  local n=$1 t=() s e
  shift
  for ((i = 0; i < n; i++)); do
    s=$(now); "$@" >/dev/null 2>&1; e=$(now)
    t+=($(( (e - s) / 1000000 )))
  done
  echo "${t[*]}"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "| figure | kosa8 | baseline (same run) | ratio |"
echo "|---|---|---|---|"

# CLI start-up: `kosa8 --version` against a bare JVM start with the same flags.
if wants cli; then
  cli=$(times_ms "$runs" "$k" --version)
  jvm=$(times_ms "$runs" "$JAVA_HOME/bin/java" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -version)
  echo "| CLI start-up (\`kosa8 --version\`, median of $runs) | $(median <<<"$cli") ms | bare JVM start: $(median <<<"$jvm") ms | $(ratio "$(median <<<"$cli")" "$(median <<<"$jvm")") |"
  bench_row name="CLI start-up (\`kosa8 --version\`)" unit=ms samples="$cli" \
    baseline_name="bare JVM start with the same flags" baseline_samples="$jvm" goal="<= 150 ms"
fi

# The daemon must be up and current for the figures below.
"$k" ls >/dev/null

# Kernel to init: the image's kernel and initramfs booting straight to the probe marker, no root disk, no JVM.
if wants run || wants cold; then
  dir=$("$k" image ls | awk '$1 == "*" {print $NF}')
  khz=$(awk -F': ' '/^cpu MHz/ {printf "%d", $2 * 1000; exit}' /proc/cpuinfo)
  probe() {
    timeout 60 qemu-system-x86_64 -M microvm,x-option-roms=off,rtc=on -accel tcg -cpu max -m 1024M -smp 2 \
      -nodefaults -no-user-config -display none -no-reboot -serial stdio \
      -kernel "$dir/vmlinux" -initrd "$dir/initramfs.cpio" \
      -append "console=ttyS0 panic=-1 quiet kosa8.probe=1 tsc_early_khz=$khz" | grep -q KOSA8-PROBE-OK
  }
  boot=$(times_ms "$runs" probe)
  boot_name="QEMU boot of the same kernel to its init"
fi

# `kosa8 run -- true`, end to end (CLI, daemon, boot or template, agent, exec, tear-down).
if wants run; then
  run=$(times_ms "$runs" "$k" run -- true)
  echo "| \`kosa8 run -- true\` end to end (median of $runs) | $(median <<<"$run") ms | $boot_name: $(median <<<"$boot") ms | $(ratio "$(median <<<"$run")" "$(median <<<"$boot")") |"
  bench_row name="\`kosa8 run -- true\` end to end" unit=ms samples="$run" baseline_name="$boot_name" \
    baseline_samples="$boot"
fi

# A new sandbox to its first exec: create (returns when the agent answers), then one exec.
if wants cold; then
  cold() { id=$("$k" create); "$k" exec "$id" -- true; "$k" rm -f "$id" >/dev/null; }
  coldms=$(times_ms "$runs" cold)
  echo "| new sandbox to first exec (create + exec + rm, median of $runs) | $(median <<<"$coldms") ms | $boot_name: $(median <<<"$boot") ms | $(ratio "$(median <<<"$coldms")" "$(median <<<"$boot")") |"
  bench_row name="new sandbox to first exec (create + exec + rm)" unit=ms samples="$coldms" \
    baseline_name="$boot_name" baseline_samples="$boot"
fi

if wants exec || wants memory; then
  id=$("$k" create)
  trap '"$k" rm -f "$id" >/dev/null 2>&1 || true' EXIT
fi

# Exec round trip from a warm client, and the guest's own process-start floor.
if wants exec; then
  "$JAVA_HOME/bin/java" -cp "$jar" "$repo/bench/ExecRoundTrip.java" "$id" "$execs" | sed 's/^/    /' >&2 # warm-up
  rt=$("$JAVA_HOME/bin/java" -cp "$jar" "$repo/bench/ExecRoundTrip.java" "$id" "$execs")
  p50=$(sed -n 's/.*p50 \([0-9.]*\) ms.*/\1/p' <<<"$rt")
  p99=$(sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' <<<"$rt")
  base=$(sed -n 's/^baseline.*: \([0-9.]*\) ms/\1/p' <<<"$rt")
  samples=$(sed -n 's/^samples (ms): //p' <<<"$rt")
  echo "| exec round trip through the daemon, warm client (\`true\`, $execs runs) | p50 ${p50} ms, p99 ${p99} ms | one \`true\` started by a shell in the guest: ${base} ms | $(ratio "$p50" "$base") |"
  guest_true="one \`true\` started by a shell in the guest"
  bench_row name="exec round trip through the daemon, warm client, p50" unit=ms figure="$p50" samples="$samples" \
    baseline_name="$guest_true" baseline="$base" goal="<= 5 ms (a KVM-class figure)"
  bench_row name="exec round trip through the daemon, warm client, p99" unit=ms figure="$p99" \
    baseline_name="$guest_true" baseline="$base"
fi

# Memory: the agent's RSS in the guest, QEMU's on the host.
if wants memory; then
  agent_kb=$("$k" exec "$id" -- sh -c 'ps -o rss= -C java | head -1' | tr -d ' ')
  agent_anon_kb=$("$k" exec "$id" -- sh -c 'awk "/RssAnon/ {print \$2}" /proc/$(pgrep -o java)/status')
  guest_total=$("$k" exec "$id" -- sh -c "awk '/MemTotal/ {print \$2}' /proc/meminfo")
  qpid=$("$k" inspect "$id" | sed -n 's/.*"qemuPid" : \([0-9]*\).*/\1/p')
  qemu_kb=$(awk '/VmRSS/ {print $2}' "/proc/$qpid/status")
  echo "| agent RSS in the guest (idle, after the runs above) | $((agent_kb / 1024)) MiB, of which anonymous $((agent_anon_kb / 1024)) MiB | guest RAM seen by the kernel: $((guest_total / 1024)) MiB | $(ratio "$agent_kb" "$guest_total") |"
  echo "| QEMU RSS on the host (1 GiB guest, idle) | $((qemu_kb / 1024)) MiB | guest RAM: 1024 MiB | $(ratio "$qemu_kb" 1048576) |"
  bench_row name="agent RSS in the guest (idle)" unit=MiB figure=$((agent_kb / 1024)) \
    baseline_name="guest RAM seen by the kernel" baseline=$((guest_total / 1024))
  bench_row name="agent's anonymous memory in the guest (idle)" unit=MiB figure=$((agent_anon_kb / 1024)) \
    baseline_name="guest RAM seen by the kernel" baseline=$((guest_total / 1024)) goal="<= 40 MiB"
  bench_row name="QEMU RSS on the host (1 GiB guest, idle)" unit=MiB figure=$((qemu_kb / 1024)) \
    baseline_name="guest RAM" baseline=1024
fi

bench_write
