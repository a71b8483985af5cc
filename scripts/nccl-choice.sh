#!/bin/sh
# scripts/nccl-choice.sh [BATON]: for every log in validate/logs/MANIFEST with a
# machine, -a nccl's MAPE (all sizes, >= 64 MiB) with baton's choice
# (--set nccl_tuner=false) and with NCCL's own model's pick (=true), closed
# forms; the last column is 1 for a log marked "below:". The evidence of
# docs/decisions/nccl-choice.md.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
mape() { sed -n 's/^MAPE \([0-9.]*\) % over [0-9]* sizes, \([0-9.]*\) %.*/\1 \2/p; s/^MAPE \([0-9.]*\) % over [0-9]* sizes$/\1 -/p'; }
grep -v '^#' validate/logs/MANIFEST | grep -v '^[[:space:]]*$' | while read -r log machine ranks sets note; do
    [ "$machine" = "-" ] && continue
    sa=""
    if [ "$sets" != "-" ]; then for s in $(printf '%s' "$sets" | tr ',' ' '); do sa="$sa --set $s"; done; fi
    a=$("$BATON" validate -t "$machine" $sa --set nccl_tuner=false -a nccl --ranks "$ranks" "validate/logs/$log" 2>&1 | mape)
    b=$("$BATON" validate -t "$machine" $sa --set nccl_tuner=true -a nccl --ranks "$ranks" "validate/logs/$log" 2>&1 | mape)
    m=0
    case "$note" in below:*) m=1 ;; esac
    printf '%s | %s | %s | %s | %s\n' "$(basename "$log" .txt)" "$machine" "${a:--}" "${b:--}" "$m"
done
