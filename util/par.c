/* par.c - a map over independent items, in forked workers (par.h).
 *
 * The workers take items from one counter in memory they share (the only
 * thing they share), from the last item down: the costly sizes, which end
 * a log, go first and the cheap ones fill in behind them. Taking items in a
 * fixed deal instead (item i to worker i mod W) left the 8 x 400G H200 fit
 * at 1.56x on two cores: one worker got 16, 4 and 1 GiB, the other 8, 2
 * and 0.5. Which worker computes an item does not change its result. */
#define _DEFAULT_SOURCE
#include "par.h"
#include "wfile.h"
#include "progress.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAR_MAX_JOBS 32

typedef struct {
    atomic_int next;                 /* items handed out so far */
    atomic_int cur[PAR_MAX_JOBS];    /* the item each worker is on */
    atomic_int finished;             /* items done, by any worker (the progress line) */
} par_shared_t;

/* What a worker writes per item: this, then out_size bytes, then (rc < 0)
 * its baton_err_t. */
typedef struct { int32_t i, rc; } par_rec_t;

/* n bytes: 1; 0 at a clean end of the stream; -1 cut short or an error. */
static int read_all(int fd, void *p, size_t n) {
    char *c = p;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, c + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return got == 0 && r == 0 ? 0 : -1;
        got += (size_t)r;
    }
    return 1;
}

/* Worker w: items from the counter, the last first, each as a record; it
 * stops at its first failure. */
static void worker(int fd, int w, par_shared_t *sh, int n, size_t out_size, par_fn_t fn, void *ctx) {
    void *buf = malloc(out_size ? out_size : 1);
    if (w > 0) progress_mute();      /* the first worker draws the line, for all of them */
    for (int ok = buf != NULL; ok;) {
        int k = atomic_fetch_add(&sh->next, 1);
        if (k >= n) break;
        baton_err_t ce = {0};
        memset(buf, 0, out_size);
        atomic_store(&sh->cur[w], n - 1 - k);
        par_rec_t r = {.i = n - 1 - k, .rc = fn(ctx, n - 1 - k, buf, &ce)};
        progress_step(atomic_fetch_add(&sh->finished, 1) + 1);
        ok = wfile_write_all(fd, &r, sizeof r) == 0 && wfile_write_all(fd, buf, out_size) == 0 &&
             (r.rc >= 0 || wfile_write_all(fd, &ce, sizeof ce) == 0) && r.rc >= 0;
    }
    _exit(0);       /* not exit(): the caller's stdio buffers and atexit handlers are its own */
}

typedef struct {
    int n;
    size_t out_size;
    char *out, *done;   /* the results; which items have one */
    int err_i;          /* the lowest failing item, n if none */
    baton_err_t err;
} par_t;

static void failed(par_t *p, int i, const baton_err_t *e) {
    if (i < p->err_i) p->err_i = i, p->err = *e;
}

/* A worker's records into p, until its stream ends. */
static void collect(par_t *p, int fd) {
    char *tmp = malloc(p->out_size ? p->out_size : 1);
    for (int more = tmp != NULL; more;) {
        par_rec_t r;
        baton_err_t ce;
        more = read_all(fd, &r, sizeof r) > 0 && r.i >= 0 && r.i < p->n && read_all(fd, tmp, p->out_size) > 0 &&
               (r.rc >= 0 || read_all(fd, &ce, sizeof ce) > 0);
        if (!more) break;
        memcpy(p->out + (size_t)r.i * p->out_size, tmp, p->out_size);
        p->done[r.i] = 1;
        if (r.rc < 0) {
            ce.msg[sizeof ce.msg - 1] = '\0';
            failed(p, r.i, &ce);
        }
    }
    free(tmp);
}

/* Fork W workers; fd[w] < 0 where one could not be started. */
static void start(int W, par_shared_t *sh, par_t *p, par_fn_t fn, void *ctx, pid_t *pid, int *fd) {
    for (int w = 0; w < W; w++) {
        int io[2];
        pid[w] = -1, fd[w] = -1;
        atomic_store(&sh->cur[w], -1);
        if (pipe(io) < 0) continue;
        pid[w] = fork();
        if (pid[w] == 0) {
            close(io[0]);
            for (int v = 0; v < w; v++) if (fd[v] >= 0) close(fd[v]);
            worker(io[1], w, sh, p->n, p->out_size, fn, ctx);
        }
        close(io[1]);
        if (pid[w] < 0) close(io[0]);
        else fd[w] = io[0];
    }
}

/* Read every worker, then wait for it; one killed is its item's error. */
static void gather(int W, par_shared_t *sh, par_t *p, const pid_t *pid, const int *fd) {
    for (int w = 0; w < W; w++) {
        int status = 0, on;
        if (fd[w] < 0) continue;
        collect(p, fd[w]);
        close(fd[w]);
        while (waitpid(pid[w], &status, 0) < 0 && errno == EINTR) {}
        on = atomic_load(&sh->cur[w]);
        if (WIFSIGNALED(status) && on >= 0 && !p->done[on]) {
            baton_err_t we = {0};
            err_set(&we, BATON_EINVAL, "a worker process died of signal %d on item %d (BATON_JOBS=1 runs in one "
                    "process)", WTERMSIG(status), on);
            failed(p, on, &we);
        }
    }
}

/* Items no worker delivered, below the lowest failure, here and in order:
 * the serial loop's error is the first it meets. */
static void finish(par_t *p, par_fn_t fn, void *ctx) {
    for (int i = 0; i < p->n && i < p->err_i; i++) {
        if (p->done[i]) continue;
        baton_err_t e = {0};
        if (fn(ctx, i, p->out + (size_t)i * p->out_size, &e) < 0) failed(p, i, &e);
        p->done[i] = 1;
        progress_step(i + 1);
    }
}

int par_map(int n, size_t out_size, void *out, par_fn_t fn, void *ctx, int jobs, baton_err_t *e) {
    int W = jobs < n ? jobs : n;
    if (W > PAR_MAX_JOBS) W = PAR_MAX_JOBS;
    par_t p = {.n = n, .out_size = out_size, .out = out, .err_i = n, .done = W > 1 ? calloc((size_t)n, 1) : NULL};
    par_shared_t *sh = p.done ? mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
                              : MAP_FAILED;
    if (sh != MAP_FAILED) {                        /* else, or with one job: all here */
        pid_t pid[PAR_MAX_JOBS];
        int fd[PAR_MAX_JOBS];
        atomic_init(&sh->next, 0);
        atomic_init(&sh->finished, 0);
        start(W, sh, &p, fn, ctx, pid, fd);
        gather(W, sh, &p, pid, fd);
        progress_touched();                        /* a worker may have drawn: clear at the end */
        munmap(sh, sizeof *sh);
    } else if (p.done == NULL)
        p.done = calloc((size_t)n + 1, 1);
    if (p.done == NULL) {                          /* no memory to keep track: one at a time */
        for (int i = 0; i < n; i++) {
            int rc = fn(ctx, i, (char *)out + (size_t)i * out_size, e);
            if (rc < 0) return rc;
        }
        return 0;
    }
    finish(&p, fn, ctx);
    free(p.done);
    if (p.err_i == n) return 0;
    int code = p.err.code ? p.err.code : BATON_EINVAL;
    err_set(e, code, "%s", p.err.msg);
    return code;
}

int par_jobs(void) {
    const char *s = getenv("BATON_JOBS");
    long j = s && *s ? strtol(s, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return j < 1 ? 1 : j > PAR_MAX_JOBS ? PAR_MAX_JOBS : (int)j;
}

/* A non-negative double's bits order as the double does, so the least is
 * one compare-and-swap on them; all ones (a NaN's pattern, never offered)
 * stands for none yet. */
struct par_min { _Atomic uint64_t bits; };

par_min_t *par_min_new(void) {
    par_min_t *m = mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    atomic_init(&m->bits, UINT64_MAX);
    return m;
}

void par_min_offer(par_min_t *m, double v) {
    uint64_t b, cur;
    v += 0.0;                                  /* -0.0 becomes 0.0 */
    if (m == NULL || !(v >= 0)) return;
    memcpy(&b, &v, sizeof b);
    cur = atomic_load(&m->bits);
    while (b < cur && !atomic_compare_exchange_weak(&m->bits, &cur, b)) {}
}

double par_min_get(const par_min_t *m) {
    uint64_t b = m ? atomic_load(&((par_min_t *)m)->bits) : UINT64_MAX;
    double v;
    if (b == UINT64_MAX) return INFINITY;
    memcpy(&v, &b, sizeof v);
    return v;
}

void par_min_free(par_min_t *m) {
    if (m) munmap(m, sizeof *m);
}
