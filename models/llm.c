/* llm.c - built-in model shapes, from each model's published config.json. */
#include "llm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const llm_t table[] = {
    /* meta-llama/Meta-Llama-3-8B config.json: 8.03 B parameters */
    {"llama3-8b", 32, 4096, 32, 8, 128, 14336, 128256, 0, 0, 0, "meta-llama/Meta-Llama-3-8B config.json"},
    /* meta-llama/Meta-Llama-3-70B config.json: 70.6 B */
    {"llama3-70b", 80, 8192, 64, 8, 128, 28672, 128256, 0, 0, 0, "meta-llama/Meta-Llama-3-70B config.json"},
    /* meta-llama/Llama-3.1-405B config.json: 405.9 B */
    {"llama3-405b", 126, 16384, 128, 8, 128, 53248, 128256, 0, 0, 0, "meta-llama/Llama-3.1-405B config.json"},
    /* Qwen/Qwen2.5-7B config.json: 7.61 B (the seed post's 28-layer model) */
    {"qwen2.5-7b", 28, 3584, 28, 4, 128, 18944, 152064, 0, 0, 0, "Qwen/Qwen2.5-7B config.json"},
    /* mistralai/Mixtral-8x7B-v0.1 config.json: 46.7 B, 12.9 B active */
    {"mixtral-8x7b", 32, 4096, 32, 8, 128, 14336, 32000, 8, 2, 0, "mistralai/Mixtral-8x7B-v0.1 config.json"},
};

#define NLLM ((int)(sizeof table / sizeof table[0]))

static const struct { const char *alias, *name; } aliases[] = {
    {"7b", "qwen2.5-7b"}, {"8b", "llama3-8b"}, {"70b", "llama3-70b"}, {"405b", "llama3-405b"},
};

const llm_t *llm_at(int i) { return i >= 0 && i < NLLM ? &table[i] : NULL; }

const llm_t *llm_find(const char *name) {
    for (int i = 0; i < (int)(sizeof aliases / sizeof aliases[0]); i++)
        if (strcmp(aliases[i].alias, name) == 0) name = aliases[i].name;
    for (int i = 0; i < NLLM; i++)
        if (strcmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}

const char *llm_check(const llm_t *m) {
    if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->kv_heads < 1 || m->head_dim < 1 || m->ffn < 1 || m->vocab < 1)
        return "layers, hidden, heads, kv_heads, head_dim, ffn and vocab must be positive";
    if (m->heads % m->kv_heads) return "heads must be a multiple of kv_heads (grouped-query attention)";
    if (m->experts < 0 || m->top_k < 0 || (m->experts > 0) != (m->top_k > 0) || m->top_k > m->experts)
        return "a mixture of experts needs experts >= top_k >= 1 (or neither)";
    return NULL;
}

double llm_attn_params(const llm_t *m) {
    double q = (double)m->heads * m->head_dim, kv = (double)m->kv_heads * m->head_dim;
    return (double)m->hidden * (q + 2 * kv) + q * m->hidden;        /* Wq, Wk, Wv, Wo */
}

double llm_mlp_params(const llm_t *m) { return 3.0 * m->hidden * m->ffn; }   /* gate, up, down */

double llm_router_params(const llm_t *m) { return (double)m->hidden * m->experts; }

double llm_embed_params(const llm_t *m) { return (m->tied ? 1.0 : 2.0) * m->vocab * m->hidden; }

/* Two RMSNorm weights per layer and the final one. */
static double norm_params(const llm_t *m) { return (2.0 * m->layers + 1) * m->hidden; }

double llm_params(const llm_t *m) {
    double mlps = m->experts ? m->experts : 1;
    return m->layers * (llm_attn_params(m) + mlps * llm_mlp_params(m) + llm_router_params(m)) + llm_embed_params(m) +
           norm_params(m);
}

double llm_active_params(const llm_t *m) {
    double mlps = m->experts ? m->top_k : 1;
    return m->layers * (llm_attn_params(m) + mlps * llm_mlp_params(m) + llm_router_params(m)) + llm_embed_params(m) +
           norm_params(m);
}

double llm_kv_bytes_per_token(const llm_t *m, int elem_bytes) {
    return 2.0 * m->kv_heads * m->head_dim * elem_bytes;
}

const char *llm_set(llm_t *m, const char *key, const char *value, char *buf, int len) {
    static const char *const keys[] = {"layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab", "experts", "top_k", NULL};
    int *fields[] = {&m->layers, &m->hidden, &m->heads, &m->kv_heads, &m->head_dim, &m->ffn, &m->vocab, &m->experts, &m->top_k};
    if (!strcmp(key, "name")) {
        snprintf(m->name, sizeof m->name, "%.31s", value);
        return NULL;
    }
    if (!strcmp(key, "tied")) {
        m->tied = !strcmp(value, "true") ? 1 : !strcmp(value, "false") ? 0 : -1;
        if (m->tied >= 0) return NULL;
        snprintf(buf, len, "'tied' is true or false, not '%s'", value);
        return buf;
    }
    for (int i = 0; keys[i]; i++) {
        if (strcmp(key, keys[i])) continue;
        char *end;
        long x = strtol(value, &end, 10);
        if (end != value && !*end && x >= 0 && x <= 1 << 24) { *fields[i] = (int)x; return NULL; }
        snprintf(buf, len, "'%s' must be a whole number, not '%s'", key, value);
        return buf;
    }
    snprintf(buf, len, "unknown key '%s' (name, layers, hidden, heads, kv_heads, head_dim, ffn, vocab, experts, top_k, tied)", key);
    return buf;
}
