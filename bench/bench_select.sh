#!/bin/sh
# baton select over 64 sizes x every algorithm x 5 collectives on a 1,024-GPU
# cluster (cluster-h100 --set nodes=128), closed forms: wall time of one run.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
start=$(date +%s.%N)
"$BATON" select -t topologies/cluster-h100.yaml --set nodes=128 -c allreduce,reducescatter,allgather,broadcast,reduce \
    --sizes 1B:8EiB:x2 --model closed --format csv > /dev/null
end=$(date +%s.%N)
echo "select: 64 sizes x all algorithms x 5 collectives, 1024 ranks, closed form: $(awk "BEGIN { printf \"%.3f\", $end - $start }") s wall"
