#!/bin/sh
# The seed post's question: for a model served across several GPUs, in the
# regime that generates tokens, how much of the bill lands outside compute?
# Llama 3 70B at tensor parallel 8 on one HGX H100 (bf16, 4,096 tokens of
# context): decode at batch 1 and at batch 64 (CUDA graphs, as serving
# engines launch decode), and a prefill of 8,192 tokens. Expected output:
# where-the-time-goes.expected (tests/test_cli.c checks that this script
# still prints it).
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
"$BATON" step -t topologies/hgx-h100.yaml --model llama3-70b --phase decode --batch 1 --seq 4096 --graphs
echo
"$BATON" step -t topologies/hgx-h100.yaml --model llama3-70b --phase decode --batch 64 --seq 4096 --graphs
echo
"$BATON" step -t topologies/hgx-h100.yaml --model llama3-70b --phase prefill --batch 1 --seq 8192
