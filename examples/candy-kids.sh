#!/bin/sh
# The candy kids, told by the simulator. Expected output: candy-kids.expected
# (tests/test_cli.c checks that this script still prints it).
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
"$BATON" kids --method all
