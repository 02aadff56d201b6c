"""Prediction-powered inference: a judge's outputs on every item, human labels on a few.

PPI++ (Angelopoulos, Duchi, Zrnic 2023, "PPI++: Efficient Prediction-Powered Inference"):
with human labels ``y`` on n labelled items, the judge's outputs ``yhat`` on the same items and
``yhat_unlabeled`` on N further items, the mean of the human label is estimated by

    theta_lam = lam * mean(yhat_unlabeled) + mean(y - lam * yhat)

which is unbiased for every lam (the judge's bias is measured on the labelled items and taken
off). Its CLT variance is lam^2 Var(yhat) / N + Var(y - lam yhat) / n; power tuning picks

    lam = Cov(y, yhat) / ((1 + n / N) Var(yhat)),   clipped to [0, 1],

the variance-minimising weight (the covariance from the labelled items, the variance from all
judge outputs). lam = 0 is the classical human-only interval, lam = 1 plain PPI. Because lam
is tuned, the judge's scale need not match the humans' (a judge on 1-10 against humans on
1-5 only changes lam). The conventions follow the authors' ``ppi_py`` (standard deviations
with ddof 0 in the mean interval, ``np.cov`` in the tuning), so ``ppi_mean`` equals
``ppi_py.ppi_mean_ci`` to rounding.

A **win rate against a baseline** is a mean too: build one outcome per context in which both
the system and the baseline were judged (1: the system is better, 0.5: a tie, 0: the
baseline is better) from the human scores (``y``, on the labelled contexts) and from the judge
(``yhat`` on the same contexts, ``yhat_unlabeled`` on the others), then call ``ppi_mean``.

``ppi_bradley_terry`` is the PPI++ M-estimator for Bradley–Terry scores
(``ranking.ppi.bradley_terry``).
"""

from __future__ import annotations

import numpy as np

from ranking._core.score_checks import check_confidence

from .result import PPIResult, _method, _result, check_lam

__all__ = ["ppi_mean", "classical_mean", "tuned_lam"]


def _vector(x, name: str, *, allow_empty: bool = False) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be numeric; {err}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one value per item); got shape {arr.shape}")
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} is empty")
    if not np.isfinite(arr).all():
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(
            f"{name}[{i}] is {arr[i]}: leave items without a usable value out before calling "
            "(an unparsed judge answer, an item nobody labelled)"
        )
    return arr


def classical_mean(y, *, confidence: float = 0.95) -> PPIResult:
    """The classical CLT interval of a mean, mean(y) -+ z sd(y) / sqrt(n) (sd with ddof 0).

    Parameters
    ----------
    y : array_like, shape (n,)
        Finite values (human labels, or a judge's outputs for a judge-only estimate).
    confidence : float
        Coverage of the interval.

    Returns
    -------
    PPIResult
        ``lam`` 0, ``n_unlabeled`` 0, method "classical".
    """
    conf = check_confidence(confidence)
    y = _vector(y, "y")
    if y.size < 2:
        raise ValueError(f"an interval needs at least 2 values; got {y.size}")
    return _result(y.mean(), y.std() / np.sqrt(y.size), conf, 0.0, y.size, 0, "classical")


def tuned_lam(y, yhat, yhat_unlabeled) -> float:
    """PPI++'s power-tuning weight for a mean, clipped to [0, 1] (see the module docstring).

    0 when the judge's outputs are constant (they carry no information) or there are no
    unlabelled items.
    """
    n, N = y.size, yhat_unlabeled.size
    if N == 0:
        return 0.0
    var = np.var(np.concatenate([yhat, yhat_unlabeled]), ddof=1)
    if not var > 0:
        return 0.0
    cov = np.mean((y - y.mean()) * (yhat - yhat.mean()))
    return float(np.clip(cov / ((1.0 + n / N) * var), 0.0, 1.0))


def ppi_mean(y, yhat, yhat_unlabeled, *, lam=None, confidence: float = 0.95) -> PPIResult:
    """PPI++ estimate and CLT interval of the mean human label.

    Parameters
    ----------
    y : array_like, shape (n,)
        Human labels on the labelled items (finite; n >= 2).
    yhat : array_like, shape (n,)
        The judge's outputs on the same items, in the same order (any scale).
    yhat_unlabeled : array_like, shape (N,)
        The judge's outputs on the items without a human label (may be empty: then only the
        human-only interval is possible).
    lam : float in [0, 1] or None
        Weight of the judge; None tunes it (PPI++). 0 gives the classical interval of ``y``
        exactly, 1 plain PPI.
    confidence : float
        Coverage of the interval.

    Returns
    -------
    PPIResult
        One estimate (k = 1); ``notes`` say when tuning fell back to lam = 0.

    Raises
    ------
    ValueError
        Fewer than 2 labelled items, mismatched lengths, non-finite values, lam outside
        [0, 1], or lam > 0 without unlabelled items.
    """
    conf = check_confidence(confidence)
    lam = check_lam(lam)
    y = _vector(y, "y (human labels)", allow_empty=True)
    yhat = _vector(yhat, "yhat (judge on the labelled items)", allow_empty=True)
    yu = _vector(yhat_unlabeled, "yhat_unlabeled (judge on the other items)", allow_empty=True)
    if y.size < 2:
        raise ValueError(
            f"PPI needs human labels on at least 2 items; got {y.size}. Label some items "
            "(or use the judge-only estimate, which carries the judge's bias)"
        )
    if yhat.size != y.size:
        raise ValueError(
            f"y has {y.size} human labels but yhat has {yhat.size} judge outputs; they must be "
            "aligned item by item"
        )
    n, N = y.size, yu.size
    notes = []
    tuned = lam is None
    if N == 0 and lam not in (None, 0.0):
        raise ValueError(
            "every item is labelled (no judge-only items), so the judge cannot add anything: "
            "use lam=0 or None"
        )
    if tuned:
        lam = tuned_lam(y, yhat, yu)
        if N == 0:
            notes.append("every item has a human label: the human-only (classical) interval")
        elif not np.var(np.concatenate([yhat, yu])) > 0:
            notes.append("the judge's outputs are constant: they carry no information (lam 0)")
    if lam == 0.0:
        est = y.mean()
        se = y.std() / np.sqrt(n)
    else:
        r = y - lam * yhat
        est = lam * yu.mean() + r.mean()
        se = np.sqrt((lam * yu).var() / N + r.var() / n)
    return _result(est, se, conf, lam, n, N, _method(lam, tuned), notes)
