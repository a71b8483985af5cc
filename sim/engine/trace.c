/* trace.c - collect slices while the engine runs, write them at the end. */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>

struct trace {
    topo_t *t;
    FILE *f;               /* events so far (a memory stream) */
    char *buf;
    size_t len;
    uint64_t n;
    int overflow;
    uint8_t *link_used;    /* tracks to name at the end */
};

trace_t *trace_create(topo_t *t) {
    trace_t *tr = calloc(1, sizeof *tr);
    if (tr == NULL) return NULL;
    tr->t = t;
    tr->f = open_memstream(&tr->buf, &tr->len);
    tr->link_used = calloc((size_t)topo_nlinks(t) + 1, 1);
    if (tr->f == NULL || tr->link_used == NULL) { trace_free(tr); return NULL; }
    return tr;
}

void trace_on_msg(void *ctx, const engine_msg_t *m) {
    trace_t *tr = ctx;
    if (tr->n >= TRACE_MAX_MSGS) { tr->overflow = 1; return; }
    tr->n++;
    fprintf(tr->f, ",\n{\"name\":\"%d->%d\",\"cat\":\"message\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,"
                   "\"args\":{\"bytes\":%llu,\"chunk\":%u,\"channel\":%d,\"reduce\":%d}}",
            m->src, m->dst, m->src, m->t_start * 1e6, (m->t_end - m->t_start) * 1e6, (unsigned long long)m->bytes,
            m->chunk, m->chan, m->reduce);
    for (int i = 0; i < m->nlinks; i++) {      /* each link busy at its own rate (engine.h, link_busy) */
        double busy = (double)m->bytes / (topo_dlink(tr->t, m->links[i])->bw * topo_params_c(tr->t)->bw_scale * m->eff);
        tr->link_used[m->links[i]] = 1;
        fprintf(tr->f, ",\n{\"name\":\"%d->%d\",\"cat\":\"link\",\"ph\":\"X\",\"pid\":2,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,"
                       "\"args\":{\"bytes\":%llu}}",
                m->src, m->dst, m->links[i], m->t_start * 1e6, busy * 1e6, (unsigned long long)m->bytes);
    }
}

static void names(trace_t *tr, FILE *f) {
    fprintf(f, "{\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"ranks\"}},\n"
               "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"links\"}}");
    for (int r = 0; r < topo_nranks(tr->t); r++)
        fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"rank %d %s\"}}", r, r,
                topo_rank_name(tr->t, r));
    for (int l = 0; l < topo_nlinks(tr->t); l++)
        if (tr->link_used[l])
            fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":%d,\"args\":{\"name\":\"%s -> %s\"}}", l,
                    topo_node(tr->t, topo_dlink(tr->t, l)->src)->name, topo_node(tr->t, topo_dlink(tr->t, l)->dst)->name);
}

char *trace_json(trace_t *tr) {
    if (tr->overflow || fflush(tr->f) != 0) return NULL;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (f == NULL) return NULL;
    names(tr, f);
    fwrite(tr->buf, 1, tr->len, f);
    fprintf(f, "\n],\"displayTimeUnit\":\"ns\"}\n");
    fclose(f);
    return out;
}

void trace_free(trace_t *tr) {
    if (tr == NULL) return;
    if (tr->f) fclose(tr->f);
    free(tr->buf);
    free(tr->link_used);
    free(tr);
}
