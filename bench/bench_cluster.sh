#!/bin/sh
# The simulator at cluster scale with the machine's defaults: a 1 GiB ring
# all-reduce on cluster-h100 with 1,024 nodes (8,192 GPUs, its 8 channels,
# a 3-level fat-tree). The run is symmetric (a representative stands for
# every 256th rank) unless something forbids it; wall time, events, events/s
# and peak RSS of the whole command (loading, routing, the proof, the run).
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { echo "bench_cluster: needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
/usr/bin/time -f "%e %M" "$BATON" sim -t topologies/cluster-h100.yaml --set nodes=1024 -c allreduce -a ring -s 1GiB \
    > "$out" 2> "$out.time" || { cat "$out.time" >&2; rm -f "$out.time"; exit 1; }
wall=$(awk 'END { print $1 }' "$out.time")
rss=$(awk 'END { print $2 }' "$out.time")
rm -f "$out.time"
events=$(sed -n 's/.*(\([0-9]*\) events).*/\1/p' "$out")
echo "ring all-reduce 1 GiB, cluster-h100 nodes=1024 (8192 GPUs, default channels): $(sed -n 's/^  time *//p' "$out"); \
$(sed -n 's/^  symmetric *//p' "$out"); ${events} events in ${wall} s wall ($(awk "BEGIN { printf \"%.2f\", $events / $wall / 1e6 }") M events/s), \
peak RSS $(awk "BEGIN { printf \"%.1f\", $rss / 1024 }") MiB"
