#!/bin/sh
# baton doctor on every public log in validate/logs/MANIFEST with a shipped
# machine (its --set values): verdict, the shortfall of busbw over the log's
# top quarter of sizes (+: below the machine, -: above), the first cause and
# the MANIFEST's mark. The band of validate/expect.c's kinds is the largest
# |shortfall| of the unmarked logs of each kind, from this table.
# Markdown table on stdout.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
echo "| log | machine | verdict | shortfall | first cause | marked |"
echo "|---|---|---|---|---|---|"
grep -v '^#' validate/logs/MANIFEST | while read -r log machine ranks sets note; do
    [ "$machine" != "-" ] || continue
    args=""
    if [ "$sets" != "-" ]; then for s in $(printf '%s' "$sets" | tr ',' ' '); do args="$args --set $s"; done; fi
    # shellcheck disable=SC2086
    out=$("$BATON" doctor -t "$machine" $args --json --nccl-tests "validate/logs/$log" 2>/dev/null) || out=""
    verdict=$(printf '%s' "$out" | grep -o '"verdict":"[a-z_]*"' | head -n 1 | cut -d'"' -f4)
    short=$(printf '%s' "$out" | grep -o '"shortfall_pct":[-0-9.]*' | head -n 1 | cut -d: -f2)
    first=$(printf '%s' "$out" | grep -o '"expect":"[^"]*"' | head -n 1 | cut -d'"' -f4)
    marked=$(case "$note" in below:*) echo below;; *) echo -;; esac)
    printf '| %s | %s%s | %s | %.1f %% | %s | %s |\n' "$(basename "$log" .txt)" "$machine" "$(printf '%s' "$args" | sed 's/ --set / /g')" \
        "${verdict:-error}" "${short:-0}" "${first:--}" "$marked"
done
