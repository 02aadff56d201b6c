"""The baselines of rater agreement: each annotator against the human mean (the human
baseline a judge is compared with), and a judge against itself across K samples.

Rating matrices are (n_items, n_raters) with NaN for a missing or unparsed rating, as in
:mod:`ranking.agreement.reliability`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ranking._core.checks import check_random_state
from ranking._core.score_checks import as_matrix, check_choice, join_reasons

from .correlations import CorrelationResult, correlation
from .reliability import ICCResult, icc, share_all_agree

__all__ = [
    "BASELINE_REFERENCES",
    "HumanBaselineResult",
    "SelfConsistencyResult",
    "human_baseline",
    "self_consistency",
]

#: The human baseline's references: "others" (each annotator vs the mean of the other
#: annotators, leave-one-out) and "all" (vs the mean of all annotators, self included: the
#: upper bound of Chhun et al. 2024).
BASELINE_REFERENCES = ("others", "all")


@dataclass(frozen=True, eq=False)
class HumanBaselineResult:
    """Each annotator against the mean of the other annotators (or of all of them).

    ``values[a]`` is annotator ``a``'s correlation, ``mean`` their mean over annotators with
    a defined value, ``results[a]`` the full :class:`~ranking.agreement.CorrelationResult`,
    ``reference`` the mean correlated with (:data:`BASELINE_REFERENCES`).
    """

    values: np.ndarray
    mean: float
    results: tuple[CorrelationResult, ...]
    reason: str = ""
    reference: str = "others"


@dataclass(frozen=True)
class SelfConsistencyResult:
    """Agreement of one judge with itself across K samples (tries) per item.

    ``icc`` is ICC2k across samples on the items with all K samples parsed;
    ``share_identical`` the share of items (with at least 2 parsed samples) whose parsed
    samples are all equal. ``n_dropped_nan`` items were left out of the ICC because a
    sample was NaN; ``n_nan_samples`` counts the NaN samples.
    """

    icc: ICCResult
    share_identical: float
    n_items: int
    n_samples: int
    n_items_icc: int
    n_items_identical: int
    n_dropped_nan: int
    n_nan_samples: int
    reason: str = ""


def human_baseline(
    ratings,
    contexts=None,
    systems=None,
    unit="item",
    method="spearman",
    variant="b",
    n_boot=0,
    confidence=0.95,
    random_state=None,
    reference="others",
):
    """Each annotator correlated with the mean of the other annotators (or of all of them).

    The baseline a judge is compared with: a judge that agrees with the human mean as
    well as a held-out annotator does is as good as one more human (``reference="others"``,
    leave-one-out). Chhun et al. (2024, HANNA) correlate each annotator with the mean of all
    annotators, its own rating included (``reference="all"``); the annotator is then part of
    what it is compared with, so the paper calls this an upper bound.

    Parameters
    ----------
    ratings : array_like of shape (n_items, n_annotators)
        NaN where an annotator did not rate an item; the mean uses the annotators present,
        and items where annotator a or the mean is missing are left out of annotator a's
        correlation (counted in its ``n_dropped_nan``).
    contexts, systems, unit, method, variant, n_boot, confidence, random_state
        As in :func:`ranking.agreement.correlation`.
    reference : {"others", "all"}
        The mean each annotator is correlated with: of the other annotators, or of all
        annotators (self included).

    Returns
    -------
    HumanBaselineResult

    Raises
    ------
    ValueError
        Fewer than 2 annotators, an unknown reference, or what
        :func:`~ranking.agreement.correlation` raises.
    """
    check_choice(reference, BASELINE_REFERENCES, "reference")
    Y = as_matrix(ratings)
    n_items, n_ann = Y.shape
    if n_ann < 2:
        raise ValueError(f"the human baseline needs at least 2 annotators; got {n_ann}")
    finite = np.isfinite(Y)
    tot = np.where(finite, Y, 0.0).sum(axis=1)
    cnt = finite.sum(axis=1)
    rng = check_random_state(random_state)
    results = []
    for a in range(n_ann):
        own = np.where(finite[:, a], Y[:, a], 0.0)
        if reference == "all":
            own, n_other = 0.0, cnt
        else:
            n_other = cnt - finite[:, a]
        with np.errstate(invalid="ignore", divide="ignore"):
            others = np.where(n_other > 0, (tot - own) / n_other, np.nan)
        results.append(
            correlation(
                Y[:, a],
                others,
                unit=unit,
                method=method,
                variant=variant,
                contexts=contexts,
                systems=systems,
                n_boot=n_boot,
                confidence=confidence,
                random_state=rng,
            )
        )
    values = np.array([r.value for r in results])
    defined = np.isfinite(values)
    reason = ""
    if not defined.all():
        reason = f"annotator(s) {np.flatnonzero(~defined).tolist()} undefined: " + "; ".join(
            results[i].reason for i in np.flatnonzero(~defined)
        )
    mean = float(values[defined].mean()) if defined.any() else np.nan
    return HumanBaselineResult(values, mean, tuple(results), reason, reference)


def self_consistency(samples, confidence=0.95):
    """Agreement of a judge with itself across K samples (tries) of every item.

    Parameters
    ----------
    samples : array_like of shape (n_items, K)
        Parsed scores per sample, NaN where a sample could not be parsed.
    confidence : float
        Coverage of the ICC's interval.

    Returns
    -------
    SelfConsistencyResult
        ICC2k across the K samples (items with all K parsed; the others are counted) and the
        share of items (with 2 or more parsed samples) whose parsed samples are identical.

    Raises
    ------
    ValueError
        Not 2-D or fewer than 2 samples per item.
    """
    Y = as_matrix(samples, "samples")
    n_items, K = Y.shape
    if K < 2:
        raise ValueError(f"self-consistency needs at least 2 samples per item; got {K}")
    finite = np.isfinite(Y)
    complete = finite.all(axis=1)
    n_dropped = int(n_items - complete.sum())
    res = icc(Y[complete], kind="ICC2k", confidence=confidence)
    res = dataclasses.replace(res, n_dropped_nan=n_dropped)
    reason = f"ICC2k: {res.reason}" if res.reason else ""
    share = share_all_agree(Y)
    reason = join_reasons(reason, "" if share.n_items else "no item has 2 or more parsed samples")
    return SelfConsistencyResult(
        res,
        share.value,
        n_items,
        K,
        int(complete.sum()),
        share.n_items,
        n_dropped,
        int((~finite).sum()),
        reason,
    )
