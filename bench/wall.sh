#!/usr/bin/env bash
# The wall time of the commands a user or an agent waits for (issue 37), each with a baseline from the same run:
# `kosa8 --version` and `kosa8 ls` against a bare JVM start with the launcher's flags; `kosa8 exec ID -- true`
# against the guest's own cost of starting `true`; `kosa8 run -- true` (from the template) against that exec;
# `kosa8 checkpoint` against the pause the daemon reports, and when each checkpoint committed; `kosa8 rewind`
# against the rewind the daemon reports. The sandbox: 1 GiB, a folder of FILES files of 2 KiB, a guest process
# rewriting 32 MiB all along, 10 files changed between two checkpoints.
#
#   bench/wall.sh [RUNS] [FILES] [ROW...]
#
# RUNS: timings per figure, medians quoted (default 7). FILES: default 10000. ROW: cli, sandbox (default both).
# Uses the kosa8 home of the environment (KOSA8_HOME, else the XDG default) and its daemon; the image must exist.
# Prints a Markdown table on stdout and writes its result under bench/results/ (bench/lib.sh); progress on stderr.
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init wall "$@"
runs=${1:-7}
files=${2:-10000}
shift $(( $# < 2 ? $# : 2 ))
bench_java WallBench.java "$k" "$JAVA_HOME/bin/java" "$runs" "$files" "$@"
