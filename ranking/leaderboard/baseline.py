"""Win rates against a baseline system, Arena-Hard and AlpacaEval style.

The field's headline number: each system's predicted win rate against one baseline,
sigmoid(theta_system - theta_baseline) from a Bradley–Terry fit over all systems (50 % for the
baseline itself), with an interval:

- **bootstrap** (Arena-Hard's ``show_result.py``, v0.1): every replicate is refitted and
  anchored at the baseline (``compute_mle_elo`` sets the baseline's rating to 1000), the
  2.5 and 97.5 percentiles of each system's anchored score over the replicates are taken
  and turned into win rates: sigmoid(percentile(theta*_s - theta*_b));
- **fisher** (no replicates): the Wald interval of theta_s - theta_b, its variance from the
  inverse Fisher information (``ranking.controlled_win_rates``, the delta method on the
  log-odds).

Systems in another connected component than the baseline (never linked to it by
comparisons) have no win rate against it: NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ranking._core.score_checks import check_confidence
from ranking.bradley_terry.style import baseline_index, controlled_win_rates

__all__ = ["BaselineWinRates", "baseline_win_rates", "sigmoid"]


def sigmoid(x):
    """1 / (1 + exp(-x)), elementwise (NaN stays NaN)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


@dataclass(frozen=True)
class BaselineWinRates:
    """Result of :func:`baseline_win_rates`.

    Attributes
    ----------
    rate : ndarray, shape (n_items,)
        sigmoid(theta_i - theta_baseline) in [0, 1]; 0.5 for the baseline; NaN for items not
        comparable with it (another component, or never compared).
    lower, upper : ndarray, shape (n_items,)
        Interval at ``confidence`` (the baseline's: 0.5, 0.5); NaN where ``rate`` is, or
        without intervals.
    baseline : int
        Index of the baseline item.
    method : str
        "bootstrap" (percentiles of the anchored replicates), "fisher" (Wald on the
        log-odds) or "none".
    n_boot : int
        Replicates used (0 for Fisher).
    """

    rate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    baseline: int
    method: str
    n_boot: int = 0


def baseline_win_rates(result, baseline: int, *, confidence: float = 0.95) -> BaselineWinRates:
    """Every item's win rate against ``baseline`` from a flat Bradley–Terry fit.

    Parameters
    ----------
    result : BTResult
        ``ranking.bradley_terry`` on flat input (first, second, outcome). With bootstrap
        replicates (``samples``, from ``intervals="bootstrap"``) the interval is their
        percentiles, each replicate anchored at the baseline; else, when the fit keeps its
        data (``fit``), the Fisher (Wald) interval of the difference; else none.
    baseline, confidence
        The baseline item's index and the interval coverage (default 0.95), as in
        :func:`ranking.controlled_win_rates`.

    Returns
    -------
    BaselineWinRates

    Raises
    ------
    ValueError
        ``result`` is not a flat fit (scores not one-dimensional), ``baseline`` is not an
        item index, or a bad confidence.
    """
    scores = np.asarray(result.scores, dtype=np.float64)
    if scores.ndim != 1:
        raise ValueError(
            "baseline_win_rates needs a Bradley–Terry fit of flat input (one item set); "
            f"got scores of shape {scores.shape}"
        )
    n = scores.size
    baseline = baseline_index(baseline, n)
    check_confidence(confidence)
    component = np.asarray(result.component)
    linked = (component == component[baseline]) & (component >= 0) & np.isfinite(scores)
    if not np.isfinite(scores[baseline]) or component[baseline] < 0:
        linked[:] = False
    rate = np.where(linked, sigmoid(scores - scores[baseline]), np.nan)
    samples = getattr(result, "samples", None)
    nan = np.full(n, np.nan)
    if samples is not None and len(samples):
        samples = np.asarray(samples, dtype=np.float64)
        diff = samples - samples[:, baseline : baseline + 1]
        q = 100.0 * (1.0 - confidence) / 2.0
        with np.errstate(all="ignore"):
            ok = np.isfinite(diff).any(axis=0)
            lo = np.full(n, np.nan)
            hi = np.full(n, np.nan)
            if ok.any():
                lo[ok] = np.nanpercentile(diff[:, ok], q, axis=0)
                hi[ok] = np.nanpercentile(diff[:, ok], 100.0 - q, axis=0)
        lower = np.where(linked, sigmoid(lo), np.nan)
        upper = np.where(linked, sigmoid(hi), np.nan)
        method, n_boot = "bootstrap", int(samples.shape[0])
    elif getattr(result, "fit", None) is not None and linked.any():
        _, low, high = controlled_win_rates(result, baseline, confidence=confidence)
        lower = np.where(linked, low, np.nan)
        upper = np.where(linked, high, np.nan)
        method, n_boot = "fisher", 0
    else:
        lower, upper = nan, nan.copy()
        method, n_boot = "none", 0
    if linked[baseline]:
        rate[baseline] = lower[baseline] = upper[baseline] = 0.5
    return BaselineWinRates(rate, lower, upper, baseline, method, n_boot)
