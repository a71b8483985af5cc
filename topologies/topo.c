/* topo.c - the machine graph: nodes, links, ranks, parameters, finalising
 * (reachability), and the uniform machine the closed forms see. Searches and
 * routes: topo_route.c. */
#include "topo_internal.h"

#include "../util/hash.h"
#include "../util/suggest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const char *kind_names[NODE_KIND_COUNT] = {"gpu", "switch", "nic", "cpu"};

const char *topo_kind_name(node_kind_t k) { return (k < NODE_KIND_COUNT) ? kind_names[k] : "?"; }

/* Classes list the kinds in this order: gpu first, switch last. */
static const node_kind_t class_order[NODE_KIND_COUNT] = {NODE_GPU, NODE_NIC, NODE_CPU, NODE_SWITCH};

static int class_pos(node_kind_t k) {
    for (int i = 0; i < NODE_KIND_COUNT; i++)
        if (class_order[i] == k) return i;
    return NODE_KIND_COUNT;
}

/* Link l's ends' kinds in class order. */
static void link_kinds(const topo_t *t, int l, node_kind_t *a, node_kind_t *b) {
    *a = t->nodes[t->dl[l].src].kind, *b = t->nodes[t->dl[l].dst].kind;
    if (class_pos(*a) > class_pos(*b)) { node_kind_t x = *a; *a = *b; *b = x; }
}

const char *topo_link_class(const topo_t *t, int l, char *buf, size_t n) {
    node_kind_t a, b;
    link_kinds(t, l, &a, &b);
    snprintf(buf, n, "%s-%s", kind_names[a], kind_names[b]);
    return buf;
}

/* The kinds a class names ("gpu-switch": GPU, switch), in class order: 0,
 * or -1 where s is no class. */
static int class_kinds(const char *s, node_kind_t *a, node_kind_t *b) {
    const char *dash = strchr(s, '-');
    char x[16];
    if (dash == NULL || (size_t)(dash - s) >= sizeof x) return -1;
    memcpy(x, s, (size_t)(dash - s));
    x[dash - s] = '\0';
    int ka = topo_kind_parse(x), kb = topo_kind_parse(dash + 1);
    if (ka < 0 || kb < 0 || class_pos((node_kind_t)ka) > class_pos((node_kind_t)kb)) return -1;
    *a = (node_kind_t)ka, *b = (node_kind_t)kb;
    return 0;
}

int topo_link_class_valid(const char *s) {
    node_kind_t a, b;
    return class_kinds(s, &a, &b) == 0;
}

void topo_add_source(topo_t *t, unsigned long long dev, unsigned long long ino) {
    if (t->nsources < TOPO_MAX_SOURCES) {
        t->source[t->nsources].dev = dev;
        t->source[t->nsources++].ino = ino;
    }
}

int topo_read_from(const topo_t *t, unsigned long long dev, unsigned long long ino) {
    for (int i = 0; i < t->nsources; i++)
        if (t->source[i].dev == dev && t->source[i].ino == ino) return 1;
    return 0;
}

int topo_rename(topo_t *t, const char *name) {
    char *n = strdup(name);
    if (n == NULL) return BATON_ENOMEM;
    free(t->name);
    t->name = n;
    return 0;
}

/* NCCL's socket transport (topo_params_t.socket; net_socket.cc): the data
 * a NIC carries is copied through the kernel's TCP stack by one thread per
 * stream, the proxy's own (NCCL_SOCKET_NTHREADS 0, its default off AWS and
 * GCP) or its helpers, so each link of a NIC carries at most socket_bw x
 * streams; and a message pays socket_lat in the two hosts' stacks, a
 * quarter on each NIC link it crosses (in and out of the sending NIC, in and
 * out of the receiving one). Applied to the links, the engine, the closed
 * forms and `plan` all see it; each NIC link's rate and latency before it
 * are kept (topo_line_bw, topo_line_lat), so a machine written whole
 * carries those and the knob, and reading it back applies it once. */
static double socket_cap(const topo_params_t *p) { return p->socket_bw * (p->socket_threads > 1 ? p->socket_threads : 1); }

static int apply_socket(topo_t *t, baton_err_t *e) {
    t->line_bw = calloc((size_t)t->ndl + 1, sizeof *t->line_bw);
    t->line_lat = calloc((size_t)t->ndl + 1, sizeof *t->line_lat);
    if (t->line_bw == NULL || t->line_lat == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int l = 0; l < t->ndl; l++) {
        topo_dlink_t *d = &t->dl[l];
        if (t->nodes[d->src].kind != NODE_NIC && t->nodes[d->dst].kind != NODE_NIC) continue;
        t->line_bw[l] = d->bw;
        t->line_lat[l] = d->lat;
        if (d->bw > socket_cap(&t->params)) d->bw = socket_cap(&t->params);
        d->lat += t->params.socket_lat / 4;
    }
    return 0;
}

double topo_line_bw(const topo_t *t, int l) { return t->line_bw && t->line_bw[l] > 0 ? t->line_bw[l] : t->dl[l].bw; }
double topo_line_lat(const topo_t *t, int l) { return t->line_bw && t->line_bw[l] > 0 ? t->line_lat[l] : t->dl[l].lat; }

/* A NIC link's rate under the socket transport: its line rate up to the
 * streams' cap. */
static double socket_rate(const topo_t *t, int l) {
    double cap = socket_cap(&t->params);
    return t->line_bw[l] < cap ? t->line_bw[l] : cap;
}

const char *const topo_nccl_bounds[4] = {"NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS", "NCCL_MAX_CTAS"};

int topo_nccl_channels(const topo_t *t, int nc, int nvls) {
    const int *b = topo_params_c(t)->nccl_nch;     /* min, max channels; min, max CTAs */
    int hi = nvls ? b[3] : b[1] && b[3] ? (b[1] < b[3] ? b[1] : b[3]) : b[1] ? b[1] : b[3];
    int lo = nvls ? b[2] : b[0] > b[2] ? b[0] : b[2];
    if (hi > 0 && nc > hi) nc = hi;
    return lo > nc ? lo : nc;
}

int topo_set_socket_bw(topo_t *t, double bw, baton_err_t *e) {
    if (t->line_bw == NULL) return err_set(e, BATON_EINVAL, "the machine does not run NCCL's socket transport (socket: true)");
    if (!(bw > 0)) return err_set(e, BATON_EINVAL, "socket_bw must be positive, not %g", bw);
    t->params.socket_bw = bw;
    for (int l = 0; l < t->ndl; l += 2)
        if (t->line_bw[l] > 0 && topo_set_link_bw(t, l, socket_rate(t, l), e) < 0) return -1;
    return 0;
}

double topo_class_efficiency(const topo_t *t, const char *cls) {
    for (int i = 0; i < t->params.neff; i++)
        if (strcmp(t->params.class_eff[i].name, cls) == 0) return t->params.class_eff[i].eff;
    return 1;
}

/* The links carry declared x old efficiency; divide it out, multiply the new in. */
int topo_set_class_efficiency(topo_t *t, const char *cls, double eff, baton_err_t *e) {
    topo_params_t *p = &t->params;
    int i = 0;
    node_kind_t ka, kb, a, b;
    if (!(eff > 0 && eff <= 1)) return err_set(e, BATON_EINVAL, "efficiency of %s links must be in (0, 1], not %g", cls, eff);
    if (class_kinds(cls, &ka, &kb) < 0 || strlen(cls) >= sizeof p->class_eff[0].name)
        return err_set(e, BATON_EINVAL, "'%s' is not a link class", cls);
    while (i < p->neff && strcmp(p->class_eff[i].name, cls)) i++;
    if (i == (int)(sizeof p->class_eff / sizeof p->class_eff[0])) return err_set(e, BATON_EINVAL, "too many link classes");
    double f = eff / (i < p->neff ? p->class_eff[i].eff : 1);
    if (i == p->neff) strcpy(p->class_eff[p->neff++].name, cls);
    p->class_eff[i].eff = eff;
    for (int l = 0; l < t->ndl && f != 1; l += 2) {      /* by kinds: a fit sets this at every trial */
        link_kinds(t, l, &a, &b);
        if (a != ka || b != kb) continue;
        double bw = t->dl[l].bw * f;
        if (t->line_bw && t->line_bw[l] > 0) {   /* sockets: the line rate takes the efficiency, the cap stays */
            t->line_bw[l] *= f, t->line_bw[l ^ 1] *= f;
            bw = socket_rate(t, l);
        }
        if (topo_set_link_bw(t, l, bw, e) < 0) return -1;
    }
    return 0;
}

int topo_kind_parse(const char *s) {
    for (int i = 0; i < NODE_KIND_COUNT; i++)
        if (strcmp(s, kind_names[i]) == 0) return i;
    return -1;
}

topo_t *topo_create(const char *name) {
    topo_t *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->name = strdup(name ? name : "unnamed");
    if (t->name == NULL) { free(t); return NULL; }
    t->params.ports = 0;
    t->params.max_inflight = 8;
    t->params.p2p = 1;
    t->params.gdr = 1;
    t->dist_to = -1;
    t->params.bw_scale = t->params.lat_scale = 1;
    t->params.launch = TOPO_LAUNCH_DEFAULT;
    t->params.arch = -1;
    t->params.lib.ll128 = -1;
    t->params.calib.mape_pct = t->params.calib.cv_mape_pct = -1;
    t->params.nvls_eff = 1;
    t->params.socket_bw = TOPO_SOCKET_BW;
    t->params.socket_lat = TOPO_SOCKET_LAT;
    t->params.match_lat = TOPO_MATCH_LAT;
    t->params.rdzv_lat = TOPO_RDZV_LAT;
    t->params.rdzv_above = TOPO_RDZV_ABOVE;
    t->params.inline_max = TOPO_INLINE_MAX;
    t->params.p2p_ll_max = TOPO_P2P_LL_MAX;
    for (int i = 0; i < PROTO_COUNT; i++) t->params.proto[i] = proto_default((proto_t)i);
    return t;
}

/* A higher layer's slot (*at, freed by *at_free): the old value freed, p in. */
static void slot_set(void **at, void (**at_free)(void *), void *p, void (*free_fn)(void *)) {
    if (*at && *at_free) (*at_free)(*at);
    *at = p;
    *at_free = free_fn;
}

void *topo_derived(const topo_t *t) { return t->derived; }
void topo_set_derived(topo_t *t, void *p, void (*free_fn)(void *)) { slot_set(&t->derived, &t->derived_free, p, free_fn); }
void *topo_memo(const topo_t *t) { return t->memo; }
void topo_set_memo(topo_t *t, void *p, void (*free_fn)(void *)) { slot_set(&t->memo, &t->memo_free, p, free_fn); }
void *topo_patterns(const topo_t *t) { return t->patterns; }
void topo_set_patterns(topo_t *t, void *p, void (*free_fn)(void *)) { slot_set(&t->patterns, &t->patterns_free, p, free_fn); }

void topo_free(topo_t *t) {
    if (t == NULL) return;
    topo_routes_back(t);                 /* frees what was put aside (it reads the rates: first) */
    topo_set_derived(t, NULL, NULL);
    topo_set_memo(t, NULL, NULL);
    topo_set_patterns(t, NULL, NULL);
    topo_fold_free(t);
    for (int i = 0; i < t->nnodes; i++) free(t->nodes[i].name);
    free(t->nodes);
    free(t->dl);
    free(t->line_bw);
    free(t->line_lat);
    free(t->link_at);
    free(t->rank_node);
    free(t->adj_off);
    free(t->adj);
    free(t->adj_pos);
    topo_route_cache_free(&t->rc);
    free(t->bfs_dist);
    free(t->bfs_stamp);
    free(t->bfs_queue);
    free(t->route_tmp);
    free(t->scratch);
    free(t->hop_memo);
    free(t->hops);
    free(t->comp);
    for (int i = 0; i < t->ndmaps; i++) free(t->dmaps[i].hops);
    free(t->dmaps);
    free(t->dmap_slot);
    free(t->dmap_spent);
    for (int i = 0; i < t->nparams; i++) { free(t->param_name[i]); free(t->param_value[i]); free(t->param_file[i]); }
    free(t->param_name);
    free(t->param_file);
    free(t->param_value);
    free(t->reducer);
    free(t->name_slot);
    free(t->name);
    free(t);
}

int topo_add_param(topo_t *t, const char *name, const char *value, const char *file_value) {
    char **n = realloc(t->param_name, (size_t)(t->nparams + 1) * sizeof *n);
    if (n == NULL) return -1;
    t->param_name = n;
    char **v = realloc(t->param_value, (size_t)(t->nparams + 1) * sizeof *v);
    if (v == NULL) return -1;
    t->param_value = v;
    char **f = realloc(t->param_file, (size_t)(t->nparams + 1) * sizeof *f);
    if (f == NULL) return -1;
    t->param_file = f;
    n[t->nparams] = strdup(name);
    v[t->nparams] = strdup(value);
    f[t->nparams] = file_value ? strdup(file_value) : NULL;
    if (!n[t->nparams] || !v[t->nparams] || (file_value && !f[t->nparams])) {
        free(n[t->nparams]), free(v[t->nparams]), free(f[t->nparams]);
        return -1;
    }
    t->nparams++;
    return 0;
}

const char *topo_param_file_value(const topo_t *t, const char *name) {
    for (int i = 0; i < t->nparams; i++)
        if (strcmp(t->param_name[i], name) == 0) return t->param_file[i] ? t->param_file[i] : t->param_value[i];
    return NULL;
}

int topo_nparams(const topo_t *t) { return t->nparams; }

void topo_param_at(const topo_t *t, int i, const char **name, const char **value) {
    *name = t->param_name[i];
    *value = t->param_value[i];
}

/* ---- node names: a hash index, so a 4 M-node file loads in linear time -- */

static uint32_t name_hash(const char *s) { return hash_bytes(HASH_SEED, s, strlen(s)); }

/* The slot holding name (hash h), or the empty slot where it would go. The
 * slot's hash is compared before the name: a collision then costs no visit
 * to another node's name (2 M names: most of the loader's time was these). */
static uint32_t name_probe(const topo_t *t, const char *name, uint32_t h) {
    uint32_t mask = t->name_cap - 1, i = h & mask;
    while (t->name_slot[i].node &&
           (t->name_slot[i].hash != h || strcmp(t->nodes[t->name_slot[i].node - 1].name, name) != 0))
        i = (i + 1) & mask;
    return i;
}

/* Make room for one more name: double the index and re-insert every node. */
static int name_reserve(topo_t *t) {
    if ((uint32_t)(t->nnodes + 1) * 2 < t->name_cap) return 0;
    uint32_t cap = t->name_cap ? t->name_cap * 2 : 64, mask = cap - 1;
    struct name_slot *slot = calloc(cap, sizeof *slot), *old = t->name_slot;
    if (slot == NULL) return -1;
    for (uint32_t i = 0; i < t->name_cap; i++) {     /* every name once more; its hash is kept */
        if (old[i].node == 0) continue;
        uint32_t j = old[i].hash & mask;
        while (slot[j].node) j = (j + 1) & mask;
        slot[j] = old[i];
    }
    free(old);
    t->name_slot = slot;
    t->name_cap = cap;
    return 0;
}

int topo_find_node(const topo_t *t, const char *name) {
    return t->name_cap ? t->name_slot[name_probe(t, name, name_hash(name))].node - 1 : -1;
}

const char *topo_node_hint(const topo_t *t, const char *name) {
    int n = t->nnodes < TOPO_HINT_NODES ? t->nnodes : TOPO_HINT_NODES;
    const char **cands = malloc(((size_t)n + 1) * sizeof *cands);
    if (cands == NULL) return "";
    for (int i = 0; i < n; i++) cands[i] = t->nodes[i].name;
    cands[n] = NULL;
    const char *hint = suggest_hint(name, cands);
    free(cands);
    return hint;
}

int topo_grow(void **p, int *cap, int need, size_t elem) {
    if (need <= *cap) return 0;
    int nc = *cap ? *cap * 2 : 16;
    while (nc < need) nc *= 2;
    void *q = realloc(*p, (size_t)nc * elem);
    if (q == NULL) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

int topo_add_node(topo_t *t, const char *name, node_kind_t kind, int line, int col,
                  baton_err_t *e) {
    int prev = topo_find_node(t, name);
    if (prev >= 0)
        return err_set(e, BATON_EPARSE, "duplicate node name '%s' (first declared at line %d)",
                       name, t->nodes[prev].line);
    if (t->nnodes >= TOPO_MAX_NODES)
        return err_set(e, BATON_EINVAL, "more than %d nodes (baton's limit); '%s' is one too many", TOPO_MAX_NODES, name);
    if (topo_grow((void **)&t->nodes, &t->capnodes, t->nnodes + 1, sizeof *t->nodes) < 0 || name_reserve(t) < 0)
        return err_set(e, BATON_ENOMEM, "out of memory adding node '%s'", name);
    topo_node_t *n = &t->nodes[t->nnodes];
    n->name = strdup(name);
    if (n->name == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    n->kind = kind;
    n->rank = -1;
    n->line = line;
    n->col = col;
    n->transit = kind != NODE_GPU;
    n->reduces = 0;
    n->hidden = 0;
    uint32_t h = name_hash(name);
    t->name_slot[name_probe(t, name, h)] = (struct name_slot){.node = t->nnodes + 1, .hash = h};
    return t->nnodes++;
}

int topo_add_link(topo_t *t, int a, int b, double bw, double lat, baton_err_t *e) {
    return topo_add_link_at(t, a, b, bw, lat, 0, 0, e);
}

/* Where link k (a full-duplex one) was declared, zeros for those built in
 * code; kept only once some link has a position. */
static int note_link_at(topo_t *t, int k, int line, int col) {
    if (t->link_at == NULL && line <= 0) return 0;
    int had = t->cap_link_at;
    if (topo_grow((void **)&t->link_at, &t->cap_link_at, k + 1, sizeof *t->link_at) < 0) return -1;
    if (t->cap_link_at > had) memset(t->link_at + had, 0, (size_t)(t->cap_link_at - had) * sizeof *t->link_at);
    t->link_at[k][0] = line, t->link_at[k][1] = col;
    return 0;
}

int topo_add_link_at(topo_t *t, int a, int b, double bw, double lat, int line, int col, baton_err_t *e) {
    if (a < 0 || a >= t->nnodes || b < 0 || b >= t->nnodes || a == b)
        return err_set(e, BATON_EINVAL, "a link needs two different existing nodes");
    if (!(bw > 0)) return err_set(e, BATON_EINVAL, "link bandwidth must be positive");
    if (!(lat >= 0)) return err_set(e, BATON_EINVAL, "link latency must not be negative");
    if (t->ndl + 2 > TOPO_MAX_LINKS)
        return err_set(e, BATON_EINVAL, "more than %d full-duplex links (baton's limit)", TOPO_MAX_LINKS / 2);
    if (topo_grow((void **)&t->dl, &t->capdl, t->ndl + 2, sizeof *t->dl) < 0)
        return err_set(e, BATON_ENOMEM, "out of memory adding a link");
    if (note_link_at(t, t->ndl / 2, line, col) < 0) return err_set(e, BATON_ENOMEM, "out of memory adding a link");
    t->dl[t->ndl++] = (topo_dlink_t){a, b, bw, lat};
    t->dl[t->ndl++] = (topo_dlink_t){b, a, bw, lat};
    return 0;
}

void topo_set_transit(topo_t *t, int node, int transit) { t->nodes[node].transit = transit; }


void topo_set_reduces(topo_t *t, int node, int reduces) { t->nodes[node].reduces = reduces; }

int topo_nreducers(const topo_t *t) { return t->nreducers; }
int topo_nvls_reducers(const topo_t *t) { return t->params.sharp.rails ? t->params.sharp.first : t->nreducers; }

/* NCCL's model since 2.28.3 (src/graph/tuning.cc: NVLS's bus bandwidth
 * converted to an algorithm bandwidth by nRanks/nsteps, as a ring's) holds
 * NVLS's bus bandwidth the same at every domain size g, where a switch that
 * took each rank's n bytes up and sent n down at one rate would hold its
 * algorithm bandwidth: as if a rank's own 1/g of each sum stayed off its
 * link. The GB200 logs agree (busbw 847 GB/s on 8 ranks, 841 on 72: the
 * algorithm bandwidth 12 % lower, where g/(g - 1) falls 11 %). So a
 * transfer to or from an NVLS switch moves its bytes at nvls_eff x g/(g - 1)
 * of the link: (g - 1)/g of them at nvls_eff. g: a run's ranks over the
 * NVLS switches it uses (its helpers, at most the machine's NVLS switches:
 * SHARP's come after them), so a 4-rank group on an 8-GPU node's switch is
 * a domain of 4; a real number where the switches' shares differ. */
double topo_nvls_share(const topo_t *t, int nranks, int helpers) {
    int n = topo_nvls_reducers(t);
    if (helpers < n) n = helpers;
    double g = n > 0 ? (double)nranks / n : 0;
    return g > 1 ? t->params.nvls_eff * g / (g - 1) : t->params.nvls_eff;
}

double topo_nvls_domain(const topo_t *t) {
    int n = topo_nvls_reducers(t);
    return n > 0 ? (double)t->nranks / n : 0;
}

double topo_nvls_eff(const topo_t *t) { return topo_nvls_share(t, t->nranks, topo_nvls_reducers(t)); }

/* The node of rank r, or of helper rank r >= nranks (a reducing switch). */

int topo_set_rank(topo_t *t, int node, int rank, baton_err_t *e) {
    if (rank < 0) return err_set(e, BATON_EINVAL, "rank must not be negative");
    t->nodes[node].rank = rank;
    return 0;
}

static int build_adjacency(topo_t *t) {
    t->adj_off = calloc((size_t)t->nnodes + 1, sizeof *t->adj_off);
    t->adj = malloc(((size_t)t->ndl + 1) * sizeof *t->adj);
    t->adj_pos = malloc(((size_t)t->ndl + 1) * sizeof *t->adj_pos);
    t->bfs_dist = malloc(((size_t)t->nnodes + 1) * sizeof *t->bfs_dist);
    t->bfs_stamp = calloc((size_t)t->nnodes + 1, sizeof *t->bfs_stamp);
    t->bfs_queue = malloc(((size_t)t->nnodes + 1) * sizeof *t->bfs_queue);
    t->route_tmp = malloc(((size_t)t->nnodes + 1) * sizeof *t->route_tmp);
    if (!t->adj_off || !t->adj || !t->adj_pos || !t->bfs_dist || !t->bfs_stamp || !t->bfs_queue || !t->route_tmp)
        return -1;
    for (int i = 0; i < t->ndl; i++) t->adj_off[t->dl[i].src + 1]++;
    for (int i = 0; i < t->nnodes; i++) t->adj_off[i + 1] += t->adj_off[i];
    int *fill = calloc((size_t)t->nnodes + 1, sizeof *fill);
    if (fill == NULL) return -1;
    for (int i = 0; i < t->ndl; i++) {
        int s = t->dl[i].src;
        t->adj_pos[i] = fill[s];
        t->adj[t->adj_off[s] + fill[s]++] = i;
    }
    free(fill);
    return 0;
}

/* Two links between nodes u and v (dl ids first, second): an error at the
 * second's line (at u's where code built it), naming the first's. */
static int parallel_link(const topo_t *t, const char *file, int u, int v, int first, int second, baton_err_t *e) {
    int line = t->nodes[u].line, col = t->nodes[u].col, was = t->link_at ? t->link_at[first / 2][0] : 0;
    if (t->link_at && t->link_at[second / 2][0] > 0) line = t->link_at[second / 2][0], col = t->link_at[second / 2][1];
    char before[48] = "";
    if (was > 0 && was != line) snprintf(before, sizeof before, " (the first: line %d)", was);
    return err_set(e, BATON_EPARSE, "%s:%d:%d: '%s' and '%s' are joined by two links%s: a route takes one link between "
                   "two nodes, so write one link of their summed bandwidth", file, line, col, t->nodes[u].name,
                   t->nodes[v].name, before);
}

/* Two links between the same two nodes: routes take one path (one link per
 * hop), so the second would count in the summary's injection and bisection
 * but carry nothing, and a prediction would see half the bandwidth the file
 * wrote. An error, naming both nodes, rather than that silently. */
static int check_parallel_links(const topo_t *t, const char *file, baton_err_t *e) {
    int *seen = malloc(((size_t)t->nnodes + 1) * sizeof *seen), *via = malloc(((size_t)t->nnodes + 1) * sizeof *via);
    int rc = 0;
    if (seen == NULL || via == NULL) rc = err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < t->nnodes; i++) seen[i] = -1;
    for (int u = 0; u < t->nnodes && rc == 0; u++)
        for (int k = t->adj_off[u]; k < t->adj_off[u + 1] && rc == 0; k++) {
            int v = t->dl[t->adj[k]].dst;
            if (seen[v] == u) rc = parallel_link(t, file, u, v, via[v], t->adj[k], e);
            seen[v] = u, via[v] = t->adj[k];
        }
    free(seen);
    free(via);
    return rc;
}

static int map_ranks(topo_t *t, const char *file, baton_err_t *e) {
    int p = 0;
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].rank >= p) p = t->nodes[i].rank + 1;
    if (p == 0) return err_set(e, BATON_EPARSE, "%s:1:1: the topology has no ranks: declare gpu nodes (kind: gpu, the default)", file);
    t->rank_node = malloc((size_t)p * sizeof *t->rank_node);
    if (t->rank_node == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int r = 0; r < p; r++) t->rank_node[r] = -1;
    for (int i = 0; i < t->nnodes; i++) {
        topo_node_t *n = &t->nodes[i];
        if (n->rank < 0) continue;
        if (t->rank_node[n->rank] >= 0)
            return err_set(e, BATON_EPARSE, "%s:%d:%d: rank %d given to both '%s' and '%s'",
                           file, n->line, n->col, n->rank,
                           t->nodes[t->rank_node[n->rank]].name, n->name);
        t->rank_node[n->rank] = i;
    }
    for (int r = 0; r < p; r++)
        if (t->rank_node[r] < 0) {                  /* point at the highest rank: the one past the gap */
            const topo_node_t *hi = &t->nodes[t->rank_node[p - 1]];
            return err_set(e, BATON_EPARSE, "%s:%d:%d: ranks must be numbered 0..%d without gaps; rank %d is missing",
                           file, hi->line, hi->col, p - 1, r);
        }
    t->nranks = p;
    return 0;
}

/* ---- reachability: every rank reaches every rank; some rank each reducer  */

static int uf_find(int *up, int x) {
    while (up[x] != x) x = up[x] = up[up[x]];
    return x;
}

/* Does one connected set of transit nodes touch every rank? Then every pair
 * is joined through it (routes relay only through transit nodes, so reaching
 * rank 0 is not enough: GPUs do not relay). stamp[c] >= 0 afterwards for
 * every set some rank touches. */
static int one_fabric(const topo_t *t, int *up, int *stamp, int *count) {
    for (int i = 0; i < t->nnodes; i++) { up[i] = i; stamp[i] = -1; count[i] = 0; }
    for (int i = 0; i < t->ndl; i++)
        if (t->nodes[t->dl[i].src].transit && t->nodes[t->dl[i].dst].transit)
            up[uf_find(up, t->dl[i].src)] = uf_find(up, t->dl[i].dst);
    int best = -1;
    for (int r = 0; r < t->nranks; r++) {
        int u = t->rank_node[r];
        for (int k = t->adj_off[u] - 1; k < t->adj_off[u + 1]; k++) {
            int v = k < t->adj_off[u] ? u : t->dl[t->adj[k]].dst;   /* the rank itself, then its neighbours */
            if (!t->nodes[v].transit) continue;
            int c = uf_find(up, v);
            if (stamp[c] == r) continue;
            stamp[c] = r;
            if (++count[c] == t->nranks) best = c;
        }
    }
    return best >= 0;
}

/* Every rank reaches every other rank: one shared fabric (linear time) or,
 * failing that, a search from each rank. Every reducer is reached by some
 * rank (a node's NVSwitch by its own GPUs: a cluster's reducing switches are
 * not every rank's; a schedule that sends a rank to a switch it cannot reach
 * fails with that route). */
static int check_all_pairs(topo_t *t, const char *file, baton_err_t *e) {
    int n = t->nnodes, *up = malloc(3 * ((size_t)n + 1) * sizeof *up);
    if (up == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    int ok = one_fabric(t, up, up + n, up + 2 * n);
    for (int i = 0; i < t->nreducers; i++)
        if (up[n + uf_find(up, t->reducer[i])] < 0) {
            const topo_node_t *nr = &t->nodes[t->reducer[i]];
            free(up);
            return err_set(e, BATON_EPARSE, "%s:%d:%d: no rank reaches the reducing switch '%s'", file, nr->line, nr->col,
                           nr->name);
        }
    for (int i = 0; i < n; i++) up[i] = uf_find(up, i);      /* each node's set, for gated routes */
    for (int i = 0; i < n; i++) if (!t->nodes[i].transit) up[i] = -1;
    t->comp = realloc(up, ((size_t)n + 1) * sizeof *up);
    if (t->comp == NULL) t->comp = up;
    for (int a = 0; a < t->nranks && !ok; a++) {
        topo_bfs(t, t->rank_node[a], -1);
        for (int b = 0; b < t->nranks; b++) {
            int v = t->rank_node[b];
            if (topo_dist(t, v) >= 0) continue;
            const topo_node_t *na = &t->nodes[t->rank_node[a]], *nb = &t->nodes[v];
            return err_set(e, BATON_EPARSE, "%s:%d:%d: no route from rank %d ('%s') to '%s': routes pass only "
                           "through switches, NICs and CPUs (a GPU relays only with transit: true)",
                           file, nb->line, nb->col, a, na->name, nb->name);
        }
    }
    return 0;
}

/* p2p off with host_bw set: each CPU gets its host memory, a node joined to
 * it by one link at host_bw, so staged traffic goes in and out of memory,
 * shares it and is counted there. Without host_bw no such hop: a link much
 * faster than the routes through it would only make FIFO reservations hold
 * it for their bottleneck's time. */
static int add_host_memory(topo_t *t, baton_err_t *e) {
    int n = t->nnodes;
    double bw = t->params.host_bw;
    for (int i = 0; i < n; i++) {
        if (t->nodes[i].kind != NODE_CPU) continue;
        char name[512];
        snprintf(name, sizeof name, "%s.hostmem", t->nodes[i].name);
        int m = topo_add_node(t, name, NODE_SWITCH, t->nodes[i].line, t->nodes[i].col, e);
        if (m < 0) return m;
        t->nodes[m].hidden = 1;
        int rc = topo_add_link(t, i, m, bw, 0, e);
        if (rc < 0) return rc;
    }
    return 0;
}

/* GDR off (gdr: false) where a GPU has a NIC beside it and no CPU: the
 * file's GPU-NIC link stands for the PCIe switch both sit under, and the
 * traffic NCCL diverts through the CPU (src/graph/paths.cc, NCCL 2.30.7:
 * "divert all traffic through the CPU local to the GPU") crosses that
 * switch's uplink, the same generation and width: a hidden host a node (the
 * GPUs of one group_size group), joined to each such GPU by its own uplink
 * at the GPU-NIC rate, never a relay (not transit); with host_bw its memory
 * (add_host_memory), which the node's GPUs share. A GPU with a CPU beside
 * it in the file goes through that CPU. */
static int add_gdr_hosts(topo_t *t, const char *file, baton_err_t *e) {
    int n = t->nnodes, nics = 0, beside = 0, g0 = t->params.group_size > 0 ? t->params.group_size : 1;
    int *nic_link = malloc(((size_t)n + 1) * sizeof *nic_link), *host = malloc(((size_t)t->nranks / (size_t)g0 + 1) * sizeof *host);
    unsigned char *cpu = calloc((size_t)n + 1, 1);
    if (nic_link == NULL || host == NULL || cpu == NULL) {
        free(nic_link), free(host), free(cpu);
        return err_set(e, BATON_ENOMEM, "out of memory");
    }
    for (int v = 0; v < n; v++) nic_link[v] = -1;
    for (int l = 0; l < t->ndl; l++) {     /* each GPU's first NIC link, a CPU beside it; one pass */
        int a = t->dl[l].src;
        node_kind_t kb = t->nodes[t->dl[l].dst].kind;
        nics += t->nodes[a].kind == NODE_NIC;
        if (t->nodes[a].kind != NODE_GPU) continue;
        beside += kb == NODE_NIC || kb == NODE_CPU;
        cpu[a] |= kb == NODE_CPU;
        if (kb == NODE_NIC && nic_link[a] < 0) nic_link[a] = l;
    }
    int rc = 0;
    if (nics && !beside)           /* e.g. GPUs and NICs under PCIe switch nodes: no way modelled around GDR */
        rc = err_set(e, BATON_EPARSE, "%s: gdr: false needs a GPU with a NIC or a CPU beside it, through whose host "
                     "baton routes its network traffic; no GPU here has one", file);
    for (int k = 0; k <= t->nranks / g0; k++) host[k] = -1;
    for (int g = 0; g < n && rc >= 0; g++) {
        if (t->nodes[g].kind != NODE_GPU || t->nodes[g].rank < 0 || cpu[g] || nic_link[g] < 0) continue;
        int k = t->nodes[g].rank / g0;
        if (host[k] < 0) {
            char name[512];
            snprintf(name, sizeof name, "%s.host", t->nodes[g].name);
            if ((rc = host[k] = topo_add_node(t, name, NODE_CPU, t->nodes[g].line, t->nodes[g].col, e)) < 0) break;
            t->nodes[host[k]].hidden = 1, t->nodes[host[k]].transit = 0;
        }
        rc = topo_add_link(t, g, host[k], t->dl[nic_link[g]].bw, t->dl[nic_link[g]].lat, e);
    }
    free(nic_link), free(host), free(cpu);
    return rc < 0 ? rc : 0;
}

/* The directed link from CPU node c into its host memory, -1 if none. */
int topo_host_memory_link(const topo_t *t, int c) {
    for (int k = t->adj_off[c]; k < t->adj_off[c + 1]; k++)
        if (t->nodes[t->dl[t->adj[k]].dst].hidden) return t->adj[k];
    return -1;
}

int topo_finalize(topo_t *t, const char *file, baton_err_t *e) {
    int rc = map_ranks(t, file, e);
    if (rc < 0) return rc;
    if (!t->params.gdr && (rc = add_gdr_hosts(t, file, e)) < 0) return rc;
    if ((!t->params.p2p || !t->params.gdr) && t->params.host_bw > 0 && (rc = add_host_memory(t, e)) < 0) return rc;
    if (t->params.socket && (rc = apply_socket(t, e)) < 0) return rc;
    t->reducer = malloc(((size_t)t->nnodes + 1) * sizeof *t->reducer);
    if (t->reducer == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].reduces) t->reducer[t->nreducers++] = i;
    if (t->params.group_size > 0 && t->nranks % t->params.group_size) {
        const topo_params_t *p = &t->params;
        if (p->group_size_set)
            return err_set(e, BATON_EPARSE, "%s: --set group_size=%d does not divide the %d ranks", file, p->group_size, t->nranks);
        if (p->group_size_line)
            return err_set(e, BATON_EPARSE, "%s:%d:%d: group_size %d does not divide the %d ranks", file, p->group_size_line,
                           p->group_size_col, p->group_size, t->nranks);
        return err_set(e, BATON_EPARSE, "%s: group_size %d does not divide the %d ranks", file, p->group_size, t->nranks);
    }
    if (build_adjacency(t) < 0) return err_set(e, BATON_ENOMEM, "out of memory");
    if ((rc = check_parallel_links(t, file, e)) < 0) return rc;
    topo_bfs(t, t->rank_node[0], -1);
    for (int r = 1; r < t->nranks; r++) {
        const topo_node_t *n = &t->nodes[t->rank_node[r]];
        if (topo_dist(t, t->rank_node[r]) < 0)
            return err_set(e, BATON_EPARSE,
                           "%s:%d:%d: rank %d ('%s') is disconnected: no path from rank 0 ('%s')",
                           file, n->line, n->col, r, n->name, t->nodes[t->rank_node[0]].name);
    }
    rc = check_all_pairs(t, file, e);
    t->searches = 0;
    return rc;
}

int topo_nranks(const topo_t *t) { return t->nranks; }
int topo_nnodes(const topo_t *t) { return t->nnodes; }
int topo_nlinks(const topo_t *t) { return t->ndl; }
const char *topo_name(const topo_t *t) { return t->name; }
const topo_node_t *topo_node(const topo_t *t, int i) { return &t->nodes[i]; }
const topo_dlink_t *topo_dlink(const topo_t *t, int i) { return &t->dl[i]; }
int topo_rank_node(const topo_t *t, int rank) { return t->rank_node[rank]; }
const char *topo_rank_name(const topo_t *t, int rank) { return t->nodes[t->rank_node[rank]].name; }
const char *topo_reducer_name(const topo_t *t, int i) { return t->nodes[t->reducer[i]].name; }
topo_params_t *topo_params(topo_t *t) { return &t->params; }
const topo_params_t *topo_params_c(const topo_t *t) { return &t->params; }

/* The routes' summary a closed form sees: the worst and best latency and
 * bottleneck over every rank to rank 0 and to rank p-1 (the two ends, so
 * both near and far pairs of each are seen), and the route to the first
 * helper. Each family shares one search (route_compute reuses complete
 * distances): O(V + E + p x path), not a search per pair. Kept on t until
 * a link changes, under the scales it was taken with: select and sweep ask
 * it once a cell, and 2 p routes are most of a closed form's time. */
static int cost_routes(topo_t *t, baton_err_t *e) {
    struct cm_memo *c = &t->rc.cm;
    topo_routes_settle(t);
    if (c->valid && c->lat_scale == t->params.lat_scale && c->bw_scale == t->params.bw_scale) return 0;
    double lat = 0, bw = 1e300, lat_lo = 1e300, bw_hi = 0;
    int p = t->nranks, net = 0;
    for (int k = 0; k < 2; k++) {
        int dst = k == 0 ? 0 : p - 1;
        if (p > 1) topo_bfs(t, t->rank_node[dst], -1);
        for (int r = 0; r < p && p > 1; r++) {
            if (r == dst) continue;
            topo_route_t rt = {0};
            int rc = topo_route_peek(t, r, dst, &rt, e);   /* 2 p routes, not kept: a million ranks */
            if (rc < 0) return rc;
            if (rt.lat > lat) lat = rt.lat;
            if (rt.bw < bw) bw = rt.bw;
            net |= topo_route_crosses_nic(t, &rt);
            if (rt.lat < lat_lo) lat_lo = rt.lat;
            if (rt.bw > bw_hi) bw_hi = rt.bw;
        }
    }
    *c = (struct cm_memo){.valid = 1, .lat_scale = t->params.lat_scale, .bw_scale = t->params.bw_scale,
                          .lat = lat, .bw = bw, .lat_lo = lat_lo, .bw_hi = bw_hi, .net = net};
    topo_route_t hr;
    if (t->nreducers > 0 && p > 0 && topo_route(t, 0, p, &hr, NULL) == 0 && hr.nlinks > 0)
        c->helper = 1, c->hlat = hr.lat, c->hbw = hr.bw;
    return 0;
}

double topo_rdzv_lat(const topo_t *t) {
    return t->params.sw_match && !t->params.socket ? t->params.rdzv_lat : 0;
}

double topo_match_lat(const topo_t *t) {
    return t->params.sw_match && !t->params.socket ? t->params.match_lat : 0;
}

double topo_op_lat(const topo_t *t) { return t->params.socket ? 0 : t->params.op_lat; }

double topo_inline_lat(const topo_t *t) { return t->params.socket || !t->params.gdr ? 0 : t->params.inline_lat; }

int topo_cost_model(topo_t *t, cost_model_t *m, baton_err_t *e) {
    *m = (cost_model_t){0};
    int rc = cost_routes(t, e), p = t->nranks;
    if (rc < 0) return rc;
    const struct cm_memo *c = &t->rc.cm;
    m->alpha = c->lat;
    m->beta = m->beta_path = (p > 1) ? 1.0 / c->bw : 0;
    m->channels = 1;
    m->gamma = t->params.reduce_bw > 0 ? 1.0 / t->params.reduce_bw : 0;
    m->ports = t->params.ports;
    m->inflight = t->params.max_inflight;
    m->reducers = t->nreducers;
    if (c->net) m->rdzv = topo_rdzv_lat(t), m->rdzv_above = t->params.rdzv_above, m->match = topo_match_lat(t);
    if (c->helper) m->helper_beta = 1.0 / (c->hbw * topo_nvls_eff(t)), m->helper_alpha = c->hlat;
    m->uniform = p < 2 || (c->lat - c->lat_lo <= 1e-12 * (c->lat > 0 ? c->lat : 1) && c->bw_hi - c->bw <= 1e-9 * c->bw);
    return 0;
}

/* The library's rule for coll on p ranks at n bytes under protocol proto
 * (RUN_PROTO_AUTO-like -1: any), or NULL: the first that matches, as RCCL
 * takes the first MSCCL file that fits. */
const topo_lib_rule_t *topo_library_rule(const topo_t *t, int coll, int p, uint64_t n, int proto, int said) {
    const topo_library_t *l = &t->params.lib;
    for (int i = 0; i < l->nrules; i++) {
        const topo_lib_rule_t *r = &l->rule[i];
        if ((said || !r->nccl) && r->coll == coll && r->ranks == p && n >= r->min && n <= r->max && n % r->align == 0 &&
            (proto < 0 || proto == r->proto))
            return r;
    }
    return NULL;
}
