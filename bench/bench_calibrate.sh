#!/bin/sh
# Closed-form calibration of a 31-row, 16-rank log (issue 14 asks under 2 s):
# the 2 x 8 OCI A100 all-reduce log on cluster-a100 --set nodes=2, with the
# default 5-fold cross-validation and without it (the fit alone), and the
# 8 x 400G H200 log (24 rows, NVLS rows too) the same way; Polaris's
# 128-node all-to-all (512 ranks, a dragonfly) without it. Best of three
# runs each (this is a shared machine; noise only adds time), peak RSS of
# the last; the machine is named. Then the simulator's validation and fits
# (--model des, one run each: a log's evaluation simulates every size) of
# the 2 x 8 A100, 8 x A100 and 8 x 400G H200 logs, each in one process
# (BATON_JOBS=1) and over a worker per core (util/par.c), with the ratio.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores"
run() {   # NAME MACHINE LOG CV [--set ...]
    name=$1 machine=$2 log=$3 cv=$4
    shift 4
    best=""
    for i in $(seq "${RUNS:-3}"); do
        # shellcheck disable=SC2086
        /usr/bin/time -f "%e %M" -o "$out/t" "$BATON" calibrate -t "topologies/$machine.yaml" "$@" --cv "$cv" \
            -o "$out/c.yaml" --nccl-tests "validate/logs/$log" > "$out/o" 2>&1
        read -r wall rss < "$out/t"
        if [ -z "$best" ] || awk "BEGIN { exit !($wall < $best) }"; then best=$wall; fi
    done
    rows=$(sed -n 's/^MAPE .* over \([0-9]*\) sizes.*/\1/p' "$out/o")
    echo "calibrate $name ($rows rows), --cv $cv: $best s wall (best of ${RUNS:-3}), peak RSS $((rss / 1024)) MiB"
}
run "2 x 8 A100" cluster-a100 nccl-tests/a100x16_2node_oci_roce_allreduce.txt 5 --set nodes=2
run "2 x 8 A100" cluster-a100 nccl-tests/a100x16_2node_oci_roce_allreduce.txt 0 --set nodes=2
run "2 x 8 H200, 8 x 400G" cluster-h100 nccl-tests-extra/h200x16_2node_bf3roce8x400_schmaustech_allreduce.txt 5 --set nodes=2
run "2 x 8 H200, 8 x 400G" cluster-h100 nccl-tests-extra/h200x16_2node_bf3roce8x400_schmaustech_allreduce.txt 0 --set nodes=2
# Polaris's 128-node all-to-all (512 ranks on a dragonfly): its closed form
# charges all 262,144 pairs' routes, which a fit once found again at every
# step (speed.md, "A change of rates keeps the routes"). One run.
runs=${RUNS:-3}
RUNS=1
run "128 x 4 A100 all-to-all, dragonfly" polaris nccl-tests-scale/polaris_nccl_2_18_n128_alltoall_setup1.txt 0 \
    --set nodes=128 --set socket=true --set nccl_version=2.18 --ranks 512
RUNS=$runs
# NAME COMMAND MACHINE LOG [--set ...]: one run in one process, one over
# $(nproc) workers; their wall times and the ratio.
des() {
    name=$1 cmd=$2 machine=$3 log=$4
    shift 4
    to=""
    [ "$cmd" = calibrate ] && to="-o $out/c.yaml"
    for jobs in 1 "$(nproc)"; do
        # shellcheck disable=SC2086
        BATON_JOBS=$jobs /usr/bin/time -f "%e %M" -o "$out/t" "$BATON" "$cmd" -t "topologies/$machine.yaml" "$@" \
            --model des $to --nccl-tests "validate/logs/$log" > "$out/o" 2>&1
        read -r wall rss < "$out/t"
        [ "$jobs" = 1 ] && one=$wall
    done
    rows=$(sed -n 's/^MAPE .* over \([0-9]*\) sizes.*/\1/p' "$out/o")
    echo "$cmd --model des $name ($rows rows): $one s in one process, $wall s over $(nproc) workers" \
         "($(awk "BEGIN { printf \"%.2f\", $one / $wall }")x), peak RSS $((rss / 1024)) MiB"
}
des "2 x 8 A100" validate cluster-a100 nccl-tests/a100x16_2node_oci_roce_allreduce.txt --set nodes=2 --ranks 16
des "8 x A100" calibrate hgx-a100 nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt
des "2 x 8 H200, 8 x 400G" calibrate cluster-h100 nccl-tests-extra/h200x16_2node_bf3roce8x400_schmaustech_allreduce.txt \
    --set nodes=2
