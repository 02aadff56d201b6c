"""A warm-started dense Bradley–Terry fit for the budget loop: the same maximum, less work.

``ranking.bradley_terry.dense._fit_context`` (what ``bradley_terry(P=...)`` runs per context) fits
from scratch with fresh buffers and evaluates the log-likelihood at every trial point. Along
the budget the previous scores are a few small Newton steps from the new maximum, so this fit

* starts where the previous fit last evaluated its gradient and Hessian, which it keeps
  (:func:`add_comparison` adds each new comparison's terms there): no pass over the pairs
  before the first step, which is a chord step with the kept Cholesky factor, updated by
  rank 1 per comparison (no new factor);
* keeps its buffers (:class:`FitWork`) across the fits of a context, with the structure of
  the last fit (components, MLE existence, ridge per item, compared pairs), recomputed only
  when the beats graph changed other than inside a component whose MLE is finite; it starts
  afresh (from the previous scores) when the structure or the ridge changed;
* bounds a step to ``MAX_STEP`` (far from the maximum the Hessian is nearly flat);
* loops over the compared pairs only, with one ``exp`` per item for the gradient and
  Hessian (sigmoid = e_i / (e_i + e_j));
* accepts a full Newton step on the gradient at the trial point (the objective is concave:
  it still rises along the whole step when the directional derivative there is >= 0; and a
  step below 1 that halves the gradient norm is the fast phase of Newton; a longer one may
  land where the sigmoids saturate and the gradient is small for the wrong reason), which is
  the next iteration's gradient anyway; only otherwise does it fall back to
  ``ranking.bradley_terry.newton.line_search`` on the log-likelihood, as ``_fit_context`` does.

The model, the components, the MLE-existence check, the ridge per item (with
``RIDGE_FALLBACK``), the gauge, the stopping rule (a Newton step with max |delta| < tol is
taken and ends the fit) and the centring are those of ``ranking.bradley_terry.dense``, whose numba
functions it calls; the scores agree with ``_fit_context`` to rounding.

The hot helpers compile without numba's reference counting (``_nrt=False``: they allocate
nothing); with it, the increfs and decrefs of the kept buffers took about a third of the
time. numba's disk cache does not notice edits here: delete
``ranking/budget/__pycache__/bt*.nb?`` after editing this module or
``ranking.budget.bt_linalg``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ranking._core.jit import njit
from ranking.bradley_terry.dense import (
    DenseProblem,
    _components_dense,
    _finite_mle_dense,
)
from ranking.bradley_terry.newton import (
    RIDGE_FALLBACK,
    gauge,
    line_search,
    sigmoid,
    step_size,
)

from .bt_linalg import (
    _chol_rank1,
    _chord_solve,
    _eval_g,
    _eval_gh,
    _ranks_certain,
    _solve,
    fill_scores,
)

#: Scratch of one context's fits: the structure of the last fit (beats edges, components,
#: ridge per item, compared pairs) and the Newton buffers.
FitWork = namedtuple(
    "FitWork",
    "edge Ntot pi pj meta comp ridge_vec comp_size gauged sums cnt "
    "g H L step trial g_trial H_trial order inv_size ok_comp ex theta_e dist",
)
#: Longest step (max |delta theta|) tried at once.
MAX_STEP = 2.0
#: Rank certificate (``fit_warm(rank_only=True)``): the largest Newton step after which the
#: point reached counts as within CERT_FACTOR times the step of the maximum.
CERT_STEP = 1e-3
CERT_FACTOR = 10.0
#: The certificate is tried with the previous factor (no new Cholesky) after steps up to
#: this long.
CHORD_AFTER = 0.1


@njit
def make_work(n):
    """Buffers for fits of ``n`` items (meta: number of pairs, of components, stale flag,
    kept flag: g and H hold the gradient and negative Hessian at theta_e for W, factor flag:
    L factors the gauged Hessian at a point ``dist[0]`` (max norm) from theta_e)."""
    m = n * (n - 1) // 2
    return FitWork(
        np.zeros((n, n), np.bool_),
        np.zeros((n, n)),
        np.empty(m, np.int64),
        np.empty(m, np.int64),
        np.array([0, 0, 1, 0, 0], np.int64),
        np.full(n, -1, np.int64),
        np.zeros(n),
        np.zeros(n),
        np.zeros(n, np.bool_),
        np.zeros(n),
        np.zeros(n),
        np.empty(n),
        np.empty((n, n)),
        np.zeros((n, n)),
        np.zeros(n),
        np.empty(n),
        np.empty(n),
        np.empty((n, n)),
        np.empty(n, np.int64),
        np.empty(n),
        np.zeros(n, np.bool_),
        np.empty(n),
        np.zeros(n),
        np.zeros(1),
    )


@njit(_nrt=False)
def add_comparison(W, work, i, j, y, w):
    """One more comparison of i (first) with j, i winning y, counting ``w`` games (its
    weight, 1 without weights): into W (W[i, j] += w y, W[j, i] += w (1 - y)), the
    comparison counts and the beats edges of ``work``.

    A new edge inside a component whose MLE is finite (strongly connected beats graph)
    changes neither the components nor the ridge: a new pair is appended to the pair list
    and the structure stays current. Any other new edge marks it stale (recomputed by the
    next fit). With a kept point (``meta[3]``), the comparison's terms at ``theta_e`` are
    added to the kept gradient and Hessian (w times those of one game: w (y - s) and
    w s (1 - s)), and the kept factor gets the rank-1 update of that curvature."""
    meta = work.meta
    new_pair = work.Ntot[i, j] == 0.0
    W[i, j] += w * y
    W[j, i] += w * (1.0 - y)
    if meta[3] == 1:
        s = sigmoid(work.theta_e[i] - work.theta_e[j])
        d = w * (y - s)
        work.g[i] += d
        work.g[j] -= d
        h = w * (s * (1.0 - s))
        H = work.H
        H[i, i] += h
        H[j, j] += h
        H[i, j] -= h
        H[j, i] -= h
        if meta[4] == 1:
            _chol_rank1(work.L, i, j, np.sqrt(h), work.step)
    t = W[i, j] + W[j, i]
    work.Ntot[i, j] = t
    work.Ntot[j, i] = t
    e1 = W[i, j] > 0.0
    e2 = W[j, i] > 0.0
    if e1 != work.edge[i, j] or e2 != work.edge[j, i]:
        work.edge[i, j] = e1
        work.edge[j, i] = e2
        c = work.comp[i]
        if meta[2] == 0 and c >= 0 and work.comp[j] == c and work.ok_comp[c]:
            if new_pair:
                m = meta[0]
                work.pi[m] = min(i, j)
                work.pj[m] = max(i, j)
                meta[0] = m + 1
        else:
            meta[2] = 1


@njit
def _structure(W, ridge, work, full):
    """Components, MLE existence and ridge per item of W, recomputed only when the beats
    graph (W[i, j] > 0) changed since the last fit. ``full``: W was rewritten, so compare
    every edge and recompute the comparison counts; otherwise :func:`add_comparison` kept
    them. Returns (n_pairs, n_comp, cold): cold when the ridge of some item changed (the
    previous scores are then no start), and whether it was recomputed."""
    n = W.shape[0]
    edge = work.edge
    meta = work.meta
    same = meta[2] == 0
    Ntot = work.Ntot
    if full:
        for i in range(n):
            for j in range(n):
                e = W[i, j] > 0.0
                if e != edge[i, j]:
                    same = False
                    edge[i, j] = e
                Ntot[i, j] = W[i, j] + W[j, i]
    if same:
        return meta[0], meta[1], False, False
    meta[2] = 0
    m = 0
    for i in range(n):
        for j in range(i + 1, n):
            if Ntot[i, j] > 0.0:
                work.pi[m] = i
                work.pj[m] = j
                m += 1
    comp, n_comp = _components_dense(Ntot)
    ok = _finite_mle_dense(W, comp, n_comp)
    for c in range(n_comp):
        work.ok_comp[c] = ok[c]
    cold = False
    for i in range(n):
        c = comp[i]
        work.comp[i] = c
        if c < 0:
            r = 0.0
        elif ridge > 0.0:
            r = ridge
        elif not ok[c]:
            r = RIDGE_FALLBACK
        else:
            r = 0.0
        if r != work.ridge_vec[i]:
            cold = True
        work.ridge_vec[i] = r
    comp_size, gauged = gauge(work.comp, n_comp, work.ridge_vec)
    for c in range(n_comp):
        work.comp_size[c] = comp_size[c]
        work.gauged[c] = gauged[c]
    meta[0] = m
    meta[1] = n_comp
    return m, n_comp, cold, True


@njit(_nrt=False)
def _centre(theta, comp, n_comp, gauged, only_gauged, sums, cnt):
    """``centre`` (or ``centre_gauged``) of ranking.bradley_terry.newton on kept buffers."""
    n = theta.shape[0]
    for c in range(n_comp):
        sums[c] = 0.0
        cnt[c] = 0.0
    for i in range(n):
        c = comp[i]
        if c >= 0 and (gauged[c] or not only_gauged):
            sums[c] += theta[i]
            cnt[c] += 1.0
    for i in range(n):
        c = comp[i]
        if c >= 0 and (gauged[c] or not only_gauged):
            theta[i] -= sums[c] / cnt[c]


@njit(_nrt=False)
def _norm2(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


@njit(_nrt=False)
def _certify(theta, step, size, work, n_comp, ok_c, cnt, neutral, scores):
    """Whether the ranks at theta + step (centred) are certain when that point is within
    CERT_FACTOR * size of the maximum; if so theta becomes that point."""
    n = theta.shape[0]
    trial = work.trial
    for i in range(n):
        trial[i] = theta[i] + step[i]
    _centre(trial, work.comp, n_comp, work.gauged, False, work.sums, work.cnt)
    fill_scores(trial, ok_c, cnt, neutral, scores)
    if not _ranks_certain(scores, cnt, CERT_FACTOR * size, work.order):
        return False
    for i in range(n):
        theta[i] = trial[i]
    return True


@njit(_nrt=False)
def fit_warm(
    W, ridge, max_iter, tol, theta, work, rank_only, ok_c, cnt, neutral, scores, full, new_w
):
    """Fit one context's win weights W (N x N) from the scores in ``theta`` (in/out).

    Returns whether the last Newton step was below ``tol``. ``theta`` ends centred per
    component and NaN for items never compared, as in ``_fit_context``.

    ``rank_only``: stop as soon as the ranks of the filled scores (:func:`fill_scores` with
    ``ok_c``, ``cnt``, ``neutral`` into ``scores``) are certain: after a Newton step of
    max |delta| = s <= ``CERT_STEP`` (the quadratic phase, where the point reached is
    within about s^2 of the maximum), when the scores there are more than ``SNAP`` +
    2 ``CERT_FACTOR`` s apart. Ties (on discrete outcomes) never pass: they converge fully.

    The fit starts where the last one last evaluated its gradient and Hessian (one step
    short of its end), from those (kept in ``work``, with :func:`add_comparison`'s terms
    of the comparisons added since): no pass over the pairs before the first step.
    ``full``: W was changed other than by :func:`add_comparison` (recheck the structure,
    evaluate afresh); ``new_w``: W's outcomes were rewritten on the same comparisons (the
    Hessian stands, the gradient is recomputed).
    """
    n = W.shape[0]
    m, n_comp, cold, changed = _structure(W, ridge, work, full)
    Ntot, pi, pj = work.Ntot, work.pi, work.pj
    comp, ridge_vec, comp_size, gauged = work.comp, work.ridge_vec, work.comp_size, work.gauged
    theta_e = work.theta_e
    kept = work.meta[3] == 1 and not (cold or changed or full)
    for i in range(n):
        if kept:
            theta[i] = theta_e[i]
        elif cold or comp[i] < 0 or not np.isfinite(theta[i]):
            # start where the last fit ended, unless the ridge of some item changed
            theta[i] = 0.0
    inv_size = work.inv_size
    for c in range(n_comp):
        inv_size[c] = 1.0 / comp_size[c]
    problem = DenseProblem(W, Ntot, ridge_vec)
    g, H, L, step, trial = work.g, work.H, work.L, work.step, work.trial
    g_t, H_t = work.g_trial, work.H_trial
    ex = work.ex
    if not kept:
        _eval_gh(W, Ntot, pi, pj, m, theta, ridge_vec, g, H, ex)
    elif new_w:
        _eval_g(W, Ntot, pi, pj, m, theta, ridge_vec, g, ex)
    # distance of theta from the point where L factors the Hessian (with the comparisons
    # added since by rank-1 updates); inf: no such factor
    dist = work.dist[0] if kept and work.meta[4] == 1 else np.inf
    work.meta[3] = 1
    work.meta[4] = 0
    swapped = False
    converged = False
    for i in range(n):
        theta_e[i] = theta[i]  # g and H are at theta_e (the next fit starts there)
    for it in range(max_iter):
        chord = np.inf
        if rank_only and dist <= CHORD_AFTER:
            # the last factor, of a Hessian a short step away, gives the next step to within
            # about that step's length: enough to certify the ranks without a new factor
            _chord_solve(L, g, step)
            chord = 0.0
            for i in range(n):
                chord = max(chord, abs(step[i]))
            if chord <= CERT_STEP and _certify(
                theta, step, chord, work, n_comp, ok_c, cnt, neutral, scores
            ):
                converged = True
                break
        if it == 0 and CERT_STEP < chord < np.inf:
            # the first step of a fit from the kept factor: a chord step, no new factor
            max_change, slope = step_size(g, step)
        else:
            if not _solve(H, comp, inv_size, gauged, g, L, step):
                dist = np.inf
                break
            dist = 0.0
            max_change, slope = step_size(g, step)
            if max_change < tol:
                for i in range(n):
                    theta[i] += step[i]
                converged = True
                break
            if rank_only and max_change <= CERT_STEP:
                if _certify(theta, step, max_change, work, n_comp, ok_c, cnt, neutral, scores):
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
        _eval_gh(W, Ntot, pi, pj, m, trial, ridge_vec, g_t, H_t, ex)
        dd = 0.0
        for i in range(n):
            dd += g_t[i] * step[i]
        if not (dd >= 0.0 or (max_change < 1.0 and _norm2(g_t) <= 0.25 * _norm2(g))):
            # not clearly better: backtrack on the log-likelihood, as _fit_context does
            line_search(problem, theta, step, slope, 0.0, False, trial)
            _eval_gh(W, Ntot, pi, pj, m, trial, ridge_vec, g_t, H_t, ex)
        for i in range(n):
            theta[i] = trial[i]
        g, g_t = g_t, g
        H, H_t = H_t, H
        swapped = not swapped
        # shift invariant there (g and H unchanged by the shift): pin the mean at 0
        _centre(theta, comp, n_comp, gauged, True, work.sums, work.cnt)
        for i in range(n):
            theta_e[i] = theta[i]
        dist += max_change
    if dist < np.inf:
        work.meta[4] = 1
        work.dist[0] = dist
    if swapped:
        # keep the last evaluation in work.g / work.H (g_t, H_t are those buffers now)
        for i in range(n):
            g_t[i] = g[i]
            for j in range(n):
                H_t[i, j] = H[i, j]
    _centre(theta, comp, n_comp, gauged, False, work.sums, work.cnt)
    for i in range(n):
        if comp[i] < 0:
            theta[i] = np.nan
    return converged
