#!/bin/sh
# scripts/polaris-steps.sh [BATON]: Polaris's ring all-gathers (NCCL 2.18,
# libfabric setup 5, validate/logs/nccl-tests-scale/) at 2, 8 and 128 nodes,
# read one ring step at a time. For each size: the block a rank forwards a step
# (size / ranks; NCCL's two rings each carry half of it), the log's time over
# the ring's p - 1 steps, baton's (uncalibrated polaris, `validate`), and what
# baton lacks a step. The evidence of docs/decisions/scale.md, "What a step
# lacks". Markdown table on stdout.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
L=validate/logs/nccl-tests-scale
echo "| nodes | block a step | log, us a step | baton, us a step | baton lacks, us a step |"
echo "|---|---|---|---|---|"
for n in 2 8 128; do
    "$BATON" validate -t polaris --set nodes="$n" --set nccl_version=2.18 --set software_matching=true \
        -c allgather --nccl-tests "$L/polaris_nccl_2_18_n${n}_all_gather_setup5.txt" 2>/dev/null |
    awk -v n="$n" -v p="$((n * 4))" '
        function us(v, u) { return u == "ms" ? v * 1000 : u == "s" ? v * 1e6 : v }
        function bytes(v, u) { return u == "KiB" ? v * 1024 : u == "MiB" ? v * 1048576 : u == "GiB" ? v * 1073741824 : v }
        $2 ~ /^([KMG]iB|B)$/ && $4 ~ /^(us|ms|s)$/ && $6 ~ /^(us|ms|s)$/ {
            b = bytes($1, $2) / p
            m = us($3, $4) / (p - 1); q = us($5, $6) / (p - 1)
            blk = b >= 1048576 ? sprintf("%g MiB", b / 1048576) : b >= 1024 ? sprintf("%g KiB", b / 1024) : sprintf("%d B", b)
            printf "| %d | %s | %.1f | %.1f | %.1f |\n", n, blk, m, q, m - q
        }'
done
