#!/bin/sh
# make fidelity, part 2: `baton step` against published measurements of whole
# steps. Each row: the configuration as published, baton's answer with the
# machine file and the layout given (nothing fitted), the published number,
# and the error (baton - published) / published. Sources below the table.
#   train rows compare the iteration time (baton: the step with the data-
#   parallel collectives overlapped with the backward pass), or, where only
#   the throughput is published, FLOP/s per GPU (baton: its FLOPs over that
#   step time); the inference rows compare the time to the first token.
# --quick leaves out the 1,536- and 8,192-GPU rows (minutes each; the test
# tests/test_step_defaults.c runs the rest).
set -eu
BATON=${1:-build/baton}
QUICK=${2:-}
cd "$(dirname "$0")/.."
field() { printf '%s' "$1" | grep -o "\"$2\":[0-9.eE+-]*" | head -n 1 | cut -d: -f2; }

# Megatron's FLOPs per iteration (Narayanan et al. 2021, eq. 3: with the
# recomputed forward): 96 B s l h^2 (1 + s / 6h + V / 16lh); the published
# iteration time is that over n GPUs at X FLOP/s each.
megatron_s() {   # B s l h V n X(TFLOP/s)
    awk -v B="$1" -v s="$2" -v l="$3" -v h="$4" -v V="$5" -v n="$6" -v X="$7" \
        'BEGIN { F = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)); printf "%.4g", F / (n * X * 1e12) }'
}

row() {   # NAME PUBLISHED UNIT BATON
    awk -v n="$1" -v p="$2" -v u="$3" -v b="$4" \
        'BEGIN { printf "| %s | %.4g %s | %.4g %s | %+.1f %% |\n", n, b, u, p, u, 100 * (b - p) / p }'
}

echo "## \`baton step\` against published measurements"
echo
echo "| case | baton | published | error |"
echo "| --- | --- | --- | --- |"

# Megatron-LM, Table 1: GPT on Selene (DGX A100 80 GB, 8 HDR InfiniBand NICs a
# node: cluster-a100), sequence 2048, full activation recomputation.
megatron() {   # SIZE LAYERS HIDDEN GPUS TP PP BATCH TFLOPS
    nodes=$(($4 / 8))
    j=$("$BATON" step -t topologies/cluster-a100.yaml --set nodes=$nodes --model validate/step/gpt-$1.yaml --phase train \
        --seq 2048 --batch "$7" --tp "$5" --pp "$6" --recompute --json)
    row "GPT $1, $4 A100, tp $5 pp $6 dp $(($4 / $5 / $6)), batch $7 (Megatron-LM, s per iteration)" \
        "$(megatron_s "$7" 2048 "$2" "$3" 51200 "$4" "$8")" s "$(field "$j" overlap_step_s)"
}
megatron 18.4b 40 6144 256 8 1 1024 135
megatron 39.1b 48 8192 512 8 2 1536 138
if [ "$QUICK" != "--quick" ]; then
    megatron 145.6b 80 12288 1536 8 8 2304 148
    # Llama 3, Table 4, first row: 405B on 8,192 H100 (RoCE, 400 Gb/s a GPU:
    # cluster-h100), tp 8, pp 16, dp 64, sequence 8192, 32 sequences per replica
    # (16M tokens a step), no recomputation; 430 TFLOP/s per GPU (43 % MFU).
    j=$("$BATON" step -t topologies/cluster-h100.yaml --set nodes=1024 --model llama3-405b --phase train --seq 8192 \
        --batch 2048 --tp 8 --pp 16 --json)
    row "Llama 3 405B, 8192 H100, tp 8 pp 16 dp 64, 16M tokens (Llama 3, TFLOP/s per GPU)" 430 "TFLOP/s" \
        "$(awk -v f="$(field "$j" flops)" -v t="$(field "$j" overlap_step_s)" 'BEGIN { printf "%.6g", f / t / 1e12 }')"
fi
# TensorRT-LLM v0.5, "Low Latency": LLaMA 70B (Llama 2 70B) at batch 1, tp 4,
# 2,048 prompt tokens, time to the first token (one prefill step).
j=$("$BATON" step -t topologies/hgx-h100.yaml --model validate/step/llama2-70b.yaml --phase prefill --seq 2048 --batch 1 \
    --tp 4 --dp 1 --dtype fp8 --json)
row "Llama 2 70B prefill, 2048 tokens, 4 H100 fp8 (TensorRT-LLM, ms to the first token)" 109 ms \
    "$(awk -v t="$(field "$j" step_s)" 'BEGIN { printf "%.6g", t * 1e3 }')"
j=$("$BATON" step -t topologies/hgx-a100.yaml --model validate/step/llama2-70b.yaml --phase prefill --seq 2048 --batch 1 \
    --tp 4 --dp 1 --json)
row "Llama 2 70B prefill, 2048 tokens, 4 A100 fp16 (TensorRT-LLM, ms to the first token)" 377 ms \
    "$(awk -v t="$(field "$j" step_s)" 'BEGIN { printf "%.6g", t * 1e3 }')"

cat <<'EOF'

Sources (the model files in validate/step/ say how each shape was read):
- Megatron-LM: D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
  Megatron-LM", SC 2021, https://arxiv.org/abs/2104.04473, Table 1 (weak scaling: achieved teraFLOP/s per
  GPU, with eq. 3's FLOPs per iteration, which count the recomputed forward).
- Llama 3: Llama Team, AI @ Meta, "The Llama 3 Herd of Models", 2024, https://arxiv.org/abs/2407.21783,
  Table 4 (scaling configurations and MFU of Llama 3 405B pre-training), first row.
- TensorRT-LLM: NVIDIA/TensorRT-LLM, docs/source/performance.md (v0.5 data), "Low Latency" tables,
  https://github.com/NVIDIA/TensorRT-LLM/blob/138f96d45f90b9667426f7c47297d8c06bafac73/docs/source/performance.md : H100 FP8 and A100 FP16,
  LLaMA 70B, batch 1, TP 4, input 2048: 109 ms and 377 ms.
Known differences: baton's step has no interleaved pipeline schedule (Llama 3 used one) and no overlap of
the tensor-parallel all-reduces with compute; its compute and memory efficiencies are the defaults (60 %,
80 %), not fitted to any of these.
EOF
