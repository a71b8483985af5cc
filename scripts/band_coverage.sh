#!/bin/sh
# How often a calibration's band holds away from its fitted sizes: for every
# public log in validate/logs/MANIFEST with a shipped machine, calibrate
# without the middle third of its sizes (and again without the top quarter),
# then count the held-out sizes whose error falls inside the "90 %" band the
# fit's own cross-validation gave (band_pct). One line a log, then the totals.
# The band is measured on sizes among the fitted ones; this is why a
# calibrated machine prints it only there (the record's `seen:`: runs of
# fitted sizes, a hole such as this middle third left out, sizes beyond).
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# cover JSON: "INSIDE HELD LO HI" of the held-out rows
cover() {
    printf '%s' "$1" | awk '{
        if (match($0, /"band_pct":\[[^]]*\]/)) { b = substr($0, RSTART + 12, RLENGTH - 13); split(b, lh, ",") }
        n = split($0, rows, /\{"log":/); inside = 0; held = 0
        for (i = 2; i <= n; i++) {
            if (rows[i] !~ /"held_out":true/) continue
            match(rows[i], /"error_pct":[-0-9.eE+]*/); e = substr(rows[i], RSTART + 12, RLENGTH - 12) + 0
            held++; if (e >= lh[1] + 0 && e <= lh[2] + 0) inside++
        }
        printf "%d %d %.1f %.1f\n", inside, held, lh[1], lh[2] }'
}
grep -v '^#' validate/logs/MANIFEST | while read -r log machine ranks sets note; do
    [ -f "topologies/$machine.yaml" ] || continue
    setargs=""
    if [ "$sets" != "-" ]; then for s in $(printf '%s' "$sets" | tr ',' ' '); do setargs="$setargs --set $s"; done; fi
    line=$(basename "$log" .txt)
    for ho in middle top; do
        # shellcheck disable=SC2086
        j=$("$BATON" calibrate -t "topologies/$machine.yaml" $setargs --ranks "$ranks" --json --cv 5 --hold-out $ho \
            -o "$out.yaml" --nccl-tests "validate/logs/$log" 2>/dev/null)
        c=$(cover "$j")
        set -- $c
        echo "$ho $1 $2" >> "$out"
        line="$line | $ho $1/$2 in [$3 %, $4 %]"
    done
    rm -f "$out.yaml"
    echo "$line"
done
for ho in middle top; do
    awk -v h=$ho '$1 == h {i += $2; n += $3} END {printf "%s: %d of %d held-out sizes inside the band (%.0f %%)\n", h, i, n, 100 * i / n}' "$out"
done
