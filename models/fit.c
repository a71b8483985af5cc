/* fit.c - GSL multifit_nlinear with Huber reweighting. */
#include "fit.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    fit_resid_fn f;
    void *ctx;
    int n, k;
    const double *w;     /* sqrt of weights, or NULL */
    int failed;
} call_t;

static int gsl_f(const gsl_vector *x, void *params, gsl_vector *out) {
    call_t *c = params;
    double th[16], r[4096];
    for (int i = 0; i < c->k; i++) th[i] = gsl_vector_get(x, i);
    if (c->f(th, r, c->ctx) < 0) { c->failed = 1; return GSL_EFAILED; }
    for (int i = 0; i < c->n; i++) gsl_vector_set(out, i, c->w ? r[i] * c->w[i] : r[i]);
    return GSL_SUCCESS;
}

/* Forward differences, each parameter stepped by `step` x max(|theta|, 1):
 * J[i k + j] = d r_i / d theta_j, r0 the residuals at theta. */
static int jacobian(int n, int k, const double *theta, fit_resid_fn f, void *ctx, double step, double *r0, double *J) {
    double th[16], r1[4096];
    if (f(theta, r0, ctx) < 0) return -1;
    for (int j = 0; j < k; j++) {
        memcpy(th, theta, (size_t)k * sizeof *th);
        double h = step * (fabs(theta[j]) > 1 ? fabs(theta[j]) : 1);
        th[j] += h;
        if (f(th, r1, ctx) < 0) return -1;
        for (int i = 0; i < n; i++) J[i * k + j] = (r1[i] - r0[i]) / h;
    }
    return 0;
}

/* The fit's Jacobian, stepped by 1e-6 of max(|theta|, 1). GSL's own steps
 * by sqrt(eps) |theta|, which at a coordinate that starts at the middle of
 * its bounds (theta = 1e-16, a latency factor of 1 in [0.1, 10]) is below
 * what the model resolves: the column is zero and the parameter never
 * moves. */
static int gsl_df(const gsl_vector *x, void *params, gsl_matrix *J) {
    call_t *c = params;
    double th[16], r0[4096], *d = malloc((size_t)c->n * (size_t)c->k * sizeof *d);
    for (int i = 0; i < c->k; i++) th[i] = gsl_vector_get(x, i);
    if (d == NULL || jacobian(c->n, c->k, th, c->f, c->ctx, 1e-6, r0, d) < 0) { free(d); c->failed = 1; return GSL_EFAILED; }
    for (int i = 0; i < c->n; i++)
        for (int j = 0; j < c->k; j++) gsl_matrix_set(J, (size_t)i, (size_t)j, d[i * c->k + j] * (c->w ? c->w[i] : 1));
    free(d);
    return GSL_SUCCESS;
}

static int solve(call_t *c, double *theta) {
    const gsl_multifit_nlinear_type *T = gsl_multifit_nlinear_trust;
    gsl_multifit_nlinear_parameters p = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(T, &p, (size_t)c->n, (size_t)c->k);
    gsl_multifit_nlinear_fdf fdf = {.f = gsl_f, .df = gsl_df, .fvv = NULL, .n = (size_t)c->n, .p = (size_t)c->k, .params = c};
    gsl_vector_view x = gsl_vector_view_array(theta, (size_t)c->k);
    int info, rc = -1;
    if (w && gsl_multifit_nlinear_init(&x.vector, &fdf, w) == GSL_SUCCESS) {
        gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, w);
        for (int i = 0; i < c->k; i++) theta[i] = gsl_vector_get(w->x, i);
        rc = c->failed ? -1 : 0;
    }
    if (w) gsl_multifit_nlinear_free(w);
    return rc;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Huber weights (c = 1.345 robust scales) from the current residuals. */
static int huber(call_t *c, const double *theta, double *sw) {
    double r[4096], a[4096];
    if (c->f(theta, r, c->ctx) < 0) return -1;
    for (int i = 0; i < c->n; i++) a[i] = fabs(r[i]);
    qsort(a, (size_t)c->n, sizeof *a, cmp);
    double s = 1.4826 * a[c->n / 2];
    if (!(s > 1e-12)) s = 1e-12;
    for (int i = 0; i < c->n; i++) {
        double u = fabs(r[i]) / (1.345 * s);
        sw[i] = u <= 1 ? 1 : sqrt(1 / u);
    }
    return 0;
}

int fit_nls(int n, int k, double *theta, fit_resid_fn f, void *ctx, int robust, baton_err_t *e) {
    if (n < k || n > 4096 || k < 1 || k > 16)
        return err_set(e, BATON_EINVAL, "a fit of %d parameters needs at least as many measurements (have %d, at most 4096)", k, n);
    gsl_set_error_handler_off();
    call_t c = {f, ctx, n, k, NULL, 0};
    if (solve(&c, theta) < 0) return err_set(e, BATON_EINVAL, "the fit failed (the model could not be evaluated)");
    double *sw = malloc((size_t)n * sizeof *sw);
    if (sw == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int round = 0; round < robust; round++) {
        if (huber(&c, theta, sw) < 0) break;
        c.w = sw;
        if (solve(&c, theta) < 0) { free(sw); return err_set(e, BATON_EINVAL, "the robust fit failed"); }
    }
    free(sw);
    return 0;
}


int fit_covariance(int n, int ndata, int k, const double *theta, fit_resid_fn f, void *ctx, double floor,
                   double *cov, double *colnorm, baton_err_t *e) {
    if (n > 4096 || k < 1 || k > 16 || ndata > n || ndata <= 0) return err_set(e, BATON_EINVAL, "covariance: bad sizes");
    double *J = malloc((size_t)n * (size_t)k * sizeof *J), r0[4096], ss = 0;
    if (J == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    /* 1e-4: wide for a piecewise model (a step across a protocol switch gives a huge column), small for its slopes */
    if (jacobian(n, k, theta, f, ctx, 1e-4, r0, J) < 0) { free(J); return err_set(e, BATON_EINVAL, "covariance: the model could not be evaluated"); }
    for (int i = 0; i < ndata; i++) ss += r0[i] * r0[i];
    double s2 = ndata > k ? ss / (ndata - k) : ss;
    if (s2 < floor * floor) s2 = floor * floor;
    gsl_matrix *A = gsl_matrix_alloc((size_t)k, (size_t)k);
    int rc = A ? 0 : err_set(e, BATON_ENOMEM, "out of memory");
    for (int a = 0; rc == 0 && a < k; a++) {
        double c2 = 0;
        for (int i = 0; i < ndata; i++) c2 += J[i * k + a] * J[i * k + a];
        colnorm[a] = sqrt(c2);
        for (int b = 0; b < k; b++) {
            double v = 0;
            for (int i = 0; i < n; i++) v += J[i * k + a] * J[i * k + b];
            gsl_matrix_set(A, (size_t)a, (size_t)b, v + (a == b ? 1e-12 : 0));
        }
    }
    if (rc == 0 && (gsl_linalg_cholesky_decomp1(A) != GSL_SUCCESS || gsl_linalg_cholesky_invert(A) != GSL_SUCCESS))
        rc = err_set(e, BATON_EINVAL, "covariance: the parameters are not identifiable");
    for (int a = 0; rc == 0 && a < k; a++)
        for (int b = 0; b < k; b++) cov[a * k + b] = s2 * gsl_matrix_get(A, (size_t)a, (size_t)b);
    if (A) gsl_matrix_free(A);
    free(J);
    return rc;
}
