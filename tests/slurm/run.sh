#!/bin/sh
# run.sh BATON: examples/sweep-slurm.sbatch through a real Slurm. Starts a
# one-node cluster on this machine (munged with a fresh key, slurmctld and
# slurmd on 127.0.0.1 from a minimal slurm.conf, all under a temporary
# directory, on ports of their own), submits the array with `sbatch
# --array=1-8` (as the script's header says), and checks that its eight shards, concatenated in
# order, are the unsharded sweep byte for byte. Every wait is bounded (no
# hang if a daemon never comes up) and the daemons it started are killed on
# every exit. Says SKIP, and why, where Slurm or munge is not installed or
# the cluster cannot start (scripts/deps.sh installs slurm-wlm and munge as
# root; the faked-variable run in tests/test_cli.c covers the script then).
set -u
baton=$(realpath "${1:-build/baton}")
repo=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "SKIP slurm test: $*"; exit 0; }
t0=$(date +%s)
note() { [ -z "${SLURM_TEST_VERBOSE:-}" ] || echo "slurm test: $(( $(date +%s) - t0 )) s: $*" >&2; }

for c in munged mungekey slurmctld slurmd sbatch scontrol sinfo; do
    command -v "$c" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin"
    command -v "$c" >/dev/null 2>&1 || skip "needs $c (as root, scripts/deps.sh installs the Debian packages slurm-wlm munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd runs jobs as their user and needs root here (run as root, as CI does)"

d=$(mktemp -d /tmp/baton-slurm.XXXXXX)
chmod 755 "$d"
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    sleep 1
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    [ -n "${SLURM_TEST_KEEP:-}" ] && echo "kept $d" >&2 || rm -rf "$d"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail() {
    echo "FAIL slurm test: $*" >&2
    for f in munged.log slurmctld.log slurmd.log; do
        [ -f "$d/$f" ] && { echo "--- $f (last lines)" >&2; tail -n 15 "$d/$f" >&2; }
    done
    exit 1
}
# wait_for SECONDS WHAT CMD...: until CMD succeeds, at most SECONDS.
wait_for() {
    n=$(( $1 * 4 )) what=$2
    shift 2
    while [ "$n" -gt 0 ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.25
        n=$((n - 1))
    done
    return 1
}

# munge: a key of our own, a socket in $d.
mkdir -p "$d/munge" "$d/state" "$d/spool" && chmod 700 "$d/munge"
mungekey -c -k "$d/munge/key" >/dev/null 2>&1 || skip "mungekey cannot make a key"
munged --force -S "$d/munge/sock" --key-file="$d/munge/key" --pid-file="$d/munge/pid" \
       --log-file="$d/munged.log" --seed-file="$d/munge/seed" >/dev/null 2>&1 ||
    skip "munged does not start here ($(tail -n 1 "$d/munged.log" 2>/dev/null))"
wait_for 5 "munged" test -s "$d/munge/pid" || skip "munged wrote no pid file"
pids="$(cat "$d/munge/pid")"

# Two ports of our own (another run may hold Slurm's 6817/6818), below
# Linux's ephemeral range (32768 up), where a client socket of anything
# else on the machine may hold one: a port in use is tried again with the
# next pair, three times (SLURM_TEST_PORT: the first port to try).
port=${SLURM_TEST_PORT:-$(( 20000 + ($$ % 6000) * 2 ))}
next_port() { port=$(( 20000 + ((port - 20000) / 2 + 2011) % 6000 * 2 )); }
in_use() { command -v ss >/dev/null 2>&1 && ss -Htan "( sport = :$1 )" 2>/dev/null | grep -q .; }
n=0
while [ "$n" -lt 20 ] && { in_use "$port" || in_use $((port + 1)); }; do next_port; n=$((n + 1)); done
cpus=$(nproc)
write_conf() {
    cat > "$d/slurm.conf" <<EOF
ClusterName=baton
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/sock
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
NodeName=baton1 NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=batch Nodes=baton1 Default=YES MaxTime=INFINITE State=UP
EOF
}
export SLURM_CONF="$d/slurm.conf"

taken() { grep -q 'Address already in use' "$d/slurmctld.log" "$d/slurmctld.out" 2>/dev/null; }
up() { taken || scontrol ping; }                       # could not bind its port, or answers
tries=0
while :; do
    write_conf
    : >"$d/slurmctld.log"
    slurmctld -D -i -f "$SLURM_CONF" >"$d/slurmctld.out" 2>&1 &
    ctld=$!
    note "slurmctld started on port $port"
    wait_for 1 "slurmctld's bind" taken ||              # (a ping to no one waits out a timeout)
        { wait_for 20 "slurmctld" up && ! taken && break; }
    tries=$((tries + 1))
    if taken && [ "$tries" -lt 3 ]; then
        kill "$ctld" 2>/dev/null
        wait "$ctld" 2>/dev/null
        next_port
        continue
    fi
    pids="$pids $ctld"
    tail -n 3 "$d/slurmctld.log" "$d/slurmctld.out" 2>/dev/null
    taken && skip "three pairs of ports were in use (see the lines above)"
    skip "slurmctld did not answer within 20 s (see the lines above)"
done
pids="$pids $ctld"
note "slurmctld answers"
slurmd -D -N baton1 -f "$SLURM_CONF" >"$d/slurmd.out" 2>&1 &
pids="$pids $!"
idle() { sinfo -h -n baton1 -o %T | grep -Eq '^(idle|mixed|allocated)'; }
wait_for 20 "slurmd" idle || {
    tail -n 3 "$d/slurmd.log" "$d/slurmd.out" 2>/dev/null
    skip "slurmd did not register within 20 s (state: $(sinfo -h -n baton1 -o %T 2>&1))"
}

note "slurmd registered"
# The array, as the example says to run it (eight tasks); the unsharded run
# meanwhile, beside it. sbatch --wait polls slowly (30 s late here): squeue.
mkdir -p "$d/out"
(cd "$repo" && timeout 300 "$baton" sweep -t topologies/cluster-h100.yaml -c allreduce --set nodes=2,4,8,16 \
    --set nic_bw=200Gb/s,400Gb/s --sizes 1MiB,64MiB,1GiB --format csv >"$d/whole.csv" 2>"$d/whole.err"; echo $? >"$d/whole.rc") &
whole=$!
pids="$pids $whole"
job=$(sbatch --parsable --array=1-8 --chdir="$repo" --output="$d/out/task-%a.log" \
      --export=ALL,BATON="$baton",OUT_DIR="$d/out" "$repo/examples/sweep-slurm.sbatch" 2>"$d/sbatch.err") ||
    fail "sbatch refused the array: $(cat "$d/sbatch.err")"
job=${job%%;*}
running() { [ -n "$(squeue -h -j "$job" -o %i 2>/dev/null)" ]; }
n=600
while running && [ "$n" -gt 0 ]; do sleep 0.25; n=$((n - 1)); done
running && { scancel "$job"; fail "the array was not done within 150 s"; }
note "the array is done"
states=$(scontrol -o show job "$job" | grep -o 'JobState=[A-Z]*' | sort | uniq -c | tr -s ' ')
[ "$states" = " 8 JobState=COMPLETED" ] || { cat "$d"/out/task-*.log >&2; fail "array tasks: $states"; }
wait "$whole"
[ "$(cat "$d/whole.rc" 2>/dev/null)" = 0 ] || fail "the unsharded sweep failed: $(cat "$d/whole.err")"
note "the unsharded run is done"
: >"$d/shards.csv"
for i in 1 2 3 4 5 6 7 8; do
    [ -f "$d/out/shard-$i.csv" ] || fail "task $i wrote no shard-$i.csv"
    cat "$d/out/shard-$i.csv" >>"$d/shards.csv"
done
cmp -s "$d/shards.csv" "$d/whole.csv" || { diff "$d/whole.csv" "$d/shards.csv" | head >&2; fail "the shards differ from the unsharded run"; }
echo "PASS slurm test: sbatch --array=1-8 on a one-node Slurm ($(sinfo -V)), $(( $(date +%s) - t0 )) s: its 8 shards are the unsharded sweep ($(wc -l <"$d/whole.csv") lines)"
