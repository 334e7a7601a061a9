#!/usr/bin/env bash
# Checkpoint benchmark (issue 6): checkpoint and rewind of a running sandbox whose guest dirties memory, with a
# workspace of many files, for several guest sizes. Each row carries its own baseline from the same run: a cold
# start of the same sandbox (boot, agent, workspace mount), what getting a machine back costs without checkpoints.
# The pause is the time the guest's processes stand frozen; "stored" is when the checkpoint is committed, after
# QEMU has written RAM in the background while the guest ran on.
#
#   bench/checkpoint.sh [ROUNDS] [MEMORY_MIB...]
#
# Defaults: 5 checkpoints and 5 rewinds per size; sizes 512 1024 2048. The workspace: 10,000 files, about
# 200 MB (9,990 of 2 KiB and 10 of 18 MiB); between checkpoints 10 small files change. Uses the kosa8 home of
# the environment (KOSA8_HOME, else the XDG default) and its daemon; the image must exist. Prints Markdown
# tables on stdout and writes its result under bench/results/ (bench/lib.sh); progress goes to stderr.
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init checkpoint "$@"
rounds=${1:-5}
shift $(( $# < 1 ? $# : 1 ))
sizes=("$@")
(( ${#sizes[@]} )) || sizes=(512 1024 2048)
bench_java CheckpointBench.java "$k" "$rounds" "${sizes[@]}"
