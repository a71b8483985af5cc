#!/bin/sh
# scripts/nccl-versions.sh [BATON]: for every Polaris log in
# validate/logs/MANIFEST, the MAPE (all sizes / >= 64 MiB) of `-a nccl` and of
# `--model nccl` with NCCL 2.30.7's tables (the MANIFEST's sets without
# nccl_version) and with the version the log's folder names (nccl_2_18 ->
# 2.18, i.e. 2.18.1's rules; nccl_2_21 -> 2.21). The evidence of
# docs/decisions/nccl-versions.md.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
mape() { sed -n 's/^MAPE \([0-9.]*\) % over [0-9]* sizes, \([0-9.]*\) %.*/\1 \/ \2/p'; }
grep -v '^#' validate/logs/MANIFEST | grep polaris_nccl | while read -r log machine ranks sets note; do
    sa=""
    for s in $(printf '%s' "$sets" | tr ',' ' '); do
        case "$s" in nccl_version=*|-) ;; *) sa="$sa --set $s" ;; esac
    done
    case "$log" in *nccl_2_21*) v=2.21 ;; *) v=${V218:-2.18} ;; esac
    r() { "$BATON" validate -t "$machine" $sa "$@" --ranks "$ranks" "validate/logs/$log" 2>&1 | mape; }
    printf '%s | %s | %s | %s | %s | %s\n' "$(basename "$log" .txt)" "$v" "$(r -a nccl)" "$(r -a nccl --set nccl_version=$v)" \
        "$(r --model nccl)" "$(r --model nccl --set nccl_version=$v)"
done
