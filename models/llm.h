/* llm.h - a transformer's shape, by its published name, and what it costs.
 *
 * The numbers a step's buckets need (sim/answer/step.h): parameters per layer,
 * FLOPs per token, the KV cache per token. Decoder-only, pre-norm, gated MLP
 * (SwiGLU: three matrices), grouped-query attention; a mixture of experts
 * replaces the MLP by `experts` MLPs of which each token uses `top_k`. */
#ifndef BATON_LLM_H
#define BATON_LLM_H

#include <stdint.h>

typedef struct llm {
    char name[32];
    int layers;
    int hidden;
    int heads, kv_heads, head_dim;
    int ffn;                 /* the MLP's inner size (each expert's, for a MoE) */
    int vocab;
    int experts, top_k;      /* 0, 0: dense */
    int tied;                /* 1: the output projection is the embedding */
    const char *source;      /* where the numbers come from */
} llm_t;

/* The built-in model of this name ("llama3-70b"; aliases 7b, 8b, 70b, 405b), or NULL. */
const llm_t *llm_find(const char *name);
const llm_t *llm_at(int i);
/* Set one field of a model file ("layers", "80"); NULL, or why not (in buf). */
const char *llm_set(llm_t *m, const char *key, const char *value, char *buf, int len);
/* NULL, or what is wrong with m's numbers. */
const char *llm_check(const llm_t *m);

/* Parameters: attention's four matrices of one layer, one MLP (one expert),
 * the router, and the embedding plus output projection. */
double llm_attn_params(const llm_t *m);
double llm_mlp_params(const llm_t *m);
double llm_router_params(const llm_t *m);
double llm_embed_params(const llm_t *m);
/* All of them, and those one token uses (a MoE's active parameters). */
double llm_params(const llm_t *m);
double llm_active_params(const llm_t *m);
/* Bytes of K and V one token keeps per layer, all KV heads. */
double llm_kv_bytes_per_token(const llm_t *m, int elem_bytes);

#endif
