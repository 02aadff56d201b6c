"""The context bootstrap of the correlations, without resampling any array.

A replicate draws resampling units (contexts, or items) with replacement; it is fully
described by how many times each unit was drawn, ``W[b, u]``. Every correlation of every
replicate then follows from per-unit sums and one matrix product: Pearson from sums of
x, y, x^2, y^2, xy; Spearman from midranks under multiplicities; Kendall from the
sign-product sums between units (``_kendall_blocks``) and tie counts per value. The values
equal scipy's on the literally resampled arrays (checked in the tests).
"""

from __future__ import annotations

import functools

import numpy as np

from ranking._core.checks import check_random_state
from ranking._core.jit import njit

from .segments import _rows_corr, _snap_ties

# The Kendall bootstrap keeps (n_units x n_units) pair-count blocks in memory.
MAX_KENDALL_BOOT_UNITS = 3000

# OpenBLAS runs a product on one thread below about 65536 * 4 multiply-adds; above it wakes
# its thread pool, which on a busy machine costs far more than these small products (seen:
# 1 ms on one thread, 20-120 ms with the pool). Row chunks below the threshold keep every
# bootstrap product single-threaded and predictable.
_BLAS_SINGLE_THREAD_MACS = 262_144


# ----------------------------------------------------------------------------- draws


def _unit_weights(rng, n_boot, n_units):
    """Multinomial resampling counts of ``n_units`` units, shape (n_boot, n_units)."""
    draws = rng.integers(0, n_units, size=(n_boot, n_units))
    flat = draws + (np.arange(n_boot) * n_units)[:, None]
    return np.bincount(flat.ravel(), minlength=n_boot * n_units).reshape(n_boot, n_units)


@functools.lru_cache(maxsize=8)
def _seeded_weights(seed, n_boot, n_units):
    # A table asks for the same (seed, n_boot, n_units) in every cell; the draws are a pure
    # function of them, so they are made once (read-only, float for the matrix products).
    W = _unit_weights(check_random_state(seed), n_boot, n_units).astype(np.float64)
    W.flags.writeable = False
    return W


def _boot_weights(random_state, rng, n_boot, n_units):
    """Resampling counts for one bootstrap: cached when seeded by a plain integer."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return _seeded_weights(int(random_state), n_boot, n_units)
    return _unit_weights(rng, n_boot, n_units).astype(np.float64)


def _matmul_rows(W, M):
    """``W @ M`` in row chunks small enough for single-threaded BLAS."""
    n_rows = W.shape[0]
    inner, n_cols = M.shape
    step = max(1, _BLAS_SINGLE_THREAD_MACS // max(1, inner * n_cols))
    if step >= n_rows:
        return W @ M
    out = np.empty((n_rows, n_cols))
    for s in range(0, n_rows, step):
        np.matmul(W[s : s + step], M, out=out[s : s + step])
    return out


def _percentile_interval(reps, confidence):
    """Percentile interval of the defined replicates and a note on the undefined ones."""
    finite = reps[np.isfinite(reps)]
    n_bad = reps.shape[0] - finite.shape[0]
    note = ""
    if n_bad:
        note = f"{n_bad} of {reps.shape[0]} bootstrap replicates undefined and left out"
    if finite.shape[0] == 0:
        return np.nan, np.nan, note
    a = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(finite, [a, 1.0 - a])
    return float(lo), float(hi), note


# ----------------------------------------------------------------------------- pooled items


@njit
def _kendall_block_sums(x, y, codes, S):  # pragma: no cover - compiled
    """Adds sign(x_i - x_j) sign(y_i - y_j) of every pair j > i into S[codes[i], codes[j]]."""
    n = x.shape[0]
    for i in range(n):
        ci = codes[i]
        xi = x[i]
        yi = y[i]
        # Branch-free accumulation of the pairs j > i into row ci.
        for j in range(i + 1, n):
            dx = xi - x[j]
            dy = yi - y[j]
            S[ci, codes[j]] += ((dx > 0.0) - (dx < 0.0)) * ((dy > 0.0) - (dy < 0.0))


def _kendall_blocks(x, y, codes, n_units):
    """Sign-product sums between resampling units.

    S[u, v] = sum over ordered pairs (i in u, j in v) of sign(x_i - x_j) sign(y_i - y_j);
    symmetric, (n_units, n_units). The one compiled kernel of the agreement statistics
    (issue 26): an O(n^2) pair loop over the pooled items, 10x and more faster than numpy
    on a benchmark's thousand items (one call per bootstrapped cell).
    """
    S = np.zeros((n_units, n_units))
    _kendall_block_sums(
        np.ascontiguousarray(x, dtype=np.float64),
        np.ascontiguousarray(y, dtype=np.float64),
        np.ascontiguousarray(codes, dtype=np.int64),
        S,
    )
    return S + S.T


def _weighted_pearson_rows(x, y, w):
    """Pearson of (n_boot, n) rows ``x``, ``y`` with frequency weights ``w`` (same shape)."""
    N = w.sum(axis=1)
    mx = (w * x).sum(axis=1) / N
    my = (w * y).sum(axis=1) / N
    xc = x - mx[:, None]
    yc = y - my[:, None]
    sxy = (w * xc * yc).sum(axis=1)
    sxx = (w * xc * xc).sum(axis=1)
    syy = (w * yc * yc).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxy / np.sqrt(sxx * syy)
    return np.clip(r, -1.0, 1.0)


def _weighted_midranks(v, w):
    """Midranks of ``v`` in the sample where item i appears ``w[b, i]`` times, per row b.

    Not the rank core of ``ranking.agreement.metrics``: an item drawn k times occupies k positions.
    """
    order = np.argsort(v, kind="stable")
    vs = v[order]
    new_grp = np.ones(v.shape[0], dtype=bool)
    new_grp[1:] = vs[1:] != vs[:-1]
    grp_id = np.cumsum(new_grp) - 1
    starts = np.flatnonzero(new_grp)
    G = np.add.reduceat(w[:, order], starts, axis=1)
    before = np.cumsum(G, axis=1) - G
    mid = before + (G + 1.0) / 2.0
    ranks = np.empty_like(w, dtype=np.float64)
    ranks[:, order] = mid[:, grp_id]
    return ranks


def _boot_pooled(x, y, units, n_units, method, variant, W):
    """Correlation of every bootstrap replicate of the pooled items.

    Replicate b contains each item of unit u ``W[b, u]`` times; values equal scipy's on the
    literally resampled arrays (checked in tests).
    """
    W = np.asarray(W, dtype=np.float64)
    if method == "pearson":
        xc = x - x.mean()
        yc = y - y.mean()
        cols = np.stack([np.ones_like(xc), xc, yc, xc * xc, yc * yc, xc * yc], axis=1)
        sums = np.zeros((n_units, 6))
        np.add.at(sums, units, cols)
        N, Sx, Sy, Sxx, Syy, Sxy = _matmul_rows(W, sums).T
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (Sxy - Sx * Sy / N) / np.sqrt((Sxx - Sx * Sx / N) * (Syy - Sy * Sy / N))
        return np.clip(r, -1.0, 1.0)
    if method == "spearman":
        w = W[:, units]
        return _weighted_pearson_rows(_weighted_midranks(x, w), _weighted_midranks(y, w), w)
    if n_units > MAX_KENDALL_BOOT_UNITS:
        raise ValueError(
            f"the Kendall bootstrap resamples {n_units} units, more than "
            f"{MAX_KENDALL_BOOT_UNITS}; pass contexts= so whole contexts are resampled, "
            "or use n_boot=0"
        )
    S = _kendall_blocks(
        np.ascontiguousarray(x), np.ascontiguousarray(y), units.astype(np.int64), n_units
    )
    sizes = np.bincount(units, minlength=n_units).astype(np.float64)
    mx, sx = _tie_terms(x, units, n_units)
    my, sy = _tie_terms(y, units, n_units)
    # One matrix product for everything.
    WB = _matmul_rows(W, np.hstack([S, mx, my, sizes[:, None]]))
    N = WB[:, -1]
    cmd = 0.5 * (WB[:, :n_units] * W).sum(axis=1)
    a, b = n_units, n_units + mx.shape[1]
    n0 = N * (N - 1) / 2
    n1 = (_tied_pairs(W, WB[:, a:b], sx) - N) / 2
    n2 = (_tied_pairs(W, WB[:, b : b + my.shape[1]], sy) - N) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            r = cmd / np.sqrt((n0 - n1) * (n0 - n2))
        else:
            present = W > 0
            m = np.minimum(
                _distinct_present(x, units, n_units, present),
                _distinct_present(y, units, n_units, present),
            ).astype(np.float64)
            r = 2.0 * cmd / (N**2 * (m - 1) / m)
    return np.clip(r, -1.0, 1.0)


def _tie_terms(v, units, n_units):
    """What the bootstrap multiplies by to count tied pairs of ``v`` in every replicate.

    With A[u, r] the items of unit u holding repeated value r, the ordered tied pairs (self-
    pairs included) of a replicate w are ||w A||^2 + (w*w) . singles, singles[u] counting
    the items of u whose value no other item has: cheap when scores take few values.
    With more repeated values than units, the (n_units, n_units) block A A' + diag(singles)
    is the smaller matrix; then the count is w' B w. Returns (matrix, singles or None).
    """
    A, singles = _value_counts(v, units, n_units)
    if A.shape[1] > n_units:
        return _matmul_rows(A, A.T) + np.diag(singles), None
    return A, singles


def _tied_pairs(W, WM, singles):
    """Ordered tied pairs per replicate from ``WM = W @ matrix`` of :func:`_tie_terms`."""
    if singles is None:
        return (WM * W).sum(axis=1)
    return (WM * WM).sum(axis=1) + (W * W) @ singles


def _value_counts(v, units, n_units):
    """Counts per unit of each value held by 2+ items, and of single-item values.

    Returns ``(A, singles)``: A is (n_units, n_repeated_values), singles (n_units,).
    """
    _, inv, cnt = np.unique(v, return_inverse=True, return_counts=True)
    repeated = cnt[inv] > 1
    singles = np.bincount(units[~repeated], minlength=n_units).astype(np.float64)
    _, rinv = np.unique(inv[repeated], return_inverse=True)
    n_r = int(rinv.max()) + 1 if rinv.size else 0
    A = np.bincount(units[repeated] * n_r + rinv, minlength=n_units * n_r)
    return A.reshape(n_units, n_r).astype(np.float64), singles


def _distinct_present(v, units, n_units, present):
    """Number of distinct values of ``v`` among the units present in each replicate."""
    _, inv = np.unique(v, return_inverse=True)
    has = np.zeros((n_units, int(inv.max()) + 1))
    has[units, inv] = 1.0
    return (_matmul_rows(present.astype(np.float64), has) > 0).sum(axis=1)


# ----------------------------------------------------------------------------- means, system means


def _boot_mean(values, W):
    """Mean of per-context ``values`` in every replicate.

    Resampling contexts and averaging their correlations: the per-context values do not
    change, so only their multiplicities ``W`` (n_boot, n_values) are drawn.
    """
    return _matmul_rows(W, values[:, None])[:, 0] / W.sum(axis=1)


def _boot_system(x, y, units, n_units, sys_codes, n_sys, method, variant, W):
    """Correlation of the per-system means in every bootstrap replicate.

    The sums per (unit, system) cell make every replicate's means one matrix product; a
    replicate that lost a whole system is undefined (NaN) rather than a smaller sample.
    """
    cell = units * n_sys + sys_codes
    size = n_units * n_sys
    Sx = np.bincount(cell, x, size).reshape(n_units, n_sys)
    Sy = np.bincount(cell, y, size).reshape(n_units, n_sys)
    C = np.bincount(cell, minlength=size).reshape(n_units, n_sys).astype(np.float64)
    WS = _matmul_rows(W, np.hstack([Sx, Sy, C]))
    with np.errstate(invalid="ignore", divide="ignore"):
        BX = _snap_ties(WS[:, :n_sys] / WS[:, 2 * n_sys :])
        BY = _snap_ties(WS[:, n_sys : 2 * n_sys] / WS[:, 2 * n_sys :])
    return _rows_corr(BX, BY, method, variant)
