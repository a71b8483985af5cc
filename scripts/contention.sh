#!/bin/sh
# The evidence for the default contention model (docs/decisions/fifo-default.md): every public
# log of validate/logs/MANIFEST with a shipped machine, scored by the closed
# forms and by the simulator under FIFO and under max-min fair sharing
# (`validate -a nccl --model des --contention ...`), with the medians over the
# unmarked logs and the wall time of each column. Markdown.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { printf '%s' "$1" | grep -o "\"$2\":[0-9.eE+-]*" | head -n 1 | cut -d: -f2; }   # the first: top level
now() { date +%s.%N; }
printf '| log | machine | closed forms | simulator, fifo | simulator, fair |\n|---|---|---|---|---|\n'
: > "$tmp/times"
grep -v '^#' validate/logs/MANIFEST | grep -v '^[[:space:]]*$' | while read -r log machine ranks sets note; do
    [ "$machine" = "-" ] && continue
    setargs=""
    if [ "$sets" != "-" ]; then for s in $(printf '%s' "$sets" | tr ',' ' '); do setargs="$setargs --set $s"; done; fi
    marked=0
    case "$note" in below:*) marked=1 ;; esac
    row="| $(basename "$log" .txt) | $machine"
    k=0
    for m in "--model closed" "--model des --contention fifo" "--model des --contention fair"; do
        t0=$(now)
        # shellcheck disable=SC2086
        j=$("$BATON" validate -t "topologies/$machine.yaml" $setargs -a nccl --ranks "$ranks" $m --json \
            --nccl-tests "validate/logs/$log")
        t1=$(now)
        v=$(field "$j" mape_pct)
        printf '%s %s\n' "$v" "$marked" >> "$tmp/col$k"
        echo "$k $t0 $t1" >> "$tmp/times"
        row="$row | $(printf '%.1f %%' "$v")"
        k=$((k + 1))
    done
    printf '%s |\n' "$row"
done
median() {
    awk '$2 == 0 {print $1}' "$1" | sort -g |
        awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}
printf '\nmedian MAPE over the unmarked logs: closed forms %.1f %%, simulator fifo %.1f %%, fair %.1f %%\n' \
    "$(median "$tmp/col0")" "$(median "$tmp/col1")" "$(median "$tmp/col2")"
awk '{ s[$1] += $3 - $2 } END { printf "wall time: closed forms %.1f s, simulator fifo %.1f s, fair %.1f s\n", s[0], s[1], s[2] }' "$tmp/times"
