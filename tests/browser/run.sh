#!/bin/sh
# run.sh BATON: the teaching pages in a real browser. Writes the candy kids'
# pages (four kids, and five: the ring's empty shares), the operations page (every algorithm of the catalogue that runs on
# four GPUs) and three `baton sim --html` pages (a ring over the H100 box's
# NVLink channels, an all-to-all, and NVLS with the switch's own row), then
# holds each page to the simulator's buffers step by step (check_page.py).
# Skips, saying so, where no Chromium, chromedriver or python3 is installed.
set -eu
baton=${1:-build/baton}
here=$(dirname "$0")
if ! command -v python3 >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1 ||
   ! { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; }; then
    echo "SKIP browser test: needs python3, chromium and chromedriver (as root, scripts/deps.sh installs" \
         "the Debian packages python3 chromium chromium-driver)"
    exit 0
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
page() {       # page NAME BATON-ARGS...: write NAME.html and NAME.json
    name=$1
    shift
    "$baton" "$@" --html "$out/$name.html" --states "$out/$name.json" >/dev/null
}
page kids kids
page kids5 kids --kids 5         # more kids than numbers: the ring's empty shares
page ops kids --ops
page ring sim -t topologies/hgx-h100.yaml -c allreduce -a ring -s 16
page alltoall sim -t topologies/hgx-h100.yaml -c alltoall -a pairwise -s 8
page nvls sim -t topologies/hgx-h100.yaml -c allreduce -a nvls -s 8
for name in kids kids5 ops ring alltoall nvls; do
    python3 "$here/check_page.py" "$out/$name.html" "$out/$name.json"
done
