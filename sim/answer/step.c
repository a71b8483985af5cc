/* step.c - the four buckets of a model's step (step.h). */
#include "step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algorithms/group.h"
#include "choice.h"
#include "concurrent.h"
#include "../nccl/nccl.h"
#include "run.h"

const char *step_phase_name(step_phase_t p) {
    return p == STEP_DECODE ? "decode" : p == STEP_PREFILL ? "prefill" : "train";
}

void step_defaults(step_req_t *q) {
    int train = q->phase == STEP_TRAIN;
    if (q->tp < 1) q->tp = 1;
    if (q->dp < 1) q->dp = 1;
    if (q->pp < 1) q->pp = 1;
    if (q->ep < 1) q->ep = 1;
    /* --batch and --microbatches given: the micro-batch is what they leave,
     * so the report says the sequences each microbatch really carries. */
    if (train && q->micro_batch < 1 && q->batch > 0 && q->microbatches > 0 && q->batch % (q->dp * q->microbatches) == 0)
        q->micro_batch = q->batch / (q->dp * q->microbatches);
    if (train && q->micro_batch < 1) q->micro_batch = 1;
    if (q->batch < 1)
        q->batch = q->dp * (train ? q->micro_batch * (q->microbatches > 0 ? q->microbatches : q->pp > 1 ? 4 * q->pp : 1) : 1);
    if (q->microbatches < 1) q->microbatches = train ? q->batch / (q->dp * q->micro_batch) : 1;
    if (q->microbatches < 1) q->microbatches = 1;        /* step_check says why */
    if (!(q->compute_eff > 0)) q->compute_eff = 0.6;
    if (!(q->mem_eff > 0)) q->mem_eff = 0.8;
}

/* Does tensor parallelism of tp split m's heads? Each rank takes heads/tp
 * query heads and either kv_heads/tp KV heads or, with more ranks than KV
 * heads, a copy of one (as Megatron-LM and vLLM require and do). */
static int tp_splits(const llm_t *m, int tp) {
    return m->heads % tp == 0 && (tp <= m->kv_heads ? m->kv_heads % tp == 0 : tp % m->kv_heads == 0);
}

/* "1, 2, 4 or 8": the tp values up to most that split m's heads. */
static void tp_choices(const llm_t *m, int most, char *buf, int len) {
    int at = 0, last = 0;
    buf[0] = '\0';
    for (int tp = 1; tp <= most; tp++) if (tp_splits(m, tp)) last = tp;
    for (int tp = 1; tp <= most && at < len; tp++)
        if (tp_splits(m, tp))
            at += snprintf(buf + at, (size_t)(len - at), "%s%d", at == 0 ? "" : tp == last ? " or " : ", ", tp);
}

void step_layout(step_req_t *q, const topo_t *t) {
    int p = topo_nranks(t), node = topo_params_c(t)->group_size;
    if (node < 1 || node > p) node = p;
    if (q->pp < 1) q->pp = 1;
    if (q->tp < 1) {
        int room = p / (q->pp * (q->dp > 0 ? q->dp : 1));
        q->tp = 1;
        for (int tp = node < room ? node : room; tp > 1; tp--)
            if (node % tp == 0 && tp_splits(q->m, tp)) { q->tp = tp; break; }
    }
    if (q->dp < 1) q->dp = p / (q->tp * q->pp) > 1 ? p / (q->tp * q->pp) : 1;
}

const char *step_check(const step_req_t *q, const topo_t *t, char *buf, int len) {
    int ranks = q->tp * q->dp * q->pp, p = topo_nranks(t);
    char ok[128];
    const char *bad = llm_check(q->m);
    if (bad) return bad;
    if (ranks > p) snprintf(buf, len, "tp %d x dp %d x pp %d = %d ranks, but %s has %d", q->tp, q->dp, q->pp, ranks, topo_name(t), p);
    else if (!tp_splits(q->m, q->tp)) {
        tp_choices(q->m, p, ok, sizeof ok);
        snprintf(buf, len, "tp %d does not split %s's %d attention heads and %d KV heads (tp %s does; --tp)", q->tp, q->m->name,
                 q->m->heads, q->m->kv_heads, ok);
    }
    else if (q->ep > 1 && !q->m->experts) snprintf(buf, len, "--ep %d: %s has no experts", q->ep, q->m->name);
    else if (q->ep > 1 && ((q->tp * q->dp) % q->ep || q->m->experts % q->ep))
        snprintf(buf, len, "--ep %d must divide tp x dp (%d) and the experts (%d)", q->ep, q->tp * q->dp, q->m->experts);
    else if (q->pp > q->m->layers) snprintf(buf, len, "--pp %d: more stages than %d layers", q->pp, q->m->layers);
    else if (q->phase != STEP_TRAIN && q->microbatches > 1) snprintf(buf, len, "--microbatches is for train");
    else if (q->phase != STEP_TRAIN && q->micro_batch > 1) snprintf(buf, len, "--micro-batch is for train");
    else if (q->phase == STEP_TRAIN && q->batch % (q->dp * q->micro_batch))
        snprintf(buf, len, "batch %d is not a multiple of dp %d x micro-batch %d (the global batch is dp x micro-batch x "
                 "microbatches, as Megatron's)", q->batch, q->dp, q->micro_batch);
    else if (q->phase == STEP_TRAIN && q->batch != q->dp * q->micro_batch * q->microbatches)
        snprintf(buf, len, "batch %d is not dp %d x micro-batch %d x microbatches %d (give two of --batch, --micro-batch, "
                 "--microbatches)", q->batch, q->dp, q->micro_batch, q->microbatches);
    else if (q->batch < q->dp * q->microbatches)
        snprintf(buf, len, "batch %d is less than one sequence per replica and microbatch (dp %d x %d)", q->batch, q->dp,
                 q->microbatches);
    else if (q->gpu->flops[q->dtype] <= 0) snprintf(buf, len, "%s has no %s tensor cores", q->gpu->name, gpu_dtype_name(q->dtype));
    else return NULL;
    return buf;
}

/* The per-GPU work of one stage on one microbatch (Lstage layers, tm tokens):
 * FLOPs and HBM bytes of the matmuls (weights, and the activations they read
 * and write), of attention (the KV cache: decode reads all of it, prefill
 * writes the new keys and values and FlashAttention reads them again once
 * per block of ATT_BLOCK queries; Q in, output out) and of the elementwise
 * kernels (norms with their residual adds, rotary embedding, the MLP's
 * activation), which only move bytes. */
typedef struct work {
    double mm_flops, att_flops, w_bytes, kv_bytes;
    double act_bytes, att_io, ew_bytes;
} work_t;

#define ATT_BLOCK 128.0      /* FlashAttention's query block (FA2's default tile) */

/* Elements a token moves through one layer's kernels, per GPU (the TP shard
 * of anything split by heads or by the MLP's width). */
static void per_token(const step_req_t *q, double *mm, double *ew, double *qo) {
    const llm_t *m = q->m;
    double tp = q->tp, h = m->hidden, k = m->experts ? m->top_k : 1, f = (double)m->ffn / tp;
    double qd = (double)m->heads * m->head_dim / tp, kvd = (double)m->kv_heads * m->head_dim / (q->tp < m->kv_heads ? tp : m->kv_heads);
    *mm = (h + qd + 2 * kvd) + (qd + h) + k * ((h + 2 * f) + (f + h));   /* qkv, o, gate-up, down: in + out */
    *ew = 2 * 4 * h + 2 * (qd + kvd) + k * 3 * f;    /* 2 norms fused with the residual add; rope; silu(gate) * up */
    *qo = 2 * qd;                                   /* attention reads Q, writes its output */
}

static work_t stage_work(const step_req_t *q, double tm, double seqs, double layers) {
    const llm_t *m = q->m;
    double b = gpu_dtype_bytes(q->dtype), tp = q->tp, kv_split = q->tp < m->kv_heads ? q->tp : m->kv_heads;
    double ctx = q->phase == STEP_DECODE ? q->seq + 1 : (q->seq + 1) / 2.0;      /* keys each query sees */
    double mlps = m->experts ? m->top_k : 1, w_mlp = llm_mlp_params(m) / tp;
    if (m->experts) {                    /* the experts the microbatch's tokens touch, on their holders */
        double touched = m->experts * (1 - pow(1 - (double)m->top_k / m->experts, tm));
        w_mlp = touched * llm_mlp_params(m) / (q->ep > 1 ? q->ep : tp);
    }
    double kvpt = llm_kv_bytes_per_token(m, (int)b) / kv_split, mm, ew, qo;
    double blocks = ceil(q->seq / ATT_BLOCK), reread = seqs * blocks * (q->seq + ATT_BLOCK) / 2 * kvpt;  /* keys each block sees */
    per_token(q, &mm, &ew, &qo);
    work_t w = {
        .mm_flops = layers * 2 * tm * (llm_attn_params(m) + llm_router_params(m) + mlps * llm_mlp_params(m)) / tp,
        .att_flops = layers * 4 * tm * ctx * m->heads * m->head_dim / tp,
        .w_bytes = layers * b * ((llm_attn_params(m) + llm_router_params(m)) / tp + w_mlp),
        .kv_bytes = q->phase == STEP_DECODE ? layers * kvpt * seqs * (q->seq + 1)
                  : q->phase == STEP_PREFILL ? layers * kvpt * tm : 0,
        .act_bytes = layers * b * tm * mm, .ew_bytes = layers * b * tm * ew,
        .att_io = layers * (b * tm * qo + (q->phase == STEP_DECODE ? 0 : reread))};
    return w;
}

/* Parameters one GPU holds. */
static double local_params(const step_req_t *q) {
    const llm_t *m = q->m;
    double per_layer = (llm_attn_params(m) + llm_router_params(m)) / q->tp +
                       (m->experts ? m->experts * llm_mlp_params(m) / (q->ep > 1 ? q->ep : q->tp) : llm_mlp_params(m) / q->tp);
    return (m->layers * per_layer + llm_embed_params(m) / q->tp) / q->pp;
}

static int kernels_per_layer(const step_req_t *q) {
    int k = 9 + (q->tp > 1 ? 2 : 0);    /* 2 norms, qkv, rope, attention, o-proj, gate-up, act, down; 2 all-reduces */
    if (q->m->experts) k += 4 + (q->ep > 1 ? 2 : 0);   /* router, top-k, permute, unpermute; 2 all-to-alls */
    return k;
}

static void add_comm(step_out_t *o, step_kind_t k, double bytes, int ranks, int groups, int count) {
    static const char *const what[] = {"tp all-reduce", "ep all-to-all", "pp send", "dp reduce-scatter", "dp all-gather",
                                       "dp all-reduce"};
    static const coll_t coll[] = {COLL_ALLREDUCE, COLL_ALLTOALL, COLL_BROADCAST, COLL_REDUCE_SCATTER, COLL_ALLGATHER,
                                  COLL_ALLREDUCE};
    coll_t c = coll[k];
    if (ranks < 2 || count < 1) return;
    uint64_t n = bytes < 1 ? 1 : (uint64_t)ceil(bytes);
    if (c == COLL_ALLTOALL) n = (n + 2 * (uint64_t)ranks - 1) / (2 * (uint64_t)ranks) * 2 * (uint64_t)ranks;
    o->comm[o->ncomm++] = (step_comm_t){.kind = k, .what = what[k], .coll = c, .bytes = n, .ranks = ranks, .groups = groups, .count = count};
}

/* Everything but the collectives' times. */
static void arith(const step_req_t *q, step_out_t *o) {
    const llm_t *m = q->m;
    const gpu_spec_t *g = q->gpu;
    int train = q->phase == STEP_TRAIN, mb = q->microbatches, slots = mb + q->pp - 1;
    double b = gpu_dtype_bytes(q->dtype), fh = train ? 3 : 1;         /* backward: twice the forward */
    double f = train && q->recompute ? 4 : fh;          /* the layers' forward again before their backward */
    double seqs = ceil((double)q->batch / q->dp) / mb, tps = q->phase == STEP_DECODE ? 1 : q->seq, tm = seqs * tps;
    double lstage = ceil((double)m->layers / q->pp);
    work_t w = stage_work(q, tm, seqs, lstage);
    double head_tokens = train ? tm : seqs;                           /* inference needs the last token's logits */
    double head_flops = 2 * head_tokens * m->vocab * (double)m->hidden / q->tp, head_bytes = b * m->vocab * (double)m->hidden / q->tp;
    double head_act = b * head_tokens * (m->hidden + (double)m->vocab / q->tp);   /* the head's matmul in and out */
    double mm = f * slots * w.mm_flops + fh * mb * head_flops, att = f * slots * w.att_flops;
    double wb = f * slots * (w.w_bytes + w.act_bytes) + fh * mb * (head_bytes + head_act);
    double kv = slots * w.kv_bytes + f * slots * w.att_io, ew = f * slots * w.ew_bytes;
    double peak = g->flops[q->dtype] * q->compute_eff, bw = g->hbm_bw * q->mem_eff;
    double params = local_params(q);
    o->weights_bytes = params * b;
    double shard = train && q->optimizer == STEP_OPT_SHARDED ? q->dp : 1;   /* the replicas that split it */
    o->optimizer_bytes = train ? params * 12 / shard : 0;             /* fp32 master weights, Adam's m and v */
    o->grad_bytes = train ? params * b : 0;
    double opt = train ? params * (24 + 2 * b) / shard : 0;            /* the optimizer reads and writes them */
    o->kv_bytes = q->phase == STEP_DECODE ? w.kv_bytes : 0;           /* decode reads the whole resident cache */
    o->tokens = (double)q->batch * tps;
    o->flops = mm + att;
    o->flops_executed = f * mb * (w.mm_flops + w.att_flops) + fh * mb * head_flops;
    o->bytes = wb + kv + ew + opt;
    o->compute_s = o->flops / peak;
    o->memory_s = o->bytes / bw;
    o->roofline_s = fmax(mm / peak, wb / bw) + fmax(att / peak, kv / bw) + (ew + opt) / bw;
    double share = (llm_attn_params(m) + llm_router_params(m)) / (llm_attn_params(m) + llm_router_params(m) + (m->experts ? m->top_k : 1) * llm_mlp_params(m));
    o->slots = slots;
    o->layers_per_slot = (int)lstage;
    double wa = w.w_bytes + w.act_bytes;                              /* the blocks split weights and activations alike */
    o->attn_block_s = (f * fmax(share * w.mm_flops / peak, share * wa / bw) +
                       fmax(f * w.att_flops / peak, (w.kv_bytes + f * w.att_io) / bw) + f * share * w.ew_bytes / bw) / lstage;
    o->mlp_block_s = f * (fmax((1 - share) * w.mm_flops / peak, (1 - share) * wa / bw) + (1 - share) * w.ew_bytes / bw) / lstage;
    o->head_s = fh * fmax(head_flops / peak, (head_bytes + head_act) / bw);
    o->opt_s = opt / bw;
    o->kernels = (int)(slots * lstage * kernels_per_layer(q) * f + mb * 4 + (train ? 1 : 0));
    o->overhead_s = o->kernels * (q->graphs ? g->graph_launch : g->launch);
    int per_layer = train ? (q->recompute ? 6 : 4) : 2, stages = train ? q->pp : 1;          /* train: every stage busy at once (1F1B) */
    add_comm(o, STEP_TP, tm * m->hidden * b, q->tp, q->dp * stages, (int)(slots * lstage * per_layer));
    if (m->experts && q->ep > 1)
        add_comm(o, STEP_EP, tm / q->tp * m->top_k * m->hidden * b, q->ep,
                 q->tp * q->dp / q->ep * stages, (int)(slots * lstage * per_layer));
    add_comm(o, STEP_PP, tm * m->hidden * b, q->pp > 1 ? 2 : 1, q->tp * q->dp,
             (slots - 1) * (train ? 2 : 1));
    if (train && q->optimizer == STEP_OPT_SHARDED) {       /* each replica updates its shard */
        add_comm(o, STEP_DP_RS, params * b, q->dp, q->tp * q->pp, 1);
        add_comm(o, STEP_DP_AG, params * b, q->dp, q->tp * q->pp, 1);
    } else if (train)                                       /* each updates all of it */
        add_comm(o, STEP_DP_AR, params * b, q->dp, q->tp * q->pp, 1);
}

/* Machine rank of (tensor, data, pipeline) coordinates: Megatron's order. */
static int32_t rank_of(const step_req_t *q, int ti, int di, int pi) { return (int32_t)((pi * q->dp + di) * q->tp + ti); }

/* The machine ranks of group i of comm c, in its own order. */
static void group_ranks(const step_req_t *q, const step_comm_t *c, int i, int32_t *r) {
    int per_stage = q->tp * q->dp;
    for (int j = 0; j < c->ranks; j++) {
        int per_group = per_stage / q->ep;                 /* ep groups of a stage */
        switch (c->kind) {
        case STEP_TP: r[j] = rank_of(q, j, i % q->dp, i / q->dp); break;
        case STEP_EP: r[j] = (int32_t)((i / per_group) * per_stage + (i % per_group) * q->ep + j); break;
        case STEP_PP: r[j] = (int32_t)(j * per_stage + i); break;             /* stage 0 -> stage 1 */
        default: r[j] = rank_of(q, i % q->tp, j, i / q->tp); break;           /* dp: across replicas */
        }
    }
}

/* Fill members [*n, ...) with comm c's groups under algorithm `algo`; each
 * group runs `chain` of them one after another (after its own previous one). */
static void add_members(const step_req_t *q, const step_comm_t *c, const char *algo, int chain, conc_coll_t *cc, int32_t *r,
                        int *n) {
    for (int i = 0; i < c->groups; i++) {
        group_ranks(q, c, i, r + (size_t)i * c->ranks);
        for (int k = 0; k < chain; k++, (*n)++) {
            cc[*n] = (conc_coll_t){.coll = c->coll, .bytes = c->bytes, .nranks = c->ranks, .ranks = r + (size_t)i * c->ranks,
                                   .channels = 1, .after = k ? *n - 1 : -1};
            snprintf(cc[*n].algo, sizeof cc[*n].algo, "%s", algo);
        }
    }
}

/* One collective of comm c on every group at once, under algorithm a and
 * protocol pr: the slowest group's time, or -1 if a cannot run it. */
static double together(topo_t *t, const step_req_t *q, const step_comm_t *c, const algo_t *a, proto_t pr, baton_err_t *e) {
    conc_coll_t *cc = calloc((size_t)c->groups, sizeof *cc);
    int32_t *r = malloc((size_t)c->groups * c->ranks * sizeof *r);
    double worst = -1;
    int n = 0;
    if (cc && r) {
        add_members(q, c, a->name, 1, cc, r, &n);
        engine_result_t res;
        conc_opts_t o = {.proto = pr, .contention = q->contention};
        if (conc_run(t, cc, n, &o, &res, e) == 0) worst = res.time_s;
        engine_result_free(&res);
    }
    free(cc);
    free(r);
    return worst;
}

/* The rows that may run comm c: NCCL's for the collective, else all of them. */
static int nccl_has(coll_t coll) {
    const algo_t *const *all = algo_all();
    for (int i = 0; all[i]; i++)
        if (all[i]->coll == coll && all[i]->nccl != NULL) return 1;
    return 0;
}

/* Under -a nccl (or a row that cannot run the collective): NCCL's rows
 * for it, else all of them; -a auto: all of them; a row: that row. */
/* Does comm c of coll choose as -a nccl does (NCCL's rows and protocol
 * rules)? Yes by default, and where -a names a row that cannot run it. */
static int nccl_rules(const char *algo, coll_t coll) {
    return algo == NULL || !strcmp(algo, "nccl") || !choice_covers(algo, coll);
}

static int candidates(const char *algo, coll_t coll, const algo_t **out, int max) {
    const algo_t *const *all = algo_all();
    if (!nccl_rules(algo, coll)) {
        const algo_t *one = strcmp(algo, "auto") ? algo_find(coll, algo) : NULL;
        if (one) return out[0] = one, 1;
    }
    int n = 0, nccl = nccl_has(coll) && nccl_rules(algo, coll);
    for (int i = 0; all[i] && n < max; i++)
        if (all[i]->coll == coll && (!nccl || all[i]->nccl)) out[n++] = all[i];
    return n;
}

/* A pipeline stage's send is NCCL's send/recv, on the protocol NCCL's p2p
 * rule gives it (ncclrule_p2p_proto: Simple where a stage's pair spans two
 * nodes); the chain that times it would take any. */
static int p2p_protocol(const topo_t *t, const step_req_t *q, const step_comm_t *c, int pr) {
    if (c->kind != STEP_PP) return 1;
    int network = 0;
    int32_t r[2];
    for (int i = 0; i < c->groups && !network && c->ranks == 2; i++) {
        group_ranks(q, c, i, r);
        network = ncclrule_crosses(t, r, 2);
    }
    return pr == (int)ncclrule_p2p_proto(t, c->bytes, network);
}

/* Where the machine's NCCL follows its own cost model (nccl_tuner), what
 * that model picks for one group of comm c (tp's and the whole machine's
 * choice, here for a communicator of the group's ranks): the row, its
 * protocols in *pm; NULL where it does not decide (e->code set on error). */
static const char *group_pick(topo_t *t, const step_req_t *q, const step_comm_t *c, unsigned *pm, baton_err_t *e) {
    int32_t *r = malloc((size_t)c->ranks * sizeof *r);
    if (r == NULL) return err_set(e, BATON_ENOMEM, "out of memory"), NULL;
    group_ranks(q, c, 0, r);
    run_req_t rq = {.coll = c->coll, .algo = "nccl", .bytes = c->bytes, .proto = q->proto};
    const char *row = NULL;
    int rc = nccl_group_pick(t, &rq, r, c->ranks, &row, pm, e);
    free(r);
    return rc == 1 ? row : NULL;
}

/* The fastest row and protocol for comm c (among q->algo's candidates), all
 * groups at once; under -a nccl on a machine whose NCCL follows its own
 * model, the row and protocol that model picks for a group, as tp and the
 * whole machine take it (the fastest where it picks none baton runs). A collective over the whole machine takes choice_run's
 * answer instead, tp's: under -a nccl NCCL's plan (its searched rings,
 * NVLS, trees). */
static int time_comm(topo_t *t, const step_req_t *q, step_comm_t *c, baton_err_t *e) {
    int nccl = c->kind == STEP_PP || nccl_rules(q->algo, c->coll);    /* a stage's send is NCCL's send/recv */
    if (c->groups == 1 && c->ranks == topo_nranks(t) && c->coll != COLL_BROADCAST && (nccl_has(c->coll) || !nccl)) {
        run_out_t ro;                  /* the one choice tp makes too (choice.h) */
        int rc = choice_run(t, c->coll, c->bytes, nccl ? CHOICE_DEFAULT : q->algo, q->proto, q->contention, &ro, e);
        if (rc < 0) return rc;
        snprintf(c->algo, sizeof c->algo, "%s", ro.algo->name);
        c->proto = ro.proto;
        c->each_s = ro.time_s;
        engine_result_free(&ro.eng);
        return 0;
    }
    const algo_t *rows[64];
    int n = candidates(nccl ? CHOICE_DEFAULT : q->algo, c->coll, rows, 64), none = topo_params_c(t)->no_protocols;
    const char *pick = NULL;
    unsigned pm = 0;
    if (nccl && c->kind != STEP_PP && (pick = group_pick(t, q, c, &pm, e)) == NULL && e->code) return e->code;
    c->each_s = -1;
    int passes = pick ? 2 : 1;                                            /* NCCL's model's pick, else the fastest */
    for (int pass = 0; pass < passes && c->each_s < 0; pass++, pick = NULL)
    for (int i = 0; i < n; i++)
        for (int pr = none ? PROTO_NONE : PROTO_LL; pr <= (none ? PROTO_NONE : PROTO_SIMPLE); pr++) {
            if (pick && (strcmp(rows[i]->name, pick) || (!none && !(pm >> pr & 1)))) continue;
            if (q->proto != RUN_PROTO_AUTO && !none && pr != q->proto) continue;
            if (q->proto == RUN_PROTO_AUTO && !none && !p2p_protocol(t, q, c, pr)) continue;
            if (nccl && !none && rows[i]->nccl && !ncclrule_runs_at(t, rows[i], (proto_t)pr, c->ranks, c->bytes, 0)) continue;
            if (nccl && !none && !rows[i]->nccl && pr != PROTO_SIMPLE && q->proto == RUN_PROTO_AUTO) continue;
            baton_err_t skip = {0};
            double s = together(t, q, c, rows[i], (proto_t)pr, &skip);
            if (s >= 0 && (c->each_s < 0 || s < c->each_s)) {
                c->each_s = s;
                c->proto = pr;
                snprintf(c->algo, sizeof c->algo, "%s", rows[i]->name);
            }
        }
    if (c->each_s < 0) return err_set(e, BATON_EUNSUP, "no algorithm can run the %s on %d ranks of %s", c->what, c->ranks, topo_name(t));
    return 0;
}

/* Training: the data-parallel reduce-scatter and all-gather (or all-reduce) overlapped with
 * the backward pass, simulated together with the tensor-parallel all-reduces
 * the backward runs meanwhile (as many, one after another in each TP group,
 * as fit in the DP collectives' own time, at most 64): what they then take,
 * what the all-reduces lose, and the step with the DP time hidden behind
 * the backward's compute (two thirds of the roofline) as far as it goes. */
/* The DP collectives and `chain` TP all-reduces a TP group in one run:
 * what they take and what the all-reduces lose, into o. */
static int overlap_run(topo_t *t, const step_req_t *q, const step_comm_t *tp, const step_comm_t *const *dp, int ndp,
                       int chain, step_out_t *o, baton_err_t *e) {
    int n = 0, total = ndp * dp[0]->groups + (tp ? tp->groups * chain : 0);
    size_t dp_ranks = (size_t)ndp * dp[0]->groups * dp[0]->ranks;
    conc_coll_t *cc = calloc((size_t)total, sizeof *cc);
    int32_t *r = malloc((dp_ranks + (tp ? (size_t)tp->groups * tp->ranks : 0)) * sizeof *r);
    int rc = cc && r ? 0 : err_set(e, BATON_ENOMEM, "out of memory");
    if (rc == 0) {
        add_members(q, dp[0], dp[0]->algo, 1, cc, r, &n);
        int last = 0;                          /* the first member of the last dp collective */
        if (ndp == 2) {
            last = n;
            add_members(q, dp[1], dp[1]->algo, 1, cc, r + (size_t)dp[0]->groups * dp[0]->ranks, &n);
            for (int i = last; i < n; i++) cc[i].after = i - last;    /* all-gather after its reduce-scatter */
        }
        int first_tp = n;
        if (tp) add_members(q, tp, tp->algo, chain, cc, r + dp_ranks, &n);
        for (int i = 0; i < n; i++) {          /* each under the protocol it was timed with alone */
            const step_comm_t *c = i >= first_tp ? tp : i >= last ? dp[ndp - 1] : dp[0];
            cc[i].own_proto = 1, cc[i].proto = (proto_t)c->proto;
        }
        engine_result_t res;
        conc_opts_t co = {.proto = (proto_t)dp[0]->proto, .contention = q->contention};
        o->dp_shared_s = o->tp_slowdown_s = 0;
        if ((rc = conc_run(t, cc, n, &co, &res, e)) == 0) {
            for (int i = last; i < first_tp; i++) o->dp_shared_s = fmax(o->dp_shared_s, cc[i].end_s);
            for (int i = first_tp; i < n; i++)
                o->tp_slowdown_s = fmax(o->tp_slowdown_s, cc[i].end_s - (chain ? (double)chain * tp->each_s : 0));
            o->tp_slowdown_s = fmax(0, o->tp_slowdown_s);
        }
        engine_result_free(&res);
    }
    free(cc);
    free(r);
    return rc;
}

/* Train: the data-parallel reduce-scatter and all-gather overlapped with
 * the backward pass, simulated together with the tensor-parallel all-reduces
 * the backward runs meanwhile (as many, one after another in each TP group,
 * as fit in the DP collectives' own time, at most 64): what they then take,
 * what the all-reduces lose, and the step with the DP time hidden behind
 * the backward's compute (two thirds of the roofline) as far as it goes.
 * Each member of the run takes its own channels, so a long chain on a whole
 * NVL72 rack can pass the engine's channels a rank (SCHED_GROUP_MAX_CHANNELS):
 * the chain is then halved until it fits, and said (o->chain < o->chain_wanted). */
static int overlap(topo_t *t, const step_req_t *q, step_out_t *o, baton_err_t *e) {
    const step_comm_t *tp = NULL, *dp[2] = {NULL, NULL};   /* reduce-scatter and all-gather, or the all-reduce */
    double dp_alone = 0;
    int ndp = 0;
    for (int i = 0; i < o->ncomm; i++) {
        if (o->comm[i].kind == STEP_TP) tp = &o->comm[i];
        if (o->comm[i].kind >= STEP_DP_RS && ndp < 2) dp[ndp++] = &o->comm[i], dp_alone += o->comm[i].each_s;
    }
    if (ndp == 0) return 0;
    int chain = tp ? (int)fmin(64, fmin(tp->count, ceil(dp_alone / tp->each_s))) : 0, rc;
    o->chain_wanted = chain;
    while ((rc = overlap_run(t, q, tp, dp, ndp, chain, o, e)) == BATON_EUNSUP && chain > 1 && e && strstr(e->msg, SCHED_GROUP_LIMIT_SAYS))
        chain = (chain + 1) / 2;
    o->chain = chain;
    if (rc < 0) return rc;
    o->hidden_s = fmin(o->dp_shared_s, o->roofline_s * 2 / 3);
    o->overlap_step_s = o->step_s - dp_alone + (o->dp_shared_s - o->hidden_s) + o->tp_slowdown_s;
    return 0;
}

int step_run(topo_t *t, const step_req_t *q, step_out_t *o, baton_err_t *e) {
    char why[256];
    memset(o, 0, sizeof *o);
    if (step_check(q, t, why, sizeof why)) return err_set(e, BATON_EINVAL, "%s", why);
    arith(q, o);
    for (int i = 0; i < o->ncomm; i++) {
        int rc = time_comm(t, q, &o->comm[i], e);
        if (rc < 0) return rc;
        o->transport_s += o->comm[i].count * o->comm[i].each_s;
    }
    o->step_s = o->roofline_s + o->transport_s + o->overhead_s;
    return q->phase == STEP_TRAIN ? overlap(t, q, o, e) : 0;
}

double step_resident(const step_out_t *o) {
    return o->weights_bytes + o->kv_bytes + o->grad_bytes + o->optimizer_bytes;
}

int step_bound(const step_out_t *o) {
    double v[4] = {o->compute_s, o->memory_s, o->transport_s, o->overhead_s};
    int k = 0;
    for (int i = 1; i < 4; i++) if (v[i] > v[k]) k = i;
    return k;
}

/* Trace output: one slice. */
static int slice(char **buf, size_t *len, size_t *cap, int tid, const char *name, double t0, double dt) {
    if (*len + 256 > *cap) {
        char *nb = realloc(*buf, *cap * 2);
        if (nb == NULL) return -1;
        *buf = nb, *cap *= 2;
    }
    *len += (size_t)snprintf(*buf + *len, *cap - *len, ",\n{\"ph\":\"X\",\"pid\":0,\"tid\":%d,\"name\":\"%s\",\"ts\":%.6f,\"dur\":%.6f}",
                             tid, name, t0 * 1e6, dt * 1e6);
    return 0;
}

static double comm_each(const step_out_t *o, step_kind_t k) {
    for (int i = 0; i < o->ncomm; i++)
        if (o->comm[i].kind == k) return o->comm[i].each_s;
    return 0;
}

char *step_trace_json(const step_req_t *q, const step_out_t *o) {
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap);
    if (b == NULL) return NULL;
    len = (size_t)snprintf(b, cap, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
                           "{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"%s %s, one GPU's critical path\"}}", q->m->name, step_phase_name(q->phase));
    static const char *const tracks[] = {"launches (host)", "compute (GPU)", "communication"};
    for (int i = 0; i < 3; i++)
        len += (size_t)snprintf(b + len, cap - len, ",\n{\"ph\":\"M\",\"pid\":0,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}}", i, tracks[i]);
    double t = 0, ar = comm_each(o, STEP_TP), a2a = comm_each(o, STEP_EP), pps = comm_each(o, STEP_PP);
    double gap = o->overhead_s / (o->kernels > 0 ? o->kernels : 1), passes = q->phase == STEP_TRAIN ? 2 : 1;
    int kpl = o->slots > 0 && o->layers_per_slot > 0 ? (int)((o->kernels - 4 * q->microbatches) / (o->slots * o->layers_per_slot)) : 0, rc = 0;
    for (int s = 0; s < o->slots && rc == 0; s++) {
        for (int l = 0; l < o->layers_per_slot && rc == 0; l++) {
            rc |= slice(&b, &len, &cap, 0, "kernel launches", t, kpl * gap), t += kpl * gap;
            rc |= slice(&b, &len, &cap, 1, "attention", t, o->attn_block_s), t += o->attn_block_s;
            if (ar > 0) rc |= slice(&b, &len, &cap, 2, "tp all-reduce", t, passes * ar), t += passes * ar;
            if (a2a > 0) rc |= slice(&b, &len, &cap, 2, "ep all-to-all (dispatch)", t, passes * a2a), t += passes * a2a;
            rc |= slice(&b, &len, &cap, 1, "mlp", t, o->mlp_block_s), t += o->mlp_block_s;
            if (a2a > 0) rc |= slice(&b, &len, &cap, 2, "ep all-to-all (combine)", t, passes * a2a), t += passes * a2a;
            if (ar > 0) rc |= slice(&b, &len, &cap, 2, "tp all-reduce", t, passes * ar), t += passes * ar;
        }
        if (s + 1 < o->slots && pps > 0) rc |= slice(&b, &len, &cap, 2, "pp send", t, passes * pps), t += passes * pps;
    }
    for (int mb = 0; mb < q->microbatches && rc == 0; mb++) {
        rc |= slice(&b, &len, &cap, 0, "kernel launches", t, 4 * gap), t += 4 * gap;
        rc |= slice(&b, &len, &cap, 1, "output projection", t, o->head_s), t += o->head_s;
    }
    for (int i = 0; i < o->ncomm && rc == 0; i++)
        if (o->comm[i].kind >= STEP_DP_RS) rc |= slice(&b, &len, &cap, 2, o->comm[i].what, t, o->comm[i].each_s), t += o->comm[i].each_s;
    if (o->opt_s > 0 && rc == 0) rc |= slice(&b, &len, &cap, 1, "optimizer", t, o->opt_s);
    if (rc == 0 && len + 8 > cap && !(b = realloc(b, cap + 8))) return NULL;
    if (rc) { free(b); return NULL; }
    memcpy(b + len, "\n]}\n", 5);
    return b;
}
