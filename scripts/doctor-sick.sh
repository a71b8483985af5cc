#!/bin/sh
# baton doctor, blind, on sick logs baton makes itself (docs/decisions/doctor.md's
# table; tests/test_doctor.c each_cause_is_named_first_blind_at_its_value):
# `expect --cause C [-c COLL] --format nccl-tests` on a shipped machine, then doctor
# given the healthy machine. Per row: verdict, shortfall, the first three
# causes with their MAPE (tie: within 1 point of the first; on a healthy log
# whether PXN off can be seen), and the tie group.
# Markdown table on stdout.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
echo "| machine | cause | verdict | shortfall | doctor's first causes (MAPE) | tie group |"
echo "|---|---|---|---|---|---|"
while IFS='|' read -r machine cause coll; do
    # shellcheck disable=SC2086
    "$BATON" expect $machine --cause "$cause" ${coll:+-c "$coll"} --format nccl-tests > "$tmp" 2>/dev/null
    [ -n "$coll" ] && cause="$cause ($coll)"
    # shellcheck disable=SC2086
    "$BATON" doctor $machine --json --nccl-tests "$tmp" | tr -d '\n' | awk -v m="$machine" -v c="$cause" '
    function field(s, k,   i, r) { i = index(s, "\"" k "\":"); if (!i) return ""; r = substr(s, i + length(k) + 3)
        if (substr(r, 1, 1) == "\"") { r = substr(r, 2); return substr(r, 1, index(r, "\"") - 1) }
        match(r, /^[-0-9.a-z]+/); return substr(r, 1, RLENGTH) }
    {   v = field($0, "verdict"); s = field($0, "shortfall_pct")
        rest = substr($0, index($0, "\"causes\":[")); firsts = ""
        for (k = 0; k < 3; k++) {
            i = index(rest, "{\"cause\""); if (!i) break
            rest = substr(rest, i + 1); id = field(rest, "expect"); sub(/^--cause /, "", id)
            firsts = firsts (k ? "; " : "") id " " sprintf("%.1f", field(rest, "mape_pct")) (field(rest, "tie") == "true" ? " (tie)" : "")
        }
        g = substr($0, index($0, "\"tie_group\":[") + 13); g = substr(g, 1, index(g, "]") - 1); group = ""
        while ((i = index(g, "\"id\":\""))) { g = substr(g, i + 6); group = group (group ? ", " : "") substr(g, 1, index(g, "\"") - 1) }
        if (firsts == "" && field($0, "pxn_unseen") == "true") firsts = sprintf("- (PXN unseen, %.1f %%)", field($0, "pxn_change_pct"))
        printf "| %s | %s | %s | %.1f %% | %s | %s |\n", m, c, v, s, firsts == "" ? "-" : firsts, group == "" ? "-" : group
    }'
done <<'ROWS'
-t cluster-h100 --set nodes=2|nics=4
-t cluster-h100 --set nodes=2|nics=1
-t cluster-h100 --set nodes=2|nvlink=9
-t cluster-h100 --set nodes=2|nvls
-t cluster-h100 --set nodes=2|algo=Ring
-t cluster-h100 --set nodes=2|proto=LL
-t cluster-h100 --set nodes=2|slowgpu=0.5
-t cluster-h100 --set nodes=2|netcap=0.5
-t cluster-h100 --set nodes=2|slownode=0.5
-t cluster-h100 --set nodes=2|gdr
-t cluster-h100 --set nodes=2|pcie=0.5
-t cluster-h100 --set nodes=2|pxn
-t cluster-a100 --set nodes=2|channels=2
-t cluster-a100 --set nodes=2|channels=4
-t cluster-a100 --set nodes=2|gdr
-t cluster-a100 --set nodes=2|pcie=0.5
-t cluster-a100 --set nodes=2|pcie=0.25
-t cluster-a100 --set nodes=2|pcie=0.125
-t cluster-a100 --set nodes=2|socket=4
-t cluster-a100 --set nodes=2|netcap=0.5
-t cluster-a100 --set nodes=2|slownode=0.5
-t cluster-a100 --set nodes=4|slownode=0.5
-t cluster-a100 --set nodes=2|pxn
-t cluster-b200 --set nodes=2|gdr
-t cluster-b200 --set nodes=2|pxn
-t hgx-h100|nvlink=12
-t hgx-h100|algo=Ring
-t cluster-h100 --set nodes=16 --set oversubscription=4|pxn|alltoall
ROWS
