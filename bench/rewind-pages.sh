#!/usr/bin/env bash
# Rewinding from pages against rewinding from one stream file (issue 6): one checkpoint of a guest that dirties
# half its memory, rewound to alternately (ABBA) from its pages (the normal path: loaded lazily where the host
# allows it, docs/checkpoints.md) and from the same stream as one file (loaded whole before the guest runs, sent
# with sendfile, as before pages existed), in one run on one sandbox.
#
#   bench/rewind-pages.sh [ROUNDS] [MEMORY_MIB...]
#
# Defaults: 4 counted rewinds of each kind (8 run); 1024 MiB. Uses the kosa8 home of the environment (KOSA8_HOME, else the XDG
# default) and its daemon; the image must exist. Prints a Markdown table on stdout and writes its result under
# bench/results/ (bench/lib.sh); per-rewind steps on stderr.
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init rewind-pages "$@"
rounds=${1:-4}
shift $(( $# < 1 ? $# : 1 ))
sizes=("$@")
(( ${#sizes[@]} )) || sizes=(1024)
bench_java RewindPagesBench.java "$k" "$rounds" "${sizes[@]}"
