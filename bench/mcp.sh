#!/usr/bin/env bash
# MCP (issue 38): an exec round trip through the MCP tool run_command from a warm client (the official TypeScript
# SDK's, one session to `kosa8 mcp`), against the same command from a warm Java client straight to the daemon
# (bench/ExecRoundTrip.java: the in-daemon figure, the baseline) and through the CLI (`kosa8 exec ID -- true`, a JVM
# per call), on one running sandbox, in one run; and the same MCP call over Streamable HTTP (`kosa8 mcp --http`).
#
#   bench/mcp.sh [N]
#
# N round trips each (default 30), after five of warm-up. Needs node and npm: the client is installed with
# `npm ci` from host/src/test/mcp-client's lock into host/target/mcp-client (as McpIT does; kept for the next run).
# Uses the kosa8 home of the environment (KOSA8_HOME, else the XDG default). Prints the medians and writes the
# result under bench/results/ (bench/lib.sh).
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init mcp "$@"
n=${1:-30}

client="$build/host/target/mcp-client"
mkdir -p "$client"
cp "$build/host/src/test/mcp-client/package.json" "$build/host/src/test/mcp-client/package-lock.json" "$client/"
if ! cmp -s "$client/package-lock.json" "$client/node_modules/.kosa8-installed-lock.json"; then
  (cd "$client" && npm ci --no-audit --no-fund >&2 && cp package-lock.json node_modules/.kosa8-installed-lock.json)
fi
cp "$repo/bench/mcp-exec.mjs" "$client/"

id=$("$k" create --workspace none)
trap '"$k" rm -f "$id" >/dev/null 2>&1 || true' EXIT

daemon=$("$JAVA_HOME/bin/java" -cp "$jar" "$repo/bench/ExecRoundTrip.java" "$id" "$n" | sed -n 's/^samples (ms): //p')
kosa=$(printf '["%s","-XX:+UseSerialGC","-XX:TieredStopAtLevel=1","--enable-native-access=ALL-UNNAMED","-jar","%s"]' \
  "$JAVA_HOME/bin/java" "$jar")
mcp=$(node "$client/mcp-exec.mjs" "$id" "$n" "$kosa")
mcphttp=$(node "$client/mcp-exec.mjs" "$id" "$n" "$kosa" http)
cli=""
for _ in 1 2 3; do "$k" exec "$id" -- true; done
for ((i = 1; i <= n; i++)); do
  t0=$(date +%s%N)
  "$k" exec "$id" -- true
  cli+="$(( ($(date +%s%N) - t0) / 1000000 )) "
done
echo "medians: MCP run_command $(median <<<"$mcp") ms, over HTTP $(median <<<"$mcphttp") ms, daemon (warm Java client) $(median <<<"$daemon") ms," \
  "CLI $(median <<<"$cli") ms"
bench_row name="exec round trip through MCP run_command (true), warm TypeScript client, p50" unit=ms \
  samples="$mcp" baseline_name="the same exec from a warm Java client straight to the daemon" \
  baseline_samples="$daemon" goal="≤ 1.2× the daemon's"
bench_row name="exec round trip through MCP run_command (true) over Streamable HTTP (kosa8 mcp --http), warm TypeScript client, p50" \
  unit=ms samples="$mcphttp" baseline_name="the same exec from a warm Java client straight to the daemon" \
  baseline_samples="$daemon" goal="≤ 1.2× the daemon's"
bench_row name="\`kosa8 exec ID -- true\` (a JVM per call), p50" unit=ms samples="$cli" \
  baseline_name="the same exec from a warm Java client straight to the daemon" baseline_samples="$daemon"
bench_write
