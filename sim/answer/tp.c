/* tp.c - tensor-parallel forward pass: 2 x layers all-reduces. */
#include "tp.h"

#include "choice.h"

#include <string.h>

int tp_dtype_bytes(const char *d) {
    if (!strcmp(d, "bf16") || !strcmp(d, "fp16")) return 2;
    if (!strcmp(d, "fp32")) return 4;
    if (!strcmp(d, "fp8")) return 1;
    return 0;
}

int tp_run(topo_t *t, int layers, int hidden, uint64_t tokens, int elem_bytes, const char *algo, int proto,
           tp_result_t *out, baton_err_t *e) {
    memset(out, 0, sizeof *out);
    if (layers < 1 || hidden < 1 || tokens < 1 || elem_bytes < 1)
        return err_set(e, BATON_EINVAL, "layers, hidden, tokens and the element size must be positive");
    out->allreduces = 2 * layers;
    out->bytes = tokens * (uint64_t)hidden * (uint64_t)elem_bytes;
    int rc = choice_run(t, COLL_ALLREDUCE, out->bytes, algo, proto, CONTENTION_FIFO, &out->ar, e);   /* as step's */
    if (rc < 0) return rc;
    out->comm_s = out->allreduces * out->ar.time_s;
    return 0;
}
