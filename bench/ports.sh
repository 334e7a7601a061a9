#!/usr/bin/env bash
# Published ports (issue 38): a 100 MB download from a server in the guest through a published port on the host's
# loopback, against `kosa8 cp` of the same file out of the guest (the baseline, in the same run).
#
#   bench/ports.sh [ROUNDS] [MB]
#
# One sandbox (`create --workspace none -p 8000`) writes MB MiB of random bytes to /srv/big and serves /srv with
# python3's http.server on port 8000; each round times `curl -o /dev/null` of it through the published port, then
# `kosa8 cp ID:/srv/big` into a temporary file. ROUNDS defaults to 3, MB to 100. Under TCG the guest's python
# serving the file is part of what is measured, as the agent reading the file is part of `cp`. Uses the kosa8 home
# of the environment (KOSA8_HOME, else the XDG default). Prints each round and the medians, and writes the result
# under bench/results/ (bench/lib.sh).
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init ports "$@"
rounds=${1:-3}
mb=${2:-100}

tmp=$(mktemp -d /tmp/kosa8-bench-ports.XXXXXX)
id=$("$k" create --workspace none -p 8000 2>"$tmp/create.err")
trap '"$k" rm -f "$id" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
out=$(sed -n 's/.*publishes \(127\.0\.0\.1:[0-9]*\)->8000.*/\1/p' "$tmp/create.err")
[[ -n $out ]] || { echo "no published port in create's output: $(cat "$tmp/create.err")" >&2; exit 1; }
"$k" exec "$id" -- sh -c "mkdir -p /srv && head -c $((mb << 20)) /dev/urandom > /srv/big && cd /srv \
  && (nohup python3 -m http.server 8000 > /dev/null 2>&1 &)"
for _ in $(seq 1 60); do curl -sf -o /dev/null "http://$out/" && break; sleep 1; done

port_ms="" cp_ms=""
for ((r = 1; r <= rounds; r++)); do
  t0=$(date +%s%N)
  curl -sSf -o "$tmp/port" "http://$out/big"
  t1=$(date +%s%N)
  "$k" cp "$id:/srv/big" "$tmp/cp"
  t2=$(date +%s%N)
  [[ $(stat -c %s "$tmp/port") -eq $((mb << 20)) && $(stat -c %s "$tmp/cp") -eq $((mb << 20)) ]] \
    || { echo "round $r: a download came short" >&2; exit 1; }
  cmp -s "$tmp/port" "$tmp/cp" || { echo "round $r: the two copies differ" >&2; exit 1; }
  p=$(( (t1 - t0) / 1000000 )) c=$(( (t2 - t1) / 1000000 ))
  echo "round $r: port ${p} ms ($(( mb * 1000 / (p > 0 ? p : 1) )) MB/s), cp ${c} ms ($(( mb * 1000 / (c > 0 ? c : 1) )) MB/s)"
  port_ms+="$p " cp_ms+="$c "
  rm -f "$tmp/port" "$tmp/cp"
done
echo "medians: port $(median <<<"$port_ms") ms, cp $(median <<<"$cp_ms") ms"
bench_row name="$mb MiB download from the guest's http.server through a published port (curl)" unit=ms \
  samples="$port_ms" baseline_name="\`kosa8 cp ID:FILE\` of the same file" baseline_samples="$cp_ms"
bench_write
