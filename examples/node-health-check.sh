#!/bin/sh
# A node health check with baton doctor: judge an nccl-tests run against
# what the machine should give, and fail (exit 3) when its bus bandwidth at
# the largest sizes is more than PCT below the band, naming the likely cause.
#
# In a Slurm prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/nccl-health.sh,
# or as NHC's / HealthCheckProgram's check on idle nodes), on each node:
#
#   all_reduce_perf -b 64M -e 8G -f 2 -g 8 > /tmp/nccl-health.log 2>&1
#   baton doctor -t hgx-h100 --nccl-tests /tmp/nccl-health.log --fail-below 10 > /tmp/nccl-health.txt
#   case $? in
#   3)  scontrol update nodename="$(hostname -s)" state=drain \
#           reason="nccl busbw low: $(grep -m1 '^ 1\.' /tmp/nccl-health.txt | cut -c5-60)"
#       exit 1 ;;                               # the prolog fails: the job is requeued elsewhere
#   4)  logger "nccl health: baton cannot tell on this machine (its band is too wide)" ;;
#   5)  scontrol update nodename="$(hostname -s)" state=drain \
#           reason="nccl run broken: $(grep -m1 '^verdict: broken' /tmp/nccl-health.txt | cut -c18-80)"
#       exit 1 ;;                               # wrong results or an NCCL failure, however fast
#   esac
#
# (Run with NCCL_DEBUG=INFO and the log also says which NICs and transport NCCL
# used: doctor weighs those lines as evidence.) --fail-below 10 leaves room
# for run-to-run spread beyond the band; --json gives a script verdict,
# shortfall_pct and causes. Exit status: 0 judged (healthy or not tripped),
# 3 tripped, 4 cannot tell (the machine's band is wider than 30 %: neither
# pass nor drain), 1 bad input (a log of another machine, no rows), 2 bad usage.
#
# Here baton makes the two logs itself: a healthy 2 x 8 H100 cluster, and
# the same with 4 of each node's 8 NICs in use (`expect --cause nics=4`).
# Expected output: node-health-check.expected (tests/test_doctor.c).
set -u
BATON=${1:-build/baton}
cd "$(dirname "$0")/.."
M="-t cluster-h100 --set nodes=2"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# shellcheck disable=SC2086
"$BATON" expect $M --sizes 64MiB:8GiB:x2 --format nccl-tests > "$dir/good.log"
# shellcheck disable=SC2086
"$BATON" expect $M --sizes 64MiB:8GiB:x2 --cause nics=4 --format nccl-tests > "$dir/sick.log"
for log in good sick; do
    # shellcheck disable=SC2086
    "$BATON" doctor $M --nccl-tests "$dir/$log.log" --fail-below 10 > "$dir/$log.txt" 2> "$dir/$log.err"
    rc=$?
    echo "== $log node: exit $rc"
    grep '^verdict' "$dir/$log.txt"
    if [ "$rc" -eq 3 ]; then
        echo "-> drain it; the likely cause:"
        sed -n '/^ 1\. /,/^    check/p' "$dir/$log.txt"
    fi
done
