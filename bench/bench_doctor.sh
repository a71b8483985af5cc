#!/bin/sh
# baton doctor's wall time per log (issue 49: under 2 s), best of 3 runs,
# one process each: a sick log of 31 sizes on 2 x 8 H100 (every cause tried
# over its values: the most machines loaded and predicted), a sick log on
# 16 x 8 H100 (128 ranks), the 2 x 8 A100 RoCE log (healthy), the 2 x 8
# B200 GKE log (below), and two 512-rank Polaris logs (128 nodes of a
# dragonfly, 262,144 routes a machine: doctor's machines share them where
# they route alike), the sockets' all-to-all and all-reduce.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.out"' EXIT
"$BATON" expect -t cluster-h100 --set nodes=2 --sizes 8B:8GiB:x2 --cause nics=4 --format nccl-tests > "$tmp"
run() {    # NAME RUNS ARGS...: the best wall time of RUNS, and the machines it tried
    name=$1; runs=$2; shift 2
    best=
    for i in $(seq "$runs"); do
        start=$(date +%s.%N)
        "$BATON" doctor "$@" > "$tmp.out"
        end=$(date +%s.%N)
        t=$(awk "BEGIN { printf \"%.3f\", $end - $start }")
        if [ -z "$best" ] || awk "BEGIN { exit !($t < $best) }"; then best=$t; fi
    done
    machines=$(grep -o '[0-9]* machines tried' "$tmp.out" || echo "healthy: no causes tried")
    echo "doctor, $name: $best s wall, best of $runs ($machines)"
}
run "sick 2 x 8 H100 log (nics=4, 31 sizes)" 3 -t cluster-h100 --set nodes=2 --nccl-tests "$tmp"
"$BATON" expect -t cluster-h100 --set nodes=16 --sizes 8B:8GiB:x2 --cause netcap=0.5 --format nccl-tests > "$tmp.16"
run "sick 16 x 8 H100 log (netcap=0.5, 128 ranks)" 3 -t cluster-h100 --set nodes=16 --nccl-tests "$tmp.16"
rm -f "$tmp.16"
run "2 x 8 A100 RoCE log" 3 -t cluster-a100 --set nodes=2 --nccl-tests validate/logs/nccl-tests/a100x16_2node_oci_roce_allreduce.txt
run "2 x 8 B200 GKE log (below)" 3 -t cluster-b200 --nccl-tests "validate/logs/nccl-tests-2026/B200x16_2nodes-GKE-A4-gIB-RoCE_dranet-gke-rdma-doc_all_gather.txt"
run "512-rank Polaris all-to-all log (sockets, 128 nodes)" 3 -t polaris --set nodes=128 --set nccl_version=2.18 \
    --nccl-tests validate/logs/nccl-tests-scale/polaris_nccl_2_18_n128_alltoall_setup1.txt
run "512-rank Polaris all-reduce log (sockets, 128 nodes)" 3 -t polaris --set nodes=128 --set nccl_version=2.18 \
    --nccl-tests validate/logs/nccl-tests-scale/polaris_nccl_2_18_n128_all_reduce_setup1.txt
