#!/usr/bin/env bash
# The soak (issue 34): SANDBOXES sandboxes of MEMORY MiB each, for MINUTES minutes, each running a continuous mix
# of operations, while one more, hostile, sandbox floods the broker with connections and DNS queries and its console
# with output. Not part of the test suite; CI runs it with a flag, and the closing note quotes a run.
#
#   bench/soak.sh [SANDBOXES [MINUTES [MEMORY_MIB]]]     defaults: 8 10 256 (the issue's run)
#   bench/soak.sh 2 2 256                                 the short run that proves the script works
#
# Each worker loops over: exec `true` (timed end to end, the CLI's start included), `kosa8 cp` in and out (a 1 MiB
# file, compared), a folder write by the guest read back on the host, an allowed HTTP request (to SOAK_ALLOWED_URL,
# default http://deb.debian.org/debian/; skipped, and said, when the host itself cannot reach it) and a denied one
# (must get the broker's answer naming `kosa8 allow`), a checkpoint and a rewind to it; in the second round and
# every fifth after it a stop and a start. Any operation that fails, or answers wrongly, is a failure (goal: 0),
# logged with its output.
#
# Reported (printed, and written under bench/results/): operations done and failures per kind; exec latency p50 and
# p99 per minute, and the p50 divided by the machine's own pace that minute (a bare JVM start timed every 5 s, with
# the load average: on a shared machine the raw latency follows the load; the ratio is what must stay flat); the daemon's heap in use and thread count, its RSS and open descriptors, and the
# summed RSS of every QEMU, at the start and at the end (the hostile sandbox removed first); the daemon's figures
# again with every sandbox removed, against the daemon before any was made (where a leak shows); disk used by the
# kosa8 home's data. Uses the kosa8 home of
# the environment (KOSA8_HOME, else the XDG default); its daemon is restarted first, so the figures are its own.
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init soak "$@"
boxes=${1:-8}
minutes=${2:-10}
memory=${3:-256}
allowed_url=${SOAK_ALLOWED_URL:-http://deb.debian.org/debian/}
allowed_host=$(sed -E 's#^[a-z]+://([^/:]+).*#\1#' <<<"$allowed_url")
if [[ -n ${KOSA8_HOME:-} ]]; then data=$KOSA8_HOME/data; else data=${XDG_DATA_HOME:-$HOME/.local/share}/kosa8; fi
work=$(mktemp -d /tmp/kosa8-soak.XXXXXX)
trap 'rm -rf "$work"' EXIT

if curl -s -o /dev/null --max-time 10 "$allowed_url"; then can_allow=1; else can_allow=0; fi
(( can_allow )) || echo "the host cannot reach $allowed_url: allowed requests are left out of the mix"

# A host reached through an intercepting proxy may resolve the allowed host into a reserved range (here
# deb.debian.org is 203.0.113.80), which the broker refuses to dial, rightly: every allowed request would be a 403.
# The user's own setting for that case is an address exception (docs/network.md, "Your own settings"); the soak
# adds one for the allowed host's address, for its run only, when the user's network.json has none.
settings=${KOSA8_HOME:+$KOSA8_HOME/config}
settings=${settings:-${XDG_CONFIG_HOME:-$HOME/.config}/kosa8}/network.json
address=$(getent ahostsv4 "$allowed_host" | awk 'NR == 1 {print $1}')
reserved() { # ADDRESS: in a block the broker refuses (private, shared, benchmarking or documentation ranges)
  local a b
  IFS=. read -r a b _ _ <<<"$1"
  (( a == 10 || a == 127 || (a == 172 && b >= 16 && b < 32) || (a == 192 && b == 168) || (a == 100 && b >= 64 && b < 128) \
     || (a == 198 && (b == 18 || b == 19)) )) || [[ $1 == 192.0.2.* || $1 == 198.51.100.* || $1 == 203.0.113.* ]]
}
if (( can_allow )) && [[ -n $address ]] && reserved "$address" && [[ ! -e $settings ]]; then
  mkdir -p "$(dirname "$settings")"
  printf '{"addressExceptions": {"%s": ["%s/32"]}}\n' "$allowed_host" "$address" > "$settings"
  added_settings=$settings
  echo "$allowed_host resolves to $address here, a reserved address the broker refuses: an address exception for"
  echo "it is in $settings for this run"
fi
restore_settings() { [[ -n ${added_settings:-} ]] && rm -f "$added_settings"; return 0; }
trap 'rm -rf "$work"; restore_settings' EXIT

"$k" daemon stop >/dev/null 2>&1 || true
"$k" ls >/dev/null # a fresh daemon, with the settings above

daemon_pid() { "$k" daemon status | sed -n 's/.* pid \([0-9]*\) .*/\1/p'; }

# "HEAP_MIB THREADS RSS_MIB FDS QEMU_RSS_MIB QEMUS" of the daemon and every QEMU of this home
measure() {
  local pid heap threads rss fds qrss=0 qn=0 q
  pid=$(daemon_pid)
  # the Java heap in use after a full collection (live objects, not garbage waiting), not metaspace: the heap's
  # own lines ("DefNew"/"Tenured" for the daemon's serial collector, "garbage-first heap", "ZHeap", ...) carry
  # "total NK, used NK"; their "space" lines repeat them in parts
  "$JAVA_HOME/bin/jcmd" "$pid" GC.run >/dev/null 2>&1 || true
  heap=$("$JAVA_HOME/bin/jcmd" "$pid" GC.heap_info 2>/dev/null \
    | awk '!/space/ && match($0, /total [0-9]+K, used [0-9]+K/) {
             split(substr($0, RSTART, RLENGTH), f, /[ K,]+/); s += f[4]} END {print s + 0}')
  threads=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status")
  rss=$(awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$pid/status")
  fds=$(ls "/proc/$pid/fd" | wc -l)
  for q in $(pgrep -f "qemu-system.*$data" || true); do
    qrss=$(( qrss + $(awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$q/status" 2>/dev/null || echo 0) ))
    qn=$(( qn + 1 ))
  done
  echo "$(( ${heap:-0} / 1024 )) $threads $rss $fds $qrss $qn"
}

# op KIND ID COMMAND...: runs one operation, logs "EPOCH_MS KIND ok|fail MS" to the worker's log
op() {
  local kind=$1 id=$2 t0 t1 out rc=0
  shift 2
  t0=$(date +%s%3N)
  out=$("$@" 2>&1) || rc=$?
  t1=$(date +%s%3N)
  if (( rc == 0 )); then
    echo "$t0 $kind ok $(( t1 - t0 ))" >> "$work/$id.ops"
  else
    echo "$t0 $kind fail $(( t1 - t0 ))" >> "$work/$id.ops"
    printf '%s %s %s failed (%d):\n%s\n' "$(date -u +%T)" "$id" "$kind" "$rc" "$out" >> "$work/failures.log"
  fi
}

# the checks an operation's answer must pass, as commands op can run
cp_round_trip() { # ID
  "$k" cp "$work/payload" "$1:/root/payload" && "$k" cp "$1:/root/payload" "$work/$1.back" \
    && cmp -s "$work/payload" "$work/$1.back"
}
folder_write() { # ID FOLDER
  local stamp=$RANDOM$RANDOM
  "$k" exec "$1" -- sh -c "echo $stamp > /workspace/soak-note" && [[ $(cat "$2/soak-note") == "$stamp" ]]
}
allowed() { "$k" exec "$1" -- curl -fsS -o /dev/null --max-time 60 "$allowed_url"; }
denied() { "$k" exec "$1" -- curl -sS --max-time 60 http://denied.test/ | grep -q "kosa8 allow"; }
checkpoint_and_rewind() {
  local c
  c=$("$k" checkpoint "$1" -m soak) && "$k" rewind "$1" "$c" && "$k" checkpoint rm "$1" "$c" >/dev/null
}
stop_and_start() { "$k" stop "$1" && "$k" start "$1"; }

worker() { # ID FOLDER END_EPOCH
  local id=$1 folder=$2 end=$3 round=0
  while (( $(date +%s) < end )); do
    round=$(( round + 1 ))
    op exec "$id" "$k" exec "$id" -- true
    op cp "$id" cp_round_trip "$id"
    op folder "$id" folder_write "$id" "$folder"
    if (( can_allow )); then op net-allowed "$id" allowed "$id"; fi
    op net-denied "$id" denied "$id"
    op exec "$id" "$k" exec "$id" -- true
    op checkpoint-rewind "$id" checkpoint_and_rewind "$id"
    # the second round and every fifth after it: a loaded machine may run only a few rounds in the soak's time
    if (( round % 5 == 2 )); then op stop-start "$id" stop_and_start "$id"; fi
  done
}

# probe END_EPOCH: the machine's own pace, every 5 s: a bare JVM start (`java -version`, the CPU-bound half of a
# CLI call, nothing of kosa8's in it) timed, and the load average. An exec's latency divided by this minute's probe
# is what kosa8 adds that load alone does not explain: that ratio, not the raw latency, must stay flat.
probe() {
  local end=$1 t0 t1
  while (( $(date +%s) < end )); do
    t0=$(date +%s%3N)
    "$JAVA_HOME/bin/java" -Xshare:auto -version >/dev/null 2>&1 || true
    t1=$(date +%s%3N)
    echo "$t0 probe ok $(( t1 - t0 )) $(cut -d' ' -f1 /proc/loadavg)" >> "$work/probe.log"
    sleep 5
  done
}

hostile() { # ID END_EPOCH: connections held open, DNS queries, console output, all the time
  local id=$1 end=$2
  "$k" exec "$id" -- sh -c "nohup python3 -c '
import socket, time
held = []
while True:
    try:
        s = socket.create_connection((\"10.0.2.100\", 3128), timeout=5); held.append(s)
    except OSError:
        time.sleep(0.05)
    if len(held) > 400:
        for s in held[:200]: s.close()
        del held[:200]
' > /dev/null 2>&1 &
nohup sh -c 'while :; do getent hosts flood-\$(date +%N).test > /dev/null; done' > /dev/null 2>&1 &
nohup sh -c 'while :; do head -c 65536 /dev/urandom | base64 > /dev/console; done' > /dev/null 2>&1 &" >/dev/null
  while (( $(date +%s) < end )); do sleep 5; done
}

head -c 1048576 /dev/urandom > "$work/payload"
echo "making $boxes sandboxes of $memory MiB and one hostile one"
idle_figures=$(measure)
ids=() folders=()
for ((i = 1; i <= boxes; i++)); do
  f="$work/ws-$i"; mkdir -p "$f"
  args=(create --memory "${memory}M" --workspace "$f")
  (( can_allow )) && args+=(--allow "$allowed_host")
  ids+=("$("$k" "${args[@]}")"); folders+=("$f")
done
bad=$("$k" create --memory "${memory}M" --workspace none)
cleanup() { "$k" rm -f "${ids[@]}" "$bad" >/dev/null 2>&1 || true; rm -rf "$work"; restore_settings; }
trap cleanup EXIT

start_figures=$(measure)
disk_start=$(du -sm "$data" | cut -f1)
t_start=$(date +%s)
end=$(( t_start + minutes * 60 ))
echo "soak: $boxes sandboxes × $minutes min at $memory MiB, from $(date -u +%T)"
hostile "$bad" "$end" &
pids=($!)
probe "$end" &
pids+=($!)
for ((i = 0; i < boxes; i++)); do worker "${ids[i]}" "${folders[i]}" "$end" & pids+=($!); done
wait "${pids[@]}" || true # a worker's status is its last round's; failures are counted in the logs
# the hostile guest's held connections are the daemon's descriptors until it goes: measured without it, so what
# is left is what the soak's own work left behind
"$k" rm -f "$bad" >/dev/null
sleep 3
end_figures=$(measure)
disk_end=$(du -sm "$data" | cut -f1)
# and with every sandbox gone: against the daemon before any was made, what a leak would leave. Pools keep an idle
# thread for up to 60 s (Java's cached pools, Netty's, the fork-join pools) before it retires: the count is read
# until it is within the bound or 120 s have passed, and the wait is reported; a leak stays past it.
"$k" rm -f "${ids[@]}" >/dev/null
read -r _ thi _ _ _ _ <<<"$idle_figures"
settle_t0=$(date +%s)
while :; do
  sleep 5
  empty_figures=$(measure)
  read -r _ the _ _ _ _ <<<"$empty_figures"
  (( the <= thi + thi / 10 + 16 || $(date +%s) - settle_t0 >= 120 )) && break
done
settled_s=$(( $(date +%s) - settle_t0 ))

cat "$work"/*.ops > "$work/all.ops"
total=$(wc -l < "$work/all.ops")
failed=$(grep -c ' fail ' "$work/all.ops" || true)
echo
echo "operations: $total, failures: $failed (goal 0)"
awk '{n[$2]++; if ($3 == "fail") f[$2]++} END {for (k in n) printf "  %-18s %6d done, %d failed\n", k, n[k], f[k]}' \
  "$work/all.ops" | sort
echo "exec latency per minute (ms, the CLI's start included), against the machine's pace (a bare JVM start):"
per_minute="" ratios="" loads=""
for ((m = 0; m < minutes; m++)); do
  lo=$(( (t_start + m * 60) * 1000 )) hi=$(( (t_start + (m + 1) * 60) * 1000 ))
  xs=$(awk -v lo="$lo" -v hi="$hi" '$2 == "exec" && $3 == "ok" && $1 >= lo && $1 < hi {print $4}' "$work/all.ops" | sort -n)
  n=$(grep -c . <<<"$xs" || true)
  if (( n > 0 )); then
    p50=$(awk -v n="$n" 'NR == int((n + 1) / 2) {print}' <<<"$xs")
    p99=$(awk -v n="$n" 'NR == (int(n * 0.99) > 0 ? int(n * 0.99) : 1) {print}' <<<"$xs")
  else p50=-; p99=-; fi
  ps=$(awk -v lo="$lo" -v hi="$hi" '$1 >= lo && $1 < hi {print $4}' "$work/probe.log" 2>/dev/null | sort -n)
  pn=$(grep -c . <<<"$ps" || true)
  load=$(awk -v lo="$lo" -v hi="$hi" '$1 >= lo && $1 < hi {s += $5; n++} END {if (n) printf "%.1f", s / n; else print "-"}' \
    "$work/probe.log" 2>/dev/null || echo -)
  if (( pn > 0 )); then
    pp=$(awk -v n="$pn" 'NR == int((n + 1) / 2) {print}' <<<"$ps")
    ratio=$([[ $p50 == - ]] && echo - || awk -v a="$p50" -v b="$pp" 'BEGIN {printf "%.2f", a / b}')
  else pp=-; ratio=-; fi
  echo "  minute $(( m + 1 )): p50 $p50, p99 $p99 ($n execs); bare JVM start p50 $pp; ratio $ratio; load $load"
  per_minute+="$p50/$p99 " ratios+="$ratio " loads+="$load "
done
read -r h0 th0 r0 fd0 q0 qn0 <<<"$start_figures"
read -r h1 th1 r1 fd1 q1 qn1 <<<"$end_figures"
echo "daemon: heap in use $h0 -> $h1 MiB, threads $th0 -> $th1, RSS $r0 -> $r1 MiB, open descriptors $fd0 -> $fd1"
within() { (( $2 <= $1 + $1 / 10 + 16 )) && echo "within the bound" || echo "GREW beyond the bound"; }
echo "bound (start + 10% + 16): threads $(within "$th0" "$th1"), descriptors $(within "$fd0" "$fd1")"
echo "QEMUs (each sandbox's, and its standby for the next rewind): $qn0 -> $qn1 processes, RSS $q0 -> $q1 MiB;" \
  "disk used by $data: $disk_start -> $disk_end MiB"
read -r he the re fde qe qne <<<"$empty_figures"
read -r hi thi ri fdi _ _ <<<"$idle_figures"
echo "daemon with no sandbox, before and after: heap in use $hi -> $he MiB, threads $thi -> $the, RSS $ri -> $re MiB," \
  "open descriptors $fdi -> $fde, QEMUs left $qne"
echo "bound (before + 10% + 16): threads $(within "$thi" "$the"), descriptors $(within "$fdi" "$fde")" \
  "(read ${settled_s} s after the last sandbox went)"
if [[ -s $work/failures.log ]]; then
  echo "failures (first 40 lines of $data/../soak-failures.log):"
  cp "$work/failures.log" "$data/../soak-failures.log"
  head -40 "$work/failures.log"
fi

shape="$boxes sandboxes × $minutes min, $memory MiB, one hostile"
p50s=$(tr ' ' '\n' <<<"$per_minute" | cut -d/ -f1 | grep -v -- - | tr '\n' ' ')
p99s=$(tr ' ' '\n' <<<"$per_minute" | cut -d/ -f2 | grep -v -- - | tr '\n' ' ')
first() { awk '{print $1}' <<<"$1"; }
last() { awk '{print $NF}' <<<"$1"; }
at_start="at the start of the soak"
bench_row name="operations done ($shape)" unit=ops better=higher figure="$total" baseline_name="none: a count"
bench_row name="failures ($shape)" unit=ops figure="$failed" baseline_name="none: the goal is 0" goal=0
bench_row name="exec p50, last minute (samples: each minute's)" unit=ms figure="$(last "$p50s")" samples="$p50s" \
  baseline_name="the first minute's" baseline="$(first "$p50s")" goal="flat"
ratio_s=$(tr ' ' '\n' <<<"$ratios" | grep -v -- - | tr '\n' ' ')
bench_row name="exec p50 ÷ a bare JVM start's p50 in the same minute, last minute (samples: each minute's; load \
averages: $loads)" unit=x figure="$(last "$ratio_s")" samples="$ratio_s" baseline_name="the first minute's" \
  baseline="$(first "$ratio_s")" goal="flat"
bench_row name="exec p99, last minute (samples: each minute's)" unit=ms figure="$(last "$p99s")" samples="$p99s" \
  baseline_name="the first minute's" baseline="$(first "$p99s")" goal="flat"
bench_row name="daemon heap in use at the end" unit=MiB figure="$h1" baseline_name="$at_start" baseline="$h0"
bench_row name="daemon threads at the end" unit=threads figure="$th1" baseline_name="$at_start" baseline="$th0"
bench_row name="daemon RSS at the end" unit=MiB figure="$r1" baseline_name="$at_start" baseline="$r0"
bench_row name="daemon open descriptors at the end" unit=fds figure="$fd1" baseline_name="$at_start" baseline="$fd0"
bench_row name="daemon open descriptors, every sandbox removed" unit=fds figure="$fde" \
  baseline_name="before any sandbox was made" baseline="$fdi"
bench_row name="daemon heap in use, every sandbox removed" unit=MiB figure="$he" \
  baseline_name="before any sandbox was made" baseline="$hi"
bench_row name="QEMU RSS summed at the end" unit=MiB figure="$q1" baseline_name="$at_start" baseline="$q0"
bench_row name="disk used by the home's data at the end" unit=MiB figure="$disk_end" baseline_name="$at_start" \
  baseline="$disk_start"
bench_write

# The verdict, for CI (`./run-tests soak`): any failed operation, or the daemon holding more threads or descriptors
# with every sandbox removed than before any was made (beyond the bound above), fails the run.
verdict=0
(( failed == 0 )) || { echo "FAILED: $failed operations failed"; verdict=1; }
[[ $(within "$thi" "$the") == within* && $(within "$fdi" "$fde") == within* ]] \
  || { echo "FAILED: the daemon kept threads or descriptors after every sandbox was removed"; verdict=1; }
(( qne == 0 )) || { echo "FAILED: $qne QEMU processes left with every sandbox removed"; verdict=1; }
exit $verdict
