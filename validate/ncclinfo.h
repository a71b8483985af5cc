/* ncclinfo.h - what a log's NCCL_DEBUG=INFO lines and its shape say about the run.
 *
 * `baton doctor` weighs causes by their error on the log's times; NCCL's own
 * lines say some things outright: which network it used and on how many NICs
 * ("NET/IB : Using [0]mlx5_0:1/IB [1]..."; "Using network Socket"), whether a
 * connection went GPU-direct ("via NET/IB/0/GDRDMA"), how many channels it
 * opened ("16 coll channels, ..."), whether NVLS is there, and what the
 * environment forced (NCCL_ALGO, NCCL_PROTO, NCCL_NVLS_ENABLE,
 * NCCL_PXN_DISABLE, NCCL_IB_DISABLE, NCCL_MAX_NCHANNELS, NCCL_NET_GDR_LEVEL).
 * Each such line is a piece of evidence for or against one cause
 * (validate/doctor.h names them). The reader also says whether the log
 * looks cut short: its header's maxBytes has room for another size, and it
 * has no closing "# Avg bus bandwidth" line. */
#ifndef BATON_NCCLINFO_H
#define BATON_NCCLINFO_H

#include <stdint.h>

#include "../util/err.h"

#define NI_MAX 32

typedef struct ni_fact {
    char cause[16];          /* a doctor cause id: nics, socket, gdr, channels, algo, proto, nvls, pxn */
    int line;
    int supports;            /* 1: for the cause (the run had it), -1: against (the run did not) */
    int value;               /* a count the line gives (NICs, channels); 0 none */
    char text[128];          /* the line, trimmed */
} ni_fact_t;

typedef struct ni_info {
    ni_fact_t fact[NI_MAX];
    int n;
    uint64_t max_bytes;      /* the header's maxBytes; 0 unsaid */
    int factor;              /* the header's step factor; 0 unsaid */
    int footer;              /* 1: the "# Avg bus bandwidth" line is there */
    int info_lines;          /* NCCL INFO lines in the log */
} ni_info_t;

/* Read path's INFO lines and shape into out. 0, or an error naming the file. */
int ni_read(const char *path, ni_info_t *out, baton_err_t *e);

/* The first fact for cause (NULL if none). */
const ni_fact_t *ni_find(const ni_info_t *x, const char *cause);

/* Does the log look cut short after a last row of last_bytes (the header
 * leaves room for another size, and no footer)? */
int ni_truncated(const ni_info_t *x, uint64_t last_bytes);

#endif
