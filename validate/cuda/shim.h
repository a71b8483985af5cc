/* shim.h - baton's schedules for C++ (CUDA) code: an opaque handle and
 * plain structs, since the library's own headers are C11. */
#ifndef BATON_CUDA_SHIM_H
#define BATON_CUDA_SHIM_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bc_sched bc_sched_t;

/* A byte interval of a rank's buffer (a chunk range is at most two). */
typedef struct { unsigned long long off, len; } bc_span_t;

typedef struct {
    int recv;                 /* 0 none, 1 copy, 2 add */
    int send;
    int from_stream, to_stream;
    bc_span_t src[2], dst[2]; /* send: read src here, land in dst at the receiver; recv: dst */
    int nsrc, ndst;
    unsigned long long bytes;
} bc_op_t;

bc_sched_t *bc_build(const char *coll, const char *algo, int ranks, unsigned long long bytes, char *err, int errlen);
void bc_free(bc_sched_t *s);
int bc_channels(const bc_sched_t *s);
unsigned long long bc_buffer_bytes(const bc_sched_t *s);     /* per rank */
/* Op pc of stream (rank * channels + channel); 1 if there is one. */
int bc_op(const bc_sched_t *s, int stream, unsigned pc, bc_op_t *op);
/* The byte rank r starts with at i, and the one it must end with (-1: any). */
unsigned char bc_fill(int r, unsigned long long i);
int bc_expect(const bc_sched_t *s, int r, unsigned long long i);
/* Write an nccl-tests log of n rows (bytes, microseconds). 0 or -1. */
int bc_write_log(const char *path, const char *coll, int ranks, const unsigned long long *bytes, const double *us, int n);

#ifdef __cplusplus
}
#endif
#endif
