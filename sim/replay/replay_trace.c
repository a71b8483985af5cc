/* replay_trace.c - a replay as a Perfetto / Chrome trace (replay.h): the
 * JSON Trace Event format ui.perfetto.dev opens. A process per rank; its
 * tracks: GPU kernels (tid 0; one at a time, so slices never overlap),
 * host nodes (tid 1; likewise) and communication from tid 2 on, a track per
 * lane: a node goes to the first lane whose last slice has ended, so slices
 * on one track never overlap but a waiting slice nests in its node's. */
#include "replay.h"

#include <stdio.h>
#include <stdlib.h>

#include "../answer/report.h"

#define LANES 64

static void slice(FILE *f, const char *name, const char *cat, int pid, int tid, double a, double b, const chakra_node_t *nd,
                  uint32_t idx) {
    char esc[512];
    fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
               "\"args\":{\"node\":%u,\"id\":%llu",
            report_json_escape(name, esc, sizeof esc), cat, pid, tid, a * 1e6, (b - a) * 1e6, idx, (unsigned long long)nd->id);
    if (nd->has & CHAKRA_HAS_SIZE) fprintf(f, ",\"bytes\":%llu", (unsigned long long)nd->comm_size);
    fputs("}}", f);
}

static void names(FILE *f, int r, int lanes) {
    fprintf(f, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}}", r, r);
    fprintf(f, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"sort_index\":%d}}", r, r);
    fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"GPU kernels\"}}", r);
    fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":1,\"args\":{\"name\":\"host\"}}", r);
    for (int l = 0; l < lanes; l++)
        fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"communication %d\"}}",
                r, 2 + l, l);
}

/* Rank r's slices; the lanes its communication took. */
static int rank_slices(FILE *f, const replay_out_t *o, int r) {
    double lane_end[LANES];
    int lanes = 0;
    const chakra_et_t *et = &o->et[r];
    for (uint32_t i = 0; i < et->n; i++) {     /* communication in the order it became ready */
        const replay_node_t *x = &o->node[o->offset[r] + i];
        const chakra_node_t *nd = &et->nodes[i];
        if (nd->type == CHAKRA_COMP) {
            slice(f, nd->name, nd->is_cpu_op ? "host" : "kernel", r, nd->is_cpu_op, x->start_s, x->end_s, nd, i);
            continue;
        }
        if (x->comm < 0) continue;
        int l = 0;
        while (l < lanes && lane_end[l] > x->ready_s) l++;
        if (l == LANES) l = LANES - 1;              /* more at once than that: they share the last */
        if (l == lanes) lanes++;
        lane_end[l] = x->end_s;
        slice(f, nd->name, "communication", r, 2 + l, x->ready_s, x->end_s, nd, i);
        if (x->start_s > x->ready_s) slice(f, "waiting for peers", "wait", r, 2 + l, x->ready_s, x->start_s, nd, i);
    }
    return lanes;
}

char *replay_trace_json(const replay_out_t *o) {
    char *body = NULL, *out = NULL;
    size_t blen = 0, olen = 0;
    FILE *b = open_memstream(&body, &blen);
    if (b == NULL) return NULL;
    int *lanes = calloc((size_t)o->nranks + 1, sizeof *lanes);
    for (int r = 0; lanes && r < o->nranks; r++) lanes[r] = rank_slices(b, o, r);
    int bad = fclose(b) != 0 || lanes == NULL;
    FILE *f = bad ? NULL : open_memstream(&out, &olen);
    if (f) {
        char *head = NULL;
        size_t hlen = 0;
        FILE *h = open_memstream(&head, &hlen);
        for (int r = 0; h && r < o->nranks; r++) names(h, r, lanes[r]);
        if (h == NULL || fclose(h) != 0 || hlen < 2) bad = 1;
        fputs("{\"traceEvents\":[\n", f);
        if (!bad) fwrite(head + 2, 1, hlen - 2, f);       /* without the first event's ",\n" */
        free(head);
        fwrite(body, 1, blen, f);
        fputs("\n],\"displayTimeUnit\":\"ns\"}\n", f);
        if (fclose(f) != 0 || bad) { free(out); out = NULL; }
    }
    free(lanes);
    free(body);
    return out;
}
