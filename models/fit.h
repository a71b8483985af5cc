/* fit.h - nonlinear least squares. The only place GSL is used.
 *
 * Minimises sum_i w_i r_i(theta)^2 with GSL's trust-region solver
 * (Levenberg-Marquardt; our own forward-difference Jacobian, stepped by 1e-6
 * of max(|theta|, 1), as GSL's vanishes at theta = 0). Robust mode repeats the
 * fit with Huber weights from the residuals' median absolute deviation, so a
 * few wild measurements cannot drag the parameters. */
#ifndef BATON_FIT_H
#define BATON_FIT_H

#include "../util/err.h"

/* Fill resid[0..n) for parameters theta[0..k); 0 or negative to stop. */
typedef int (*fit_resid_fn)(const double *theta, double *resid, void *ctx);

/* theta holds the start and receives the fit. robust: rounds of Huber
 * reweighting after the plain fit (0: none). */
int fit_nls(int n, int k, double *theta, fit_resid_fn f, void *ctx, int robust, baton_err_t *e);

/* The parameters' covariance at theta (k x k, row-major, into cov):
 * s^2 (J'J)^-1 over all n residuals (rows after the first ndata, such as
 * pulls towards defaults, keep a direction the data cannot see finite), s^2
 * the first ndata residuals' variance (the measurements'), never below
 * floor^2 (no model is better than its inputs). colnorm[i] gets the norm of
 * the data rows' column i: 0 when no measurement depends on parameter i. */
int fit_covariance(int n, int ndata, int k, const double *theta, fit_resid_fn f, void *ctx, double floor,
                   double *cov, double *colnorm, baton_err_t *e);

#endif
