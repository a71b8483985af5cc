#!/bin/sh
# Make baton speak for your cluster: calibrate a shipped machine on an
# nccl-tests log of yours, then ask the calibrated machine questions. The
# shared 2 x 8 A100 log (OCI, RoCE 200 Gb/s a GPU) stands in for yours here.
# With your own, run nccl-tests with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING
# so the log also says which algorithm NCCL ran at each size, which baton
# then follows instead of guessing (docs/guide/calibrating.md, "NCCL's word
# on its plan: TUNING lines").
# Expected output: calibrate-and-ask.expected (tests/test_cli.c checks that
# this script still prints it).
set -eu
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
mkdir -p build
cal=build/example-a100x16.yaml
export SOURCE_DATE_EPOCH=1796169600          # the record's date: the same bytes every run
echo "== the fit: physical parameters, each with its standard error"
"$BATON" calibrate -t topologies/cluster-a100.yaml --set nodes=2 -o "$cal" \
    --nccl-tests validate/logs/nccl-tests/a100x16_2node_oci_roce_allreduce.txt 2>/dev/null | sed -n '/^MAPE/,$p'
echo
echo "== a size the log ran: the time with the band cross-validation measured"
"$BATON" predict -t "$cal" -c allreduce -s 96MiB | grep -E '^allreduce|time'
echo
echo "== another node count the log never ran: 16 nodes (the band, widened by the distance)"
"$BATON" predict -t "$cal" --set nodes=16 -c allreduce -s 96MiB | grep -E '^allreduce|time|widened'
