"""Intervals for Bradley–Terry scores: Fisher (inverse information) and the bootstrap.

* Fisher: theta +/- z se, with se from the inverse Fisher information under the centring
  constraint (the Moore–Penrose inverse of the Hessian, obtained by adding the gauge
  1_C 1_C^T / |C| of every shift-invariant component and subtracting it again). Per context
  for P input (``ranking.bradley_terry.stacked.fisher_stack``, numpy over all contexts; the
  compiled :func:`fisher_dense` is its tested twin); for flat input a dense inverse, so it is
  limited to ``MAX_FISHER_ITEMS`` items.
* bootstrap: percentile intervals from refits on the comparisons resampled with replacement
  (per context for P), each refit warm-started from the fitted scores.
"""

from __future__ import annotations

import statistics
import warnings

import numpy as np
from numba import prange

from ranking._core.jit import PARALLEL_MIN_WORK, batch_kernel

from .dense import _add_gauge, _cholesky, _cholesky_solve, _dense_eval, win_weights
from .flat import STACK_MAX_ITEMS, fit_flat, fit_rows
from .graph import components, information
from .newton import gauge
from .stacked import fit_stack

__all__ = [
    "MAX_FISHER_ITEMS",
    "bootstrap_dense",
    "bootstrap_flat",
    "bounds",
    "fisher_dense",
    "fisher_flat",
]

#: Above this many items the Fisher option would need a dense n x n inverse; use the bootstrap.
MAX_FISHER_ITEMS = 4000


def bounds(intervals, theta, confidence, n_boot, se, replicates):
    """(lower, upper, description) of the intervals around ``theta``, or (None, None, "").

    ``se()`` gives the Fisher standard errors and ``replicates()`` the (n_boot, ...)
    refitted scores; each is called only for its kind of interval.
    """
    if intervals == "fisher":
        z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2.0)
        half = z * se()
        return theta - half, theta + half, f"; fisher intervals (confidence {confidence})"
    if intervals == "bootstrap":
        lo, hi = _percentile_bounds(replicates(), confidence)
        return lo, hi, f"; bootstrap intervals ({n_boot} replicates, confidence {confidence})"
    return None, None, ""


def _percentile_bounds(samples, confidence):
    q = 100.0 * (1.0 - confidence) / 2.0
    with warnings.catch_warnings():
        # items absent from every replicate give all-NaN slices: NaN bounds are intended
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = np.nanpercentile(samples, q, axis=0)
        hi = np.nanpercentile(samples, 100.0 - q, axis=0)
    return lo, hi


# ----------------------------------------------------------------------------------------------
# Fisher
# ----------------------------------------------------------------------------------------------


# one N x N Cholesky and N solves per context (the compiled twin of fisher_stack)
@batch_kernel(work=lambda W, *rest: 2 * W.shape[0] * W.shape[1] ** 3, min_work=PARALLEL_MIN_WORK)
def fisher_dense(W, theta, ridge_used, comp, n_comp):
    """Standard errors sqrt(diag(H^+)) per context (pseudo-inverse under the centring)."""
    n_ctx, n, _ = W.shape
    se = np.full((n_ctx, n), np.nan)
    for c in prange(n_ctx):
        Wc = W[c]
        Ntot = Wc + Wc.T
        th = theta[c].copy()
        for i in range(n):
            if not np.isfinite(th[i]):
                th[i] = 0.0
        g = np.empty(n)
        H = np.empty((n, n))
        _dense_eval(Wc, Ntot, th, ridge_used[c], g, H)
        comp_size, gauged = gauge(comp[c], n_comp[c], ridge_used[c])
        _add_gauge(H, comp[c], comp_size, gauged)
        L = np.zeros((n, n))
        if not _cholesky(H, L):
            continue
        e = np.zeros(n)
        x = np.empty(n)
        for i in range(n):
            ci = comp[c, i]
            if ci < 0:
                continue
            e[i] = 1.0
            _cholesky_solve(L, e, x)
            e[i] = 0.0
            v = x[i]
            if gauged[ci]:
                # (H + J)^-1 = H^+ + J for J = 1_C 1_C^T / |C| on the null space of H
                v -= 1.0 / comp_size[ci]
            se[c, i] = np.sqrt(max(v, 0.0))
    return se


def fisher_flat(ei, ej, w, n_items, theta, ridge_vec, comp, n_comp):
    """Standard errors of one flat item set from the dense inverse (``MAX_FISHER_ITEMS``)."""
    if n_items > MAX_FISHER_ITEMS:
        raise ValueError(
            f"intervals='fisher' needs a dense {n_items} x {n_items} inverse; it is limited to "
            f"n_items <= {MAX_FISHER_ITEMS}. Use intervals='bootstrap' for larger item sets."
        )
    H = information(ei, ej, w, np.where(np.isfinite(theta), theta, 0.0), ridge_vec)
    J = np.zeros_like(H)
    for c in range(n_comp):
        idx = np.flatnonzero(comp == c)
        if np.all(ridge_vec[idx] == 0.0):
            J[np.ix_(idx, idx)] = 1.0 / idx.size
    absent = comp < 0
    H[absent, absent] = 1.0
    cov = np.linalg.inv(H + J) - J
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    se[absent] = np.nan
    return se


# ----------------------------------------------------------------------------------------------
# bootstrap
# ----------------------------------------------------------------------------------------------


def bootstrap_dense(Y, Om, theta, ridge, max_iter, tol, n_boot, rng):
    """(n_boot, n_contexts, N) refits on each context's comparisons resampled with replacement.

    ``Y`` holds the outcomes and ``Om`` the weight of every ordered comparison (0 where
    absent); the resampling draws multinomial counts on the cells (ordered pairs) of P from
    the numpy Generator ``rng``. The replicates are refitted together, warm-started from
    ``theta``, as one stack of dense problems (``ranking.bradley_terry.stacked``).
    """
    n_ctx, n, _ = Om.shape
    flat_cells = [np.flatnonzero(Om[c] > 0) for c in range(n_ctx)]
    sizes = np.array([cells.size for cells in flat_cells])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    all_cells = np.concatenate([cells + c * n * n for c, cells in enumerate(flat_cells)])
    cell_w = np.concatenate([Om[c].ravel()[cells] for c, cells in enumerate(flat_cells)])
    ctx_of = np.repeat(np.arange(n_ctx), sizes)
    samples = np.empty((n_boot, n_ctx, n))
    # replicates per stack: about 2**20 matrix entries
    chunk = max(1, (1 << 20) // (n_ctx * n * n))
    for s in range(0, n_boot, chunk):
        rows = range(s, min(n_boot, s + chunk))
        W_b = np.empty((len(rows), n_ctx, n, n))
        for k, _ in enumerate(rows):
            pick = offsets[ctx_of] + np.floor(rng.random(ctx_of.size) * sizes[ctx_of]).astype(
                np.int64
            )
            counts = np.bincount(pick, minlength=all_cells.size).astype(np.float64)
            Om_b = np.zeros(n_ctx * n * n)
            Om_b[all_cells] = counts * cell_w
            W_b[k] = win_weights(Y, Om_b.reshape(n_ctx, n, n))
        th_b = np.broadcast_to(theta, (len(rows), n_ctx, n)).reshape(-1, n).copy()
        fit_stack(W_b.reshape(-1, n, n), float(ridge), max_iter, tol, th_b, True)
        samples[s : s + len(rows)] = th_b.reshape(len(rows), n_ctx, n)
    return samples


def bootstrap_flat(ei, ej, wy, w, n_items, theta, ridge, max_iter, tol, n_boot, rng):
    """(n_boot, n_items) refits on the comparisons resampled with replacement (``rng``).

    When every component has at most ``STACK_MAX_ITEMS`` items the replicates are fitted
    together, one dense problem per replicate and component (``flat.fit_rows``), else one
    sparse fit per replicate.
    """
    m = ei.size
    samples = np.empty((n_boot, n_items))
    comp, n_comp = components(ei, ej, w, n_items)
    size = np.bincount(comp[comp >= 0], minlength=n_comp)
    stacked = n_comp > 0 and size.max() <= STACK_MAX_ITEMS
    chunk = 50
    for s in range(0, n_boot, chunk):
        rows = range(s, min(n_boot, s + chunk))
        counts = np.stack(
            [np.bincount(rng.integers(0, m, m), minlength=m).astype(np.float64) for _ in rows]
        )
        if stacked:
            start = np.broadcast_to(theta, (len(rows), n_items))
            start = np.where(np.isfinite(start), start, 0.0)
            samples[s : s + len(rows)] = fit_rows(
                ei, ej, wy * counts, w * counts, comp, n_comp, size, float(ridge), max_iter,
                tol, start, True,
            )[0]  # fmt: skip
            continue
        for k, b in enumerate(rows):
            samples[b] = fit_flat(
                ei, ej, wy * counts[k], w * counts[k], n_items, float(ridge), max_iter, tol,
                theta0=theta,
            )[0]  # fmt: skip
    return samples
