#!/bin/sh
# Tensor parallelism on one HGX H100 (tp 8), a 70B-shaped model (80 layers,
# hidden 8192, bf16): decode moves one token per pass, so each of the 160
# all-reduces is 16 KiB and latency-bound; prefill of 8,192 tokens moves
# 128 MiB each and is bandwidth-bound. Expected output: tp-decode-vs-prefill.expected
# (tests/test_cli.c checks that this script still prints it).
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
"$BATON" tp -t topologies/hgx-h100.yaml --preset 70b --phase decode --tokens 1 --compute-ms 20
echo
"$BATON" tp -t topologies/hgx-h100.yaml --preset 70b --phase prefill --tokens 8192 --compute-ms 900
