"""Win rates against a baseline from a (style-controlled) Bradley–Terry fit.

The AlpacaEval length-controlled win rate: fit Bradley–Terry with length covariates
(``ranking.bradley_terry(..., features=...)``), then report each item's predicted win rate
against a baseline item with the covariates at zero (equal length, no first-slot advantage):
sigmoid(theta_i - theta_baseline).
"""

from __future__ import annotations

import statistics

import numpy as np

from ranking._core.score_checks import check_confidence

from .features import joint_covariance
from .intervals import MAX_FISHER_ITEMS

__all__ = ["controlled_win_rates"]


def baseline_index(baseline, n):
    """``baseline`` as an item index in [0, n), or a ValueError saying what it must be."""
    if isinstance(baseline, bool) or int(baseline) != baseline or not 0 <= baseline < n:
        raise ValueError(f"baseline must be an item index in [0, {n}); got {baseline!r}")
    return int(baseline)


def controlled_win_rates(result, baseline, *, confidence=0.95):
    """Predicted win rate of every item against ``baseline``, with a delta-method interval.

    Parameters
    ----------
    result : BTResult
        A flat-input fit of ``ranking.bradley_terry`` (with or without ``features``).
    baseline : int
        Index of the baseline item.
    confidence : float, default 0.95
        Interval coverage.

    Returns
    -------
    rate, low, high : ndarray of shape (n_items,)
        rate = sigmoid(theta_i - theta_baseline) (0.5 for the baseline itself). The interval
        is the Wald interval of the log-odds difference, whose variance comes from the
        inverse of the joint Fisher information of (theta, beta) (so the uncertainty of the
        covariate coefficients is included), mapped through the sigmoid (the delta method
        on the log-odds scale; it stays inside [0, 1]). NaN for items never compared or in
        another connected component than the baseline (their scores are not comparable);
        all NaN when the baseline was never compared.

    Raises
    ------
    ValueError
        ``result`` not a flat-input fit, ``baseline`` out of range, a bad confidence, or
        more than ``MAX_FISHER_ITEMS`` items (the covariance is dense).
    """
    fit = getattr(result, "fit", None)
    if fit is None:
        raise ValueError(
            "controlled_win_rates needs a Bradley–Terry fit of flat input (first, second, "
            "outcome[, features]); P input fits have no joint covariance"
        )
    check_confidence(confidence)
    n = fit.theta.size
    baseline = baseline_index(baseline, n)
    nan = np.full(n, np.nan)
    if fit.comp[baseline] < 0:
        return nan, nan.copy(), nan.copy()
    cov, _ = joint_covariance(fit, MAX_FISHER_ITEMS)
    theta = fit.theta
    diff = theta - theta[baseline]
    var = np.diag(cov) + cov[baseline, baseline] - 2.0 * cov[:, baseline]
    same = fit.comp == fit.comp[baseline]
    diff = np.where(same, diff, np.nan)
    se = np.sqrt(np.clip(np.where(same, var, np.nan), 0.0, None))
    se[baseline] = 0.0
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2.0)

    def sig(d):
        return 1.0 / (1.0 + np.exp(-d))

    return sig(diff), sig(diff - z * se), sig(diff + z * se)
