"""The 16 x 16 solves of the budget loop's Newton steps (``ranking._budget_bt_newton``).

``ranking._bt_dense._solve_gauged`` (gauge on shift-invariant components, Cholesky, jitter on
failure), with the component sizes inverted once and the factor's divisions as products;
the factor (diagonal stored inverted) is kept for chord steps.
"""

from __future__ import annotations

import numpy as np

from ranking._numba import njit


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
    """``ranking._bt_dense._solve_gauged`` (gauge 1/|C| on shift-invariant components,
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
