/* helpers.c - test machines and the CLI runner. */
#include "helpers.h"

#include <criterion/criterion.h>

#include "../topologies/topo_yaml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static topo_t *finish(topo_t *t, int ports, double reduce_bw) {
    topo_params(t)->ports = ports;
    topo_params(t)->reduce_bw = reduce_bw;
    if (topo_finalize(t, "test", NULL) < 0) { topo_free(t); return NULL; }
    return t;
}

void th_add_ranks(topo_t *t, int p, const char *prefix) {
    char name[64];
    for (int i = 0; i < p; i++) {
        snprintf(name, sizeof name, "%s%d", prefix, i);
        topo_set_rank(t, topo_add_node(t, name, NODE_GPU, 0, 0, NULL), i, NULL);
    }
}

topo_t *th_full(int p, double bw, double lat, int ports, double reduce_bw) {
    topo_t *t = topo_create("full");
    th_add_ranks(t, p, "r");
    for (int i = 0; i < p; i++)
        for (int j = i + 1; j < p; j++) topo_add_link(t, i, j, bw, lat, NULL);
    return finish(t, ports, reduce_bw);
}

topo_t *th_star(int p, double bw, double lat, int ports, double reduce_bw) {
    topo_t *t = topo_create("star");
    th_add_ranks(t, p, "r");
    int sw = topo_add_node(t, "switch", NODE_SWITCH, 0, 0, NULL);
    for (int i = 0; i < p; i++) topo_add_link(t, i, sw, bw, lat / 2, NULL);
    return finish(t, ports, reduce_bw);
}

int th_sim(topo_t *t, const char *name, uint64_t n, verify_mode_t v, engine_result_t *r,
           baton_err_t *e) {
    const algo_t *a = algo_find(COLL_ALLREDUCE, name);
    if (a == NULL) return err_set(e, BATON_EINVAL, "no algorithm %s", name);
    return th_run(t, a, n, NULL, v, r, e);
}

int th_run(topo_t *t, const algo_t *a, uint64_t n, const algo_opts_t *o, verify_mode_t v,
           engine_result_t *r, baton_err_t *e) {
    sched_t s;
    int rc = algo_build(a, topo_nranks(t), n, o, &s, e);
    if (rc < 0) return rc;
    engine_opts_t eo = {.verify = v};
    return engine_run(&s, t, &eo, r, e);
}

int th_cli(const char *args, char **out, int stdout_only) {
    const char *bin = getenv("BATON_BIN");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s%s", bin ? bin : "build/baton", args,
             stdout_only ? " 2>/dev/null" : " 2>&1");
    return th_sh(cmd, out);
}

int th_sh(const char *cmd, char **out) {
    FILE *f = popen(cmd, "r");
    if (f == NULL) return -1;
    size_t cap = 4096, len = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            char *nb = realloc(buf, cap *= 2);
            if (nb == NULL) { free(buf); buf = NULL; }
            else buf = nb;
        }
    }
    if (buf) buf[len] = '\0';
    int st = pclose(f);
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

char *th_slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
    if (buf) buf[n] = '\0';
    fclose(f);
    return buf;
}

int th_sets(char *buf, const char **v, int max) {
    int n = 0;
    if (strcmp(buf, "-") == 0) return 0;
    for (char *tok = strtok(buf, " ,"); tok && n < max; tok = strtok(NULL, " ,")) v[n++] = tok;
    return n;
}

topo_t *th_load(const char *path, const char *sets) {
    baton_err_t e = {0};
    char buf[512];
    const char *v[16];
    snprintf(buf, sizeof buf, "%s", sets ? sets : "-");
    topo_t *t = topo_yaml_load(path, v, th_sets(buf, v, 16), &e);
    cr_assert_not_null(t, "%s %s: %s", path, sets ? sets : "", e.msg);
    return t;
}

topo_t *th_load_text(const char *path, const char *yaml) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(yaml, f);
    fclose(f);
    return th_load(path, NULL);
}

void th_says(const char *args, int rc, const char *text, int present) {
    char *out;
    cr_expect_eq(th_cli(args, &out, 0), rc, "baton %s: %s", args, out);
    cr_expect_eq(strstr(out, text) != NULL, present, "baton %s %s '%s': %s", args, present ? "lacks" : "says", text, out);
    free(out);
}

double th_json_num(const char *s, const char *key) {
    char pat[64];
    double v = -1;
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *m = strstr(s, pat);
    cr_assert_not_null(m, "no %s in %.300s", key, s);
    sscanf(m + strlen(pat), "%lf", &v);
    return v;
}

double th_cli_num(const char *args, const char *key) {
    char *out;
    cr_assert_eq(th_cli(args, &out, 1), 0, "baton %s: %s", args, out);
    double v = th_json_num(out, key);
    free(out);
    return v;
}

cJSON *th_cli_json(const char *args) {
    char *out;
    int rc = th_cli(args, &out, 1);
    cr_assert_eq(rc, 0, "baton %s exited %d: %s", args, rc, out);
    cJSON *j = cJSON_Parse(out);
    cr_assert_not_null(j, "not JSON: %s", out);
    free(out);
    return j;
}

double th_jnum(cJSON *j, const char *k) {
    cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    cr_assert(cJSON_IsNumber(v), "field %s missing", k);
    return v->valuedouble;
}

nt_log_t th_parse_log(const char *path, int ranks) {
    nt_log_t log;
    baton_err_t e = {0};
    cr_assert_eq(nt_parse(path, ranks, &log, &e), 0, "%s", e.msg);
    return log;
}
