#!/bin/sh
# -a auto against -a nccl by closed forms (predict): every shipped machine,
# bare and with --set racks=2 or --set nodes=4 where it takes them, x 5
# collectives x 64 KiB, 128 KiB, 1 MiB, 16 MiB and 1 GiB. auto picks the
# lowest formula of every row, NCCL's among them, each at the lower of its
# own cut and NCCL's (NCCL's channels for the size, steps and fill), so
# auto / nccl should not pass 1 (nccl-sizing.md).
# Prints the cells above 1.001 and the highest ratio.
# docs/decisions/nccl-sizing.md quotes it.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
ms() { "$BATON" predict "$@" 2>/dev/null | awk '/^  time/{v=$2; u=$3; if(u=="ns")v/=1e6; if(u=="us")v/=1e3; if(u=="s")v*=1e3; print v; exit}'; }
for f in topologies/*.yaml; do
    m=$(basename "$f" .yaml)
    for set in "" "--set racks=2" "--set nodes=4"; do
        # shellcheck disable=SC2086
        "$BATON" predict -t "$m" $set -c allreduce -s 1KiB >/dev/null 2>&1 || continue
        for c in allreduce allgather reducescatter broadcast alltoall; do
            for s in 64KiB 128KiB 1MiB 16MiB 1GiB; do
                # shellcheck disable=SC2086
                a=$(ms -t "$m" $set -c "$c" -a auto -s "$s"); n=$(ms -t "$m" $set -c "$c" -a nccl -s "$s")
                [ -n "$a" ] && [ -n "$n" ] && echo "$m $set | $c $s | $a $n"
            done
        done
    done
done | awk -F'|' '{gsub(/^ +| +$/, "", $1); gsub(/^ +| +$/, "", $2); split($3, t, " "); r = t[1] / t[2]; n++; if (r > most) most = r;
                   if (r > 1.001) printf "%s %s auto %g ms, nccl %g ms: %.3fx\n", $1, $2, t[1], t[2], r}
                  END {printf "%d cells, highest auto / nccl %.4f\n", n, most}'
