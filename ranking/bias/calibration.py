"""Calibration of a pairwise judge's probabilities beyond one threshold.

``ranking.debias`` moves one threshold; this module learns a whole monotone map p -> p' of the
judge's probabilities, fitted once and applied to every cell of P:

* ``"swap"`` (label-free, swap-invariant, in the spirit of CalibraEval, Li et al. 2024,
  arXiv 2410.15393): over the pairs judged in both orders, the target of a cell is the
  order-averaged probability t_ij = (p_ij + 1 - p_ji) / 2; the map is the isotonic regression
  of t on p (``scipy.optimize.isotonic_regression``), piecewise linear between its knots
  (``np.interp``). For a judge whose bias is a pure shift of the logit, t is a monotone
  function of p, so the map makes the two orders agree exactly (p'_ij = 1 - p'_ji). It is
  applied to every finite cell, pairs judged in one order only included.
* ``"isotonic"`` and ``"platt"`` against human pairwise labels (``pairwise_labels``):
  isotonic regression of the label on p, or a two-parameter logistic map
  p' = sigmoid(a logit(p) + b). Cross-fitted over contexts: the contexts are split into folds
  and each context's cells are mapped by the map fitted on the other folds, so the expected
  calibration error after (``ece``) is measured on held-out contexts.

Hard verdicts (p in {0, 0.5, 1}) work: the map then has three levels. The maps themselves
are fitted and applied in ``ranking.bias.calibration_fit``; this module lays out the targets,
cross-fits, and measures (``reliability``, ``ece``, the two orders' disagreement).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ranking._core.checks import as_P, check_random_state

from .calibration_fit import (  # noqa: F401  (CLIP: re-exported, public here)
    CLIP,
    _apply_map,
    _fit_isotonic,
    _fit_map,
    _interp,
    _platt_apply,
)

METHODS = ("swap", "isotonic", "platt")


@dataclass(frozen=True)
class Reliability:
    """Reliability diagram: equal-width bins of the predicted probability.

    Attributes
    ----------
    bin_mid : ndarray, shape (n_bins,)
        Centre of each bin.
    mean_p, mean_y : ndarray, shape (n_bins,)
        Mean predicted probability and mean label in the bin (NaN for an empty bin).
    count : ndarray of int, shape (n_bins,)
        Cells in the bin.
    """

    bin_mid: np.ndarray
    mean_p: np.ndarray
    mean_y: np.ndarray
    count: np.ndarray


@dataclass(frozen=True)
class CalibrationResult:
    """A calibrated P and the monotone map that made it.

    Attributes
    ----------
    P : ndarray, shape (n_contexts, N, N)
        The calibrated probabilities (NaN where P was NaN). For the human methods each
        context is mapped by the map fitted without its fold (cross-fitting).
    x, y : ndarray
        Knots of the map fitted on all the data: ``np.interp(p, x, y)`` applies it (for
        "platt" a fine grid of the logistic map).
    coef : tuple of float or None
        (a, b) of "platt": p' = sigmoid(a logit(p) + b), p clipped to [1e-4, 1 - 1e-4];
        None otherwise.
    method : str
    n_fit : int
        Cells the map was fitted on (both-order cells for "swap", labelled cells otherwise).
    ece_before, ece_after : float
        Expected calibration error against the human labels before and after, on held-out
        folds (human methods); NaN for "swap" or when nothing was fitted.
    disagreement_before, disagreement_after : float
        Mean |p_ij - (1 - p_ji)| over the pairs judged in both orders (NaN without any).
    reason : str or None
        Why nothing was fitted (P is then unchanged and the map the identity); None otherwise.
    """

    P: np.ndarray
    x: np.ndarray
    y: np.ndarray
    coef: tuple | None
    method: str
    n_fit: int
    ece_before: float
    ece_after: float
    disagreement_before: float
    disagreement_after: float
    reason: str | None = None

    def apply(self, p):
        """Map any array of probabilities with the fitted map (NaN stays NaN).

        Parameters
        ----------
        p : array_like of float
            Probabilities in [0, 1], NaN where missing.

        Returns
        -------
        ndarray
            The mapped probabilities, same shape.
        """
        arr = np.asarray(p, dtype=np.float64)
        if self.coef is not None:
            return _platt_apply(arr, self.coef)
        return _interp(arr, self.x, self.y)


def _both_mask(P):
    """Cells (c, i, j) whose pair was judged in both orders."""
    return np.isfinite(P) & np.isfinite(np.swapaxes(P, 1, 2))


def _disagreement(P):
    both = _both_mask(P)
    iu = np.triu(np.ones(P.shape[1:], dtype=bool), k=1)
    cells = both & iu[None]
    if not cells.any():
        return math.nan
    Pt = np.swapaxes(P, 1, 2)
    return float(np.mean(np.abs(P[cells] - (1.0 - Pt[cells]))))


def pairwise_labels(P, reference):
    """Human pairwise labels laid out like P.

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N)
        Gives the layout.
    reference : array_like, shape (n_contexts, N) or (n_contexts, N, N)
        Human scores (higher is better; NaN missing): y_ij = 1 if ref_i > ref_j, 0 if
        ref_i < ref_j, NaN if equal or missing. Or a human preference matrix H (H[c, i, j] =
        P(humans prefer i shown first), NaN not compared): the soft label of the pair is the
        mean of the available H_ij and 1 - H_ji, whatever order the judge saw.

    Returns
    -------
    ndarray, shape (n_contexts, N, N)
        Labels in [0, 1]; NaN on the diagonal and where there is no label.

    Raises
    ------
    ValueError
        Bad P, a reference of the wrong shape or (matrix) values outside [0, 1].
    """
    P = as_P(P, allow_empty=True)
    n_c, n, _ = P.shape
    ref = np.asarray(reference, dtype=np.float64)
    if ref.shape == (n_c, n):
        diff = ref[:, :, None] - ref[:, None, :]
        y = np.where(diff > 0, 1.0, np.where(diff < 0, 0.0, np.nan))
    elif ref.shape == (n_c, n, n):
        H = as_P(ref, name="reference", allow_empty=True)
        both = np.stack([H, 1.0 - np.swapaxes(H, 1, 2)])
        n_avail = np.isfinite(both).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            y = np.where(n_avail > 0, np.nansum(both, axis=0) / n_avail, np.nan)
    else:
        raise ValueError(
            f"reference must have shape (n_contexts, N) = {(n_c, n)} (human scores) or "
            f"(n_contexts, N, N) = {(n_c, n, n)} (human preferences); got {ref.shape}"
        )
    idx = np.arange(n)
    y[:, idx, idx] = np.nan
    return y


def _bins(p, n_bins):
    if int(n_bins) < 1:
        raise ValueError(f"n_bins must be a positive integer; got {n_bins!r}")
    return np.minimum((np.clip(p, 0.0, 1.0) * n_bins).astype(np.int64), n_bins - 1)


def _finite_pairs(p, y):
    p = np.asarray(p, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if p.shape != y.shape:
        raise ValueError(f"p and y must have the same size; got {p.size} and {y.size}")
    ok = np.isfinite(p) & np.isfinite(y)
    return p[ok], y[ok]


def reliability(p, y, *, n_bins=10):
    """Reliability diagram of predictions ``p`` against labels ``y`` (hard or soft).

    Parameters
    ----------
    p, y : array_like
        Same size; pairs with a NaN are left out.
    n_bins : int, default 10
        Equal-width bins on [0, 1] (p = 1 falls in the last).

    Returns
    -------
    Reliability
    """
    p, y = _finite_pairs(p, y)
    n_bins = int(n_bins)
    b = _bins(p, n_bins)
    count = np.bincount(b, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(b, weights=p, minlength=n_bins) / count
        mean_y = np.bincount(b, weights=y, minlength=n_bins) / count
    mid = (np.arange(n_bins) + 0.5) / n_bins
    return Reliability(mid, mean_p, mean_y, count)


def ece(p, y, *, n_bins=10):
    """Expected calibration error: sum over equal-width bins of share * |mean p - mean y|.

    Parameters
    ----------
    p, y : array_like
        Predictions and labels (hard or soft), same size; pairs with a NaN are left out.
    n_bins : int, default 10

    Returns
    -------
    float
        NaN when no pair is finite.
    """
    r = reliability(p, y, n_bins=n_bins)
    n = r.count.sum()
    if n == 0:
        return math.nan
    used = r.count > 0
    return float(np.sum(r.count[used] * np.abs(r.mean_p[used] - r.mean_y[used])) / n)


def _unchanged(P, method, reason):
    d = _disagreement(P)
    x = np.array([0.0, 1.0])
    return CalibrationResult(P, x, x.copy(), None, method, 0, math.nan, math.nan, d, d, reason)


def _swap(P):
    both = _both_mask(P)
    if not both.any():
        return _unchanged(
            P, "swap", "swap calibration needs pairs judged in both orders; P has none"
        )
    p = P[both]
    t = 0.5 * (p + 1.0 - np.swapaxes(P, 1, 2)[both])
    x, y = _fit_isotonic(p, t)
    out = _interp(P, x, y)
    return CalibrationResult(
        out,
        x,
        y,
        None,
        "swap",
        int(p.size),
        math.nan,
        math.nan,
        _disagreement(P),
        _disagreement(out),
    )


def _human(P, method, reference, n_folds, random_state):
    if reference is None:
        return _unchanged(P, method, f"{method} calibration needs human labels; none given")
    labels = pairwise_labels(P, reference)
    cells = np.isfinite(P) & np.isfinite(labels)
    if not cells.any():
        return _unchanged(
            P, method, f"{method} calibration: no judged pair has a human label (ties or none)"
        )
    usable = np.flatnonzero(cells.any(axis=(1, 2)))
    if usable.size < 2:
        return _unchanged(
            P,
            method,
            f"{method} calibration is cross-fitted over contexts and needs human labels in at "
            f"least 2 contexts; {usable.size} has them",
        )
    k = min(int(n_folds), usable.size)
    rng = check_random_state(random_state)
    fold = np.full(P.shape[0], -1)
    fold[rng.permutation(usable)] = np.arange(usable.size) % k
    x, y, coef = _fit_map(method, P[cells], labels[cells])
    out = _apply_map(P, x, y, coef)  # contexts without labels: the map on all the data
    for f in range(k):
        held = fold == f
        train = cells & ~held[:, None, None]
        fx, fy, fcoef = _fit_map(method, P[train], labels[train])
        out[held] = _apply_map(P[held], fx, fy, fcoef)
    return CalibrationResult(
        out,
        x,
        y,
        coef,
        method,
        int(cells.sum()),
        ece(P[cells], labels[cells]),
        ece(out[cells], labels[cells]),
        _disagreement(P),
        _disagreement(out),
    )


def calibrate(P, method="swap", reference=None, *, n_folds=5, random_state=None):
    """Calibrate a judge's probabilities with a monotone map (see the module docstring).

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N) or (N, N)
        P[c, i, j] = probability that i shown first beats j shown second; NaN not compared.
    method : {"swap", "isotonic", "platt"}, default "swap"
        "swap": label-free, fitted on the pairs judged in both orders. "isotonic" / "platt":
        against human labels from ``reference``, cross-fitted over contexts.
    reference : array_like, optional
        Human scores (n_contexts, N) or a human preference matrix (n_contexts, N, N); see
        ``pairwise_labels``. Ignored by "swap".
    n_folds : int, default 5
        Folds over the contexts with labels (at most one per such context).
    random_state : None, int or Generator, default None
        Assignment of contexts to folds for the human methods (None: fresh randomness,
        so two calls may cross-fit on different folds; pass an int, e.g. 0, for the same
        folds every time). Ignored by "swap", which has no folds.

    Returns
    -------
    CalibrationResult
        With ``reason`` set and P unchanged when there is nothing to fit (no pair judged in
        both orders for "swap"; no human label, or labels in fewer than 2 contexts).

    Raises
    ------
    ValueError
        Bad P or reference, unknown method, n_folds < 2.

    Examples
    --------
    A judge that adds 1 to the logit of the first candidate: after swap calibration the two
    orders of a pair agree.

    >>> s = np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 0.5], [1.0, -0.5, 0.0]])
    >>> P = 1 / (1 + np.exp(-(s + 1.0)))
    >>> r = calibrate(P, "swap")
    >>> round(r.disagreement_before, 3), round(r.disagreement_after, 3)
    (0.401, 0.0)
    """
    if method not in METHODS:
        raise ValueError(f"unknown calibration method {method!r}; use one of {METHODS}")
    P = as_P(P, allow_empty=True)
    if method == "swap":
        return _swap(P)
    if not (isinstance(n_folds, int | np.integer) and n_folds >= 2):
        raise ValueError(f"n_folds must be an integer >= 2; got {n_folds!r}")
    return _human(P, method, reference, n_folds, random_state)
