"""PPI++ for Bradley–Terry scores (the M-estimator of Angelopoulos, Duchi, Zrnic 2023).

Every comparison c (``first`` shown first, ``second`` second) has the judge's outcome yhat_c
in [0, 1]; the labelled ones also have the human outcome y_c. With the logistic loss
l(theta; y) = softplus(d) - y d, d = theta_first - theta_second, the PPI++ loss is

    L_lam(theta) = lam * mean_unlabelled l(theta; yhat)
                   + mean_labelled [l(theta; y) - lam * l(theta; yhat)]

(the judge term runs over the comparisons without a human label, as in the paper and in
``ppi_py``), minimised by damped Newton in the centred gauge (scores sum to 0). Its
covariance is the sandwich H+ (n/N Cov(lam grad_hat_unlabelled) + Cov(grad - lam grad_hat))
H+ / n, with H the mean Hessian over all comparisons (labelled ones only at lam = 0, which is
then the classical human-only sandwich) and H+ its pseudo-inverse (the centred gauge). lam is
tuned at the plain-PPI fit (lam = 1; the human-only fit if that one does not exist) to
minimise the trace of the covariance, clipped to [0, 1], as ``ppi_py`` does for GLMs.

Items that cannot be estimated get NaN and a note: an item with no comparison, an item with no
labelled comparison (nothing measures the judge's bias there), items outside the largest
connected part of the comparison graph.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit

from ranking._core.score_checks import check_confidence

from .result import _method, _result, check_lam

_MAX_ITER = 100
_TOL = 1e-10
# A score this far out (P = 3e-7) means the M-estimate does not exist: the loss only flattens
# out towards infinity (the outcomes separate the items).
_BOUND = 15.0


def _check(first, second, outcome_human, outcome_judge, labeled, n_items):
    first = np.asarray(first)
    second = np.asarray(second)
    m = first.shape[0] if first.ndim == 1 else -1
    for name, arr in (("first", first), ("second", second)):
        if arr.ndim != 1 or arr.shape[0] != m:
            raise ValueError(f"{name} must be 1-D, one entry per comparison")
        if m and not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{name} must hold integer item indices; got dtype {arr.dtype}")
    if m == 0:
        raise ValueError("no comparisons (empty arrays)")
    n_items = int(n_items)
    if n_items < 2:
        raise ValueError(f"n_items must be >= 2; got {n_items}")
    for name, arr in (("first", first), ("second", second)):
        bad = (arr < 0) | (arr >= n_items)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name}[{k}] = {int(arr[k])} is out of range for n_items = {n_items}")
    if (first == second).any():
        k = int(np.flatnonzero(first == second)[0])
        raise ValueError(f"comparison {k} compares item {int(first[k])} with itself")
    lab = np.asarray(labeled)
    if lab.shape != (m,) or lab.dtype != bool:
        raise ValueError("labeled must be a boolean array, one entry per comparison")
    yj = np.asarray(outcome_judge, dtype=np.float64)
    yh = np.asarray(outcome_human, dtype=np.float64)
    for name, arr, where in (
        ("outcome_judge", yj, np.ones(m, bool)),
        ("outcome_human", yh, lab),
    ):
        if arr.shape != (m,):
            raise ValueError(f"{name} must be 1-D, one entry per comparison")
        v = arr[where]
        bad = ~np.isfinite(v) | (v < 0) | (v > 1)
        if bad.any():
            k = int(np.flatnonzero(where)[np.flatnonzero(bad)[0]])
            raise ValueError(
                f"{name}[{k}] = {arr[k]}: outcomes must lie in [0, 1] (1 first wins, 0.5 tie)"
                + (
                    " on every labelled comparison"
                    if name == "outcome_human"
                    else "; drop comparisons the judge did not answer"
                )
            )
    return first.astype(np.int64), second.astype(np.int64), yh, yj, lab, n_items


def _stats(theta, f, s, yh, yj, lab, lam, n_items):
    """Per-comparison gradients (human, judge) and the mean Hessian at theta."""
    p = expit(theta[f] - theta[s])
    use = lab if lam == 0 else np.ones_like(lab)
    w = p * (1 - p) * use
    H = _laplacian(f, s, w, n_items) / use.sum()

    def grads(y, rows):
        g = np.zeros((rows.sum(), n_items))
        r = np.arange(rows.sum())
        d = p[rows] - y[rows]
        g[r, f[rows]] = d
        g[r, s[rows]] = -d
        return g

    return grads(yh, lab), grads(yj, lab), grads(yj, ~lab), H


def _laplacian(f, s, w, n_items):
    H = np.zeros((n_items, n_items))
    np.add.at(H, (f, f), w)
    np.add.at(H, (s, s), w)
    np.add.at(H, (f, s), -w)
    np.add.at(H, (s, f), -w)
    return H


def _fit(f, s, yh, yj, lab, lam, n_items, ridge):
    """Damped Newton on L_lam; None when it does not converge (no finite minimiser)."""
    n, N = int(lab.sum()), int((~lab).sum())
    a = np.where(lab, (1 - lam) / n, lam / N if N else 0.0)  # weight of softplus(d)
    b = np.where(lab, (np.where(lab, yh, 0) - lam * yj) / n, lam * yj / N if N else 0.0)
    J = np.full((n_items, n_items), 1.0 / n_items)

    def loss(t):
        d = t[f] - t[s]
        return float(a @ np.logaddexp(0, d) - b @ d + 0.5 * ridge * t @ t)

    theta = np.zeros(n_items)
    cur = loss(theta)
    for _ in range(_MAX_ITER):
        d = theta[f] - theta[s]
        r = a * expit(d) - b
        g = np.bincount(f, r, n_items) - np.bincount(s, r, n_items) + ridge * theta
        p = expit(d)
        H = _laplacian(f, s, a * p * (1 - p), n_items) + ridge * np.eye(n_items)
        try:
            step = np.linalg.solve(H + J, g)
        except np.linalg.LinAlgError:
            return None
        step -= step.mean()
        t = 1.0
        while t > 1e-8:
            new = theta - t * step
            val = loss(new)
            if val <= cur + 1e-4 * t * -(g @ step) or not np.isfinite(cur):
                break
            t /= 2
        theta, cur = new, val
        if np.abs(theta).max() > _BOUND or not np.isfinite(cur):
            return None
        if np.abs(t * step).max() < _TOL:
            return theta if np.abs(g).max() < 1e-6 and np.abs(theta).max() < _BOUND else None
    return theta if np.abs(g).max() < 1e-8 and np.abs(theta).max() < _BOUND else None


def _pinv(H):
    """Pseudo-inverse of a connected comparison Hessian (null space: the constant vector):
    (H + J)^-1 - J with J = 11'/k, exact in the centred gauge (``np.linalg.pinv`` can keep
    the rounding noise of the zero eigenvalue). Only its action orthogonal to the constant
    vector matters (every gradient sums to 0), so with a ridge it is used as it is."""
    k = H.shape[0]
    J = np.full((k, k), 1.0 / k)
    return np.linalg.inv(H + J) - J


def _lam_tuned(gh, gj, gu, H):
    """PPI++ power tuning for an M-estimator (trace criterion), clipped to [0, 1]."""
    n, N = gh.shape[0], gu.shape[0]
    if N == 0:
        return 0.0
    Hi = _pinv(H)
    ch, cj = gh - gh.mean(0), gj - gj.mean(0)
    cov = (ch.T @ cj + cj.T @ ch) / n
    var = np.cov(np.concatenate([gj, gu]).T)
    den = 2 * (1 + n / N) * np.trace(Hi @ var @ Hi)
    if not den > 0:
        return 0.0
    return float(np.clip(np.trace(Hi @ cov @ Hi) / den, 0.0, 1.0))


def _kept_items(f, s, lab, n_items, notes):
    """Items estimable: compared, with a labelled comparison, in the largest component."""
    names = lambda idx: ", ".join(str(int(i)) for i in idx[:10]) + (" ..." if len(idx) > 10 else "")  # noqa: E731
    seen = np.bincount(f, minlength=n_items) + np.bincount(s, minlength=n_items) > 0
    lab_seen = (np.bincount(f[lab], minlength=n_items) + np.bincount(s[lab], minlength=n_items)) > 0
    if (~seen).any():
        notes.append(f"item(s) {names(np.flatnonzero(~seen))} have no comparison: NaN")
    gap = seen & ~lab_seen
    if gap.any():
        notes.append(
            f"item(s) {names(np.flatnonzero(gap))} have no comparison with a human label, so "
            "nothing measures the judge's bias there: NaN (label some of their comparisons)"
        )
    keep = lab_seen
    use = keep[f] & keep[s]
    g = coo_matrix((np.ones(use.sum()), (f[use], s[use])), shape=(n_items, n_items))
    _, comp = connected_components(g, directed=False)
    sizes = np.bincount(comp[keep], minlength=comp.max() + 1) if keep.any() else np.zeros(1)
    big = int(np.argmax(sizes))
    out = keep & (comp != big)
    if out.any():
        notes.append(
            f"item(s) {names(np.flatnonzero(out))} are not connected by comparisons to the "
            "others: NaN (their scores would not be comparable)"
        )
    return keep & (comp == big)


def ppi_bradley_terry(
    first,
    second,
    outcome_human,
    outcome_judge,
    labeled,
    n_items,
    *,
    lam=None,
    confidence: float = 0.95,
    ridge: float = 0.0,
):
    """PPI++ Bradley–Terry scores with CLT (sandwich) intervals, per item.

    Parameters
    ----------
    first, second : array_like of int, shape (m,)
        Item indices of each comparison (shown first, second).
    outcome_human : array_like of float, shape (m,)
        Human outcome in [0, 1] (1: first wins, 0.5: tie) on the labelled comparisons;
        ignored (may be NaN) elsewhere.
    outcome_judge : array_like of float, shape (m,)
        The judge's outcome in [0, 1] on every comparison.
    labeled : array_like of bool, shape (m,)
        Which comparisons have a human outcome.
    n_items : int
        Number of items (systems).
    lam : float in [0, 1] or None
        Weight of the judge; None tunes it (PPI++); 0 is the human-only fit with its
        sandwich interval, 1 plain PPI.
    confidence : float
        Coverage of the per-item intervals.
    ridge : float
        Penalty ridge / 2 * ||theta||^2 added to the (mean) loss and to the Hessian.

    Returns
    -------
    PPIResult
        Centred log-strengths (k = n_items), NaN where an item cannot be estimated (the
        ``notes`` say why), the lam used, labelled and unlabelled comparison counts.

    Raises
    ------
    ValueError
        Bad arrays, fewer than 2 labelled comparisons, or no finite estimate (the human
        outcomes separate the items perfectly; a small ``ridge`` helps).
    """
    conf = check_confidence(confidence)
    lam = check_lam(lam)
    ridge = float(ridge)
    if ridge < 0:
        raise ValueError(f"ridge must be >= 0; got {ridge}")
    f, s, yh, yj, lab, n_items = _check(
        first, second, outcome_human, outcome_judge, labeled, n_items
    )
    notes: list[str] = []
    if lab.sum() < 2:
        raise ValueError(
            f"PPI needs human outcomes on at least 2 comparisons; got {int(lab.sum())}"
        )
    keep = _kept_items(f, s, lab, n_items, notes)
    if keep.sum() < 2:
        raise ValueError("fewer than 2 items have labelled comparisons connecting them")
    use = keep[f] & keep[s]
    idx = np.flatnonzero(keep)
    code = np.full(n_items, -1)
    code[idx] = np.arange(idx.size)
    f, s, yh, yj, lab = code[f[use]], code[s[use]], yh[use], yj[use], lab[use]
    k = idx.size
    n, N = int(lab.sum()), int((~lab).sum())
    tuned = lam is None
    if N == 0 and lam not in (None, 0.0):
        raise ValueError("every comparison is labelled, so the judge cannot add anything: lam=0")
    if tuned:
        lam = 0.0
        if N:
            pilot = _fit(f, s, yh, yj, lab, 1.0, k, ridge)
            if pilot is None:
                pilot = _fit(f, s, yh, yj, lab, 0.0, k, ridge)
            if pilot is not None:
                gh, gj, gu, H = _stats(pilot, f, s, yh, yj, lab, 1.0, k)
                lam = _lam_tuned(gh, gj, gu, H + ridge * np.eye(k))
        else:
            notes.append("every comparison has a human label: the human-only interval")
    theta = _fit(f, s, yh, yj, lab, lam, k, ridge)
    if theta is None:
        raise ValueError(
            f"no finite PPI estimate at lam = {lam:.3g}: the outcomes separate the items "
            "(one never loses or never wins); add a small ridge or more labels"
        )
    gh, gj, gu, H = _stats(theta, f, s, yh, yj, lab, lam, k)
    try:
        Hi = _pinv(H + ridge * np.eye(k))
    except np.linalg.LinAlgError:
        raise ValueError(
            "the Hessian of the PPI loss is singular (the outcomes are nearly deterministic); "
            "add a small ridge or more labels"
        ) from None
    V = np.cov((gh - lam * gj).T).reshape(k, k)
    if N and lam:
        V = V + n / N * np.cov((lam * gu).T).reshape(k, k)
    cov = Hi @ V @ Hi / n
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    full_est = np.full(n_items, np.nan)
    full_se = np.full(n_items, np.nan)
    full_cov = np.full((n_items, n_items), np.nan)
    full_est[idx] = theta
    full_se[idx] = se
    full_cov[np.ix_(idx, idx)] = cov
    return _result(full_est, full_se, conf, lam, n, N, _method(lam, tuned), notes, full_cov)
