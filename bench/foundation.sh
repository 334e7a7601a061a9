#!/usr/bin/env bash
# Foundation benchmarks (issue 2), each with a baseline measured in the same run.
#
#   bench/foundation.sh [RUNS]       (default 5 runs per figure; medians are quoted)
#
# Uses the kosa8 home of the environment (KOSA8_HOME, else the XDG default);
# the image must exist (./kosa8 image build). Prints a Markdown table for
# BENCHMARKS.md.
set -euo pipefail
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
source "$repo/scripts/host-setup.sh"
select_java25
runs=${1:-5}
k="$repo/kosa8"
jar="$repo/host/target/kosa8.jar"
"$k" --version >/dev/null   # builds the jar if needed

now() { date +%s%N; }
# median of N timings (ms) of a command
median_ms() {
  local n=$1; shift
  local t=() s e
  for ((i = 0; i < n; i++)); do
    s=$(now); "$@" >/dev/null 2>&1; e=$(now)
    t+=($(( (e - s) / 1000000 )))
  done
  printf '%s\n' "${t[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "| figure | kosa8 | baseline (same run) | ratio |"
echo "|---|---|---|---|"

# CLI start-up: `kosa8 --version` against a bare JVM start with the same flags.
cli=$(median_ms "$runs" "$k" --version)
jvm=$(median_ms "$runs" "$JAVA_HOME/bin/java" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -version)
echo "| CLI start-up (\`kosa8 --version\`, median of $runs) | ${cli} ms | bare JVM start: ${jvm} ms | $(ratio "$cli" "$jvm") |"

# The daemon must be up and current for the figures below.
"$k" ls >/dev/null

# Kernel to init: the image's kernel and initramfs booting straight to the probe marker, no root disk, no JVM.
img=$("$k" image ls | awk '$1 == "*" {print $2}')
dir=$("$k" image ls | awk '$1 == "*" {print $NF}')
khz=$(awk -F': ' '/^cpu MHz/ {printf "%d", $2 * 1000; exit}' /proc/cpuinfo)
probe() {
  timeout 60 qemu-system-x86_64 -M microvm,x-option-roms=off,rtc=on -accel tcg -cpu max -m 1024M -smp 2 \
    -nodefaults -no-user-config -display none -no-reboot -serial stdio \
    -kernel "$dir/vmlinux" -initrd "$dir/initramfs.cpio" \
    -append "console=ttyS0 panic=-1 quiet kosa8.probe=1 tsc_early_khz=$khz" | grep -q KOSA8-PROBE-OK
}
boot=$(median_ms "$runs" probe)

# `kosa8 run -- true`, end to end (CLI, daemon, boot, agent, exec, tear-down).
run=$(median_ms "$runs" "$k" run -- true)
echo "| \`kosa8 run -- true\` end to end (median of $runs) | ${run} ms | QEMU boot of the same kernel to its init: ${boot} ms | $(ratio "$run" "$boot") |"

# Cold boot to first exec: create (returns when the agent answers), then one exec.
cold() { id=$("$k" create); "$k" exec "$id" -- true; "$k" rm -f "$id" >/dev/null; }
coldms=$(median_ms "$runs" cold)
echo "| cold boot to first exec (create + exec + rm, median of $runs) | ${coldms} ms | QEMU boot to init: ${boot} ms | $(ratio "$coldms" "$boot") |"

# Exec round trip from a warm client, and the guest's own process-start floor.
id=$("$k" create)
trap '"$k" rm -f "$id" >/dev/null 2>&1 || true' EXIT
"$JAVA_HOME/bin/java" -cp "$jar" "$repo/bench/ExecRoundTrip.java" "$id" 100 | sed 's/^/    /' >&2
rt=$("$JAVA_HOME/bin/java" -cp "$jar" "$repo/bench/ExecRoundTrip.java" "$id" 100)
p50=$(sed -n 's/.*p50 \([0-9.]*\) ms.*/\1/p' <<<"$rt")
p99=$(sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' <<<"$rt")
base=$(sed -n 's/^baseline.*: \([0-9.]*\) ms/\1/p' <<<"$rt")
echo "| exec round trip through the daemon, warm client (\`true\`, 100 runs) | p50 ${p50} ms, p99 ${p99} ms | one \`true\` started by a shell in the guest: ${base} ms | $(ratio "$p50" "$base") |"

# Memory: the agent's RSS in the guest, QEMU's on the host.
agent_kb=$("$k" exec "$id" -- sh -c 'ps -o rss= -C java | head -1' | tr -d ' ')
agent_anon_kb=$("$k" exec "$id" -- sh -c 'awk "/RssAnon/ {print \$2}" /proc/$(pgrep -o java)/status')
guest_total=$("$k" exec "$id" -- sh -c "awk '/MemTotal/ {print \$2}' /proc/meminfo")
qpid=$("$k" inspect "$id" | sed -n 's/.*"qemuPid" : \([0-9]*\).*/\1/p')
qemu_kb=$(awk '/VmRSS/ {print $2}' "/proc/$qpid/status")
echo "| agent RSS in the guest (idle, after the runs above) | $((agent_kb / 1024)) MiB, of which anonymous $((agent_anon_kb / 1024)) MiB | guest RAM seen by the kernel: $((guest_total / 1024)) MiB | $(ratio "$agent_kb" "$guest_total") |"
echo "| QEMU RSS on the host (1 GiB guest, idle) | $((qemu_kb / 1024)) MiB | guest RAM: 1024 MiB | $(ratio "$qemu_kb" 1048576) |"
