/* fit.h - nonlinear least squares. The only place GSL is used.
 *
 * Minimises sum_i w_i r_i(theta)^2 with GSL's trust-region solver
 * (Levenberg-Marquardt, finite-difference Jacobian). Robust mode repeats the
 * fit with Huber weights from the residuals' median absolute deviation, so a
 * few wild measurements cannot drag the parameters. */
#ifndef BATON_FIT_H
#define BATON_FIT_H

#include "../util/err.h"

/* Fill resid[0..n) for parameters theta[0..k); 0 or negative to stop. */
typedef int (*fit_resid_fn)(const double *theta, double *resid, void *ctx);

/* theta holds the start and receives the fit. */
int fit_nls(int n, int k, double *theta, fit_resid_fn f, void *ctx, int robust, baton_err_t *e);

#endif
