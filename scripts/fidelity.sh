#!/bin/sh
# make fidelity: for every public log in validate/logs/MANIFEST with a shipped
# machine, the uncalibrated error of baton's prediction of NCCL (-a nccl: NCCL's
# algorithms and protocols on the machine's searched rings, timed by the closed
# forms), the same timed by the simulator (--model des: "simulated"), and of
# NCCL's own cost model on the same machine (--model nccl), all sizes and >= 64
# MiB; then calibrated (`baton calibrate`, its default rule
# -a nccl): in sample, cross-validated (5 folds), and fitted without the
# middle third of the sizes (middle) or without the largest quarter (top),
# each scored on the sizes the fit did not see; then the medians, and the
# composed prediction: a machine calibrated on a one-node log predicting the
# two-node log of the same cluster from the NIC's datasheet rate, and one
# fit over both logs (each at its node count); then, for
# every machine file with two or more logs, each log's calibration predicting
# each other log of that file (with that log's --set values): the same
# hardware where the --set values agree, a variant of it where they do not
# (another network, NIC count or box), whose median is given apart.
# A log whose NOTE starts with "below:" (validate/logs/MANIFEST) ran below
# what its hardware and baton's model allow: it is scored and marked, and the
# medians are given without and with such logs. A NOTE ending "[in sample]"
# set a shipped value: -a nccl's median is given over the logs that set none.
# Markdown tables.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
tmp=$(mktemp)
tmp2=$(mktemp)
tmpc=$(mktemp)
tmpm=$(mktemp)
tmpt=$(mktemp)
tmpd=$(mktemp)
tmpo=$(mktemp)
plans=$(mktemp)
scored=$(mktemp)
cal=$(mktemp -d)
trap 'rm -rf "$tmp" "$tmp2" "$tmpc" "$tmpm" "$tmpt" "$tmpd" "$tmpo" "$plans" "$scored" "$cal"' EXIT
pct() { if [ -n "$1" ]; then printf '%.1f %%' "$1"; else printf -- '-'; fi; }
field() { printf '%s' "$1" | grep -o "\"$2\":[0-9.eE+-]*" | head -n 1 | cut -d: -f2; }   # the first: top level
# median FILE [all]: of column 1 over the rows whose column 2 is 0 (not
# marked), or over every row with 'all'.
median() {
    awk -v all="${2:-}" 'all != "" || $2 == 0 {print $1}' "$1" | sort -g |
        awk '{v[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}
rec() { if [ -n "$1" ]; then printf '%s %s\n' "$1" "$2" >> "$3"; fi; }   # VALUE MARKED FILE
# plan_read JSON: the calibration's rules read off the log, "algo/proto LO-HI (RANKS ranks)" each
plan_read() {
    printf '%s' "$1" | sed -n 's/.*"plan_read":\[\([^]]*\)\].*/\1/p' | tr '}' '\n' |
        sed -n 's/.*"ranks":\([0-9]*\),"min":\([0-9]*\),"max":\([0-9]*\),"algorithm":"\([a-z_]*\)","protocol":"\([A-Za-z0-9]*\)".*/\4 \5 \2 \3 \1/p' |
        awk 'function sz(b,  u) { u = b % 1048576 == 0 ? " MiB" : b % 1024 == 0 ? " KiB" : " B"; return b / (u == " MiB" ? 1048576 : u == " KiB" ? 1024 : 1) u }
             { printf "%s%s/%s %s-%s (%d ranks)", (NR > 1 ? "; " : ""), $1, $2, sz($3), sz($4), $5 }'
}
count() { awk -v all="${2:-}" 'all != "" || $2 == 0' "$1" | grep -c . || true; }
setargs_of() {
    if [ "$1" != "-" ]; then for s in $(printf '%s' "$1" | tr ',' ' '); do printf ' --set %s' "$s"; done; fi
}
# back_args MACHINE SETS SETS2: a calibrated file keeps the --set values it
# was fitted with (its own parameters), so predicting a variant puts back the
# machine file's value of each key SETS has and SETS2 does not, as a user
# would: `--set nics=8` on a file fitted with nics=1.
back_args() {
    [ "$2" != "-" ] || return 0
    defaults=$("$BATON" topo "topologies/$1.yaml" | sed -n 's/^  parameters *//p' | tr -d ' ' | tr ',' '\n')
    for kv in $(printf '%s' "$2" | tr ',' ' '); do
        k=${kv%%=*}
        case ",$3," in *",$k="*) continue ;; esac
        v=$(printf '%s\n' "$defaults" | sed -n "s/^$k=//p")
        [ -n "$v" ] || v=$(sed -n "s/^$k: *\([^ #]*\).*/\1/p" "topologies/$1.yaml")
        printf ' --set %s=%s' "$k" "$v"
    done
}
printf '| log | machine | ranks | -a nccl | >= 64 MiB | simulated | --model nccl | >= 64 MiB | calibrated | cv | middle | top | note |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
grep -v '^#' validate/logs/MANIFEST | grep -v '^[[:space:]]*$' | while read -r log machine ranks sets note; do
    name=$(basename "$log" .txt)
    if [ "$machine" = "-" ]; then
        printf '| %s | - | %s | | | | | | | | | | %s |\n' "$name" "$ranks" "$note"
        continue
    fi
    setargs=$(setargs_of "$sets")
    marked=0
    case "$note" in below:*) marked=1 ;; esac
    fresh=$marked                              # 0: unmarked and set no shipped value
    case "$note" in *"[in sample]") fresh=1 ;; esac
    printf '%s %s %s %s %s\n' "$machine" "$log" "$ranks" "$sets" "$marked" >> "$scored"
    # shellcheck disable=SC2086
    ours=$("$BATON" validate -t "topologies/$machine.yaml" $setargs -a nccl --ranks "$ranks" --json \
           --nccl-tests "validate/logs/$log")
    # shellcheck disable=SC2086
    sim=$("$BATON" validate -t "topologies/$machine.yaml" $setargs -a nccl --model des --ranks "$ranks" --json \
          --nccl-tests "validate/logs/$log")
    # NCCL's own model has no all-to-all (it sends point to point): its cells are '-'.
    theirs=""
    case "$log" in
    *alltoall*) ;;
    *) # shellcheck disable=SC2086
       theirs=$("$BATON" validate -t "topologies/$machine.yaml" $setargs --model nccl --ranks "$ranks" --json \
                --nccl-tests "validate/logs/$log") ;;
    esac
    # shellcheck disable=SC2086
    # A fit calibrate refuses to write (not physical: it names the mechanism a
    # value stands in for) still prints its numbers; its cell says so.
    unphys=""
    fit=$("$BATON" calibrate -t "topologies/$machine.yaml" $setargs --ranks "$ranks" --json -o "$cal/c.yaml" \
          --nccl-tests "validate/logs/$log" 2>/dev/null) || unphys=" (not physical)"
    # shellcheck disable=SC2086
    mid=$("$BATON" calibrate -t "topologies/$machine.yaml" $setargs --ranks "$ranks" --json --cv 0 --hold-out middle \
          -o "$cal/m.yaml" --nccl-tests "validate/logs/$log" 2>/dev/null) || true
    # shellcheck disable=SC2086
    top=$("$BATON" calibrate -t "topologies/$machine.yaml" $setargs --ranks "$ranks" --json --cv 0 --hold-out top \
          -o "$cal/t.yaml" --nccl-tests "validate/logs/$log" 2>/dev/null) || true
    read_plan=$(plan_read "$fit")
    [ -z "$read_plan" ] || printf '%s: %s\n' "$name" "$read_plan" >> "$plans"
    rec "$(field "$fit" cv_mape_pct)" "$marked" "$tmpc"
    rec "$(field "$mid" mape_held_out_pct)" "$marked" "$tmpm"
    rec "$(field "$top" mape_held_out_pct)" "$marked" "$tmpt"
    rec "$(field "$ours" mape_pct)" "$marked" "$tmp"
    rec "$(field "$ours" mape_pct)" "$fresh" "$tmpo"
    rec "$(field "$theirs" mape_pct)" "$marked" "$tmp2"
    rec "$(field "$sim" mape_pct)" "$marked" "$tmpd"
    shown=$machine
    [ "$sets" != "-" ] && shown="$machine $sets"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$shown" "$ranks" \
        "$(pct "$(field "$ours" mape_pct)")" "$(pct "$(field "$ours" mape_large_pct)")" "$(pct "$(field "$sim" mape_pct)")" \
        "$(pct "$(field "$theirs" mape_pct)")" "$(pct "$(field "$theirs" mape_large_pct)")" \
        "$(pct "$(field "$fit" mape_pct)")$unphys" "$(pct "$(field "$fit" cv_mape_pct)")" \
        "$(pct "$(field "$mid" mape_held_out_pct)")" "$(pct "$(field "$top" mape_held_out_pct)")" "$note"
done
if [ -s "$plans" ]; then
    printf '\nthe plan calibrate read off a log, where -a nccl plans another algorithm (validate/logplan.h):\n'
    sed 's/^/  /' "$plans"
fi
for all in "" all; do
    if [ -z "$all" ]; then printf '\nmedian MAPE over the %d unmarked logs: ' "$(count "$tmp")"
    else printf 'median MAPE over all %d scored logs (marked ones too): ' "$(count "$tmp" all)"; fi
    printf -- '-a nccl %.1f %% (simulated %.1f %%), --model nccl %.1f %%; calibrated, on sizes the fit did not see: ' \
        "$(median "$tmp" $all)" "$(median "$tmpd" $all)" "$(median "$tmp2" $all)"
    printf 'cv %.1f %%, middle %.1f %%, top %.1f %%\n' "$(median "$tmpc" $all)" "$(median "$tmpm" $all)" \
        "$(median "$tmpt" $all)"
done
printf 'median MAPE of -a nccl over the %d unmarked logs that set no shipped value (MANIFEST: no "[in sample]"): ' \
    "$(count "$tmpo")"
printf '%.1f %%, what a new machine should expect; over all %d unmarked logs %.1f %%\n' "$(median "$tmpo")" \
    "$(count "$tmp")" "$(median "$tmp")"
# Composed: intra-node values from the one-node log, the network at its
# datasheet rate: ONE-NODE LOG, CLUSTER FILE, TWO-NODE LOG, its NOTE.
composed() {
    if ! "$BATON" calibrate -t "topologies/$2.yaml" --set nodes=1 --ranks 8 --cv 0 -o "$cal/one.yaml" \
        --nccl-tests "validate/logs/$1" </dev/null >/dev/null 2>&1; then
        printf 'composed (%s): the one-node fit is not physical (calibrate did not write it)\n' "$4"
        return 0
    fi
    cold=$("$BATON" validate -t "topologies/$2.yaml" --set nodes=2 --ranks 16 --json --nccl-tests "validate/logs/$3")
    comp=$("$BATON" validate -t "$cal/one.yaml" --set nodes=2 --ranks 16 --json --nccl-tests "validate/logs/$3")
    printf 'composed (%s): calibrated on the 8-GPU log, predicting the 2 x 8 log with --set nodes=2: %s (uncalibrated %s)\n' \
        "$4" "$(pct "$(field "$comp" mape_pct)")" "$(pct "$(field "$cold" mape_pct)")"
}
# Joint: one fit over both logs, each on the cluster at its own node count.
joint() {
    j=$("$BATON" calibrate -t "topologies/$2.yaml" --json -o "$cal/joint.yaml" \
        --nccl-tests "validate/logs/$1" "validate/logs/$3" </dev/null 2>/dev/null) || j_bad=" (not physical: not written)"
    printf 'joint (%s): one fit on both logs: %s in sample, %s cross-validated%s\n' "$4" \
        "$(pct "$(field "$j" mape_pct)")" "$(pct "$(field "$j" cv_mape_pct)")" "${j_bad:-}"
    j_bad=""
}
composed nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt cluster-a100 nccl-tests/a100x16_2node_oci_roce_allreduce.txt "OCI A100"
joint nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt cluster-a100 nccl-tests/a100x16_2node_oci_roce_allreduce.txt "OCI A100"
composed nccl-tests-extra/mi300x_x8_xgmi_hisohara_allreduce.txt cluster-mi300x \
    nccl-tests-extra/mi300x_x16_2node_roce_hisohara_allreduce.txt "AMD AAC MI300X; the 2-node log is marked"
joint nccl-tests-extra/mi300x_x8_xgmi_hisohara_allreduce.txt cluster-mi300x \
    nccl-tests-extra/mi300x_x16_2node_roce_hisohara_allreduce.txt "AMD AAC MI300X; the 2-node log is marked"
# Transfer: calibrated on one log of a machine, predicting another of it.
printf '\n| calibrated on | predicting | machine | hardware | uncalibrated | calibrated on the other log |\n|---|---|---|---|---|---|\n'
tmpx=$cal/transfer
tmpv=$cal/variant
: > "$tmpx"
: > "$tmpv"
while read -r machine log ranks sets marked; do
    [ "$(awk -v m="$machine" '$1 == m' "$scored" | grep -c .)" -ge 2 ] || continue
    # shellcheck disable=SC2046
    "$BATON" calibrate -t "topologies/$machine.yaml" $(setargs_of "$sets") --ranks "$ranks" --cv 0 -o "$cal/x.yaml" \
        --nccl-tests "validate/logs/$log" </dev/null >/dev/null 2>&1 || continue
    awk -v m="$machine" -v l="$log" '$1 == m && $2 != l' "$scored" | while read -r _ log2 ranks2 sets2 marked2; do
        # shellcheck disable=SC2046
        cold=$("$BATON" validate -t "topologies/$machine.yaml" $(setargs_of "$sets2") --ranks "$ranks2" --json \
               --nccl-tests "validate/logs/$log2" 2>/dev/null) || cold=""
        # a variant whose log has other ranks than the calibrated file's --set values give: '-'
        # shellcheck disable=SC2046
        warm=$("$BATON" validate -t "$cal/x.yaml" $(setargs_of "$sets2") $(back_args "$machine" "$sets" "$sets2") --ranks "$ranks2" --json \
               --nccl-tests "validate/logs/$log2" 2>/dev/null) || warm=""
        m=$((marked || marked2))
        same=same
        [ "$sets" = "$sets2" ] || same=variant
        if [ $same = same ]; then rec "$(field "$warm" mape_pct)" "$m" "$tmpx"; else rec "$(field "$warm" mape_pct)" "$m" "$tmpv"; fi
        printf '| %s | %s | %s | %s | %s | %s%s |\n' "$(basename "$log" .txt)" "$(basename "$log2" .txt)" "$machine" \
            "$same" "$(pct "$(field "$cold" mape_pct)")" "$(pct "$(field "$warm" mape_pct)")" \
            "$([ $m = 1 ] && echo ' (marked)')"
    done
done < "$scored"
printf '\nmedian MAPE of a calibration predicting another log of the same hardware: %.1f %% over %d pairs of unmarked logs, %.1f %% over all %d\n' \
    "$(median "$tmpx")" "$(count "$tmpx")" "$(median "$tmpx" all)" "$(count "$tmpx" all)"
printf 'and of a variant (other --set values): %.1f %% over %d pairs of unmarked logs, %.1f %% over all %d\n' \
    "$(median "$tmpv")" "$(count "$tmpv")" "$(median "$tmpv" all)" "$(count "$tmpv" all)"
