#!/bin/sh
# NCCL's ring search at 1,024 GPUs: a cluster of 128 DGX-1 nodes, whose
# cube-mesh node gives the search real choices (and the NICs, rails), and
# cluster-h100 at 128 nodes (flat nodes: nothing to search). Wall time of
# `baton plan` (load, search, one closed-form prediction), one process each.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
for m in "tests/data/machines/dgx1-cluster.yaml" "topologies/cluster-h100.yaml --set nodes=128"; do
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$BATON" plan -t $m --sizes 1GiB > /dev/null
    end=$(date +%s.%N)
    echo "plan (ring search + one prediction), 1024 GPUs, $m: $(awk "BEGIN { printf \"%.3f\", $end - $start }") s wall"
done
