"""Bradley–Terry along the budget: the slow path of the budget curves.

No numba kernel here: one batched ``bradley_terry`` fit per (draw, budget), on the
comparisons the budget uses in every context, then a correlation per context with the
reference.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ranking.bias import alpha_for_tau, debias
from ranking.bradley_terry import bradley_terry
from ranking.decisions import decide
from ranking.metrics import kendall, spearman


def _bt_grid(P, ref, ok, orders, n_avail, eval_r, taus, corr_code, neutral, bt_kwargs):
    """Bradley–Terry correlations of one strategy: (out_sum, out_n), (n_draws, n_budgets).

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
                scores[fit] = bradley_terry(P=sub[fit], tau=None, **bt_kwargs).scores
            seen = counts > 0
            if neutral:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    mid = np.nanmean(np.where(seen & ok, scores, np.nan), axis=1)
                scores = np.where(seen, scores, mid[:, None])
            else:
                scores = np.where(seen, scores, np.nan)
            scores = np.where(ok, scores, np.nan)
            rho = spearman(scores, ref) if corr_code == 0 else kendall(scores, ref)
            good = np.isfinite(rho)
            out_sum[d, k] = rho[good].sum()
            out_n[d, k] = good.sum()
    return out_sum, out_n
