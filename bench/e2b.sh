#!/usr/bin/env bash
# The E2B SDK against kosa8 (issue 39): `commands.run('true')` round trips, and a MB MiB `files.write` upload and
# `files.read` download, through the pinned E2B JS SDK (host/src/test/e2b-client) and the daemon's E2B listener;
# against the Java SDK (bench/SdkOps.java: `exec("true")`, `files().write`, `files().read`) and kosa8's own CLI
# (`kosa8 exec ID -- true`, `kosa8 cp` in and out) for the same operations, in the same run.
#
#   bench/e2b.sh [ROUNDS] [MB] [RUNS]
#
# ROUNDS (default 3) transfers of MB (default 100) MiB each way, RUNS (default 20) round trips. Two sandboxes, one
# after the other: the SDK's (made through E2B), then the CLI's (`create --workspace none`). Needs node and npm
# (`npm ci` in the test package on first use). Uses the kosa8 home of the environment (KOSA8_HOME, else the XDG
# default). Prints the medians and writes the result under bench/results/ (bench/lib.sh).
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init e2b "$@"
rounds=${1:-3}
mb=${2:-100}
runs=${3:-20}
client="$repo/host/src/test/e2b-client"
[[ -d $client/node_modules/e2b ]] || (cd "$client" && npm ci --no-audit --no-fund >/dev/null)

eval "$("$k" e2b env)"
sdk=$(cd "$client" && node bench.mjs "$rounds" "$mb" "$runs")
sdk_run=$(node -e 'console.log(JSON.parse(process.argv[1]).run.join(" "))' "$sdk")
sdk_up=$(node -e 'console.log(JSON.parse(process.argv[1]).up.join(" "))' "$sdk")
sdk_down=$(node -e 'console.log(JSON.parse(process.argv[1]).down.join(" "))' "$sdk")

tmp=$(mktemp -d /tmp/kosa8-bench-e2b.XXXXXX)
id=$("$k" create --workspace none 2>/dev/null)
trap '"$k" rm -f "$id" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
head -c $((mb << 20)) /dev/urandom > "$tmp/big"
"$k" exec "$id" -- true
cli_run="" cli_up="" cli_down=""
for ((i = 0; i < runs; i++)); do
  t0=$(date +%s%N); "$k" exec "$id" -- true; t1=$(date +%s%N)
  cli_run+="$(( (t1 - t0) / 1000000 )) "
done
for ((r = 1; r <= rounds; r++)); do
  t0=$(date +%s%N); "$k" cp "$tmp/big" "$id:/tmp/big"; t1=$(date +%s%N)
  "$k" cp "$id:/tmp/big" "$tmp/back"; t2=$(date +%s%N)
  cmp -s "$tmp/big" "$tmp/back" || { echo "round $r: kosa8 cp's copy differs" >&2; exit 1; }
  cli_up+="$(( (t1 - t0) / 1000000 )) " cli_down+="$(( (t2 - t1) / 1000000 )) "
  rm -f "$tmp/back"
done
java_ops=$("$JAVA_HOME/bin/java" -cp "$jar" "$repo/bench/SdkOps.java" "$id" "$runs" "$rounds" "$tmp/big")
java_run=$(sed -n 's/^run //p' <<<"$java_ops")
java_up=$(sed -n 's/^up //p' <<<"$java_ops")
java_down=$(sed -n 's/^down //p' <<<"$java_ops")
echo "Java SDK: exec true $(median <<<"$java_run") ms, write $(median <<<"$java_up") ms, read $(median <<<"$java_down") ms"
echo "commands.run('true'): median $(median <<<"$sdk_run") ms; kosa8 exec: $(median <<<"$cli_run") ms"
echo "files.write $mb MiB: median $(median <<<"$sdk_up") ms; kosa8 cp in: $(median <<<"$cli_up") ms"
echo "files.read $mb MiB: median $(median <<<"$sdk_down") ms; kosa8 cp out: $(median <<<"$cli_down") ms"
bench_row name="E2B SDK commands.run('true') round trip" unit=ms samples="$sdk_run" \
  baseline_name="\`kosa8 exec ID -- true\` (a CLI process each)" baseline_samples="$cli_run"
bench_row name="E2B SDK files.write of $mb MiB (multipart)" unit=ms samples="$sdk_up" \
  baseline_name="\`kosa8 cp FILE ID:PATH\`" baseline_samples="$cli_up"
bench_row name="E2B SDK files.read of $mb MiB" unit=ms samples="$sdk_down" \
  baseline_name="\`kosa8 cp ID:PATH FILE\`" baseline_samples="$cli_down"
bench_row name="E2B SDK commands.run('true') round trip, against the Java SDK" unit=ms samples="$sdk_run" \
  baseline_name="the Java SDK's \`Sandbox.exec(\"true\")\`, warm JVM" baseline_samples="$java_run"
bench_row name="E2B SDK files.write of $mb MiB, against the Java SDK" unit=ms samples="$sdk_up" \
  baseline_name="the Java SDK's \`files().write\`" baseline_samples="$java_up"
bench_row name="E2B SDK files.read of $mb MiB, against the Java SDK" unit=ms samples="$sdk_down" \
  baseline_name="the Java SDK's \`files().read\`" baseline_samples="$java_down"
bench_write
