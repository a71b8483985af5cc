#!/bin/sh
# make fidelity: for every public log in validate/logs/MANIFEST with a shipped
# machine, the uncalibrated error of baton's prediction of NCCL (-a nccl: NCCL's
# algorithms and protocols on the machine's searched rings, timed by the closed
# forms), all sizes and >= 64 MiB, then the median. A markdown table.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf '| log | machine | ranks | -a nccl MAPE | >= 64 MiB | note |\n|---|---|---|---|---|---|\n'
grep -v '^#' validate/logs/MANIFEST | grep -v '^[[:space:]]*$' | while read -r log machine ranks sets note; do
    name=$(basename "$log" .txt)
    if [ "$machine" = "-" ]; then
        printf '| %s | - | %s | | | %s |\n' "$name" "$ranks" "$note"
        continue
    fi
    setargs=""
    if [ "$sets" != "-" ]; then
        for s in $(printf '%s' "$sets" | tr ',' ' '); do setargs="$setargs --set $s"; done
    fi
    # shellcheck disable=SC2086
    out=$("$BATON" validate -t "topologies/$machine.yaml" $setargs -a nccl --ranks "$ranks" --json \
          --nccl-tests "validate/logs/$log")
    all=$(printf '%s' "$out" | sed -n 's/.*"mape_pct":\([0-9.eE+-]*\).*/\1/p')
    big=$(printf '%s' "$out" | sed -n 's/.*"mape_large_pct":\([0-9.eE+-]*\).*/\1/p')
    printf '%s\n' "$all" >> "$tmp"
    shown=$machine
    [ "$sets" != "-" ] && shown="$machine $sets"
    printf '| %s | %s | %s | %.1f %% | %s | %s |\n' "$name" "$shown" "$ranks" "$all" \
        "$( [ -n "$big" ] && printf '%.1f %%' "$big" || printf -- '-')" "$note"
done
n=$(wc -l < "$tmp")
med=$(sort -g "$tmp" | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}')
printf '\nmedian -a nccl MAPE over %d logs: %.1f %%\n' "$n" "$med"
