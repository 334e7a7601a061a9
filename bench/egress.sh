#!/usr/bin/env bash
# Egress benchmark (issue 4): the broker's added latency and throughput for TLS, from the host, against one
# loopback HTTPS server: direct, through a socat relay (the hop QEMU's guestfwd adds for every guest
# connection: the baseline), and through the relay into the broker. See bench/EgressBench.java.
#
#   bench/egress.sh [ROUNDS] [REQUESTS] [BULK_MB] [--curl-only]
#
# Defaults: 5 rounds, 2000 keep-alive requests per path and round, a 100 MB download per path and round.
# Prints a Markdown table for BENCHMARKS.md on stdout; progress goes to stderr. Needs socat.
set -euo pipefail
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
source "$repo/scripts/host-setup.sh"
select_java25
"$repo/kosa8" --version >/dev/null   # builds the jar if needed
exec "$JAVA_HOME/bin/java" -XX:+UseSerialGC --enable-native-access=ALL-UNNAMED -Dbench.source="$repo/bench/EgressBench.java" -cp "$repo/host/target/kosa8.jar" \
  "$repo/bench/EgressBench.java" --rounds "${1:-5}" --requests "${2:-2000}" --bulk-mb "${3:-100}" "${@:4}"
