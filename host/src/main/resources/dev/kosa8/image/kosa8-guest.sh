#!/bin/bash
# kosa8-guest: what a program inside a kosa8 sandbox may ask the host (docs/agents.md).
#
#   kosa8-guest checkpoint [-m LABEL]   ask for a turn checkpoint; prints "turn N CHECKPOINT"
#   kosa8-guest checkpoint --hook       the same as an agent's pre-tool hook: the label is the tool's name (and
#                                       file) from the hook's JSON on stdin (Claude Code's PreToolUse shape)
#
# Exit status: 0 taken; 1 refused or not answered (stderr says why: a bound, the host busy); 3 rewound: the
# sandbox was put back to this very checkpoint, so what was to follow it has not run. With --hook, rewound exits 2
# (Claude Code then stops the tool call and tells the model why) and a refusal exits 1 (a warning; the tool runs).
#
# It needs nothing but bash: the kosa8 agent listens on the guest's own loopback, port 7719. The host decides
# everything else (which checkpoint, how many are kept, how often); the guest sends a label and nothing more.
set -u
PORT=7719

usage() {
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 1
}

[ "${1:-}" = checkpoint ] || usage
shift
label="" hook=0
while [ $# -gt 0 ]; do
    case "$1" in
        -m) [ $# -ge 2 ] || usage; label=$2; shift 2 ;;
        --hook) hook=1; shift ;;
        -h|--help) usage ;;
        *) usage ;;
    esac
done

if [ "$hook" = 1 ]; then
    json=""
    IFS= read -r -d '' -n 65536 json || true
    tool="" file=""
    re_tool='"tool_name"[[:space:]]*:[[:space:]]*"([^"]*)"'
    re_file='"(file_path|notebook_path)"[[:space:]]*:[[:space:]]*"([^"]*)"'
    [[ $json =~ $re_tool ]] && tool=${BASH_REMATCH[1]}
    [[ $json =~ $re_file ]] && file=${BASH_REMATCH[2]}
    label="${tool:-tool}${file:+ $file}"
fi
# one line of printable text, as the host takes it
label=${label//[$'\001'-$'\037'$'\177']/ }
label=${label:0:150}

# bash's own complaint is silenced for the open alone: `exec 3<>… 2>/dev/null` would silence every later message
if ! { exec 3<>"/dev/tcp/127.0.0.1/$PORT"; } 2>/dev/null; then
    echo "kosa8-guest: the kosa8 agent does not answer on 127.0.0.1:$PORT; no turn checkpoint was taken" >&2
    exit 1
fi
printf 'checkpoint %s\n' "$label" >&3
reply=""
IFS= read -r reply <&3 || true
exec 3>&-
outcome=${reply%% *}
text=${reply#* }
case "$outcome" in
    taken)
        [ "$hook" = 1 ] || echo "$text"
        exit 0 ;;
    rewound)
        echo "kosa8: the user put the sandbox back to just before this tool call ($text). It did not run; do not" \
            "run it again unless the user asks: ask the user how to go on." >&2
        [ "$hook" = 1 ] && exit 2
        exit 3 ;;
    *)
        echo "kosa8: no turn checkpoint before this step: ${text:-no answer from the kosa8 agent}" >&2
        exit 1 ;;
esac
