"""The 16 x 16 solves of the budget loop's Newton steps (``ranking._budget_bt_newton``).

``ranking._bt_dense._solve_gauged`` (gauge on shift-invariant components, Cholesky, jitter on
failure), with the component sizes inverted once and the factor's divisions as products;
the factor (diagonal stored inverted) is kept for chord steps.
"""

from __future__ import annotations

import numpy as np

from ranking._numba import njit


@njit
def _solve(H, comp, inv_size, gauged, g, L, x):
    """``ranking._bt_dense._solve_gauged`` (gauge 1/|C| on shift-invariant components,
    Cholesky, jitter on failure) with the component sizes inverted once and the factor's
    divisions as products: x = (H + gauge)^-1 g; False if not positive definite."""
    n = H.shape[0]
    for i in range(n):
        ci = comp[i]
        if ci < 0:
            H[i, i] = 1.0
            continue
        if not gauged[ci]:
            continue
        w = inv_size[ci]
        for j in range(n):
            if comp[j] == ci:
                H[i, j] += w
    if not _cholesky_inv(H, L, g, x):
        big = 0.0
        for i in range(n):
            big = max(big, H[i, i])
        for i in range(n):
            H[i, i] += 1e-12 * big + 1e-300
        if not _cholesky_inv(H, L, g, x):
            return False
    return True


@njit
def _cholesky_inv(A, L, b, x):
    """Cholesky A = L L^T (lower; L's diagonal is stored inverted) and the solve of
    A x = b; False if A is not numerically positive definite."""
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


@njit
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
