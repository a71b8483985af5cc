/* trace.h - a Chrome / Perfetto trace of a simulation (the JSON Trace Event
 * format that ui.perfetto.dev and chrome://tracing open): one track per rank
 * (a slice per message it sent, from its start to its arrival) and one per
 * link that carried anything (a slice per message, for as long as the link
 * carried it). Times in microseconds. */
#ifndef BATON_TRACE_H
#define BATON_TRACE_H

#include "engine.h"

typedef struct trace trace_t;

/* At most this many messages are traced (a trace is for looking at). */
#define TRACE_MAX_MSGS 2000000

trace_t *trace_create(topo_t *t);
/* An engine observer: pass trace_on_msg and the trace as on_msg / msg_ctx. */
void trace_on_msg(void *ctx, const engine_msg_t *m);
/* The whole trace as JSON (malloc'd), or NULL (out of memory, too many messages). */
char *trace_json(trace_t *tr);
void trace_free(trace_t *tr);

#endif
