/* step.h - where the time of a model's step goes: the four buckets.
 *
 * The seed post's table: compute (FLOPs over the GPU's peak), memory (bytes
 * to and from HBM over its bandwidth), transport (the collectives, simulated
 * on the machine), overhead (kernel launches). Per GPU, for one step:
 *   decode   every sequence of the batch makes one token, reading `seq`
 *            tokens of KV cache
 *   prefill  every sequence's `seq` prompt tokens in one pass
 *   train    forward and backward over batch x seq tokens (3x the forward's
 *            FLOPs and weight reads), the optimizer, and the data-parallel
 *            gradient reduce-scatter and parameter all-gather
 * Layout: tp x dp x pp ranks (Megatron's order: tensor-parallel ranks
 * adjacent, then data-parallel replicas, then pipeline stages), and a MoE's
 * experts over ep ranks of a stage. Matmuls and attention each take the
 * longer of their compute and memory time (a roofline); collectives and
 * launches add to that (no overlap), which is the step time reported. */
#ifndef BATON_STEP_H
#define BATON_STEP_H

#include "../../models/gpu.h"
#include "../../models/llm.h"
#include "../../topologies/topo.h"
#include "../engine/engine.h"

typedef enum { STEP_DECODE = 0, STEP_PREFILL, STEP_TRAIN } step_phase_t;

/* The optimizer's state (fp32 master weights, Adam's two moments: 12 bytes a
 * parameter) either sharded over the data-parallel replicas (Megatron's
 * distributed optimizer, ZeRO stage 1: gradients reduce-scattered, each
 * replica updates its 1/dp, parameters all-gathered) or replicated on every
 * one (plain data parallel: gradients all-reduced, every replica updates
 * all of it). docs/decisions/step-defaults.md. */
typedef enum { STEP_OPT_SHARDED = 0, STEP_OPT_REPLICATED } step_opt_t;

typedef struct step_req {
    const llm_t *m;
    const gpu_spec_t *gpu;
    gpu_dtype_t dtype;       /* weights, activations and KV cache */
    step_phase_t phase;
    int batch;               /* sequences in the step (all replicas together) */
    int seq;                 /* decode: tokens already in the KV cache; else tokens per sequence */
    int tp, dp, pp, ep;      /* 0: step_layout's (tp within a node, pp 1, the rest dp), ep 1 */
    int micro_batch;         /* train: sequences per microbatch on a replica (Megatron's
                                --micro-batch-size); 0: 1 */
    int microbatches;        /* train: per step and replica (the 1F1B schedule's, or gradient
                                accumulation's); 0: batch / dp / micro_batch (Megatron's) */
    step_opt_t optimizer;    /* train: where Adam's state lives, and so the dp collectives */
    const char *algo;        /* every collective's algorithm (choice.h): NULL or "nccl" NCCL's,
                                "auto", or a row's name for the collectives that row does */
    double compute_eff;      /* achieved / peak FLOP/s of the matmuls (default 0.6) */
    double mem_eff;          /* achieved / peak HBM bandwidth (default 0.8) */
    int graphs;              /* 1: launched as a CUDA graph */
    int recompute;           /* train, 1: full activation recomputation (Megatron's --recompute-
                                granularity full): the layers' forward, with its all-reduces,
                                runs again before their backward */
    int proto;               /* RUN_PROTO_AUTO or a protocol for every collective */
    contention_t contention;
} step_req_t;

/* The step's kinds of collective, and their groups of ranks. */
typedef enum { STEP_TP = 0, STEP_EP, STEP_PP, STEP_DP_RS, STEP_DP_AG, STEP_DP_AR } step_kind_t;

/* One kind of collective in the step. */
typedef struct step_comm {
    step_kind_t kind;
    const char *what;        /* "tp all-reduce", ... */
    coll_t coll;
    uint64_t bytes;          /* each (nccl-tests' size) */
    int ranks;               /* in each group */
    int groups;              /* running at once */
    int count;               /* one after another in the step */
    char algo[32];
    int proto;
    double each_s;           /* the slowest group's time */
} step_comm_t;

#define STEP_MAX_COMMS 6

typedef struct step_out {
    double tokens;           /* tokens the step makes or reads, all replicas */
    double flops;            /* per GPU, on the step's critical path: every pipeline slot, the
                                bubble's pp - 1 included (a stage's GPUs are idle in those) */
    double flops_executed;   /* what the last stage's GPUs execute: their microbatches' layers and
                                the head (without pipelining, the same as flops) */
    double bytes;            /* per GPU, HBM traffic */
    int kernels;             /* launched per GPU along the step */
    double compute_s, memory_s, transport_s, overhead_s;
    double roofline_s;       /* matmuls and attention, each the longer of compute and memory */
    double step_s;           /* roofline + transport + overhead */
    double weights_bytes;    /* resident per GPU */
    double kv_bytes;         /* resident per GPU (decode) */
    double optimizer_bytes;  /* resident per GPU (train: fp32 master weights and Adam's two moments,
                                divided by dp when sharded) */
    double grad_bytes;       /* resident per GPU (train: the gradients, in the weights' dtype) */
    double hidden_s;         /* train: the data-parallel collectives' time that overlapping them
                                with the backward pass hides (at most the backward's time) */
    double overlap_step_s;   /* train: the step with them overlapped: the reduce-scatter and
                                all-gather simulated together with the backward's tensor-parallel
                                all-reduces, sharing the machine (both may slow down) */
    double dp_shared_s;      /* the data-parallel collectives' time when they share it */
    double tp_slowdown_s;    /* what sharing adds to the tensor-parallel all-reduces */
    int chain, chain_wanted; /* the TP all-reduces a TP group simulated beside the DP collectives,
                                and how many were wanted (fewer where a rank's channels ran out) */
    double attn_block_s;     /* one layer of one slot: attention block and MLP block (roofline) */
    double mlp_block_s;
    double head_s;           /* the output projection, once per microbatch; and the optimizer */
    double opt_s;
    int slots;               /* pipeline slots along the critical path: microbatches + pp - 1 */
    int layers_per_slot;
    int ncomm;
    step_comm_t comm[STEP_MAX_COMMS];
} step_out_t;

/* The layout common practice picks for the degrees left 0 (q->m set):
 * pp 1; tp the largest that splits the model's heads within one node of t
 * (its group_size, else all its ranks) and within the ranks left by dp and
 * pp; dp the ranks that are left. */
void step_layout(step_req_t *q, const topo_t *t);
/* Defaults for the other fields left 0: batch one microbatch per replica
 * (train with pp > 1: 4 x pp of them, so the pipeline's bubble stays near a
 * fifth), microbatches batch / dp / micro_batch. */
void step_defaults(step_req_t *q);
/* NULL, or why the layout does not fit t (ranks, divisibility). */
const char *step_check(const step_req_t *q, const topo_t *t, char *buf, int len);
/* The buckets of q's step on t. */
int step_run(topo_t *t, const step_req_t *q, step_out_t *o, baton_err_t *e);
const char *step_phase_name(step_phase_t p);
/* The step as a Perfetto / Chrome trace (JSON, malloc'd; NULL: out of
 * memory): one GPU's critical path in tracks for launches, compute and
 * communication, layer by layer. */
char *step_trace_json(const step_req_t *q, const step_out_t *o);
/* Bytes resident per GPU: weights, KV cache, gradients, optimizer state
 * (activations not counted). */
double step_resident(const step_out_t *o);
/* The largest bucket: 0 compute, 1 memory, 2 transport, 3 overhead. */
int step_bound(const step_out_t *o);

#endif
