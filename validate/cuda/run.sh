#!/bin/sh
# The whole GPU path in one go (a few minutes): build the CUDA backend, measure
# the device's own copy rate, run baton's schedules on 8 virtual ranks of
# GPU 0 and the same collectives through NCCL on every GPU, check results,
# write the logs under validate/results/<GPU>/ and calibrate the model to them.
# Needs nvcc, NCCL and a GPU; nothing in `make test` depends on it.
set -eu
cd "$(dirname "$0")/../.."
make -s build/baton >/dev/null
make -s cuda
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' /' '__')
out=validate/results/$gpu
mkdir -p "$out"
nvidia-smi > "$out/nvidia-smi.txt"
build/baton-cuda --copy-rate | tee "$out/copy-rate.txt"
for a in ring tree rd rabenseifner oneshot dbtree; do
    timeout 120 build/baton-cuda -c allreduce -a $a -p 8 --sizes 1024:268435456 --reps 5 -o "$out/baton-allreduce-$a.log"
    build/baton validate -t topologies/gpu-virtual.yaml -a $a --proto none --nccl-tests "$out/baton-allreduce-$a.log" | tail -1 |
        sed "s/^/$a before calibration: /" | tee -a "$out/summary.txt"
    build/baton calibrate -t topologies/gpu-virtual.yaml -a $a --proto none --nccl-tests "$out/baton-allreduce-$a.log" \
        -o "$out/gpu-virtual-$a.yaml" --hold-out 65536:4194304 | tail -2 | sed "s/^/$a calibrated: /" | tee -a "$out/summary.txt"
done
for c in allreduce allgather reducescatter broadcast; do
    timeout 120 build/baton-cuda --nccl -c $c --sizes 1024:268435456 --reps 10 -o "$out/nccl-$c.log"
done
echo "results in $out"
