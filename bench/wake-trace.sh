#!/usr/bin/env bash
# Wake trace (issue 6): what a restore's wake makes QEMU translate, counted. Under TCG a fresh QEMU translates
# every code path the guest runs anew, and that is most of a wake's time; the count is what a change to the wake
# moves, without the noise of timing it on a shared machine.
#
#   bench/wake-trace.sh [REWINDS] [OUT_DIR]
#
# Restarts the daemon of the kosa8 home (KOSA8_HOME, else the XDG default) with KOSA8_TRACE_WAKE_DIR set, so that
# QEMU logs the guest code it translates between each restore's `cont` and its thaw's answer (dev.kosa8.vm.WakeTrace;
# the log slows a wake several times, so traced wakes count code, their times mean nothing). Then: a 1 GiB sandbox
# without a workspace (its create is a traced restore of its template), a guest process that keeps dirtying half its
# memory, three checkpoints 8 s apart, REWINDS (default 4) rewinds to random ones of them; the guest's kernel symbols
# and its agent's mappings are read, and bench/WakeTrace.java counts each wake's blocks by kernel, agent JVM (its JIT
# compiler apart) and other processes. The sandbox is removed and the daemon stopped at the end, so no daemon goes on
# tracing. Traces stay in OUT_DIR (default a new temporary directory), a few MB per wake. The counts go to stdout
# and to a result under bench/results/ (bench/lib.sh).
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init wake-trace "$@"
rewinds=${1:-4}
out=${2:-$(mktemp -d /tmp/kosa8-wake-trace.XXXXXX)}
mkdir -p "$out"
kosa8=$k
k() { "$kosa8" "$@"; }

k daemon stop >/dev/null 2>&1 || true
export KOSA8_TRACE_WAKE_DIR=$out/traces
id=$(k create --memory 1G --workspace none)
cleanup() { k rm -f "$id" >/dev/null 2>&1 || true; k daemon stop >/dev/null 2>&1 || true; }
trap cleanup EXIT
dirty_memory "$kosa8" "$id" 512
sleep 15
checkpoints=()
for _ in 1 2 3; do
  sleep 8
  checkpoints+=("$(k checkpoint "$id" -m wake-trace 2>/dev/null)")
done
for ((r = 1; r <= rewinds; r++)); do
  sleep 4
  k rewind "$id" "${checkpoints[RANDOM % 3]}" >&2
done
k exec "$id" -- cat /proc/kallsyms > "$out/kallsyms"
k exec "$id" -- sh -c 'cat /proc/$(pgrep -o java)/maps' > "$out/maps"
libjvm="$JAVA_HOME/lib/server/libjvm.so"
guest=$(k exec "$id" -- md5sum /opt/kosa8/jre/lib/server/libjvm.so | cut -d' ' -f1)
if [[ "$guest" != "$(md5sum "$libjvm" | cut -d' ' -f1)" ]]; then
  echo "the guest's libjvm.so is not $libjvm: its functions are not named below" >&2
fi
"$JAVA_HOME/bin/java" "$repo/bench/WakeTrace.java" "$out/traces" "$out/kallsyms" "$out/maps" "$libjvm"
echo "traces: $out" >&2
