#!/usr/bin/env bash
# The held-path check's cost (issue 33): the default policy's per-path check, as the folder server runs it on
# each change, over every path of a real git checkout (this repository, .git included), against what one
# change costs a guest through the folder under TCG (the workspace benchmark's create row: 2,000 files, each an
# open, a 6-byte write and a close), so the ratio is the share of a change's time the check can take.
#
#   bench/held-policy.sh [TREE] [CREATE_MS_PER_FILE]
#
# TREE defaults to this checkout; CREATE_MS_PER_FILE to 4.28 (BENCHMARKS.md, the holding rows: 8.57 s for
# 2,000 files). Writes its result under bench/results/ (bench/lib.sh).
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init held-policy "$@"
tree=${1:-$repo}
create_ms=${2:-4.28}
out=$("$JAVA_HOME/bin/java" -cp "$jar" "$repo/bench/HeldPolicyBench.java" "$tree")
echo "$out"
paths=$(awk '/^paths/ {print $2}' <<<"$out")
held=$(awk '/^held/ {print $2}' <<<"$out")
ns=$(awk '/^nsPerPath/ {print $2}' <<<"$out")
create_ns=$(awk -v m="$create_ms" 'BEGIN {printf "%.0f", m * 1000000}')
bench_row name="the held-path check per path (classify and guards, default policy), over the $paths paths of a git checkout ($held under a held class)" \
  unit=ns samples="$ns" baseline_name="one file created through the folder under TCG (workspace benchmark, create row)" \
  baseline="$create_ns" goal="holding costs ≤ 5 % of the metadata rows"
bench_write accelerator="none: no VM (the baseline is the workspace benchmark's)"
