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

# predict at a million GPUs (cluster-h100, 131,072 nodes, radix 256): folded
# (the witness nodes only, topologies/fold.c) and whole, in this one run; the
# two must print the same answer. -a auto and -a nccl include rows whose
# busiest link needs every message routed (trees, chains: the witnesses
# count the whole fabric's loads, linkload_folded_cost); at 8 B -a nccl
# picks one of them.
for spec in "ring 1GiB" "auto 1GiB" "nccl 1GiB" "nccl 8"; do
    algo=${spec% *} size=${spec#* }
    big="-t topologies/cluster-h100.yaml --set nodes=131072 --set radix=256 -c allreduce -a $algo -s $size"
    for mode in 16384 0; do
        # shellcheck disable=SC2086
        /usr/bin/time -f "%e %M" "$BATON" predict $big --fold $mode > "$out" 2> "$out.time" || { cat "$out.time" >&2; exit 1; }
        eval "wall_$mode=\$(awk 'END { print \$1 }' \"\$out.time\") rss_$mode=\$(awk 'END { print \$2 }' \"\$out.time\")"
        eval "time_$mode=\"\$(sed -n 's/^  time *//p' \"\$out\")\""
        eval "row_$mode=\"\$(sed -n 's/^allreduce \([a-z_]*\) .*/\1/p' \"\$out\")\""
        rm -f "$out.time"
    done
    # shellcheck disable=SC2154
    [ "$time_16384 $row_16384" = "$time_0 $row_0" ] ||
        { echo "bench_cluster: -a $algo folded ($row_16384 $time_16384) and whole ($row_0 $time_0) differ" >&2; exit 1; }
    # shellcheck disable=SC2154
    echo "predict -a $algo, all-reduce $size, cluster-h100 nodes=131072 radix=256 (1,048,576 GPUs): $row_16384 $time_16384; \
folded ${wall_16384} s wall, $(awk "BEGIN { printf \"%.1f\", $rss_16384 / 1024 }") MiB; \
whole ${wall_0} s, $(awk "BEGIN { printf \"%.1f\", $rss_0 / 1024 }") MiB; \
$(awk "BEGIN { printf \"%.1f\", $wall_0 / $wall_16384 }")x faster folded"
done
