"""Bradley–Terry along the budget in one compiled loop (the fast path of the budget curves).

Per draw (in parallel) and context, the comparisons of the sequence are added one budget
after the other into the context's N x N win weights W (W[i, j] += w y, W[j, i] += w (1 - y),
with w the comparison's weight: 1 without weights; a weighted comparison still spends one
comparison of the budget), and the fit at each budget starts from the scores of the previous budget (a warm start: a few
Newton steps instead of a fit from zero). The fit is ``ranking.budget.bt_newton.fit_warm``:
the model, components, ridge fallback and stopping rule of ``bradley_terry(P=...)``'s
``_fit_context``, with kept buffers and cheaper steps, so the scores are the same maximum of
the same likelihood (to rounding); the neutral fill, the snapping of numerical ties and the correlation with the
reference follow in the kernel. With debias, the outcomes change with the pooled threshold
of each budget, so W is rebuilt from the comparisons seen so far (still warm started: the
Hessian and the structure of the fit do not depend on the outcomes' reweighting, only the
gradient is recomputed).

``ranking.budget.bt._bt_grid_slow`` is the reference this kernel is tested against: one
batched ``bradley_terry`` per (draw, budget) from Python.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ranking._core.jit import PARALLEL_MIN_WORK, batch_kernel, njit

from .bt_linalg import SNAP, fill_scores, sort_finite
from .bt_newton import add_comparison, fit_warm, make_work
from .grid import _context_reference, _decide, _kendall_row, _spearman_preranked, _spearman_row

__all__ = ["SNAP", "_bt_grid_fast", "_snap_rows"]


@njit
def _snap_row(x, order):
    """Give every run of finite values of ``x`` whose sorted gaps are <= SNAP the run's
    smallest value (in place). ``order`` is int scratch of x's length."""
    n = sort_finite(x, order)
    if n < 2:
        return
    start = x[order[0]]
    prev = start
    for a in range(1, n):
        v = x[order[a]]
        if v - prev <= SNAP:
            x[order[a]] = start
        else:
            start = v
        prev = v


@njit
def _snap_rows(S):
    """:func:`_snap_row` on every row of S (n_rows, N), in place."""
    buf = np.empty(S.shape[1], np.int64)
    for r in range(S.shape[0]):
        _snap_row(S[r], buf)


@njit
def _outcome(p, debias, use_alpha, alpha, t):
    """The outcome a comparison with probability p adds, as in ``_bt_grid_slow``: p itself,
    ``ranking.bias.debias(p, alpha)`` or ``ranking.decide(p, t)``."""
    if not debias:
        return p
    if use_alpha:
        num = alpha * p
        return num / (num + (1.0 - p))
    if math.isfinite(t):
        return _decide(p, t)
    return p


@njit
def _bt_context(
    P_c,
    G_c,
    weighted,
    ref_c,
    ok_c,
    orders_dc,
    n_avail_c,
    eval_r,
    taus_d,
    debias,
    neutral,
    corr_code,
    ridge,
    max_iter,
    tol,
    rank_only,
    out_sum,
    out_n,
):
    """Add one context's correlations at every budget of one draw into out_sum / out_n;
    returns how many fits did not converge. ``G_c[i, j]``: the weight of comparison (i, j)
    (1 without weights; ``weighted``: some weight differs from 1)."""
    n = P_c.shape[0]
    idx = np.empty(n, dtype=np.int64)
    ref_rc = np.empty(n, dtype=np.int64)
    n_valid, ref_ss = _context_reference(ref_c, ok_c, idx, ref_rc)
    compact = np.empty(n)
    W = np.zeros((n, n))
    cnt = np.zeros(n)
    theta = np.zeros(n)
    scores = np.empty(n)
    buf = np.empty(n, np.int64)
    xa = np.empty(n)
    xb = np.empty(n)
    work = make_work(n)
    pos = 0
    last_target = -1
    last_t = np.nan
    last_rho = np.nan
    last_kind = 0
    n_bad = 0
    for k in range(eval_r.shape[0]):
        r = eval_r[k]
        if r < 0:
            continue  # not spendable (over capacity, or odd for symmetric): no value
        target = min(r, n_avail_c)
        if target == 0:
            continue  # nothing to fit: no score, no value
        t = taus_d[k] if debias else np.nan
        same_t = (not debias) or t == last_t or (math.isnan(t) and math.isnan(last_t))
        if target == last_target and same_t:
            # the same comparisons with the same outcomes: the same value
            if math.isfinite(last_rho):
                out_sum[k] += last_rho
                out_n[k] += 1.0
            continue
        use_alpha = debias and 0.0 < t < 1.0
        alpha = (1.0 - t) / t if use_alpha else 1.0
        # outcomes p itself or reweighted by a moderate alpha > 0 are > 0 (< 1) exactly
        # where p is: the beats edges, and so the fit's structure, do not move with alpha
        # (kind 0); decided outcomes, or an extreme alpha (underflow), may move them
        kind = 0
        if debias and math.isfinite(t) and not (use_alpha and 1e-100 < alpha < 1e100):
            kind = 1
        rewritten = False
        if not same_t:
            # every outcome moves with the threshold: rebuild W from the comparisons so far
            W[:, :] = 0.0
            if weighted:
                for q in range(pos):
                    code = orders_dc[q]
                    i = code // n
                    j = code - i * n
                    y = _outcome(P_c[i, j], debias, use_alpha, alpha, t)
                    w = G_c[i, j]
                    W[i, j] += w * y
                    W[j, i] += w * (1.0 - y)
            else:
                # the same without the weights' loads (this loop is the hot one with debias)
                for q in range(pos):
                    code = orders_dc[q]
                    i = code // n
                    j = code - i * n
                    y = _outcome(P_c[i, j], debias, use_alpha, alpha, t)
                    W[i, j] += y
                    W[j, i] += 1.0 - y
            rewritten = kind == 1 or last_kind == 1
        last_kind = kind
        while pos < target:
            code = orders_dc[pos]
            i = code // n
            j = code - i * n
            y = _outcome(P_c[i, j], debias, use_alpha, alpha, t)
            add_comparison(W, work, i, j, y, G_c[i, j])
            cnt[i] += 1.0
            cnt[j] += 1.0
            pos += 1
        last_target = target
        last_t = t
        if not fit_warm(
            W,
            ridge,
            max_iter,
            tol,
            theta,
            work,
            rank_only,
            ok_c,
            cnt,
            neutral,
            scores,
            rewritten,
            not same_t,
        ):
            n_bad += 1
        mid = fill_scores(theta, ok_c, cnt, neutral, scores)
        _snap_row(scores, buf)
        if corr_code == 0 and neutral and math.isfinite(mid):
            # every valid candidate scored: Spearman against the ranked reference
            for a in range(n_valid):
                compact[a] = scores[idx[a]]
            rho = _spearman_preranked(compact, n_valid, ref_rc, ref_ss) if n_valid >= 2 else np.nan
        elif corr_code == 0:
            rho = _spearman_row(scores, ref_c, xa, xb)
        else:
            rho = _kendall_row(scores, ref_c, xa, xb)
        last_rho = rho
        if math.isfinite(rho):
            out_sum[k] += rho
            out_n[k] += 1.0
    return n_bad


def _bt_work(P, G, weighted, ref, ok, orders, n_avail, eval_r, *rest):
    """Serial nanoseconds, roughly: a warm-started fit of N items per context and budget."""
    n = P.shape[1]
    return 30 * n * n * orders.shape[0] * orders.shape[1] * eval_r.shape[0]


@batch_kernel(work=_bt_work, min_work=PARALLEL_MIN_WORK)
def _bt_grid_fast(
    P,
    G,
    weighted,
    ref,
    ok,
    orders,
    n_avail,
    eval_r,
    taus,
    debias,
    neutral,
    corr_code,
    ridge,
    max_iter,
    tol,
    rank_only,
):
    """Bradley–Terry correlations of one strategy: (out_sum, out_n, n_not_converged), the
    first two of shape (n_draws, n_budgets). ``G`` (P's shape): the weight of every
    comparison (ones without weights), ``weighted`` whether some weight differs from 1.
    ``taus`` (n_draws, n_budgets): the pooled balanced thresholds, used when ``debias``.
    ``rank_only``: stop each fit once the ranks are certain (``fit_warm``), else converge
    every fit to ``tol``."""
    n_draws, n_contexts, _ = orders.shape
    n_budgets = eval_r.shape[0]
    out_sum = np.zeros((n_draws, n_budgets))
    out_n = np.zeros((n_draws, n_budgets))
    bad = np.zeros(n_draws, np.int64)
    for d in prange(n_draws):
        for c in range(n_contexts):
            bad[d] += _bt_context(
                P[c],
                G[c],
                weighted,
                ref[c],
                ok[c],
                orders[d, c],
                n_avail[c],
                eval_r,
                taus[d],
                debias,
                neutral,
                corr_code,
                ridge,
                max_iter,
                tol,
                rank_only,
                out_sum[d],
                out_n[d],
            )
    return out_sum, out_n, bad.sum()
