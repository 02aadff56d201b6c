"""``ranking.repetition_stability``: how often a judge repeats its modal decision over K samples
of the same ordered pair (Shi et al. 2024, arXiv 2406.07791), exported from
:mod:`ranking.bias.profile` and :mod:`ranking`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ranking._core.checks import check_random_state
from ranking._core.score_checks import check_confidence
from ranking.agreement.bootstrap import _percentile_interval

from .profile_stats import check_n_boot, multinomial_draws

__all__ = ["RepetitionStability", "repetition_stability"]


@dataclass(frozen=True)
class RepetitionStability:
    """Result of :func:`repetition_stability`.

    Attributes
    ----------
    value, low, high : float
        Mean share of the modal decision over the groups with at least two parsed samples,
        and its percentile bootstrap interval over those groups.
    n_groups : int
        Groups with at least two parsed samples.
    per_group : ndarray
        Share of the modal decision per group id (length ``max(groups) + 1``), NaN for a
        group with fewer than two parsed samples.
    reason : str
        Why ``value`` (or the interval) is NaN; "" when defined.
    """

    value: float
    low: float
    high: float
    n_groups: int
    per_group: np.ndarray
    reason: str = ""


def _check_groups(decisions, groups):
    d = np.asarray(decisions, dtype=np.float64)
    gr = np.asarray(groups)
    if d.ndim != 1 or gr.ndim != 1 or d.shape != gr.shape:
        raise ValueError(
            "decisions and groups must be 1-D arrays of the same length (one entry per sample); "
            f"got shapes {d.shape} and {gr.shape}"
        )
    bad = np.isfinite(d) & ~np.isin(d, (0.0, 0.5, 1.0))
    if bad.any() or np.isinf(d).any():
        k = int(np.flatnonzero(bad | np.isinf(d))[0])
        raise ValueError(
            "decisions must be 1 (first wins), 0.5 (tie), 0 (second wins) or NaN (unparsed); "
            f"decisions[{k}] = {float(d[k])}"
        )
    if gr.size and not np.issubdtype(gr.dtype, np.integer):
        as_float = gr.astype(np.float64)
        if not (np.isfinite(as_float).all() and (as_float == np.round(as_float)).all()):
            raise ValueError("groups must be integer ids (one per ordered pair)")
        gr = as_float.astype(np.int64)
    gr = gr.astype(np.int64)
    if gr.size and gr.min() < 0:
        k = int(np.flatnonzero(gr < 0)[0])
        raise ValueError(f"groups must be non-negative ids; groups[{k}] = {gr[k]}")
    return d, gr


def repetition_stability(decisions, groups, *, confidence=0.95, n_boot=1000, random_state=None):
    """How consistently a judge repeats itself over samples of the same ordered pair.

    Parameters
    ----------
    decisions : array_like of float, shape (n_samples,)
        Per sample 1 (first wins), 0.5 (tie) or 0 (second wins); NaN (unparsed) is dropped.
    groups : array_like of int, shape (n_samples,)
        Non-negative id of the ordered pair each sample belongs to.
    confidence : float, default 0.95
        Coverage of the bootstrap interval.
    n_boot : int, default 1000
        Bootstrap replicates over groups (0: no interval). Drawn exactly as multinomial
        counts of the groups' distinct shares.
    random_state : None, int or numpy.random.Generator
        Seed of the bootstrap.

    Returns
    -------
    RepetitionStability
        ``per_group``: the share of the modal decision among a group's parsed samples (NaN
        with fewer than two); ``value``: its mean over the groups with two or more, NaN
        with a ``reason`` when there is none.

    Raises
    ------
    ValueError
        Shapes that differ, decisions other than 0 / 0.5 / 1 / NaN, negative or
        non-integer group ids, or an invalid option.

    Examples
    --------
    >>> r = repetition_stability([1, 1, 0, 0.5, 0.5, np.nan], [0, 0, 0, 1, 1, 2], n_boot=0)
    >>> r.per_group.round(3).tolist(), round(r.value, 4)
    ([0.667, 1.0, nan], 0.8333)
    """
    d, gr = _check_groups(decisions, groups)
    confidence, n_boot = check_confidence(confidence), check_n_boot(n_boot)
    rng = check_random_state(random_state)
    n_ids = int(gr.max()) + 1 if gr.size else 0
    ok = np.isfinite(d)
    code = (d[ok] * 2.0).astype(np.int64)  # 0, 1, 2
    counts = np.bincount(gr[ok] * 3 + code, minlength=n_ids * 3).reshape(n_ids, 3)
    n = counts.sum(axis=1)
    per_group = np.full(n_ids, np.nan)
    multi = n >= 2
    per_group[multi] = counts[multi].max(axis=1) / n[multi]
    n_groups = int(multi.sum())
    if n_groups == 0:
        reason = "no ordered pair has two or more parsed samples (the judge was sampled once)"
        return RepetitionStability(np.nan, np.nan, np.nan, 0, per_group, reason)
    values = per_group[multi]
    value = float(values.mean())
    if n_boot == 0:
        return RepetitionStability(
            value, np.nan, np.nan, n_groups, per_group, "n_boot = 0: no bootstrap interval"
        )
    uniq, freq = np.unique(values, return_counts=True)
    reps = multinomial_draws(rng, freq, n_boot) @ uniq / n_groups
    low, high, _ = _percentile_interval(reps, confidence)
    return RepetitionStability(value, low, high, n_groups, per_group)
