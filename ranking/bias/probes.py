"""Probes of a causal judge from its token log-probabilities: perplexity, Min-K% Prob, AUC,
self-preference.

- :func:`mean_logprob` / :func:`perplexity`: per-token log-likelihood of a text and its
  exponentiated negative (Wataoka et al. 2024 relate a judge's preferences to it).
- :func:`min_k_prob`: the mean of the lowest ``k`` share of a text's token log-probabilities
  (Shi et al. 2024, "Detecting pretraining data from large language models"); texts seen in
  training have fewer very unlikely tokens, so a higher value.
- :func:`auc` / :func:`auc_test`: the probability that a score of group A exceeds one of
  group B (ties count half), scipy's Mann–Whitney U divided by ``n_a n_b``, with its p-value
  and a bootstrap interval.
- :func:`self_preference`: the correlation between the judge's preference for the first of
  two texts and the difference of their per-token log-likelihoods, overall and within strata
  (e.g. pairs with equal human scores), with context-bootstrap intervals.
- :func:`mean_interval`: a mean (e.g. a win rate) with a context-bootstrap interval.

Log-probabilities are natural logs; NaN token values (a first token with nothing before it)
are left out. Undefined statistics are NaN with a ``reason``, never an exception.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ranking._core.checks import check_random_state
from ranking._core.score_checks import as_labels, as_scores, check_confidence, label_codes
from ranking.agreement.bootstrap import _percentile_interval
from ranking.agreement.correlations import CorrelationResult, correlation

__all__ = [
    "AUCResult",
    "MeanInterval",
    "SelfPreferenceResult",
    "auc",
    "auc_test",
    "mean_interval",
    "mean_logprob",
    "min_k_prob",
    "perplexity",
    "self_preference",
]


def _token_values(logprobs) -> np.ndarray:
    arr = np.asarray(logprobs, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"logprobs must be 1-D (one value per token), got shape {arr.shape}")
    if np.any(arr > 1e-9):
        raise ValueError("logprobs must be natural-log probabilities (<= 0); got a positive value")
    return arr[~np.isnan(arr)]


def mean_logprob(logprobs) -> float:
    """Mean token log-probability of one text (NaN when it has no token).

    Parameters
    ----------
    logprobs : array_like of shape (n_tokens,)
        Natural-log probability of each token; NaN values are left out.

    Returns
    -------
    float
    """
    arr = _token_values(logprobs)
    return float(arr.mean()) if arr.size else math.nan


def perplexity(logprobs) -> float:
    """Perplexity ``exp(-mean log p)`` of one text, from token log-probabilities as
    :func:`mean_logprob` takes them (NaN when it has no token, inf when the mean is -700
    or less)."""
    m = mean_logprob(logprobs)
    if math.isnan(m):
        return math.nan
    return math.exp(-m) if m > -700.0 else math.inf


def min_k_prob(logprobs, k: float = 0.2) -> float:
    """Min-K% Prob of one text: the mean of its lowest ``k`` share of token log-probabilities.

    Parameters
    ----------
    logprobs : array_like of shape (n_tokens,)
        Natural-log probability of each token; NaN values are left out.
    k : float in (0, 1]
        Share of tokens kept: the ``max(1, floor(k * n))`` least likely ones (Shi et al. use
        ``int(k * n)``; at least one keeps short texts defined). ``k = 1`` is the mean.

    Returns
    -------
    float
        NaN for a text without tokens.
    """
    if not (isinstance(k, (int, float)) and 0.0 < float(k) <= 1.0):
        raise ValueError(f"k must be a share in (0, 1], got {k!r}")
    arr = _token_values(logprobs)
    if not arr.size:
        return math.nan
    n_keep = max(1, int(float(k) * arr.size))
    return float(np.sort(arr)[:n_keep].mean())


def auc(scores_a, scores_b) -> float:
    """P(a score of group A > a score of group B), ties counting half (Mann–Whitney U / n_a n_b).

    NaN scores are left out; NaN when either group is empty.
    """
    a, b = _two_groups(scores_a, scores_b)
    if not (a.size and b.size):
        return math.nan
    u = stats.mannwhitneyu(a, b, alternative="two-sided").statistic
    return float(u / (a.size * b.size))


def _two_groups(scores_a, scores_b):
    a = np.asarray(scores_a, dtype=np.float64).ravel()
    b = np.asarray(scores_b, dtype=np.float64).ravel()
    return a[~np.isnan(a)], b[~np.isnan(b)]


@dataclass(frozen=True)
class AUCResult:
    """AUC of group A over group B: ``value`` with a bootstrap interval ``lower``/``upper``,
    the two-sided Mann–Whitney ``pvalue``, the group sizes and a ``reason`` when undefined."""

    value: float
    lower: float
    upper: float
    pvalue: float
    n_a: int
    n_b: int
    reason: str = ""


def auc_test(scores_a, scores_b, *, n_boot=1000, confidence=0.95, random_state=None) -> AUCResult:
    """AUC of A over B with its Mann–Whitney p-value and a percentile bootstrap interval.

    Parameters
    ----------
    scores_a, scores_b : array_like
        Scores of the two groups (e.g. Min-K% Prob of texts before / after a cut-off); NaN
        values are left out.
    n_boot : int
        Bootstrap replicates, each group resampled on its own (0: no interval).
    confidence : float
        Coverage of the interval.
    random_state : None, int or numpy Generator

    Returns
    -------
    AUCResult
    """
    check_confidence(confidence)
    a, b = _two_groups(scores_a, scores_b)
    if not (a.size and b.size):
        which = "A" if not a.size else "B"
        return AUCResult(
            math.nan, math.nan, math.nan, math.nan, a.size, b.size, f"group {which} has no score"
        )
    test = stats.mannwhitneyu(a, b, alternative="two-sided")
    value = float(test.statistic / (a.size * b.size))
    lo = hi = math.nan
    reason = ""
    if n_boot:
        rng = check_random_state(random_state)
        ia = rng.integers(0, a.size, size=(n_boot, a.size))
        ib = rng.integers(0, b.size, size=(n_boot, b.size))
        reps = stats.mannwhitneyu(a[ia], b[ib], axis=1, alternative="two-sided").statistic
        lo, hi, reason = _percentile_interval(reps / (a.size * b.size), confidence)
    return AUCResult(value, lo, hi, float(test.pvalue), a.size, b.size, reason)


@dataclass(frozen=True)
class MeanInterval:
    """A mean with a context-bootstrap percentile interval; ``n`` values used."""

    value: float
    lower: float
    upper: float
    n: int
    reason: str = ""


def mean_interval(values, contexts=None, *, n_boot=1000, confidence=0.95, random_state=None):
    """Mean of ``values`` (NaN left out) with an interval resampling whole contexts.

    Parameters
    ----------
    values : array_like of shape (n,)
        E.g. 1 where an own-family system won, 0 where it lost, 0.5 for a tie.
    contexts : array_like of shape (n,), optional
        Resampling units (each value its own unit when omitted).
    n_boot, confidence, random_state
        As in :func:`auc_test`.

    Returns
    -------
    MeanInterval
    """
    check_confidence(confidence)
    x = as_scores(values, "values")
    units = np.arange(x.size) if contexts is None else as_labels(contexts, x.size, "contexts")
    keep = ~np.isnan(x)
    x, units = x[keep], units[keep]
    if not x.size:
        return MeanInterval(math.nan, math.nan, math.nan, 0, "no value")
    lo = hi = math.nan
    reason = ""
    if n_boot:
        codes, uniq = label_codes(units)
        n_units = len(uniq)
        sums = np.bincount(codes, weights=x, minlength=n_units)
        counts = np.bincount(codes, minlength=n_units).astype(np.float64)
        rng = check_random_state(random_state)
        draws = rng.integers(0, n_units, size=(n_boot, n_units))
        reps = sums[draws].sum(1) / counts[draws].sum(1)
        lo, hi, reason = _percentile_interval(reps, confidence)
    return MeanInterval(float(x.mean()), lo, hi, int(x.size), reason)


@dataclass(frozen=True)
class SelfPreferenceResult:
    """Judge preference against the log-likelihood difference of the two texts.

    ``overall`` is the correlation over all pairs; ``strata`` maps each stratum label to its
    correlation (pairs in that stratum only); ``within`` is the pair-weighted mean of the
    defined per-stratum values (NaN without strata). A positive value: the judge prefers the
    text it finds more likely (lower perplexity).
    """

    overall: CorrelationResult
    strata: dict
    within: float


def self_preference(
    preference,
    ll_diff,
    *,
    strata=None,
    contexts=None,
    method="spearman",
    n_boot=1000,
    confidence=0.95,
    random_state=None,
) -> SelfPreferenceResult:
    """Correlation of a judge's preference with the log-likelihood difference of two texts.

    Parameters
    ----------
    preference : array_like of shape (n_pairs,)
        The judge's preference for the first text (p_first, or a verdict 1 / 0.5 / 0),
        ideally averaged over both presentation orders. NaN pairs are left out.
    ll_diff : array_like of shape (n_pairs,)
        Mean token log-probability of the first text minus that of the second.
    strata : array_like of shape (n_pairs,), optional
        Stratum of each pair (e.g. the human-score difference); correlations are also
        computed within each stratum.
    contexts : array_like of shape (n_pairs,), optional
        Context of each pair, the bootstrap's resampling unit.
    method : {"spearman", "kendall", "pearson"}
    n_boot, confidence, random_state
        As in :func:`ranking.correlation`.

    Returns
    -------
    SelfPreferenceResult
    """
    pref = as_scores(preference, "preference")
    diff = as_scores(ll_diff, "ll_diff", n=pref.size)
    ctx = None if contexts is None else as_labels(contexts, pref.size, "contexts")
    overall = correlation(
        pref,
        diff,
        unit="overall",
        method=method,
        contexts=ctx,
        n_boot=n_boot,
        confidence=confidence,
        random_state=random_state,
    )
    per: dict = {}
    within = math.nan
    if strata is not None:
        labels = as_labels(strata, pref.size, "strata")
        weights, values = [], []
        uniq = set(labels.tolist())
        try:
            ordered = sorted(uniq)
        except TypeError:
            ordered = sorted(uniq, key=str)
        for label in ordered:
            sel = labels == label
            res = correlation(
                pref[sel],
                diff[sel],
                unit="overall",
                method=method,
                contexts=None if ctx is None else ctx[sel],
                n_boot=n_boot,
                confidence=confidence,
                random_state=random_state,
            )
            per[label] = res
            if np.isfinite(res.value):
                weights.append(res.n_used)
                values.append(res.value)
        if weights:
            within = float(np.average(values, weights=weights))
    return SelfPreferenceResult(overall, per, within)
