#!/usr/bin/env bash
# The folder at the speed of the guest's own disk (issue 41): realistic operations on a copy of this repository
# (its files and .git) in the shared folder, against the same operations on a copy on the guest's root disk in the
# same sandbox, in two sandboxes side by side: one with the folder cached in the guest (the default), one without
# (--workspace-transport uncached). Rounds alternate between the sandboxes; each operation is timed inside the
# guest (date +%s%N), so the figures are the guest's, not the CLI's.
#
#   bench/folder-cache.sh [ROUNDS]        (default 3; medians quoted)
#
# Rows: git status, git diff, grep -r, find -name, reading every file cold (the guest's caches dropped first) and
# again warm, tar x of 10,000 small files (write-heavy), and a build's reads and writes (bench/folder-cache.sh's
# build.py: every .java source read, an output written per source, all read back into one archive; the guest
# image has no compiler). Not measured: npm ci (the base image has no npm, and the sandbox no network). Prints a Markdown table on stdout and writes its result
# under bench/results/ (bench/lib.sh); progress goes to stderr. Uses the kosa8 home of the environment.
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init folder-cache "$@"
rounds=${1:-3}
work=$(mktemp -d /tmp/kosa8-folder-cache.XXXXXX)
ids=()
cleanup() {
  for id in "${ids[@]}"; do "$k" rm -f "$id" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

cat > "$work/ops.sh" <<'SH'
# ops.sh DIR: times each operation on the repository copy in DIR; prints "name ms" lines
set -eu
cd "$1"
t() { s=$(date +%s%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s%N); echo "$name $(( (e - s) / 1000000 ))"; }
git config --global --add safe.directory '*'
name=git-status; t git status
name=git-diff; t git diff HEAD
name=grep; t grep -r "class " --include=*.java .
name=find; t find . -name '*.md'
sync; echo 3 > /proc/sys/vm/drop_caches
name=read-cold; t sh -c 'find . -type f -print0 | xargs -0 cat'
name=read-warm; t sh -c 'find . -type f -print0 | xargs -0 cat'
rm -rf tarx; mkdir tarx
name=tar-x; t tar -xf /root/small.tar -C tarx
rm -rf tarx
name=build; t python3 /root/build.py . out
rm -rf out
SH
cat > "$work/build.py" <<'PY'
# build.py SRC OUT: a build's reads and writes, in one process (no compiler is in the guest image): reads every
# .java source, writes one output per source under OUT (its bytes upper-cased, as a compiler writes a class file
# per source), then reads every output back (as a packager does) and writes one archive of them
import os, sys
src, out = sys.argv[1], sys.argv[2]
sources = []
for d, dirs, files in os.walk(src):
    dirs[:] = [x for x in dirs if x not in ('.git', out)]
    sources += [os.path.join(d, f) for f in files if f.endswith('.java')]
os.makedirs(out, exist_ok=True)
outs = []
for i, f in enumerate(sorted(sources)):
    with open(f, 'rb') as r:
        data = r.read()
    o = os.path.join(out, '%d.class' % i)
    with open(o, 'wb') as w:
        w.write(data.upper())
    outs.append(o)
with open(os.path.join(out, 'all.jar'), 'wb') as jar:
    for o in outs:
        with open(o, 'rb') as r:
            jar.write(r.read())
PY
cat > "$work/prepare.sh" <<'SH'
# prepare.sh: the root disk's copy of the folder, and a tarball of 10,000 small files
set -eu
rm -rf /root/copy && cp -a /workspace /root/copy
mkdir -p /tmp/small && cd /tmp/small
python3 -c "
import os
for i in range(10000):
    d = 'd%d' % (i % 100); os.makedirs(d, exist_ok=True)
    open(os.path.join(d, 'f%d' % i), 'w').write('x' * (i % 900))"
tar -cf /root/small.tar . && rm -rf /tmp/small
SH

echo "copying the repository twice into $work" >&2
for side in cached plain; do
  git clone -q "$repo" "$work/$side"
done
for side in cached plain; do
  transport=uncached
  [[ $side == cached ]] && transport=auto
  echo "creating the $side sandbox" >&2
  id=$("$k" create --net none --workspace "$work/$side" --workspace-transport "$transport" | tail -1)
  ids+=("$id")
  "$k" cp "$work/ops.sh" "$id:/root/ops.sh" >/dev/null
  "$k" cp "$work/prepare.sh" "$id:/root/prepare.sh" >/dev/null
  "$k" cp "$work/build.py" "$id:/root/build.py" >/dev/null
  "$k" exec "$id" -- sh /root/prepare.sh >&2
done

declare -A samples
for ((r = 1; r <= rounds; r++)); do
  for i in 0 1; do
    side=$([[ $i == 0 ]] && echo cached || echo plain)
    for where in workspace disk; do
      dir=/workspace
      [[ $where == disk ]] && dir=/root/copy
      echo "round $r: $side sandbox, $where" >&2
      while read -r name ms; do
        samples["$side $where $name"]+="$ms "
      done < <("$k" exec "${ids[$i]}" -- sh /root/ops.sh "$dir")
    done
  done
done

# A host edit seen by a guest process already running (no command start, so no sync: the notices' own latency):
# the guest polls a file every millisecond and, on each new value, writes and fsyncs an answer; the host times
# from its edit to the answer. An upper bound of the notice latency (it includes the guest's fsync and both
# polls); the uncached folder, where every read crosses, is the floor of the same loop.
cat > "$work/watch.py" <<'PY'
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
def answer(v):
    with open(os.path.join(d, 'ack'), 'w') as f:
        f.write(v)
        f.flush()
        os.fsync(f.fileno())
answer('ready')
seen = 0
while seen < n:
    try:
        with open(os.path.join(d, 'edit')) as f:
            v = f.read()
    except FileNotFoundError:
        v = ''
    if v == 'v%d' % (seen + 1):
        seen += 1
        answer(v)
    time.sleep(0.001)
PY
edits=20
for i in 0 1; do
  side=$([[ $i == 0 ]] && echo cached || echo plain)
  dir="$work/$side/latency"
  mkdir -p "$dir"
  rm -f "$dir/ack" "$dir/edit"
  "$k" cp "$work/watch.py" "${ids[$i]}:/root/watch.py" >/dev/null
  "$k" exec "${ids[$i]}" -- python3 /root/watch.py /workspace/latency "$edits" >/dev/null 2>&1 &
  watcher=$!
  for _ in $(seq 1 6000); do [[ $(cat "$dir/ack" 2>/dev/null) == ready ]] && break; sleep 0.01; done
  for ((e = 1; e <= edits; e++)); do
    sleep 0.2
    start=$(date +%s%N)
    printf 'v%d' "$e" > "$dir/edit.tmp" && mv "$dir/edit.tmp" "$dir/edit"
    until [[ $(cat "$dir/ack" 2>/dev/null) == "v$e" ]]; do
      (( $(date +%s%N) - start > 10000000000 )) && { echo "edit $e not seen within 10 s ($side)" >&2; exit 1; }
    done
    samples["$side workspace notice"]+="$(( ($(date +%s%N) - start) / 1000000 )) "
  done
  wait "$watcher" || true
done

printf '| operation | cached folder (ms) | guest disk, same sandbox (ms) | cached / disk | uncached folder (ms) | uncached / disk |\n'
printf '|---|---|---|---|---|---|\n'
for name in git-status git-diff grep find read-cold read-warm tar-x build; do
  c=$(echo "${samples["cached workspace $name"]}" | median)
  cd=$(echo "${samples["cached disk $name"]}" | median)
  p=$(echo "${samples["plain workspace $name"]}" | median)
  pd=$(echo "${samples["plain disk $name"]}" | median)
  goal="<= 1.5"
  [[ $name == tar-x || $name == build ]] && goal="<= 2"
  awk -v n="$name" -v c="$c" -v cd="$cd" -v p="$p" -v pd="$pd" \
    'BEGIN { printf "| %s | %s | %s | %.2f | %s | %.2f |\n", n, c, cd, c / cd, p, p / pd }'
  bench_row "name=$name, cached folder" unit=ms "samples=${samples["cached workspace $name"]}" \
    "baseline_name=the guest's own disk, same sandbox, same run" "baseline_samples=${samples["cached disk $name"]}" \
    "goal=$goal"
  bench_row "name=$name, uncached folder" unit=ms "samples=${samples["plain workspace $name"]}" \
    "baseline_name=the guest's own disk, same sandbox, same run" "baseline_samples=${samples["plain disk $name"]}" \
    "goal=none: the default mount, for comparison"
done
c=$(echo "${samples["cached workspace notice"]}" | median)
p=$(echo "${samples["plain workspace notice"]}" | median)
awk -v c="$c" -v p="$p" 'BEGIN { printf "| host edit seen by a running guest process (upper bound) | %s | | | %s (every read crosses) | |\n", c, p }'
bench_row "name=host edit seen by a running guest process, cached folder (upper bound: with the guest's fsync'd answer)" \
  unit=ms "samples=${samples["cached workspace notice"]}" \
  "baseline_name=the same loop on the uncached folder, where every read crosses (the loop's floor), same run" \
  "baseline_samples=${samples["plain workspace notice"]}" "goal=<= 100 ms"
bench_write
