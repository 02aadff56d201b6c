"""What the two PPI++ estimators share: the result, the method label, the checked lam, the
normal interval. :func:`ranking.ppi.mean.ppi_mean` (a mean) and
:func:`ranking.ppi.bradley_terry.ppi_bradley_terry` (Bradley–Terry scores) both build their
:class:`PPIResult` with :func:`_result`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import norm

__all__ = ["PPIResult", "check_lam"]


@dataclass(frozen=True)
class PPIResult:
    """An estimate with its CLT interval, from human labels, a judge, or both.

    Attributes
    ----------
    estimate, lower, upper, se : ndarray, shape (k,)
        Point estimates, interval bounds and standard errors (k = 1 for a mean; one per item
        for Bradley–Terry scores, NaN for an item that cannot be estimated, see ``notes``).
    lam : float
        The power-tuning weight used (0: human labels only, 1: plain PPI).
    n_labeled, n_unlabeled : int
        Labelled items (human label and judge output) and judge-only items used.
    method : str
        "ppi++" (lam tuned), "ppi" (lam = 1), "classical" (lam = 0) or "ppi (fixed lam)".
    confidence : float
        Coverage of the intervals.
    notes : tuple of str
        What was set aside or fell back, in words (empty when nothing did).
    cov : ndarray, shape (k, k), or None
        The estimated covariance of ``estimate`` (Bradley–Terry: the sandwich, centred
        gauge, NaN rows for items not estimated); None for a mean.
    """

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    se: np.ndarray
    lam: float
    n_labeled: int
    n_unlabeled: int
    method: str
    confidence: float = 0.95
    notes: tuple = field(default_factory=tuple)
    cov: np.ndarray | None = None

    @property
    def width(self) -> np.ndarray:
        """Interval widths, upper - lower."""
        return self.upper - self.lower


def _method(lam, tuned: bool) -> str:
    if tuned:
        return "ppi++"
    if lam == 0:
        return "classical"
    if lam == 1:
        return "ppi"
    return "ppi (fixed lam)"


def check_lam(lam) -> float | None:
    """``lam`` as None (tune) or a float in [0, 1]; ValueError otherwise."""
    if lam is None:
        return None
    lam = float(lam)
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must lie in [0, 1] (or be None to tune it); got {lam!r}")
    return lam


def _z(confidence: float) -> float:
    return float(norm.ppf(1.0 - (1.0 - confidence) / 2.0))


def _result(est, se, conf, lam, n, N, method, notes=(), cov=None) -> PPIResult:
    est = np.atleast_1d(np.asarray(est, dtype=np.float64))
    se = np.atleast_1d(np.asarray(se, dtype=np.float64))
    half = _z(conf) * se
    return PPIResult(
        est,
        est - half,
        est + half,
        se,
        float(lam),
        int(n),
        int(N),
        method,
        conf,
        tuple(notes),
        cov,
    )
