"""Position-bias profile of a judge: the statistics of Shi et al. (2024), "Judging the Judges"
(arXiv 2406.07791), overall and as a function of the quality gap between the two candidates.

The input is one entry per unordered pair {a, b}: ``p_ab = P(a wins | a shown first)`` and
``p_ba = P(b wins | b shown first)`` (NaN for an order that was not judged). Each judged order
gives a choice of slot, decided at ``tau`` with a tie band: "A" (the first slot wins,
``p > tau + tie_band``), "B" (the second slot wins, ``p < tau - tie_band``) or "C" (a tie,
otherwise; with ``tie_band = 0`` exactly :func:`ranking.decide`'s rule, a tie at ``p == tau``).

Over the pairs judged in both orders a pair is

* *primacy*-preferring when its choices are (A, A), (A, C) or (C, A): the first slot won more,
* *recency*-preferring for (B, B), (B, C), (C, B),
* *consistent* for (A, B), (B, A), (C, C): the same candidate (or a tie) in both orders.

Position consistency PC = consistent / n_both; preference fairness
PF = (rcn * rr - pcn * pr) / n_both with pr = pcn / (pcn + rcn), rr = rcn / (pcn + rcn)
(0 when pcn + rcn = 0), the paper's preference score rescaled by the number of pairs to
[-1, 1]: -1 when every pair prefers the first slot, +1 the second, 0 for no net preference.
(Algebraically PF = (rcn - pcn) / n_both.)

:func:`repetition_stability` is the paper's third statistic: how often a judge repeats its
modal decision over K samples of the same ordered pair.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from ranking._core.checks import check_random_state, check_tau
from ranking._core.score_checks import check_confidence
from ranking.agreement.bootstrap import _percentile_interval

from .profile_stats import (
    check_n_boot,
    check_probabilities,
    gap_bins,
    multinomial_draws,
    wilson,
)
from .repetition import RepetitionStability, repetition_stability

__all__ = [
    "PositionProfile",
    "RepetitionStability",
    "position_profile",
    "repetition_stability",
]

# The statistics computed for every subset of pairs (all of them, and each gap bin).
_STATS = (
    "consistency",
    "consistency_low",
    "consistency_high",
    "fairness",
    "fairness_low",
    "fairness_high",
    "first_win_rate",
    "first_win_rate_low",
    "first_win_rate_high",
    "tie_rate",
    "tie_rate_low",
    "tie_rate_high",
)


@dataclass(frozen=True)
class PositionProfile:
    """Result of :func:`position_profile`.

    Attributes
    ----------
    n_pairs, n_both : int
        Pairs judged in at least one order (entries with both orders NaN are left out), and
        in both orders (the pairs behind consistency, fairness and tie symmetry).
    n_judgements : int
        Judged orders (``n_pairs + n_both``): the trials of first-win rate and tie rate.
    consistency, consistency_low, consistency_high : float
        Position consistency (share of both-order pairs with the same winner, or a tie, in
        both orders) and its Wilson interval.
    fairness, fairness_low, fairness_high : float
        Preference fairness in [-1, 1] (< 0 primacy, > 0 recency) and its percentile
        bootstrap interval over pairs.
    n_primacy, n_recency, n_consistent : int
        Both-order pairs of each kind.
    first_win_rate, first_win_rate_low, first_win_rate_high : float
        Share of judged orders won by the first slot, a tie counting 1/2, and the Wilson
        interval of that effective count out of ``n_judgements``.
    tie_rate, tie_rate_low, tie_rate_high : float
        Share of judged orders that are ties, with its Wilson interval.
    tie_symmetry : float
        Among both-order pairs with a tie in at least one order, the share tied in both
        (how often a tie is repeated when the order is swapped); NaN if there is none.
    bin_edges : ndarray
        Quantile edges of the finite gaps (``n_bins + 1``; fewer where quantiles repeat and
        bins merge). Bins are right-closed, the first also holds its lower edge. Every
        ``bin_*`` array is empty when no gap is given or no gap is finite.
    bin_gap : ndarray
        Median gap of each bin's pairs.
    bin_n, bin_n_both : ndarray of int
        Pairs of each bin, and those judged in both orders.
    bin_consistency, bin_fairness, bin_first_win_rate, bin_tie_rate : ndarray
        The statistics above per bin, each with ``_low`` and ``_high`` arrays.
    reasons : dict
        Field name -> why it is NaN (for ``bin_*`` fields: which bins, 0-based).
    """

    n_pairs: int
    n_both: int
    n_judgements: int
    consistency: float
    consistency_low: float
    consistency_high: float
    fairness: float
    fairness_low: float
    fairness_high: float
    n_primacy: int
    n_recency: int
    n_consistent: int
    first_win_rate: float
    first_win_rate_low: float
    first_win_rate_high: float
    tie_rate: float
    tie_rate_low: float
    tie_rate_high: float
    tie_symmetry: float
    bin_edges: np.ndarray
    bin_gap: np.ndarray
    bin_n: np.ndarray
    bin_n_both: np.ndarray
    bin_consistency: np.ndarray
    bin_consistency_low: np.ndarray
    bin_consistency_high: np.ndarray
    bin_fairness: np.ndarray
    bin_fairness_low: np.ndarray
    bin_fairness_high: np.ndarray
    bin_first_win_rate: np.ndarray
    bin_first_win_rate_low: np.ndarray
    bin_first_win_rate_high: np.ndarray
    bin_tie_rate: np.ndarray
    bin_tie_rate_low: np.ndarray
    bin_tie_rate_high: np.ndarray
    reasons: dict = field(default_factory=dict)


def _fairness(pcn, rcn, n_both):
    """Preference fairness from primacy / recency counts (arrays broadcast), the paper's
    formula: (rcn * rr - pcn * pr) / n_both, pr and rr the shares of pcn + rcn."""
    pcn = np.asarray(pcn, dtype=np.float64)
    rcn = np.asarray(rcn, dtype=np.float64)
    biased = pcn + rcn
    with np.errstate(invalid="ignore", divide="ignore"):
        pr = np.where(biased > 0, pcn / biased, 0.0)
        rr = np.where(biased > 0, rcn / biased, 0.0)
    return (rcn * rr - pcn * pr) / n_both


def _choices(p, tau, tie_band):
    """1 (first slot wins), 0 (second wins), 0.5 (tie); NaN stays NaN."""
    out = np.where(p > tau + tie_band, 1.0, np.where(p < tau - tie_band, 0.0, 0.5))
    out[np.isnan(p)] = np.nan
    return out


def _subset_stats(x, y, rng, n_boot, confidence):
    """Every statistic of ``_STATS`` (plus counts) for the pairs with choices x, y."""
    both = np.isfinite(x) & np.isfinite(y)
    n_both = int(both.sum())
    s = x[both] + y[both]
    pcn, rcn, ccn = int((s > 1.0).sum()), int((s < 1.0).sum()), int((s == 1.0).sum())
    out = dict(n_both=n_both, n_primacy=pcn, n_recency=rcn, n_consistent=ccn)
    lo, hi = wilson(ccn, n_both, confidence)
    out.update(consistency=ccn / n_both if n_both else np.nan)
    out.update(consistency_low=float(lo), consistency_high=float(hi))
    out.update(fairness=float(_fairness(pcn, rcn, n_both)) if n_both else np.nan)
    out.update(fairness_low=np.nan, fairness_high=np.nan)
    if n_both and n_boot:
        draws = multinomial_draws(rng, [pcn, rcn, ccn], n_boot)
        reps = _fairness(draws[:, 0], draws[:, 1], n_both)
        out["fairness_low"], out["fairness_high"], _ = _percentile_interval(reps, confidence)
    judged = np.concatenate([x[np.isfinite(x)], y[np.isfinite(y)]])
    n = judged.shape[0]
    first = float(judged.sum())
    ties = int((judged == 0.5).sum())
    out.update(n_judgements=n)
    for name, k in (("first_win_rate", first), ("tie_rate", ties)):
        lo, hi = wilson(k, n, confidence)
        out.update(
            {name: k / n if n else np.nan, f"{name}_low": float(lo), f"{name}_high": float(hi)}
        )
    tied = (x[both] == 0.5) | (y[both] == 0.5)
    n_tied = int(tied.sum())
    out["tie_symmetry"] = int((s[tied] == 1.0).sum()) / n_tied if n_tied else np.nan
    return out


def _reasons_overall(stats, n_pairs, n_boot):
    reasons = {}
    if n_pairs == 0:
        for name in ("first_win_rate", "tie_rate"):
            reasons[name] = "no pair judged in either order"
    if stats["n_both"] == 0:
        for name in ("consistency", "fairness"):
            reasons[name] = "no pair judged in both orders"
    elif n_boot == 0:
        reasons["fairness_low"] = "n_boot = 0: no bootstrap interval"
    if np.isnan(stats["tie_symmetry"]):
        reasons["tie_symmetry"] = "no pair judged in both orders with a tie in either order"
    return reasons


def _check_options(tau, tie_band, n_bins, confidence, n_boot):
    tau = check_tau(tau)
    band = float(tie_band)
    if not (0.0 <= band <= 1.0):
        raise ValueError(f"tie_band must lie in [0, 1]; got {tie_band!r}")
    if not isinstance(n_bins, numbers.Integral) or isinstance(n_bins, bool) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive int; got {n_bins!r}")
    return tau, band, int(n_bins), check_confidence(confidence), check_n_boot(n_boot)


def position_profile(
    p_ab,
    p_ba,
    gap=None,
    *,
    n_bins=5,
    tau=0.5,
    tie_band=0.0,
    confidence=0.95,
    n_boot=1000,
    random_state=None,
) -> PositionProfile:
    """Position consistency, preference fairness, first-win and tie rates, by quality gap.

    Parameters
    ----------
    p_ab, p_ba : array_like of float, shape (n,)
        One entry per unordered pair {a, b}: P(a wins | a shown first) and P(b wins | b
        shown first), NaN for an order not judged. Entries with both NaN are left out.
    gap : array_like of float, shape (n,), optional
        Quality gap of each pair (e.g. the human score gap); NaN where unknown (the pair
        counts overall but in no bin). None: no bins.
    n_bins : int, default 5
        Number of quantile bins of the finite gaps (merged where quantiles repeat).
    tau : float, default 0.5
        Decision threshold; ``tie_band`` widens the tie to ``|p - tau| <= tie_band``.
    confidence : float, default 0.95
        Coverage of every interval.
    n_boot : int, default 1000
        Bootstrap replicates of the fairness interval (0: none). Resampling pairs is done
        exactly by drawing the primacy / recency / consistent counts from their multinomial.
    random_state : None, int or numpy.random.Generator
        Seed of the bootstrap.

    Returns
    -------
    PositionProfile
        See its attributes. Statistics that cannot be computed (no pair judged in both
        orders, an empty bin) are NaN with an entry in ``reasons``.

    Notes
    -----
    First-win rate counts a tie as 1/2; its Wilson interval is the closed form applied to
    that (possibly fractional) effective count out of the number of judged orders. The
    intervals treat pairs as independent, which several pairs of one context are not
    exactly.

    Raises
    ------
    ValueError
        Arrays that are not 1-D or differ in length, probabilities outside [0, 1],
        infinite values, or an invalid option.

    Examples
    --------
    >>> r = position_profile([0.9, 0.8, 0.2], [0.7, 0.3, 0.1], n_boot=0)
    >>> r.n_primacy, r.n_consistent, r.n_recency, r.fairness
    (1, 1, 1, 0.0)
    """
    a = check_probabilities(p_ab, "p_ab")
    b = check_probabilities(p_ba, "p_ba")
    if a.shape != b.shape:
        raise ValueError(
            f"p_ab and p_ba must have the same length; got {a.shape[0]} and {b.shape[0]}"
        )
    g = None
    if gap is not None:
        g = np.asarray(gap, dtype=np.float64)
        if g.shape != a.shape:
            raise ValueError(
                f"gap must have one entry per pair ({a.shape[0]}); got shape {g.shape}"
            )
        if np.isinf(g).any():
            raise ValueError(f"gap[{int(np.flatnonzero(np.isinf(g))[0])}] is infinite; use NaN")
    tau, band, n_bins, confidence, n_boot = _check_options(
        tau, tie_band, n_bins, confidence, n_boot
    )
    rng = check_random_state(random_state)

    keep = np.isfinite(a) | np.isfinite(b)
    x, y = _choices(a[keep], tau, band), _choices(b[keep], tau, band)
    n_pairs = int(keep.sum())
    stats = _subset_stats(x, y, rng, n_boot, confidence)
    reasons = _reasons_overall(stats, n_pairs, n_boot)

    bins = {f"bin_{k}": np.empty(0) for k in ("edges", "gap", *_STATS)}
    bins["bin_n"] = bins["bin_n_both"] = np.empty(0, dtype=np.int64)
    if g is None:
        reasons["bin_edges"] = "no gap given"
    else:
        edges, index = gap_bins(g[keep], n_bins)
        if edges.shape[0] == 0:
            reasons["bin_edges"] = "no finite gap"
        else:
            bins.update(_bin_stats(x, y, g[keep], edges, index, rng, n_boot, confidence))
            reasons.update(_reasons_bins(bins, n_boot))
    return PositionProfile(
        n_pairs=n_pairs,
        n_both=stats["n_both"],
        n_judgements=stats["n_judgements"],
        n_primacy=stats["n_primacy"],
        n_recency=stats["n_recency"],
        n_consistent=stats["n_consistent"],
        tie_symmetry=stats["tie_symmetry"],
        **{k: float(stats[k]) for k in _STATS},
        **bins,
        reasons=reasons,
    )


def _bin_stats(x, y, gap, edges, index, rng, n_boot, confidence):
    n = edges.shape[0] - 1
    rows = [_subset_stats(x[index == k], y[index == k], rng, n_boot, confidence) for k in range(n)]
    out = {f"bin_{name}": np.array([r[name] for r in rows], dtype=np.float64) for name in _STATS}
    out["bin_edges"] = edges
    out["bin_gap"] = np.array(
        [np.median(gap[index == k]) if (index == k).any() else np.nan for k in range(n)]
    )
    out["bin_n"] = np.bincount(index[index >= 0], minlength=n).astype(np.int64)
    out["bin_n_both"] = np.array([r["n_both"] for r in rows], dtype=np.int64)
    return out


def _reasons_bins(bins, n_boot):
    reasons = {}
    empty = np.flatnonzero(bins["bin_n"] == 0)
    if empty.size:
        which = ", ".join(str(k) for k in empty)
        for name in ("bin_gap", "bin_first_win_rate", "bin_tie_rate"):
            reasons[name] = f"bin(s) {which}: no pair (quantile edges between the same gaps)"
    none_both = np.flatnonzero(bins["bin_n_both"] == 0)
    if none_both.size:
        which = ", ".join(str(k) for k in none_both)
        for name in ("bin_consistency", "bin_fairness"):
            reasons[name] = f"bin(s) {which}: no pair judged in both orders"
    if n_boot == 0 and (bins["bin_n_both"] > 0).any():
        reasons["bin_fairness_low"] = "n_boot = 0: no bootstrap interval"
    return reasons
