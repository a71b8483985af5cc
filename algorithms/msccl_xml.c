/* msccl_xml.c - read MSCCL's XML (the only file that sees libexpat).
 *
 * The shape and attributes follow msccl-executor-nccl's parser
 * (src/misc/msccl/msccl_parser.cc, mscclGetAlgoFromXmlFile): <algo> holds
 * <gpu>s, a <gpu> holds <tb>s, a <tb> holds <step>s; anything else inside
 * is ignored, as there. A missing or malformed attribute is an error at its
 * element's line. */
#include "msccl.h"

#include <errno.h>
#include <expat.h>
#include <stdlib.h>
#include <string.h>

typedef struct rd {
    XML_Parser p;
    const char *name;
    msccl_algo_t *a;
    baton_err_t *e;
    int depth, in_algo, err;
    int skip;                  /* depth of an element we ignore, 0: none */
} rd_t;

static int line_of(const rd_t *r) { return (int)XML_GetCurrentLineNumber(r->p); }

static void fail(rd_t *r, int code, const char *what) {
    if (!r->err) err_set(r->e, code, "%s:%d: %s", r->name, line_of(r), what);
    r->err = 1;
    XML_StopParser(r->p, XML_FALSE);
}

static const char *attr(const char **at, const char *key) {
    for (int i = 0; at[i]; i += 2)
        if (strcmp(at[i], key) == 0) return at[i + 1];
    return NULL;
}

/* An integer attribute; def where it may be absent (INT32_MIN: required). */
static int int_attr(rd_t *r, const char *el, const char **at, const char *key, int def, int *out) {
    const char *v = attr(at, key);
    char msg[160];
    if (v == NULL) {
        if (def != -0x7fffffff) { *out = def; return 0; }
        snprintf(msg, sizeof msg, "<%s> lacks the attribute '%s'", el, key);
        fail(r, BATON_EPARSE, msg);
        return -1;
    }
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < -1 || x > 1000000000) {
        snprintf(msg, sizeof msg, "<%s %s=\"%.40s\">: not an integer from -1 up", el, key, v);
        fail(r, BATON_EPARSE, msg);
        return -1;
    }
    *out = (int)x;
    return 0;
}
#define REQ (-0x7fffffff)

static int str_attr(rd_t *r, const char *el, const char **at, const char *key, const char *def, char *out, size_t n) {
    const char *v = attr(at, key);
    if (v == NULL && def == NULL) {
        char msg[128];
        snprintf(msg, sizeof msg, "<%s> lacks the attribute '%s'", el, key);
        fail(r, BATON_EPARSE, msg);
        return -1;
    }
    snprintf(out, n, "%s", v ? v : def);
    return 0;
}

static void *grow(rd_t *r, void *arr, int n, size_t size) {
    if (n & (n - 1) && n) return arr;      /* capacity doubles at powers of two */
    void *b = realloc(arr, (size_t)(n ? 2 * n : 1) * size);
    if (b == NULL) fail(r, BATON_ENOMEM, "out of memory");
    return b;
}

static void on_algo(rd_t *r, const char **at) {
    msccl_algo_t *a = r->a;
    char inplace[8];
    a->line = line_of(r);
    if (str_attr(r, "algo", at, "name", "", a->name, sizeof a->name) < 0 ||
        str_attr(r, "algo", at, "proto", "Simple", a->proto, sizeof a->proto) < 0 ||
        str_attr(r, "algo", at, "coll", NULL, a->coll, sizeof a->coll) < 0 ||
        int_attr(r, "algo", at, "ngpus", REQ, &a->ngpus) < 0 ||
        int_attr(r, "algo", at, "nchunksperloop", 0, &a->nchunksperloop) < 0 ||
        int_attr(r, "algo", at, "nchannels", 0, &a->nchannels) < 0 ||
        int_attr(r, "algo", at, "baton_blocks", 0, &a->blocks) < 0 ||
        str_attr(r, "algo", at, "inplace", "1", inplace, sizeof inplace) < 0)
        return;
    a->inplace = strcmp(inplace, "0") != 0;
    r->in_algo = 1;
}

static void on_gpu(rd_t *r, const char **at) {
    msccl_algo_t *a = r->a;
    msccl_gpu_t *g = grow(r, a->gpu, a->ngpu, sizeof *g);
    if (g == NULL) return;
    a->gpu = g;
    g = &a->gpu[a->ngpu++];
    memset(g, 0, sizeof *g);
    g->line = line_of(r);
    if (int_attr(r, "gpu", at, "id", REQ, &g->id) < 0 || int_attr(r, "gpu", at, "i_chunks", 0, &g->i_chunks) < 0 ||
        int_attr(r, "gpu", at, "o_chunks", 0, &g->o_chunks) < 0 || int_attr(r, "gpu", at, "s_chunks", 0, &g->s_chunks) < 0)
        return;
}

static void on_tb(rd_t *r, const char **at) {
    msccl_gpu_t *g = r->a->ngpu ? &r->a->gpu[r->a->ngpu - 1] : NULL;
    if (g == NULL) { fail(r, BATON_EPARSE, "<tb> outside a <gpu>"); return; }
    msccl_tb_t *b = grow(r, g->tb, g->ntb, sizeof *b);
    if (b == NULL) return;
    g->tb = b;
    b = &g->tb[g->ntb++];
    memset(b, 0, sizeof *b);
    b->line = line_of(r);
    if (int_attr(r, "tb", at, "id", REQ, &b->id) < 0 || int_attr(r, "tb", at, "send", -1, &b->send) < 0 ||
        int_attr(r, "tb", at, "recv", -1, &b->recv) < 0 || int_attr(r, "tb", at, "chan", 0, &b->chan) < 0)
        return;
}

static int type_of(const char *t) {
    static const char *const names[MSCCL_NTYPES] = {"nop", "s", "r", "rcs", "rrc", "rrs", "rrcs", "cpy", "re"};
    for (int i = 0; i < MSCCL_NTYPES; i++)
        if (strcmp(t, names[i]) == 0) return i;
    return -1;
}

static int buf_attr(rd_t *r, const char **at, const char *key, char *out) {
    const char *v = attr(at, key);
    if (v == NULL || v[0] == '\0') { *out = 'i'; return 0; }
    if ((v[0] == 'i' || v[0] == 'o' || v[0] == 's') && v[1] == '\0') { *out = v[0]; return 0; }
    char msg[128];
    snprintf(msg, sizeof msg, "<step %s=\"%.20s\">: a buffer is i (input), o (output) or s (scratch)", key, v);
    fail(r, BATON_EPARSE, msg);
    return -1;
}

static void on_step(rd_t *r, const char **at) {
    msccl_gpu_t *g = r->a->ngpu ? &r->a->gpu[r->a->ngpu - 1] : NULL;
    msccl_tb_t *b = g && g->ntb ? &g->tb[g->ntb - 1] : NULL;
    if (b == NULL) { fail(r, BATON_EPARSE, "<step> outside a <tb>"); return; }
    msccl_step_t *st = grow(r, b->steps, b->nsteps, sizeof *st);
    if (st == NULL) return;
    b->steps = st;
    st = &b->steps[b->nsteps];
    memset(st, 0, sizeof *st);
    st->line = line_of(r);
    char type[16], msg[160];
    int idx;
    if (int_attr(r, "step", at, attr(at, "s") ? "s" : "step", REQ, &idx) < 0 ||
        str_attr(r, "step", at, "type", NULL, type, sizeof type) < 0)
        return;
    if ((st->type = type_of(type)) < 0) {
        snprintf(msg, sizeof msg, "<step type=\"%.16s\">: not one of s, r, rcs, rrc, rrs, rrcs, cpy, re, nop", type);
        { fail(r, BATON_EPARSE, msg); return; }
    }
    if (idx != b->nsteps) {
        snprintf(msg, sizeof msg, "<step s=\"%d\">: thread block %d's step %d (steps are numbered in order from 0)",
                 idx, b->id, b->nsteps);
        { fail(r, BATON_EPARSE, msg); return; }
    }
    if (buf_attr(r, at, "srcbuf", &st->srcbuf) < 0 || buf_attr(r, at, "dstbuf", &st->dstbuf) < 0 ||
        int_attr(r, "step", at, "srcoff", -1, &st->srcoff) < 0 || int_attr(r, "step", at, "dstoff", -1, &st->dstoff) < 0 ||
        int_attr(r, "step", at, "cnt", 1, &st->cnt) < 0 || int_attr(r, "step", at, "depid", -1, &st->depid) < 0 ||
        int_attr(r, "step", at, "deps", -1, &st->deps) < 0 || int_attr(r, "step", at, "hasdep", 0, &st->hasdep) < 0)
        return;
    b->nsteps++;
}

static void XMLCALL start(void *ud, const XML_Char *el, const XML_Char **at) {
    rd_t *r = ud;
    r->depth++;
    if (r->err || r->skip) return;
    int want = r->depth == 1 ? 0 : r->depth - 1;     /* 0: algo, 1: gpu, 2: tb, 3: step */
    static const char *const names[] = {"algo", "gpu", "tb", "step"};
    if (want > 3 || strcmp(el, names[want]) != 0) {
        if (r->depth == 1) {
            char msg[128];
            snprintf(msg, sizeof msg, "the document is <%.40s>, not an MSCCL <algo>", el);
            { fail(r, BATON_EPARSE, msg); return; }
        }
        r->skip = r->depth;                           /* another element: ignored, as MSCCL does */
        return;
    }
    if (want == 0) on_algo(r, at);
    else if (want == 1) on_gpu(r, at);
    else if (want == 2) on_tb(r, at);
    else on_step(r, at);
}

static void XMLCALL end(void *ud, const XML_Char *el) {
    rd_t *r = ud;
    (void)el;
    if (r->skip == r->depth) r->skip = 0;
    r->depth--;
}

int msccl_xml_parse(const char *name, const char *text, size_t len, msccl_algo_t *a, baton_err_t *e) {
    memset(a, 0, sizeof *a);
    snprintf(a->path, sizeof a->path, "%s", name);
    rd_t r = {.name = name, .a = a, .e = e};
    r.p = XML_ParserCreate(NULL);
    if (r.p == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    XML_SetUserData(r.p, &r);
    XML_SetElementHandler(r.p, start, end);
    if (XML_Parse(r.p, text, (int)len, 1) == XML_STATUS_ERROR && !r.err) {
        err_set(e, BATON_EPARSE, "%s:%lu: %s", name, (unsigned long)XML_GetCurrentLineNumber(r.p),
                XML_ErrorString(XML_GetErrorCode(r.p)));
        r.err = 1;
    }
    XML_ParserFree(r.p);
    if (!r.err && !r.in_algo) {
        err_set(e, BATON_EPARSE, "%s:1: no <algo> element", name);
        r.err = 1;
    }
    if (r.err) {
        msccl_algo_free(a);
        return e && e->code ? e->code : BATON_EPARSE;
    }
    return 0;
}

int msccl_xml_read(const char *path, msccl_algo_t *a, baton_err_t *e) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return err_set(e, BATON_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t k; buf && (k = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap) {
            char *b = cap < (1u << 30) ? realloc(buf, cap * 2) : NULL;
            if (b == NULL) { free(buf); buf = NULL; break; }
            buf = b, cap *= 2;
        }
    }
    fclose(f);
    if (buf == NULL) return err_set(e, BATON_ENOMEM, "%s: too large or out of memory", path);
    int rc = msccl_xml_parse(path, buf, n, a, e);
    free(buf);
    return rc;
}

void msccl_algo_free(msccl_algo_t *a) {
    for (int g = 0; g < a->ngpu; g++) {
        for (int t = 0; t < a->gpu[g].ntb; t++) free(a->gpu[g].tb[t].steps);
        free(a->gpu[g].tb);
    }
    free(a->gpu);
    a->gpu = NULL;
    a->ngpu = 0;
}
