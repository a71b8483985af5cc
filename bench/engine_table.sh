#!/bin/sh
# engine_table.sh BENCH_ENGINE PAGE CASE... - run each engine case
# (ALGO:RANKS:MACHINE[:symmetric]) in its own process, print the Markdown table, and put
# it in PAGE (docs/guide/scaling-out.md) between the lines <!-- bench-engine:begin --> and
# <!-- bench-engine:end --> (written to a temporary file and renamed).
set -eu
bin=$1 readme=$2
shift 2
table=$(mktemp) new=$(mktemp "$readme.XXXXXX")
trap 'rm -f "$table" "$new"' EXIT
"$bin" --header > "$table"
for c in "$@"; do
    IFS=: read -r algo ranks machine sym <<CASE
$c
CASE
    "$bin" "$algo" "$ranks" "$machine" $sym >> "$table"
done
printf "\nMeasured %s.\n" "$(date -u +%Y-%m-%d)" >> "$table"
cat "$table"
grep -q '^<!-- bench-engine:begin -->$' "$readme" || { echo "$readme: no <!-- bench-engine:begin --> line" >&2; exit 1; }
awk -v table="$table" '
    /^<!-- bench-engine:begin -->$/ { print; while ((getline l < table) > 0) print l; skip = 1; next }
    /^<!-- bench-engine:end -->$/   { skip = 0 }
    !skip' "$readme" > "$new"
chmod 644 "$new"
mv "$new" "$readme"
echo "bench: the engine table in $readme is updated"
