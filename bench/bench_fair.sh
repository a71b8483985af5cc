#!/bin/sh
# Max-min fair sharing against FIFO on the same runs, one after the other:
# a 256 MiB ring all-reduce on cluster-h100 with 16 nodes (128 GPUs, 8
# channels) and NCCL's NVLSTree on 8 nodes (64 GPUs). Wall time, events,
# events/s and peak RSS of each command, and fair's cost as a ratio.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { echo "bench_fair: needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out" "$out.time"' EXIT
# run NODES ALGO CONTENTION: prints "WALL EVENTS RSS_KB TIME"
run() {
    /usr/bin/time -f "%e %M" "$BATON" sim -t topologies/cluster-h100.yaml --set nodes="$1" -c allreduce -a "$2" \
        --proto Simple -s 256MiB --contention "$3" > "$out" 2> "$out.time" || { cat "$out.time" >&2; exit 1; }
    printf '%s %s %s %s\n' "$(awk 'END { print $1 }' "$out.time")" "$(sed -n 's/.*(\([0-9]*\) events).*/\1/p' "$out")" \
        "$(awk 'END { print $2 }' "$out.time")" "$(sed -n 's/^  time *\([^ ]*\) \([^ ]*\).*/\1 \2/p' "$out")"
}
for c in "16 ring" "8 nvlstree"; do
    set -- $c
    fifo=$(run "$1" "$2" fifo)
    fair=$(run "$1" "$2" fair)
    echo "$fifo" "$fair" | awk -v what="$2 all-reduce 256 MiB, cluster-h100 nodes=$1 ($(( $1 * 8 )) GPUs)" '{
        printf "%s: fifo %s %s in %.2f s (%d events, %.2f M events/s, %.1f MiB); ", what, $4, $5, $1, $2, $2 / ($1 > 0 ? $1 : 0.01) / 1e6, $3 / 1024
        printf "fair %s %s in %.2f s (%d events, %.2f M events/s, %.1f MiB); fair/fifo wall %.1fx\n", $9, $10, $6, $7, $7 / ($6 > 0 ? $6 : 0.01) / 1e6, $8 / 1024, $6 / ($1 > 0 ? $1 : 0.01) }'
done
