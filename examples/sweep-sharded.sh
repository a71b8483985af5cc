#!/bin/sh
# A what-if grid split into shards run side by side by GNU parallel (one
# process per shard; on a cluster, one Slurm array task per shard: see
# sweep-slurm.sbatch). The shards' outputs, concatenated in shard order, are
# the unsharded run byte for byte (tests/test_cli.c checks it).
#   sh examples/sweep-sharded.sh [BATON] [SHARDS] > grid.csv
set -eu
BATON=${1:-build/baton}
N=${2:-4}
cd "$(dirname "$0")/.."
command -v parallel >/dev/null 2>&1 || { echo "sweep-sharded.sh: needs GNU parallel (apt-get install parallel)" >&2; exit 1; }
# --keep-order: output in shard order, whatever order the shards finish in.
seq 1 "$N" | parallel --will-cite --keep-order -j "$N" \
    "$BATON" sweep -t topologies/cluster-h100.yaml -c allreduce --set nodes=2,4,8,16 \
    --set nic_bw=200Gb/s,400Gb/s --sizes 1MiB,64MiB,1GiB --format csv --shard '{}'/"$N"
