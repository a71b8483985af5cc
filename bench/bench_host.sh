#!/bin/sh
# The CPU backend's closed loop (real threads, real bytes): fit on the small
# and large sizes, predict 64 KiB-1 MiB. The held-out error depends on this
# machine and its load, which is why it is measured here and not asserted by
# a test.
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
for r in 2 8; do
    out=$("$BATON" validate --backend host --ranks "$r" --sizes 4KiB:4MiB:x2 --reps 5 --hold-out 64KiB:1MiB \
          --log "build/bench-host-$r.log" --json)
    held=$(printf '%s' "$out" | sed -n 's/.*"mape_held_out_pct":\([0-9.eE+-]*\).*/\1/p' | head -n 1)
    echo "host backend, $r threads: held-out MAPE $held % (fit 4 KiB-32 KiB and 2-4 MiB, predict 64 KiB-1 MiB)"
done
