#!/usr/bin/env bash
# Workspace benchmark (issue 3): kosa8's shared folder against QEMU's own virtio-9p, side by side in one
# guest booted once, the same workloads on both mounts, alternating, timed inside the guest.
#
#   bench/workspace.sh [ROUNDS] [SIZE_MIB] [FILES] [more options of WorkspaceBench.java]
#
# Defaults: 3 rounds (medians quoted), 1024 MiB for the sequential rows, 10000 files for the small-file and
# git rows; the `tar x` row extracts the java.base sources of the JDK's src.zip unless --tree DIR is given.
# Further options (see bench/WorkspaceBench.java): --profile, --msize N, --dir PARENT, --accel, --cpus,
# --memory-mib. Uses the kosa8 home of the environment (KOSA8_HOME, else the XDG default) and builds the
# guest image there if it is missing or out of date. Prints a Markdown table on stdout and writes its result
# under bench/results/ (bench/lib.sh); progress goes to stderr.
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init workspace "$@"
rounds=${1:-3}
size=${2:-1024}
files=${3:-10000}
shift $(( $# < 3 ? $# : 3 ))
# the JVM that serves kosa8's side runs with the daemon's GC (DaemonLauncher)
bench_java WorkspaceBench.java --rounds "$rounds" --size-mib "$size" --files "$files" "$@"
