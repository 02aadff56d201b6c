"""Bradley–Terry along the budget: the dispatch, and the slow path kept as a reference.

:func:`_bt_grid` runs the compiled loop of ``ranking.budget.bt_kernel`` (warm starts along
the budget, incremental win weights, the correlation in the kernel) when ``bt_kwargs`` hold
only the fit's ridge, max_iter and tol; with any other argument of ``bradley_terry`` it falls
back to :func:`_bt_grid_slow`: one batched ``bradley_terry`` fit per (draw, budget), on the
comparisons the budget uses in every context, then a correlation per context with the
reference. The tests check the two against each other.

Both snap numerical ties of a fit's scores (``ranking.budget.bt_kernel.SNAP``) before the
rank correlation: scores that agree to rounding are tied, whichever start the fit took.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ranking._core.decisions import decide
from ranking.agreement.metrics import kendall, spearman
from ranking.bias.position import alpha_for_tau, debias
from ranking.bradley_terry.fit import _check_options, bradley_terry

from .bt_kernel import _bt_grid_fast, _snap_rows

#: ``bt_kwargs`` the compiled loop takes; any other sends the grid to the slow path.
FAST_KWARGS = ("ridge", "max_iter", "tol")
#: The compiled loop stops a fit once the ranks of its scores are certain (see
#: ``ranking.budget.bt_newton.fit_warm``); False: every fit converges to ``tol``.
RANK_ONLY = True


def _bt_grid(P, G, ref, ok, orders, n_avail, eval_r, taus, corr_code, neutral, bt_kwargs):
    """Bradley–Terry correlations of one strategy: (out_sum, out_n), (n_draws, n_budgets).

    ``G`` (P's shape): the weight of every comparison (ones, 0 where P has none, without
    weights). The compiled loop when it can (see the module docstring), else
    :func:`_bt_grid_slow`; the same arguments and results.
    """
    if not set(bt_kwargs) <= set(FAST_KWARGS):
        return _bt_grid_slow(
            P, G, ref, ok, orders, n_avail, eval_r, taus, corr_code, neutral, bt_kwargs
        )
    ridge = float(bt_kwargs.get("ridge", 0.0))
    max_iter = int(bt_kwargs.get("max_iter", 10_000))
    tol = float(bt_kwargs.get("tol", 1e-8))
    _check_options(ridge, max_iter, tol, None, 1, 0.95)
    n_draws = orders.shape[0]
    out_sum, out_n, n_bad = _bt_grid_fast(
        np.ascontiguousarray(P, dtype=np.float64),
        np.ascontiguousarray(G, dtype=np.float64),
        bool(np.any(G[np.isfinite(P)] != 1.0)),
        np.ascontiguousarray(ref, dtype=np.float64),
        np.ascontiguousarray(ok),
        np.ascontiguousarray(orders, dtype=np.int64),
        np.ascontiguousarray(n_avail, dtype=np.int64),
        np.ascontiguousarray(eval_r, dtype=np.int64),
        np.zeros((n_draws, eval_r.size)) if taus is None else np.ascontiguousarray(taus),
        taus is not None,
        bool(neutral),
        int(corr_code),
        ridge,
        max_iter,
        tol,
        RANK_ONLY,
    )
    if n_bad:
        warnings.warn(
            f"bradley_terry: {n_bad} fit(s) along the budget did not converge in {max_iter} "
            "iterations",
            RuntimeWarning,
            stacklevel=4,
        )
    return out_sum, out_n


def _bt_grid_slow(P, G, ref, ok, orders, n_avail, eval_r, taus, corr_code, neutral, bt_kwargs):
    """Bradley–Terry correlations of one strategy from Python: one batched fit per (draw,
    budget); (out_sum, out_n), (n_draws, n_budgets). Each comparison counts with its
    weight ``G[c, i, j]`` (``bradley_terry(weights=)``).

    Outcomes are the probabilities themselves; with ``taus`` (the pooled balanced threshold
    of every draw and budget) they are reweighted by the equivalent weight alpha, or decided
    at the threshold when it is 0 or 1 (no finite alpha).
    """
    n_draws, n_contexts, _ = orders.shape
    n_items = P.shape[1]
    out_sum = np.zeros((n_draws, eval_r.size))
    out_n = np.zeros((n_draws, eval_r.size))
    cols = np.arange(orders.shape[2])
    for d in range(n_draws):
        for k, r in enumerate(eval_r):
            if r <= 0:
                continue
            take = cols[None, :] < np.minimum(r, n_avail)[:, None]
            c_idx, q_idx = np.nonzero(take)
            codes = orders[d, c_idx, q_idx]
            sub = np.full(P.shape, np.nan)
            i, j = codes // n_items, codes % n_items
            sub[c_idx, i, j] = P[c_idx, i, j]
            if taus is not None:
                t = taus[d, k]
                if 0.0 < t < 1.0:
                    sub = debias(sub, alpha_for_tau(t))
                elif math.isfinite(t):
                    sub = decide(sub, t)
                # NaN: no comparison seen in this draw at this budget, nothing to decide
            counts = np.isfinite(sub).sum(axis=2) + np.isfinite(sub).sum(axis=1)
            # contexts without comparisons cannot be fitted; they score nothing
            fit = counts.sum(axis=1) > 0
            scores = np.full((n_contexts, n_items), np.nan)
            if fit.any():
                w_fit = np.where(np.isfinite(sub[fit]), G[fit], 0.0)
                scores[fit] = bradley_terry(P=sub[fit], tau=None, weights=w_fit, **bt_kwargs).scores
            seen = counts > 0
            if neutral:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    mid = np.nanmean(np.where(seen & ok, scores, np.nan), axis=1)
                scores = np.where(seen, scores, mid[:, None])
            else:
                scores = np.where(seen, scores, np.nan)
            scores = np.where(ok, scores, np.nan)
            _snap_rows(scores)
            rho = spearman(scores, ref) if corr_code == 0 else kendall(scores, ref)
            good = np.isfinite(rho)
            out_sum[d, k] = rho[good].sum()
            out_n[d, k] = good.sum()
    return out_sum, out_n
