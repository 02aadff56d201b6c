"""The numeric passes of the budget loop's Newton steps (``ranking.budget.bt_newton``): the
gradient and Hessian (one exp per item), the filled scores and their rank certificate, and
the 16 x 16 solves.

``ranking.bradley_terry.dense._solve_gauged`` (gauge on shift-invariant components, Cholesky, jitter
on failure), with the component sizes inverted once and the factor's divisions as products; the
factor (diagonal stored inverted) is kept for chord steps.
"""

from __future__ import annotations

import math

import numpy as np

from ranking._core.jit import njit
from ranking.bradley_terry.newton import sigmoid

#: Scores of one fit closer than this (after sorting, gap by gap) are one tie: the fits
#: stop on a Newton step below ``tol`` (1e-8 by default), so smaller gaps are rounding
#: (two candidates with the same record, or a warm start against a cold one), not signal.
SNAP = 1e-9

#: Scores spread over less than this: sigmoids from one exp per item (see ``_eval_gh``).
EXP_SPREAD = 600.0


@njit(_nrt=False)
def _gauged_copy(H, comp, inv_size, gauged, L, jitter):
    """The lower triangle of H + gauge (1/|C| on shift-invariant components, 1 on the
    diagonal of never compared items) + ``jitter`` on the diagonal, into L."""
    n = H.shape[0]
    for i in range(n):
        ci = comp[i]
        if ci < 0:
            for j in range(i):
                L[i, j] = H[i, j]
            L[i, i] = 1.0 + jitter
            continue
        w = inv_size[ci] if gauged[ci] else 0.0
        for j in range(i + 1):
            L[i, j] = H[i, j] + w if comp[j] == ci else H[i, j]
        L[i, i] += jitter


@njit(_nrt=False)
def _solve(H, comp, inv_size, gauged, g, L, x):
    """``ranking.bradley_terry.dense._solve_gauged`` (gauge 1/|C| on shift-invariant components,
    Cholesky, jitter on failure) with the component sizes inverted once and the factor's
    divisions as products: x = (H + gauge)^-1 g; False if not positive definite. H is left
    as it was (the gauged matrix is factored in L)."""
    n = H.shape[0]
    _gauged_copy(H, comp, inv_size, gauged, L, 0.0)
    if not _cholesky_inv(L, L, g, x):
        _gauged_copy(H, comp, inv_size, gauged, L, 0.0)
        big = 0.0
        for i in range(n):
            big = max(big, L[i, i])
        _gauged_copy(H, comp, inv_size, gauged, L, 1e-12 * big + 1e-300)
        if not _cholesky_inv(L, L, g, x):
            return False
    return True


@njit(_nrt=False)
def _cholesky_inv(A, L, b, x):
    """Cholesky A = L L^T (lower; L's diagonal is stored inverted) and the solve of
    A x = b; False if A is not numerically positive definite. Reads A's lower triangle
    only, each entry once before L's entry there is written: A may be L (in place)."""
    n = A.shape[0]
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        inv = 1.0 / np.sqrt(s)
        L[j, j] = inv  # the inverse of the diagonal, used by the solves below
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t * inv
    _chord_solve(L, b, x)
    return True


@njit(_nrt=False)
def _chord_solve(L, b, x):
    """Solve with the factor of :func:`_cholesky_inv` (inverted diagonal)."""
    n = L.shape[0]
    for i in range(n):
        t = b[i]
        for k in range(i):
            t -= L[i, k] * x[k]
        x[i] = t * L[i, i]
    for i in range(n - 1, -1, -1):
        t = x[i]
        for k in range(i + 1, n):
            t -= L[k, i] * x[k]
        x[i] = t * L[i, i]


@njit(_nrt=False)
def _chol_rank1(L, i, j, a, w):
    """Update the factor of :func:`_cholesky_inv` (inverted diagonal) in place from
    A = L L^T to A + a^2 (e_i - e_j)(e_i - e_j)^T (a comparison's curvature); ``w`` is
    scratch of length N."""
    n = L.shape[0]
    for k in range(n):
        w[k] = 0.0
    w[i] = a
    w[j] = -a
    for k in range(min(i, j), n):
        wk = w[k]
        if wk == 0.0:
            continue  # c = 1, s = 0: this column stays
        lkk = 1.0 / L[k, k]
        r = np.sqrt(lkk * lkk + wk * wk)
        c = r / lkk
        s = wk / lkk
        inv_c = 1.0 / c
        L[k, k] = 1.0 / r
        for t in range(k + 1, n):
            v = (L[t, k] + s * w[t]) * inv_c
            L[t, k] = v
            w[t] = c * w[t] - s * v


@njit(_nrt=False)
def _eval_gh(W, Ntot, pi, pj, m, theta, ridge_vec, g, H, ex):
    """Gradient g and negative Hessian H of the penalised log-likelihood (no objective).

    The sigmoid of a pair is e_i / (e_i + e_j) with e = exp(theta - max theta) per item
    (``ex``): N exps instead of one per pair; ``ranking.bradley_terry.newton.sigmoid`` per pair when
    the scores spread too far for that (exp underflow).
    """
    n = W.shape[0]
    hi = -np.inf
    lo = np.inf
    for i in range(n):
        g[i] = -ridge_vec[i] * theta[i]
        for j in range(n):
            H[i, j] = 0.0
        H[i, i] = ridge_vec[i]
        hi = max(hi, theta[i])
        lo = min(lo, theta[i])
    per_item = hi - lo < EXP_SPREAD
    if per_item:
        for i in range(n):
            ex[i] = np.exp(theta[i] - hi)
    for a in range(m):
        i = pi[a]
        j = pj[a]
        nij = Ntot[i, j]
        if per_item:
            inv = 1.0 / (ex[i] + ex[j])
            s = ex[i] * inv
            sc = ex[j] * inv
        else:
            s = sigmoid(theta[i] - theta[j])
            sc = 1.0 - s
        r = W[i, j] - nij * s
        g[i] += r
        g[j] -= r
        h = nij * s * sc
        H[i, i] += h
        H[j, j] += h
        H[i, j] -= h
        H[j, i] -= h


@njit(_nrt=False)
def _eval_g(W, Ntot, pi, pj, m, theta, ridge_vec, g, ex):
    """The gradient alone, as :func:`_eval_gh` computes it."""
    n = W.shape[0]
    hi = -np.inf
    lo = np.inf
    for i in range(n):
        g[i] = -ridge_vec[i] * theta[i]
        hi = max(hi, theta[i])
        lo = min(lo, theta[i])
    per_item = hi - lo < EXP_SPREAD
    if per_item:
        for i in range(n):
            ex[i] = np.exp(theta[i] - hi)
    for a in range(m):
        i = pi[a]
        j = pj[a]
        if per_item:
            s = ex[i] / (ex[i] + ex[j])
        else:
            s = sigmoid(theta[i] - theta[j])
        r = W[i, j] - Ntot[i, j] * s
        g[i] += r
        g[j] -= r


@njit(_nrt=False)
def fill_scores(theta, ok_c, cnt, neutral, scores):
    """The scores a budget correlates: theta for compared valid candidates, the mean of
    those for the unseen ones with ``neutral`` (NaN otherwise, or when none is compared),
    NaN for invalid ones. Returns the fill value (NaN when none)."""
    n = theta.shape[0]
    mid = np.nan
    if neutral:
        s = 0.0
        m = 0
        for u in range(n):
            if cnt[u] > 0.0 and ok_c[u]:
                s += theta[u]
                m += 1
        if m > 0:
            mid = s / m
    for u in range(n):
        if not ok_c[u]:
            scores[u] = np.nan
        elif cnt[u] > 0.0:
            scores[u] = theta[u]
        else:
            scores[u] = mid
    return mid


@njit(_nrt=False)
def sort_finite(x, order):
    """The positions of the finite values of ``x`` in ascending order of value, into
    ``order`` (int scratch of x's length); returns their number. An insertion sort (stable;
    N is small)."""
    n = 0
    for u in range(x.shape[0]):
        if math.isfinite(x[u]):
            k = n
            while k > 0 and x[order[k - 1]] > x[u]:
                order[k] = order[k - 1]
                k -= 1
            order[k] = u
            n += 1
    return n


@njit(_nrt=False)
def _ranks_certain(scores, cnt, err, order):
    """Whether every score is more than ``SNAP + 2 err`` away from every other (the unseen,
    filled with one value by construction, excepted among themselves): then scores within
    ``err`` of these rank (and snap) as these do."""
    n = sort_finite(scores, order)
    for a in range(1, n):
        u = order[a - 1]
        v = order[a]
        if cnt[u] == 0.0 and cnt[v] == 0.0:
            continue
        if scores[v] - scores[u] <= SNAP + 2.0 * err:
            return False
    return True
