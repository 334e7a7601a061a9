#!/usr/bin/env bash
# Egress benchmark (issue 4): the broker's added latency and throughput for TLS, from the host, against one
# loopback HTTPS server: direct, through a socat relay (the hop QEMU's guestfwd adds for every guest
# connection: the baseline), and through the relay into the broker. See bench/EgressBench.java.
#
#   bench/egress.sh [ROUNDS] [REQUESTS] [BULK_MB] [--curl-only] [--warm-mb N] [--guest [--fresh N]]
#
# Defaults: 5 rounds, 2000 keep-alive requests per path and round, a 100 MB download per path and round.
# Further options (from the 4th argument on): --curl-only (skips the JDK client's rows, for quick A/B runs),
# --warm-mb N (MB each path moves before anything is counted; default 2000, which the JIT needs to settle: smaller
# is for trying the bench out, not for figures; with --guest, default 300), --guest (the rows through a real guest
# instead, and nothing else: the bench's own upstream warmed first by WARM_MB (at least 100) downloaded on the host,
# the fresh sandbox's first BULK_MB download from a daemon just started, then after WARM_MB more, ROUNDS rounds of
# REQUESTS connections, each timed from its connect to the end of a small answer, and a BULK_MB download, in a
# sandbox of the build's kosa8 (bench/EgressGuestRows.java); last the first BULK_MB download of each of --fresh N
# (default 3) more new sandboxes from the daemon now warm. The path before issue 34 against the one after:
# bench/ab.sh egress BASE NEW 3 200 50 --guest). Prints Markdown tables on stdout and writes its result under
# bench/results/ (bench/lib.sh); progress goes to stderr. Needs socat and curl.
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init egress "$@"
main=EgressBench.java
for a in "${@:4}"; do [[ $a == --guest ]] && main=EgressGuestRows.java; done # compiles against any build's jar
exec "$JAVA_HOME/bin/java" -XX:+UseSerialGC --enable-native-access=ALL-UNNAMED -Dbench.source="$repo/bench/$main" \
  -cp "$jar" "$repo/bench/$main" --rounds "${1:-5}" --requests "${2:-2000}" --bulk-mb "${3:-100}" "${@:4}"
