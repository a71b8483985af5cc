#!/bin/sh
# Run the CLI's example commands under valgrind memcheck: any memory error or
# leak fails the run. Usage: scripts/valgrind.sh BATON_BINARY
set -u
bin=${1:-build/baton}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
vg="valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all"
fail=0
run() {   # run EXPECTED_RC ARGS...: memcheck must be clean and the exit status as expected
    want=$1; shift
    $vg "$bin" "$@" >"$out/stdout" 2>"$out/stderr"
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "valgrind: FAIL (exit $rc, expected $want): baton $*" >&2
        grep -v '^baton' "$out/stderr" | head -30 >&2
        fail=1
    else
        echo "valgrind: ok   baton $*"
    fi
}
log=tests/data/nccl/launcher.txt
run 0 kids
run 0 sim -t topologies/hgx-h100.yaml -c allreduce -a ring -s 1MiB --verify --explain
run 0 sim -t topologies/cluster-a100.yaml -c allreduce -a dbtree -s 4MiB --contention fair --trace "$out/t.json" --link-stats "$out/links.csv"
run 0 sim -t topologies/cluster-h100.yaml --set nodes=4 -c allreduce -a ring -s 1MiB --channels 1 --symmetric
run 0 sim -t topologies/cluster-h100.yaml --set nodes=40 -c allreduce -a rd -s 1MiB
run 0 predict -t topologies/cluster-a100.yaml -c allreduce -a nccl --proto auto -s 1MiB
run 0 sim -t topologies/cluster-a100.yaml -c allreduce -a nccltree -s 4MiB --verify
run 1 sim -t topologies/hgx-h100.yaml -c allreduce -a rd -s 1MiB --symmetric
run 0 plan -t topologies/dgx1-v100.yaml --sizes 8B,128MiB
run 0 plan -t tests/data/machines/dgx1-cluster.yaml --set nodes=2 --sizes 1MiB --sim
run 0 sim -t topologies/cluster-h100.yaml -c allreduce -a nvlstree -s 1MiB --verify
run 0 sim -t topologies/pcie-8gpu.yaml --set switches=false --set p2p=false --set host_bw=20GB/s -c allreduce -s 1MiB --verify
run 0 validate -t topologies/dgx1-v100.yaml --model nccl --nccl-tests validate/logs/nccl-tests-extra/v100x8_dgx1_cubemesh_konnase_allreduce.txt
run 0 topo import nvsmi validate/logs/nccl-tests-extra/v100x8_dgx1_cubemesh_konnase_allreduce.txt -o "$out/imp.yaml"
run 0 topo import nccl-xml tests/data/import/ndv4-topo.xml -o "$out/ndv4.yaml"
run 1 topo import nccl-xml tests/fuzz/regressions/import/xml-pcie-rate
run 0 select -t topologies/hgx-h100.yaml -c allreduce --sizes 8B:1GiB:x64 --vs-nccl
run 0 kids --kids 20 --method naive
run 0 replay -t topologies/hgx-h100.yaml tests/data/chakra/example.*.et --trace "$out/replay.json"
run 1 replay -t tests/data/chakra/uniform4.yaml tests/data/chakra/example.0.et
run 0 predict -t topologies/hgx-h100.yaml -c allreduce -a binomial -s 1GiB
run 0 predict -t topologies/cluster-h100.yaml --set nodes=64 --set radix=16 -c allreduce -a twoshot -s 1MiB --fold 1
run 0 predict -t topologies/cluster-h100.yaml --set nodes=64 --set radix=16 -c allreduce -a ring -s 1MiB --fold 1
run 0 predict -t topologies/cluster-h100.yaml --set nodes=64 --set radix=16 -c reduce -a nccl -s 48MiB --fold 1
run 0 predict -t topologies/cluster-p4d.yaml --set nodes=100 --set radix=16 -c allreduce -a nccl -s 8 --fold 1
run 0 plan -t topologies/cluster-h100.yaml --set nodes=64 --set radix=16 --sizes 8,1GiB --fold 1
run 0 select -t topologies/cluster-h100.yaml --set nodes=64 --set radix=16 -c allreduce --sizes 8,1GiB --algos ring,nccltree,nvlstree --model closed --vs-nccl --fold 1
run 0 sweep -t topologies/cluster-h100.yaml -c allreduce --set nodes=64,100 --set radix=16 --sizes 8 -a nccl --model closed --fold 1
run 0 select -t topologies/cluster-h100.yaml -c allreduce,allgather --sizes 1KiB:1GiB:x16 --format csv -o "$out/sel.csv"
run 0 sweep -t topologies/cluster-a100.yaml -c allreduce --set nodes=2,4 --sizes 1MiB,64MiB
run 0 topo topologies/cluster-h100.yaml --set nodes=4
run 0 tp -t topologies/hgx-h100.yaml --preset 70b --tokens 1 --phase decode --compute-ms 20
run 0 validate -t topologies/hgx-a100.yaml --nccl-tests $log --ranks 8 --force-ranks
run 1 validate -t topologies/hgx-a100.yaml --nccl-tests $log --ranks 8
a100=validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt
[ -f "$a100" ] && run 0 calibrate -t topologies/hgx-a100.yaml --nccl-tests "$a100" -o "$out/cal.yaml" --hold-out 1MiB:64MiB
# a calibration of a calibration (its record's rule), refused onto itself; a sweep under its rule
[ -f "$a100" ] && run 0 calibrate -t "$out/cal.yaml" --nccl-tests "$a100" --cv 0 -o "$out/cal2.yaml"
[ -f "$a100" ] && run 1 calibrate -t "$out/cal2.yaml" --nccl-tests "$a100" --cv 0 -o "$out/cal.yaml"
[ -f "$a100" ] && run 0 sweep -t "$out/cal2.yaml" -c allreduce --set nvlink_gbps=300,600 --sizes 1MiB
run 1 calibrate -t topologies/hgx-a100.yaml --nccl-tests $log --ranks 8 --force-ranks --hold-out 5TiB:6TiB -o "$out/none.yaml"
run 1 topo tests/data/bad/knob-bw.yaml
run 0 plan -t topologies/hgx-h100.yaml -c alltoall --sizes 1KiB,1GiB
run 1 topo topologies/pcie-box.yaml --set channels=65
# a library kernel's fitted ceiling, written into the overlay's library: and a link kept at the file's value
mi300x=validate/logs/nccl-tests-extra/mi300x_x8_xgmi_hisohara_allreduce.txt
[ -f "$mi300x" ] && run 0 calibrate -t topologies/mi300x.yaml --nccl-tests "$mi300x" --cv 0 -o "$out/cal-mi300x.yaml" --hold-out top
run 0 validate -t topologies/hgx-h100.yaml --nccl-tests tests/data/nccl/tuning-interleaved.txt
run 0 calibrate -t topologies/cluster-a100.yaml --set nodes=2 --cv 2 --nccl-tests tests/data/nccl/tuning-allreduce.txt -o "$out/cal-tuning.yaml"
run 0 validate --backend host -c allreduce -a ring --ranks 4 --sizes 1KiB,16KiB,64KiB,256KiB
run 0 sim -t topologies/cluster-h100.yaml --set sharp=true -c allreduce -a collnet -s 64KiB --verify --link-stats "$out/cn.csv"
run 0 sim -t tests/data/machines/sharp-cluster.yaml --set nodes=5 --set nvls=false -c allreduce -a collnet_ring -s 4099 --pipeline 3 --verify
run 0 plan -t topologies/cluster-a100.yaml --set sharp=true --set nodes=4 --sizes 64KiB,256MiB
run 0 topo topologies/cluster-h100.yaml --set sharp=true --set nodes=64
run 0 sim -t topologies/cluster-h100.yaml --set nodes=16 -c allreduce -a ring -s 1MiB --symmetric
run 0 concurrent -t topologies/hgx-h100.yaml 's=1MiB ranks=0-3 p=LL128' 'c=reducescatter s=1MiB ranks=4-7' --verify
run 0 step -t topologies/hgx-h100.yaml --model llama3-70b --phase prefill --batch 1 --seq 2048
run 0 sim -t topologies/cluster-h100.yaml --set nodes=5 -c allreduce -a nvlstree -s 300001 --contention fair --verify
run 0 validate -t topologies/hgx-a100.yaml --model des --contention fair --nccl-tests $log --ranks 8 --force-ranks
run 2 validate -t topologies/hgx-a100.yaml --contention fair --nccl-tests $log --ranks 8 --force-ranks
# the simulator's fit (from the closed forms'), its contention recorded and adopted; an output that cannot be written
rtx=validate/logs/nccl-tests/rtx2080ti_x2_pcie3_nop2p_allreduce.txt
[ -f "$rtx" ] && run 0 calibrate -t topologies/pcie-2gpu.yaml --set p2p=false --model des --contention fair --nccl-tests "$rtx" -o "$out/fair.yaml"
[ -f "$rtx" ] && run 0 sim -t "$out/fair.yaml" -c allreduce -s 1MiB
run 1 sweep -t topologies/hgx-h100.yaml -c allreduce --sizes 1MiB -o /no/such/dir/out
run 1 step -t topologies/hgx-h100.yaml --model qwen2.5-7b
run 0 plan -t topologies/cluster-h100.yaml --set nodes=2 --sizes 1KiB,1GiB --json
run 0 gpus --json
run 0 kids --method ring
run 1 topo tests/data/bad/sharp-twice.yaml
run 1 topo tests/data/bad/include-missing.yaml
run 1 sim -t tests/data/bad/bw-huge.yaml -c allreduce -a ring -s 1MiB
run 1 sim -t topologies/hgx-h100.yaml -c allreduce -a nosuch -s 1MiB
run 2 sim -t topologies/hgx-h100.yaml --no-such-option
# worker processes (a simulated sweep; the simulator's fit above), the importers' switches,
# two links between two nodes, a test baton has no collective for, a log that names none
run 0 sweep -t topologies/cluster-h100.yaml -c allreduce --set nodes=2,4 --sizes 1MiB,64MiB
run 0 topo import nccl-xml tests/data/import/ndv4-topo.xml
run 1 topo tests/data/bad/parallel-links.yaml
run 1 validate -t topologies/hgx-h100.yaml --nccl-tests tests/data/nccl/sendrecv.txt
run 0 validate -t topologies/hgx-h100.yaml -c alltoall --nccl-tests tests/data/nccl/unnamed-gather.txt
run 1 validate -t topologies/pcie-2gpu.yaml --nccl-tests tests/data/nccl/two-runs.txt
run 0 validate -t topologies/hgx-h100.yaml --nccl-tests tests/data/nccl/env-ring.txt
run 0 validate -t topologies/cluster-h100.yaml --nccl-tests tests/data/nccl/four-hosts.txt
run 0 select -t tests/data/nccl-env.yaml -c allreduce,allgather --sizes 1KiB,1GiB --vs-nccl
# a chain per channel (broadcast on a cluster's rings), all-to-all 16 peers at a time, grouped timings
run 0 sim -t topologies/cluster-h100.yaml -c broadcast -a chain -s 3000 --root 5 --verify
run 0 sim -t topologies/cluster-h100.yaml --set nodes=3 -c alltoall -a direct -s 2400 --verify
run 0 validate -t topologies/pcie-2gpu.yaml --set p2p=false --nccl-tests tests/data/nccl/grouped.txt
exit $fail
