#!/usr/bin/env bash
# Any benchmark on two builds side by side, for judging a change against the build before it on one machine in
# one sitting (the machines here are shared and noisy: figures from different runs do not compare).
#
#   bench/ab.sh BENCH COMMIT_A COMMIT_B [ARGS...]
#   bench/ab.sh --compare A.json... -- B.json...
#
# BENCH is a bench script's name without `.sh` (folder-scan, foundation, egress, rewind, create, checkpoint,
# rewind-pages, workspace, wake-trace); ARGS are its arguments. A commit is anything git names (HEAD~1, a hash, a
# branch) or the path of a checkout, taken as it is, uncommitted changes and all. Each commit gets a git worktree
# under a directory (AB_DIR, else a new one under /tmp, removed at the end), built there before any
# run. Then the benchmark runs AB_RUNS times per build, interleaved A, B, A, B (default 2; 1 for checkpoint and
# workspace, whose runs take tens of minutes: A then B), each run a fresh process of this checkout's bench script
# measuring that build's kosa8 (KOSA8_BENCH_BUILD, bench/lib.sh), so both builds are measured by the same bench code;
# a bench program that no longer compiles against an old build's jar cannot measure it this way (then run each
# commit's own bench and compare the two JSON results with --compare). Each build has its own kosa8 home,
# KOSA8_HOME_A and KOSA8_HOME_B (default /tmp/kosa8-ab-a and -b; kept, images and all, for the next A/B; their
# daemons are stopped at the end): two builds cannot share one daemon. Every run's result stays in bench/results/;
# the table at the end compares them: each row's figure on A and B (medians over the runs), B / A, and each
# build's ratio to the baseline its runs measured.
set -euo pipefail
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
source "$repo/scripts/host-setup.sh"
select_java25

if [[ ${1:-} == --compare ]]; then
  exec "$JAVA_HOME/bin/java" "$repo/bench/BenchResult.java" compare "${@:2}"
fi
if (( $# < 3 )); then
  sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
fi
bench=$1 spec_a=$2 spec_b=$3
shift 3
script="$repo/bench/$bench.sh"
if [[ $bench == ab || ! -f $script ]]; then
  echo "ab.sh: no benchmark '$bench'; there are: $(cd "$repo/bench" && ls ./*.sh | sed 's|^\./||; s|\.sh$||' \
    | grep -vx 'ab\|lib' | tr '\n' ' ')" >&2
  exit 2
fi
case $bench in checkpoint | workspace) runs=${AB_RUNS:-1} ;; *) runs=${AB_RUNS:-2} ;; esac

dir=${AB_DIR:-$(mktemp -d /tmp/kosa8-ab.XXXXXX)}
mkdir -p "$dir"
worktrees=()
cleanup() {
  local w
  for side in a b; do
    [[ -n ${build[$side]:-} ]] || continue
    KOSA8_HOME=${home[$side]} "${build[$side]}/kosa8" daemon stop >/dev/null 2>&1 || true
  done
  for w in "${worktrees[@]}"; do git -C "$repo" worktree remove --force "$w" >/dev/null 2>&1 || true; done
  git -C "$repo" worktree prune
  [[ -n ${AB_DIR:-} ]] || rm -rf "$dir"
}
declare -A build home label
home[a]=${KOSA8_HOME_A:-/tmp/kosa8-ab-a}
home[b]=${KOSA8_HOME_B:-/tmp/kosa8-ab-b}
trap cleanup EXIT

# checkout SIDE SPEC: the checkout that builds SPEC, a worktree of it unless SPEC is a checkout's path
checkout() {
  local side=$1 spec=$2 commit
  if [[ -d $spec ]]; then
    build[$side]=$(cd "$spec" && pwd)
  else
    commit=$(git -C "$repo" rev-parse --verify --quiet "$spec^{commit}") \
      || { echo "ab.sh: '$spec' is neither a commit nor a checkout's directory" >&2; exit 2; }
    build[$side]=$dir/$side
    git -C "$repo" worktree add --detach --quiet "${build[$side]}" "$commit"
    worktrees+=("${build[$side]}")
  fi
  label[$side]="$(git -C "${build[$side]}" rev-parse --short HEAD)"
  git -C "${build[$side]}" diff --quiet HEAD || label[$side]+="+changes"
  echo "${side^^} = $spec (${label[$side]}): building in ${build[$side]}..." >&2
  "${build[$side]}/kosa8" --version >/dev/null
}
checkout a "$spec_a"
checkout b "$spec_b"

command="bench/$bench.sh"
(( $# )) && command+=$(printf ' %q' "$@")
results_a=() results_b=()
for ((r = 1; r <= runs; r++)); do
  for side in a b; do
    short=$(git -C "${build[$side]}" rev-parse --short=7 HEAD)
    out="$repo/bench/results/$bench-$(date -u +%Y%m%dT%H%M%SZ)-$short.json"
    echo "--- ${side^^} (${label[$side]}), run $r of $runs: $command" >&2
    KOSA8_HOME=${home[$side]} KOSA8_BENCH_BUILD=${build[$side]} KOSA8_BENCH_RESULT=$out \
      KOSA8_BENCH_COMMAND="$command" "$script" "$@" | sed "s/^/${side^^}: /" >&2
    [[ -f $out ]] || { echo "ab.sh: the run wrote no result ($out)" >&2; exit 1; }
    if [[ $side == a ]]; then results_a+=("$out"); else results_b+=("$out"); fi
  done
done

echo
echo "bench/ab.sh $bench ${label[a]} ${label[b]}$( (( $# )) && printf ' %q' "$@")"
echo
"$JAVA_HOME/bin/java" "$repo/bench/BenchResult.java" compare "${results_a[@]}" -- "${results_b[@]}"
