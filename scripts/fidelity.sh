#!/bin/sh
# make fidelity: for every public log in validate/logs/MANIFEST with a shipped
# machine, the uncalibrated error of baton's prediction of NCCL (-a nccl: NCCL's
# algorithms and protocols on the machine's searched rings, timed by the closed
# forms) and of NCCL's own cost model on the same machine (--model nccl), all
# sizes and >= 64 MiB, then the medians. A markdown table.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
tmp=$(mktemp)
tmp2=$(mktemp)
trap 'rm -f "$tmp" "$tmp2"' EXIT
pct() { if [ -n "$1" ]; then printf '%.1f %%' "$1"; else printf -- '-'; fi; }
field() { printf '%s' "$1" | sed -n "s/.*\"$2\":\\([0-9.eE+-]*\\).*/\\1/p"; }
median() { sort -g "$1" | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
printf '| log | machine | ranks | -a nccl | >= 64 MiB | --model nccl | >= 64 MiB | note |\n'
printf '|---|---|---|---|---|---|---|---|\n'
grep -v '^#' validate/logs/MANIFEST | grep -v '^[[:space:]]*$' | while read -r log machine ranks sets note; do
    name=$(basename "$log" .txt)
    if [ "$machine" = "-" ]; then
        printf '| %s | - | %s | | | | | %s |\n' "$name" "$ranks" "$note"
        continue
    fi
    setargs=""
    if [ "$sets" != "-" ]; then
        for s in $(printf '%s' "$sets" | tr ',' ' '); do setargs="$setargs --set $s"; done
    fi
    # shellcheck disable=SC2086
    ours=$("$BATON" validate -t "topologies/$machine.yaml" $setargs -a nccl --ranks "$ranks" --json \
           --nccl-tests "validate/logs/$log")
    # shellcheck disable=SC2086
    theirs=$("$BATON" validate -t "topologies/$machine.yaml" $setargs --model nccl --ranks "$ranks" --json \
             --nccl-tests "validate/logs/$log")
    field "$ours" mape_pct >> "$tmp"; echo >> "$tmp"
    field "$theirs" mape_pct >> "$tmp2"; echo >> "$tmp2"
    shown=$machine
    [ "$sets" != "-" ] && shown="$machine $sets"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$shown" "$ranks" \
        "$(pct "$(field "$ours" mape_pct)")" "$(pct "$(field "$ours" mape_large_pct)")" \
        "$(pct "$(field "$theirs" mape_pct)")" "$(pct "$(field "$theirs" mape_large_pct)")" "$note"
done
printf '\nmedian MAPE over %d logs: -a nccl %.1f %%, --model nccl %.1f %%\n' "$(grep -c . "$tmp")" \
    "$(median "$tmp")" "$(median "$tmp2")"
