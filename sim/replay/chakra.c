/* chakra.c - Chakra's protobuf wire format, by hand, for the fields replay
 * uses (chakra.h; et_def.proto at mlcommons/chakra 21585d8f).
 *
 * Protobuf's wire format: a message is (key, value) pairs, key = field << 3
 * | wire type; wire type 0 a varint, 1 eight bytes, 2 a varint length and
 * that many bytes (strings, sub-messages, packed repeated scalars), 5 four
 * bytes. Fields this file does not read are skipped by their wire type, so
 * a newer schema's additions pass through. Every read is bounded by the
 * bytes its enclosing length gave: truncated or garbled input is an error
 * naming the file and the node, never a read past the end. */
#include "chakra.h"

#include <stdlib.h>
#include <string.h>

typedef struct rd {
    const uint8_t *p, *end;
} rd_t;

/* Why a read failed: a sentence the caller prefixes with file and node. */
typedef struct why {
    char s[160];
} why_t;

static int fail(why_t *w, const char *msg) {
    snprintf(w->s, sizeof w->s, "%s", msg);
    return -1;
}

static int rd_varint(rd_t *r, uint64_t *v, why_t *w) {
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        if (r->p >= r->end) return fail(w, "truncated in a varint");
        uint8_t b = *r->p++;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) { *v = x; return 0; }
    }
    return fail(w, "a varint longer than 10 bytes");
}

static int rd_fixed(rd_t *r, int nbytes, uint64_t *v, why_t *w) {
    if (r->end - r->p < nbytes) return fail(w, "truncated in a fixed-width value");
    uint64_t x = 0;
    for (int i = 0; i < nbytes; i++) x |= (uint64_t)r->p[i] << (8 * i);   /* little-endian */
    r->p += nbytes;
    *v = x;
    return 0;
}

/* A length-delimited value as a reader of its own bytes. */
static int rd_sub(rd_t *r, rd_t *sub, why_t *w) {
    uint64_t len;
    if (rd_varint(r, &len, w) < 0) return -1;
    if (len > (uint64_t)(r->end - r->p)) {
        snprintf(w->s, sizeof w->s, "truncated (a length says %llu bytes, %lld are left)", (unsigned long long)len,
                 (long long)(r->end - r->p));
        return -1;
    }
    sub->p = r->p;
    sub->end = r->p + len;
    r->p += len;
    return 0;
}

static int rd_key(rd_t *r, uint32_t *field, int *wt, why_t *w) {
    uint64_t k;
    if (rd_varint(r, &k, w) < 0) return -1;
    *field = (uint32_t)(k >> 3);
    *wt = (int)(k & 7);
    if (*field == 0 || k >> 3 > 0x1fffffff) return fail(w, "garbled: a field numbered 0 or beyond 2^29");
    return 0;
}

/* A value of wire type wt into *v (varints and fixed widths) or *sub (lengths). */
static int rd_value(rd_t *r, int wt, uint64_t *v, rd_t *sub, why_t *w) {
    switch (wt) {
    case 0: return rd_varint(r, v, w);
    case 1: return rd_fixed(r, 8, v, w);
    case 2: return rd_sub(r, sub, w);
    case 5: return rd_fixed(r, 4, v, w);
    default:
        snprintf(w->s, sizeof w->s, "garbled: wire type %d (groups, or not protobuf)", wt);
        return -1;
    }
}

static char *dup_bytes(const rd_t *s) {
    size_t n = (size_t)(s->end - s->p);
    char *c = malloc(n + 1);
    if (c == NULL) return NULL;
    memcpy(c, s->p, n);
    c[n] = 0;
    for (size_t i = 0; i < n; i++)            /* names are printed and written to JSON: no controls */
        if ((unsigned char)c[i] < 0x20) c[i] = '?';
    return c;
}

/* ---- attributes ---- */

typedef struct attr {
    char name[32];
    uint32_t field;            /* which of the oneof's values (0: none) */
    int wt;
    uint64_t v;
    rd_t s;
} attr_t;

/* A length-delimited string s into buf, cut to cap - 1 bytes (longer names
 * and versions are none replay reads). The length it had. */
static size_t rd_str(const rd_t *s, char *buf, size_t cap) {
    size_t len = (size_t)(s->end - s->p), n = len < cap ? len : cap - 1;
    memcpy(buf, s->p, n);
    buf[n] = 0;
    return len;
}

static int attr_read(rd_t *r, attr_t *a, why_t *w) {
    memset(a, 0, sizeof *a);
    while (r->p < r->end) {
        uint32_t f;
        int wt;
        uint64_t v = 0;
        rd_t s = {0};
        if (rd_key(r, &f, &wt, w) < 0 || rd_value(r, wt, &v, &s, w) < 0) return -1;
        if (f == 1 && wt == 2) {
            rd_str(&s, a->name, sizeof a->name);
        } else if (f >= 3 && f <= 32) {
            a->field = f, a->wt = wt, a->v = v, a->s = s;
        }
    }
    return 0;
}

/* An attribute's value as an integer, whichever integer field carries it. */
static int attr_int(const attr_t *a, int64_t *out, why_t *w) {
    uint64_t v = a->v;
    switch (a->field) {
    case 7: case 9: case 11: case 13: case 27:                 /* int32, int64, uint32, uint64, bool */
        if (a->wt != 0) break;
        *out = (int64_t)v;
        if (a->field == 11) *out = (int64_t)(uint32_t)v;
        return 0;
    case 15: case 17:                                          /* sint32, sint64: zigzag */
        if (a->wt != 0) break;
        *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
        return 0;
    case 19: if (a->wt == 5) { *out = (int64_t)v; return 0; } break;               /* fixed32 */
    case 23: if (a->wt == 5) { *out = (int32_t)(uint32_t)v; return 0; } break;     /* sfixed32 */
    case 21: case 25: if (a->wt == 1) { *out = (int64_t)v; return 0; } break;      /* fixed64, sfixed64 */
    default: break;
    }
    snprintf(w->s, sizeof w->s, "attr %s: %s", a->name,
             a->field ? "not an integer (a float, string or list)" : "has no value");
    return -1;
}

static int attr_apply(chakra_node_t *n, const attr_t *a, why_t *w) {
    static const struct { const char *name; unsigned bit; } ints[] = {
        {"comm_type", CHAKRA_HAS_TYPE}, {"comm_size", CHAKRA_HAS_SIZE}, {"comm_src", CHAKRA_HAS_SRC},
        {"comm_dst", CHAKRA_HAS_DST}, {"comm_tag", CHAKRA_HAS_TAG}, {"is_cpu_op", 0}};
    if (!strcmp(a->name, "pg_name")) {
        if (a->field != 29 || a->wt != 2) return fail(w, "attr pg_name: not a string");
        return rd_str(&a->s, n->pg, CHAKRA_PG_LEN) >= CHAKRA_PG_LEN ? fail(w, "attr pg_name: longer than 63 bytes") : 0;
    }
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        if (strcmp(a->name, ints[i].name)) continue;
        int64_t x;
        if (attr_int(a, &x, w) < 0) return -1;
        switch (i) {
        case 0: n->comm_type = x; break;
        case 1:
            if (x < 0) { snprintf(w->s, sizeof w->s, "attr comm_size: %lld bytes", (long long)x); return -1; }
            n->comm_size = (uint64_t)x;
            break;
        case 2: n->comm_src = x; break;
        case 3: n->comm_dst = x; break;
        case 4: n->comm_tag = x; break;
        default: n->is_cpu_op = x != 0; break;
        }
        n->has |= ints[i].bit;
        return 0;
    }
    return 0;                                                  /* an attribute replay does not use */
}

/* ---- nodes ---- */

typedef struct u64s {
    uint64_t *v;
    uint32_t n, cap;
} u64s_t;

static int u64s_add(u64s_t *a, uint64_t x, why_t *w) {
    if (a->n == a->cap) {
        uint32_t cap = a->cap ? 2 * a->cap : 8;
        uint64_t *v = realloc(a->v, (size_t)cap * sizeof *v);
        if (v == NULL) return fail(w, "out of memory");
        a->v = v, a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

/* A repeated uint64: packed (one length, varints inside) or one varint. */
static int deps_read(int wt, uint64_t v, rd_t *s, u64s_t *a, why_t *w) {
    if (wt == 0) return u64s_add(a, v, w);
    if (wt != 2) return fail(w, "garbled: dependencies neither packed nor varints");
    while (s->p < s->end)
        if (rd_varint(s, &v, w) < 0 || u64s_add(a, v, w) < 0) return -1;
    return 0;
}

static int node_field(chakra_node_t *n, uint32_t f, int wt, uint64_t v, rd_t *s, u64s_t *ctrl, u64s_t *data, why_t *w) {
    switch (f) {
    case 1: if (wt == 0) n->id = v; break;
    case 2:
        if (wt != 2) break;
        free(n->name);
        if ((n->name = dup_bytes(s)) == NULL) return fail(w, "out of memory");
        break;
    case 3:
        if (wt != 0) break;
        if (v > 0x7fffffff) return fail(w, "garbled: a node type beyond 2^31");
        n->type = (int)v;
        break;
    case 4: return deps_read(wt, v, s, ctrl, w);
    case 5: return deps_read(wt, v, s, data, w);
    case 7: if (wt == 0) n->duration_us = v; break;
    case 10:
        if (wt == 2) {
            attr_t a;
            if (attr_read(s, &a, w) < 0 || attr_apply(n, &a, w) < 0) return -1;
        }
        break;
    default: break;                                            /* start time, inputs, outputs, newer fields */
    }
    return 0;
}

static int node_read(rd_t *r, chakra_node_t *n, why_t *w) {
    u64s_t ctrl = {0}, data = {0};
    int rc = 0;
    memset(n, 0, sizeof *n);
    while (rc == 0 && r->p < r->end) {
        uint32_t f;
        int wt;
        uint64_t v = 0;
        rd_t s = {0};
        rc = rd_key(r, &f, &wt, w);
        if (rc == 0) rc = rd_value(r, wt, &v, &s, w);
        if (rc == 0) rc = node_field(n, f, wt, v, &s, &ctrl, &data, w);
    }
    if (rc == 0 && n->name == NULL && (n->name = calloc(1, 1)) == NULL) rc = fail(w, "out of memory");
    if (rc == 0 && ctrl.n + (uint64_t)data.n > 0) {
        n->nctrl = ctrl.n;
        n->ndeps = ctrl.n + data.n;
        if ((n->deps = malloc((size_t)n->ndeps * sizeof *n->deps)) == NULL) rc = fail(w, "out of memory");
        else {
            if (ctrl.n) memcpy(n->deps, ctrl.v, (size_t)ctrl.n * sizeof *n->deps);
            if (data.n) memcpy(n->deps + ctrl.n, data.v, (size_t)data.n * sizeof *n->deps);
        }
    }
    free(ctrl.v);
    free(data.v);
    return rc;
}

static int metadata_read(rd_t *r, chakra_et_t *et, why_t *w) {
    while (r->p < r->end) {
        uint32_t f;
        int wt;
        uint64_t v = 0;
        rd_t s = {0};
        if (rd_key(r, &f, &wt, w) < 0 || rd_value(r, wt, &v, &s, w) < 0) return -1;
        if (f == 1 && wt == 2) rd_str(&s, et->version, sizeof et->version);
    }
    return 0;
}

static int grow(chakra_et_t *et) {
    if (et->n < et->cap) return 0;
    uint32_t cap = et->cap ? 2 * et->cap : 64;
    chakra_node_t *v = realloc(et->nodes, (size_t)cap * sizeof *v);
    if (v == NULL) return -1;
    et->nodes = v, et->cap = cap;
    return 0;
}

/* Text that opens a JSON object or array: '{' or '[' (after blanks), then
 * a quote, bracket or brace. Asked only of a file that failed to decode. */
static int looks_json(const uint8_t *b, size_t len) {
    size_t i = 0;
    while (i < len && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) i++;
    if (i == len || (b[i] != '{' && b[i] != '[')) return 0;
    for (i++; i < len && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t'); i++) {}
    return i < len && (b[i] == '"' || b[i] == '{' || b[i] == '[' || b[i] == '}' || b[i] == ']');
}

int chakra_decode(const uint8_t *buf, size_t len, const char *name, chakra_et_t *out, baton_err_t *e) {
    memset(out, 0, sizeof *out);
    if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) return err_set(e, BATON_EPARSE, "%s: gzip-compressed: gunzip it first", name);
    if (len == 0) return err_set(e, BATON_EPARSE, "%s: empty: a Chakra trace starts with its GlobalMetadata", name);
    rd_t r = {buf, buf + len};
    why_t w = {{0}};
    rd_t m;
    if (rd_sub(&r, &m, &w) < 0 || metadata_read(&m, out, &w) < 0) {
        if (looks_json(buf, len))             /* Chakra's own tools print traces as JSON too */
            return err_set(e, BATON_EPARSE, "%s: JSON, not a Chakra execution trace: replay reads the protobuf .et "
                           "files (one per rank) that Chakra's converter and PyTorch's ExecutionTraceObserver write", name);
        return err_set(e, BATON_EPARSE, "%s: metadata: %s", name, w.s);
    }
    while (r.p < r.end) {
        if (grow(out) < 0) { chakra_free(out); return err_set(e, BATON_ENOMEM, "%s: out of memory", name); }
        chakra_node_t *n = &out->nodes[out->n];
        rd_t s;
        int rc = rd_sub(&r, &s, &w);
        if (rc == 0) rc = node_read(&s, n, &w);
        else memset(n, 0, sizeof *n);
        out->n++;                                              /* freed with the rest, even half read */
        if (rc < 0) {
            uint32_t k = out->n - 1;
            chakra_free(out);
            return err_set(e, BATON_EPARSE, "%s: node %u: %s", name, k, w.s);
        }
    }
    return 0;
}

int chakra_read(const char *path, chakra_et_t *out, baton_err_t *e) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (f == NULL) return err_set(e, BATON_EIO, "%s: cannot open", path);
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 65536;
            uint8_t *b = realloc(buf, cap);
            if (b == NULL) { free(buf); fclose(f); return err_set(e, BATON_ENOMEM, "%s: out of memory", path); }
            buf = b;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? err_set(e, BATON_EIO, "%s: cannot read", path) : chakra_decode(buf, len, path, out, e);
    free(buf);
    return rc;
}

/* ---- writing ---- */

typedef struct wbuf {
    uint8_t *p;
    size_t n, cap;
    int oom;
} wbuf_t;

static void put(wbuf_t *b, const void *src, size_t n) {
    if (b->oom || n == 0) return;            /* an empty message has no bytes, maybe no buffer */
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (p == NULL) { b->oom = 1; return; }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void put_varint(wbuf_t *b, uint64_t v) {
    uint8_t c[10];
    int k = 0;
    do {
        c[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) c[k] |= 0x80;
        k++;
    } while (v);
    put(b, c, (size_t)k);
}

static void put_key(wbuf_t *b, uint32_t field, int wt) { put_varint(b, (uint64_t)field << 3 | (uint64_t)wt); }

static void put_bytes(wbuf_t *b, uint32_t field, const void *s, size_t n) {
    put_key(b, field, 2);
    put_varint(b, n);
    put(b, s, n);
}

static void put_sub(wbuf_t *b, uint32_t field, const wbuf_t *sub) {
    if (sub->oom) b->oom = 1;
    put_bytes(b, field, sub->p, sub->n);
}

/* attr {name, <field> = v}: an integer field (int32 and bool: varints; a
 * negative int32 is ten bytes, sign-extended, as protobuf writes it). */
static void put_attr_int(wbuf_t *b, const char *name, uint32_t field, int64_t v) {
    wbuf_t a = {0};
    put_bytes(&a, 1, name, strlen(name));
    put_key(&a, field, 0);
    put_varint(&a, (uint64_t)v);
    put_sub(b, 10, &a);
    free(a.p);
}

static void put_attr_str(wbuf_t *b, const char *name, const char *s) {
    wbuf_t a = {0};
    put_bytes(&a, 1, name, strlen(name));
    put_bytes(&a, 29, s, strlen(s));
    put_sub(b, 10, &a);
    free(a.p);
}

static void put_deps(wbuf_t *b, uint32_t field, const uint64_t *v, uint32_t n) {
    if (n == 0) return;
    wbuf_t d = {0};
    for (uint32_t i = 0; i < n; i++) put_varint(&d, v[i]);
    put_sub(b, field, &d);
    free(d.p);
}

static void node_encode(wbuf_t *b, const chakra_node_t *n) {
    if (n->id) { put_key(b, 1, 0); put_varint(b, n->id); }
    if (n->name && n->name[0]) put_bytes(b, 2, n->name, strlen(n->name));
    if (n->type) { put_key(b, 3, 0); put_varint(b, (uint64_t)n->type); }
    put_deps(b, 4, n->deps, n->nctrl);
    put_deps(b, 5, n->deps + n->nctrl, n->ndeps - n->nctrl);
    if (n->duration_us) { put_key(b, 7, 0); put_varint(b, n->duration_us); }
    put_attr_int(b, "is_cpu_op", 27, n->is_cpu_op);
    if (n->has & CHAKRA_HAS_TYPE) put_attr_int(b, "comm_type", 9, n->comm_type);
    if (n->has & CHAKRA_HAS_SIZE) put_attr_int(b, "comm_size", 9, (int64_t)n->comm_size);
    if (n->has & CHAKRA_HAS_SRC) put_attr_int(b, "comm_src", 7, (int32_t)n->comm_src);
    if (n->has & CHAKRA_HAS_DST) put_attr_int(b, "comm_dst", 7, (int32_t)n->comm_dst);
    if (n->has & CHAKRA_HAS_TAG) put_attr_int(b, "comm_tag", 7, (int32_t)n->comm_tag);
    if (n->pg[0]) put_attr_str(b, "pg_name", n->pg);
}

/* One message: its length as a varint, then its bytes (protolib's encodeMessage). */
static void put_message(wbuf_t *out, const wbuf_t *m) {
    if (m->oom) out->oom = 1;
    put_varint(out, m->n);
    put(out, m->p, m->n);
}

int chakra_write(FILE *f, const chakra_et_t *et) {
    wbuf_t out = {0}, m = {0};
    if (et->version[0]) put_bytes(&m, 1, et->version, strlen(et->version));
    put_message(&out, &m);
    for (uint32_t i = 0; i < et->n; i++) {
        m.n = 0;
        node_encode(&m, &et->nodes[i]);
        put_message(&out, &m);
    }
    int rc = out.oom || m.oom || fwrite(out.p, 1, out.n, f) != out.n ? -1 : 0;
    free(out.p);
    free(m.p);
    return rc;
}

int chakra_add(chakra_et_t *et, const chakra_node_t *n, baton_err_t *e) {
    if (grow(et) < 0) return err_set(e, BATON_ENOMEM, "out of memory");
    chakra_node_t *c = &et->nodes[et->n];
    *c = *n;
    c->name = strdup(n->name ? n->name : "");
    c->deps = n->ndeps ? malloc((size_t)n->ndeps * sizeof *c->deps) : NULL;
    if (c->name == NULL || (n->ndeps && c->deps == NULL)) {
        free(c->name);
        free(c->deps);
        return err_set(e, BATON_ENOMEM, "out of memory");
    }
    if (n->ndeps) memcpy(c->deps, n->deps, (size_t)n->ndeps * sizeof *c->deps);
    et->n++;
    return 0;
}

void chakra_free(chakra_et_t *et) {
    if (et == NULL) return;
    for (uint32_t i = 0; i < et->n; i++) {
        free(et->nodes[i].name);
        free(et->nodes[i].deps);
    }
    free(et->nodes);
    et->nodes = NULL;
    et->n = et->cap = 0;
}

const char *chakra_coll_name(int64_t t) {
    static const char *const names[] = {"all-reduce", "reduce", "all-gather", "gather", "scatter", "broadcast",
                                        "all-to-all", "reduce-scatter", "reduce-scatter (block)", "barrier"};
    return t >= 0 && t < (int64_t)(sizeof names / sizeof names[0]) ? names[t] : NULL;
}

const char *chakra_type_name(int type, char *buf, int len) {
    static const char *const names[] = {"INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE",
                                        "COMP_NODE", "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"};
    if (type >= 0 && type < 8) return names[type];
    snprintf(buf, (size_t)len, "node type %d", type);
    return buf;
}
