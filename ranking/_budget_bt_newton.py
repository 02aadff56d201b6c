"""A warm-started dense Bradley–Terry fit for the budget loop: the same maximum, less work.

``ranking._bt_dense._fit_context`` (what ``bradley_terry(P=...)`` runs per context) fits
from scratch with fresh buffers and evaluates the log-likelihood at every trial point. Along
the budget the previous scores are a few small Newton steps from the new maximum, so this fit

* keeps its buffers (:class:`FitWork`) across the fits of a context, and starts from the
  previous scores unless the ridge per item changed (a component's MLE became finite);
* bounds a step to ``MAX_STEP`` (far from the maximum the Hessian is nearly flat);
* loops over the compared pairs only, with one ``exp`` per pair for the gradient and
  Hessian (the sigmoid);
* accepts a full Newton step on the gradient at the trial point (the objective is concave:
  it still rises along the whole step when the directional derivative there is >= 0; and a
  step below 1 that halves the gradient norm is the fast phase of Newton; a longer one may
  land where the sigmoids saturate and the gradient is small for the wrong reason), which is
  the next iteration's gradient anyway; only otherwise does it fall back to ``ranking._bt_newton.line_search`` on the
  log-likelihood, as ``_fit_context`` does.

The model, the components, the MLE-existence check, the ridge per item (with
``RIDGE_FALLBACK``), the gauge, the stopping rule (a Newton step with max |delta| < tol is
taken and ends the fit) and the centring are those of ``ranking._bt_dense``, whose numba
functions it calls; the scores agree with ``_fit_context`` to rounding.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ranking._bt_dense import (
    DenseProblem,
    _components_dense,
    _finite_mle_dense,
    _solve_gauged,
)
from ranking._bt_newton import (
    RIDGE_FALLBACK,
    centre,
    centre_gauged,
    gauge,
    line_search,
    sigmoid,
    step_size,
)
from ranking._numba import njit

#: Scratch of one context's fits: the pair list, gradient, Hessian, factor, steps.
FitWork = namedtuple(
    "FitWork", "Ntot pi pj g H L step trial g_trial H_trial ridge_vec ridge_prev"
)
#: Longest step (max |delta theta|) tried at once.
MAX_STEP = 2.0


@njit
def make_work(n):
    """Buffers for fits of ``n`` items."""
    m = n * (n - 1) // 2
    return FitWork(
        np.zeros((n, n)),
        np.empty(m, np.int64),
        np.empty(m, np.int64),
        np.empty(n),
        np.empty((n, n)),
        np.zeros((n, n)),
        np.zeros(n),
        np.empty(n),
        np.empty(n),
        np.empty((n, n)),
        np.zeros(n),
        np.zeros(n),
    )


@njit
def _eval_gh(W, Ntot, pi, pj, m, theta, ridge_vec, g, H):
    """Gradient g and negative Hessian H of the penalised log-likelihood (no objective)."""
    n = W.shape[0]
    for i in range(n):
        g[i] = -ridge_vec[i] * theta[i]
        for j in range(n):
            H[i, j] = 0.0
        H[i, i] = ridge_vec[i]
    for a in range(m):
        i = pi[a]
        j = pj[a]
        nij = Ntot[i, j]
        s = sigmoid(theta[i] - theta[j])
        r = W[i, j] - nij * s
        g[i] += r
        g[j] -= r
        h = nij * s * (1.0 - s)
        H[i, i] += h
        H[j, j] += h
        H[i, j] -= h
        H[j, i] -= h


@njit
def _norm2(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


@njit
def fit_warm(W, ridge, max_iter, tol, theta, work):
    """Fit one context's win weights W (N x N) from the scores in ``theta`` (in/out).

    Returns whether the last Newton step was below ``tol``. ``theta`` ends centred per
    component and NaN for items never compared, as in ``_fit_context``.
    """
    n = W.shape[0]
    Ntot = work.Ntot
    pi = work.pi
    pj = work.pj
    m = 0
    for i in range(n):
        for j in range(n):
            Ntot[i, j] = W[i, j] + W[j, i]
    for i in range(n):
        for j in range(i + 1, n):
            if Ntot[i, j] > 0.0:
                pi[m] = i
                pj[m] = j
                m += 1
    comp, n_comp = _components_dense(Ntot)
    ok = _finite_mle_dense(W, comp, n_comp)
    ridge_vec = work.ridge_vec
    for i in range(n):
        c = comp[i]
        if c < 0:
            ridge_vec[i] = 0.0
        elif ridge > 0.0:
            ridge_vec[i] = ridge
        elif not ok[c]:
            ridge_vec[i] = RIDGE_FALLBACK
        else:
            ridge_vec[i] = 0.0
    # the previous scores are a good start only for the same problem type: where a
    # component's MLE became finite (or a ridge changed), start from zero as _fit_context does
    cold = False
    for i in range(n):
        if ridge_vec[i] != work.ridge_prev[i]:
            cold = True
        work.ridge_prev[i] = ridge_vec[i]
    for i in range(n):
        if cold or comp[i] < 0 or not np.isfinite(theta[i]):
            theta[i] = 0.0
    comp_size, gauged = gauge(comp, n_comp, ridge_vec)
    problem = DenseProblem(W, Ntot, ridge_vec)
    g, H, L, step, trial = work.g, work.H, work.L, work.step, work.trial
    g_t, H_t = work.g_trial, work.H_trial
    converged = False
    _eval_gh(W, Ntot, pi, pj, m, theta, ridge_vec, g, H)
    for _ in range(max_iter):
        if not _solve_gauged(H, comp, comp_size, gauged, g, L, step):
            break
        max_change, slope = step_size(g, step)
        if max_change < tol:
            for i in range(n):
                theta[i] += step[i]
            converged = True
            break
        if max_change > MAX_STEP:
            # far from the maximum, where the sigmoids saturate and the Hessian is nearly
            # flat: a bounded step along the Newton direction
            scale = MAX_STEP / max_change
            for i in range(n):
                step[i] *= scale
            slope *= scale
            max_change = MAX_STEP
        for i in range(n):
            trial[i] = theta[i] + step[i]
        _eval_gh(W, Ntot, pi, pj, m, trial, ridge_vec, g_t, H_t)
        dd = 0.0
        for i in range(n):
            dd += g_t[i] * step[i]
        if not (dd >= 0.0 or (max_change < 1.0 and _norm2(g_t) <= 0.25 * _norm2(g))):
            # not clearly better: backtrack on the log-likelihood, as _fit_context does
            line_search(problem, theta, step, slope, 0.0, False, trial)
            _eval_gh(W, Ntot, pi, pj, m, trial, ridge_vec, g_t, H_t)
        for i in range(n):
            theta[i] = trial[i]
            g[i] = g_t[i]
            for j in range(n):
                H[i, j] = H_t[i, j]
        # shift invariant there (g and H unchanged by the shift): pin the mean at 0
        centre_gauged(theta, comp, n_comp, gauged)
    centre(theta, comp, n_comp)
    for i in range(n):
        if comp[i] < 0:
            theta[i] = np.nan
    return converged
