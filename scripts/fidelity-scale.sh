#!/bin/sh
# make fidelity, part 3: at scale. For each collective with a held-out
# 128-node Polaris log (validate/logs/nccl-tests-scale/, NCCL 2.18), one joint
# fit on the 2- and 8-node logs of the same collective and network setup
# (`baton calibrate --cv 0`, -a nccl, closed forms), then that fit and the
# shipped `polaris` (uncalibrated) each predicting every node count: MAPE over
# all sizes and over sizes >= 64 MiB. The 128-node logs were set aside before
# any fit and nothing was changed after their errors were seen
# (docs/decisions/scale.md). A fit calibrate calls not physical is written
# with --accept-unphysical and the row names what it needed. Setup 1 (nothing
# set) is NCCL's TCP socket transport: --set socket=true; setup 5 matches
# tags in software (FI_CXI_RX_MATCH_MODE=software): --set
# software_matching=true (docs/decisions/network-software.md). NCCL 2.18's rules and tables
# (--set nccl_version=2.18, docs/decisions/nccl-versions.md). Markdown.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
L=validate/logs/nccl-tests-scale
cal=$(mktemp -d)
trap 'rm -rf "$cal"' EXIT
mape() {   # MACHINE NODES LOG: "all / >= 64 MiB"
    "$BATON" validate -t "$1" --set nodes="$2" --set nccl_version=2.18 $net -c "$coll" --nccl-tests "$3" 2>&1 |
        sed -n 's/^MAPE \([0-9.]*\) % over [0-9]* sizes, \([0-9.]*\) %.*/\1 \/ \2 %/p'
}
printf '| collective, setup | fit on 2 + 8 nodes (in sample) | what the fit needed | 2 nodes | 8 nodes | 128 nodes (held out) |\n'
printf '|---|---|---|---|---|---|\n'
for cs in all_reduce:1 all_gather:5 alltoall:1; do
    c=${cs%%:*} s=${cs#*:}
    coll=$(printf '%s' "$c" | tr -d _)         # the logs name no test: all_reduce is -c allreduce
    net=""                                     # setup 1: nothing set, NCCL's TCP sockets
    [ "$s" = 1 ] && net="--set socket=true"
    [ "$s" = 5 ] && net="--set software_matching=true"   # FI_CXI_RX_MATCH_MODE=software
    f="$cal/$c.yaml"
    out=$("$BATON" calibrate -t polaris --set nccl_version=2.18 $net --cv 0 --accept-unphysical -c "$coll" -o "$f" \
          --nccl-tests "$L/polaris_nccl_2_18_n2_${c}_setup$s.txt" "$L/polaris_nccl_2_18_n8_${c}_setup$s.txt" 2>&1)
    ins=$(printf '%s\n' "$out" | sed -n 's/^MAPE \([0-9.]*\) % over [0-9]* sizes.*/\1 %/p' | tail -n 1)
    need=$(printf '%s\n' "$out" | sed -n 's/^  \([a-zA-Z0-9 -]*\) \([0-9.]*\) (\(below 0.5\|at its [a-z]* bound\)).*/\1 \2 (\3)/p' | paste -sd ';' - | sed 's/;/; /g')
    cells=""
    for n in 2 8 128; do
        log="$L/polaris_nccl_2_18_n${n}_${c}_setup$s.txt"
        cells="$cells | $(mape "$f" "$n" "$log") (out of the box $(mape polaris "$n" "$log"))"
    done
    printf '| %s, %s | %s | %s%s |\n' "$c" "$s" "${ins:--}" "${need:-nothing: physical}" "$cells"
done
