#!/bin/sh
# The simulator on a dragonfly at scale (issue 47, docs/decisions/scale.md):
# a 1 GiB ring all-reduce on polaris at 540 nodes (2,160 GPUs), every rank
# simulated event by event (--no-symmetric); wall time, events and peak RSS
# of the whole command. BENCH_DRAGONFLY_8K=1 adds the 8,192-GPU dragonfly
# ring (polaris nodes=2048; minutes: p^2 messages, no symmetric stand-in).
# Two lines a size: the command as a user runs it (--proto auto simulates
# each protocol, the lowest formula's first, the others until their clock,
# or their clock plus their busiest link's holds still to book, passes its
# time: sim/answer/run.c, sim/engine/xfer.c; from 4,096 ranks the protocols
# run side by side in BATON_JOBS workers, docs/decisions/speed.md), and one protocol's run alone (--proto Simple),
# whose events over its wall time are the engine's rate; the first line's
# events are the winning run's only, so its rate understates the engine's.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { echo "bench_scale: needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out" "$out.time"' EXIT
nodes_list="540"
[ "${BENCH_DRAGONFLY_8K:-0}" = 1 ] && nodes_list="540 2048"
for nodes in $nodes_list; do
    for proto in auto Simple; do
        /usr/bin/time -f "%e %M" "$BATON" sim -t polaris --set nodes="$nodes" -c allreduce -a ring -s 1GiB --no-symmetric \
            --proto "$proto" > "$out" 2> "$out.time" || { cat "$out.time" >&2; exit 1; }
        wall=$(awk 'END { print $1 }' "$out.time")
        rss=$(awk 'END { print $2 }' "$out.time")
        events=$(sed -n 's/.*(\([0-9]*\) events).*/\1/p' "$out")
        what="the command (--proto auto)"
        [ "$proto" = Simple ] && what="one run (--proto Simple)"
        echo "ring all-reduce 1 GiB, polaris nodes=$nodes ($((nodes * 4)) GPUs, dragonfly, every rank), $what: \
$(sed -n 's/^  time *//p' "$out"); ${events} events in ${wall} s wall \
($(awk "BEGIN { printf \"%.2f\", $events / $wall / 1e6 }") M events/s), peak RSS $(awk "BEGIN { printf \"%.1f\", $rss / 1024 }") MiB"
    done
done
