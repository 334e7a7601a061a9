#!/usr/bin/env bash
# Fork N (issue 33): `kosa8 fork ID CHECKPOINT --count N` of a sandbox whose folder holds MIB MiB in FILES files,
# as the caller waits, and the disk the forks add (their folder copies, and their sandbox directories: disk
# overlay, machine state links, snapshot store), against `cp -a` of the folder N times (the time and disk of plain
# copies) in the same run.
#
#   bench/fork.sh [N] [FILES] [MIB]        defaults: 4 10000 200 (the issue's figure)
#   BENCH_FORK_FOLDER=auto|copy|view       the forks' --folder (default auto: clones where the file system has
#                                          them, else copy-on-write views); each fork's folder goes where kosa8
#                                          puts it by default (beside the original's, for a copy)
#
# Uses the kosa8 home of the environment (KOSA8_HOME, else the XDG default) and its daemon; the image must exist.
# The folder and the copies go under BENCH_TMP (default /tmp): to measure clones, put it and KOSA8_HOME on one
# file system with reflinks (XFS, Btrfs), e.g. a loop-mounted XFS (BENCHMARKS.md names the run).
# The sandbox (1 GiB) and its forks are removed at the end. Writes its result under bench/results/ (bench/lib.sh);
# progress on stderr.
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init fork "$@"
n=${1:-4}
files=${2:-10000}
mib=${3:-200}
mode=${BENCH_FORK_FOLDER:-auto}
if [[ -n ${KOSA8_HOME:-} ]]; then data=$KOSA8_HOME/data; else data=${XDG_DATA_HOME:-$HOME/.local/share}/kosa8; fi

work=$(mktemp -d "${BENCH_TMP:-/tmp}/kosa8-bench-fork.XXXXXX")
id="" forks=()
cleanup() {
  [[ -n $id ]] && "$k" rm -f "$id" "${forks[@]}" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
say() { echo "$*" >&2; }
now() { date +%s%N; }
kib() { du -sk "$@" | awk '{s += $1} END {print s}'; }
# Blocks the file system holding $work has in use (KiB), after a sync: what clones share, du counts once per
# file and df once. Only meaningful on a file system nothing else writes to meanwhile (a dedicated one).
fs_kib() { sync -f "$work"; df --output=used -k "$work" | tail -1 | tr -d ' '; }

say "making a folder of $files files, $mib MiB"
python3 - "$work/folder" "$files" "$mib" <<'EOF'
import os, sys
root, files, mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
size = (mib << 20) // files
for i in range(files):
    d = os.path.join(root, "d%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        f.write(os.urandom(size))
EOF
id=$("$k" create --memory 1G --workspace "$work/folder")
cp=$("$k" checkpoint --wait "$id" -m "before the tries")
before=$(kib "$data/sandboxes")

fs_type=$(stat -f -c %T "$work")
say "fork --count $n --folder $mode (the folder's file system: $fs_type)"
fs_before=$(fs_kib)
t0=$(now)
mapfile -t forks < <("$k" fork "$id" "$cp" --count "$n" --folder "$mode" 2> >(tee "$work/fork.err" >&2))
t1=$(now)
fork_ms=$(( (t1 - t0) / 1000000 ))
made=$(grep -c "copy-on-write view" "$work/fork.err" || true)
kind=$([[ $made -eq $n ]] && echo "copy-on-write views" || echo "copies")
folders_kib=0
if compgen -G "$work/folder-*" >/dev/null; then folders_kib=$(kib "$work"/folder-*); fi
bases_kib=0
if [[ -d $data/folder-bases ]]; then bases_kib=$(kib "$data/folder-bases"); fi
sandboxes_kib=$(( $(kib "$data/sandboxes") - before ))
fs_forks_kib=$(( $(fs_kib) - fs_before ))

say "cp -a of the folder, $n times"
fs_before=$(fs_kib)
t0=$(now)
for ((i = 1; i <= n; i++)); do cp -a "$work/folder" "$work/copy-$i"; done
sync -f "$work"
t1=$(now)
cp_ms=$(( (t1 - t0) / 1000000 ))
cp_kib=$(kib "$work"/copy-*)
fs_cp_kib=$(( $(fs_kib) - fs_before ))

echo "fork --count $n ($kind): $fork_ms ms; the forks' folders ${folders_kib} KiB, their shared base ${bases_kib} KiB, their sandbox directories ${sandboxes_kib} KiB"
echo "cp -a x$n: $cp_ms ms, ${cp_kib} KiB"
echo "blocks the $fs_type file system gained: forks ${fs_forks_kib} KiB, cp -a ${fs_cp_kib} KiB"
bench_row name="\`fork --count $n\` ($kind) of a 1 GiB sandbox with a $mib MiB, $files-file folder, as the caller waits" \
  unit=ms samples="$fork_ms" baseline_name="\`cp -a\` of the folder $n times" baseline="$cp_ms" goal="none set"
bench_row name="disk the $n forks add ($kind: folders, shared base, sandbox directories)" unit=KiB \
  samples="$(( folders_kib + bases_kib + sandboxes_kib ))" baseline_name="$n \`cp -a\` copies of the folder" baseline="$cp_kib" \
  goal="none set (du counts a clone's blocks in full: see the next row)"
bench_row name="blocks the $fs_type file system holding the folder and the kosa8 home gained for the $n forks" \
  unit=KiB samples="$fs_forks_kib" baseline_name="for $n \`cp -a\` copies (coreutils clones where it can)" \
  baseline="$fs_cp_kib" goal="not N full copies of the folder"
bench_write
