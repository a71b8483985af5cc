#!/bin/sh
# make fidelity: for every public log in validate/logs/MANIFEST with a shipped
# machine, the uncalibrated error of baton's prediction of NCCL (-a nccl: NCCL's
# algorithms and protocols on the machine's searched rings, timed by the closed
# forms) and of NCCL's own cost model on the same machine (--model nccl), all
# sizes and >= 64 MiB; then calibrated (`baton calibrate`, its default rule
# -a nccl): in sample, cross-validated (5 folds), and fitted without the
# middle third of the sizes (middle) or without the largest quarter (top),
# each scored on the sizes the fit did not see; then the medians, and the
# composed prediction: a machine calibrated on a one-node log predicting the
# two-node log of the same cluster from the NIC's datasheet rate.
# A markdown table.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
tmp=$(mktemp)
tmp2=$(mktemp)
tmpc=$(mktemp)
tmpm=$(mktemp)
tmpt=$(mktemp)
cal=$(mktemp -d)
trap 'rm -rf "$tmp" "$tmp2" "$tmpc" "$tmpm" "$tmpt" "$cal"' EXIT
pct() { if [ -n "$1" ]; then printf '%.1f %%' "$1"; else printf -- '-'; fi; }
field() { printf '%s' "$1" | sed -n "s/.*\"$2\":\\([0-9.eE+-]*\\).*/\\1/p"; }
median() { sort -g "$1" | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
printf '| log | machine | ranks | -a nccl | >= 64 MiB | --model nccl | >= 64 MiB | calibrated | cv | middle | top | note |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
grep -v '^#' validate/logs/MANIFEST | grep -v '^[[:space:]]*$' | while read -r log machine ranks sets note; do
    name=$(basename "$log" .txt)
    if [ "$machine" = "-" ]; then
        printf '| %s | - | %s | | | | | | | | | %s |\n' "$name" "$ranks" "$note"
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
    # shellcheck disable=SC2086
    fit=$("$BATON" calibrate -t "topologies/$machine.yaml" $setargs --ranks "$ranks" --json -o "$cal/c.yaml" \
          --nccl-tests "validate/logs/$log" 2>/dev/null)
    # shellcheck disable=SC2086
    mid=$("$BATON" calibrate -t "topologies/$machine.yaml" $setargs --ranks "$ranks" --json --cv 0 --hold-out middle \
          -o "$cal/m.yaml" --nccl-tests "validate/logs/$log" 2>/dev/null)
    # shellcheck disable=SC2086
    top=$("$BATON" calibrate -t "topologies/$machine.yaml" $setargs --ranks "$ranks" --json --cv 0 --hold-out top \
          -o "$cal/t.yaml" --nccl-tests "validate/logs/$log" 2>/dev/null)
    field "$fit" cv_mape_pct >> "$tmpc"; echo >> "$tmpc"
    field "$mid" mape_held_out_pct >> "$tmpm"; echo >> "$tmpm"
    field "$top" mape_held_out_pct >> "$tmpt"; echo >> "$tmpt"
    field "$ours" mape_pct >> "$tmp"; echo >> "$tmp"
    field "$theirs" mape_pct >> "$tmp2"; echo >> "$tmp2"
    shown=$machine
    [ "$sets" != "-" ] && shown="$machine $sets"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$shown" "$ranks" \
        "$(pct "$(field "$ours" mape_pct)")" "$(pct "$(field "$ours" mape_large_pct)")" \
        "$(pct "$(field "$theirs" mape_pct)")" "$(pct "$(field "$theirs" mape_large_pct)")" \
        "$(pct "$(field "$fit" mape_pct)")" "$(pct "$(field "$fit" cv_mape_pct)")" \
        "$(pct "$(field "$mid" mape_held_out_pct)")" "$(pct "$(field "$top" mape_held_out_pct)")" "$note"
done
printf '\nmedian MAPE over %d logs: -a nccl %.1f %%, --model nccl %.1f %%; calibrated, on sizes the fit did not see: ' \
    "$(grep -c . "$tmp")" "$(median "$tmp")" "$(median "$tmp2")"
printf 'cv %.1f %%, middle %.1f %%, top %.1f %%\n' "$(median "$tmpc")" "$(median "$tmpm")" "$(median "$tmpt")"
# Composed: intra-node values from the one-node log, the network at its datasheet rate.
one=validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt
two=validate/logs/nccl-tests/a100x16_2node_oci_roce_allreduce.txt
"$BATON" calibrate -t topologies/cluster-a100.yaml --set nodes=1 --cv 0 -o "$cal/one.yaml" --nccl-tests "$one" >/dev/null
cold=$("$BATON" validate -t topologies/cluster-a100.yaml --set nodes=2 --json --nccl-tests "$two")
comp=$("$BATON" validate -t "$cal/one.yaml" --set nodes=2 --json --nccl-tests "$two")
printf 'composed (OCI A100): calibrated on the 8-GPU log, predicting the 2 x 8 log with --set nodes=2: %s (uncalibrated %s)\n' \
    "$(pct "$(field "$comp" mape_pct)")" "$(pct "$(field "$cold" mape_pct)")"
