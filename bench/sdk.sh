#!/usr/bin/env bash
# Exec round trip through the Java SDK and through the CLI (issue 38's benchmark), each against the thinnest
# client the daemon has (raw agent-protocol frames on its socket, from a warm JVM), in the same run.
#
#   bench/sdk.sh [N] [CLI_RUNS]
#
# One sandbox (`create --workspace none`); bench/SdkRoundTrip.java alternates `Sandbox.exec("true")` with the raw
# exec N times (default 50) in one warm JVM; then `kosa8 exec ID -- true` runs CLI_RUNS times (default 10), each a
# new JVM, as an agent calling the CLI pays it. Goal: the SDK within 1.2x of the raw figure. Uses the kosa8 home of
# the environment (KOSA8_HOME, else the XDG default); writes the result under bench/results/ (bench/lib.sh).
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init sdk "$@"
n=${1:-50}
cli_runs=${2:-10}

id=$("$k" create --workspace none)
trap '"$k" rm -f "$id" >/dev/null 2>&1 || true' EXIT
out=$("$JAVA_HOME/bin/java" -cp "$jar" "$repo/bench/SdkRoundTrip.java" "$id" "$n")
sdk=$(sed -n 's/^sdk //p' <<<"$out")
raw=$(sed -n 's/^raw //p' <<<"$out")
cli=""
for ((i = 0; i < cli_runs; i++)); do
  t0=$(date +%s%N)
  "$k" exec "$id" -- true
  cli+="$(( ($(date +%s%N) - t0) / 1000000 )) "
done
echo "p50: sdk $(median <<<"$sdk") ms, raw frames $(median <<<"$raw") ms, cli $(median <<<"$cli") ms"
bench_row name="exec round trip through the Java SDK (\`Sandbox.exec(\"true\")\`), warm JVM" unit=ms \
  samples="$sdk" baseline_name="the same exec as raw agent-protocol frames on the daemon's socket" baseline_samples="$raw" \
  goal="≤ 1.2x"
bench_row name="exec round trip through the CLI (\`kosa8 exec ID -- true\`), a JVM per call" unit=ms \
  samples="$cli" baseline_name="the same exec as raw agent-protocol frames on the daemon's socket" baseline_samples="$raw"
bench_write
