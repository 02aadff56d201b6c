"""The judges themselves: self-consistency across samples and pairwise accuracy against the
human reference (agreement of pairwise verdicts with human verdicts: ``verdicts``)."""

from __future__ import annotations

import pandas as pd

import ranking as rk
from data.agreement._tables import ITEM, pick, table_frame, wide
from data.agreement.reference import reference_annotators, select_ratings
from data.schema import Dataset

#: Columns of :func:`self_consistency_table`, in order.
CONSISTENCY_COLUMNS = (
    "judge prompt_id attribute n_items n_samples icc2k icc2k_lower icc2k_upper icc2k_items "
    "alpha_interval alpha_ordinal share_identical n_nan reason"
).split()
#: Columns of :func:`pairwise_accuracy_table`, in order.
ACCURACY_COLUMNS = ["judge", "attribute", "tau", "accuracy", "n_contexts", "reason"]


def self_consistency_table(
    ds: Dataset, judge=None, prompt_id=None, attribute=None, confidence: float = 0.95
) -> pd.DataFrame:
    """Agreement of each judge with itself across its samples (tries) per item.

    Parameters
    ----------
    ds : Dataset
        Its ratings.
    judge, prompt_id, attribute : str or iterable of str, optional
        The ratings kept; default all.
    confidence : float
        Coverage of the ICC interval.

    Returns
    -------
    pandas.DataFrame
        :data:`CONSISTENCY_COLUMNS`: judge, prompt_id, attribute, n_items, n_samples (distinct
        sample numbers), icc2k (ICC2k with the samples as raters; HANNA's Table 1),
        icc2k_lower, icc2k_upper, icc2k_items (items with every sample parsed),
        alpha_interval and alpha_ordinal (Krippendorff's alpha with the samples as raters,
        items with 2 or more parsed samples; Chiang & Lee's Table 1), share_identical (share
        of those items whose parsed samples all agree), n_nan (samples missing or
        unparsed), reason. A judge with one sample per item gets NaN with the reason.

    Raises
    ------
    DataError
        A chosen name that does not appear in the ratings.
    """
    r = select_ratings(ds, judge, prompt_id, attribute)
    rows = []
    keys = ["judge", "prompt_id", "attribute"]
    n_samples = r.groupby(keys, sort=True, observed=True)["sample"].nunique()
    n_items = r.drop_duplicates([*keys, *ITEM]).groupby(keys, sort=True, observed=True).size()
    groups = r.groupby(keys, sort=True, observed=True).indices
    for (jname, pid, attr), k in n_samples.items():
        base = dict(
            judge=jname,
            prompt_id=pid,
            attribute=attr,
            n_items=int(n_items.loc[(jname, pid, attr)]),
            n_samples=int(k),
        )
        if k < 2:
            rows.append(
                {
                    **base,
                    "reason": "one sample per item; self-consistency needs 2 or "
                    "more samples (tries)",
                }
            )
            continue
        Y, _, _ = wide(r.iloc[groups[(jname, pid, attr)]], "sample")
        res = rk.self_consistency(Y, confidence=confidence)
        alphas = {s: rk.krippendorff_alpha(Y, s) for s in ("interval", "ordinal")}
        reasons = [res.reason] + [f"alpha ({s}): {a.reason}" for s, a in alphas.items() if a.reason]
        rows.append(
            {
                **base,
                "alpha_interval": alphas["interval"].value,
                "alpha_ordinal": alphas["ordinal"].value,
                "icc2k": res.icc.value,
                "icc2k_lower": res.icc.lower,
                "icc2k_upper": res.icc.upper,
                "icc2k_items": res.n_items_icc,
                "share_identical": res.share_identical,
                "n_nan": res.n_nan_samples,
                "reason": "; ".join(dict.fromkeys(r for r in reasons if r)),
            }
        )
    return table_frame(rows, CONSISTENCY_COLUMNS)


def pairwise_accuracy_table(
    ds: Dataset, judge=None, attribute=None, annotators=None, tau: float = 0.5
) -> pd.DataFrame:
    """Pairwise accuracy of comparative judges against the human reference.

    Parameters
    ----------
    ds : Dataset
        Its comparisons, human scores and candidates.
    judge, attribute : str or iterable of str, optional
        The comparisons kept; default all.
    annotators : str or iterable of str, optional
        The human reference (``data.agreement.reference_annotators``).
    tau : float
        The decision threshold: the first candidate wins when p > tau.

    Returns
    -------
    pandas.DataFrame
        :data:`ACCURACY_COLUMNS`: judge, attribute, tau, accuracy (``ranking.agreement.metrics
        .pairwise_accuracy``: over the pairs whose human scores differ), n_contexts, reason
        (why the accuracy is NaN, e.g. no pair whose human scores differ).

    Raises
    ------
    DataError
        No reference annotators, or a chosen name that does not appear.
    """
    from data.arrays import comparisons_to_P, scores_to_matrix
    from ranking import pairwise_accuracy

    comp = pick(ds.comparisons, "judge", judge, f"{ds.name} comparisons")
    comp = pick(comp, "attribute", attribute, f"{ds.name} comparisons")
    names = reference_annotators(ds, annotators)
    rows = []
    for (jname, attr), g in comp.groupby(["judge", "attribute"], sort=True, observed=True):
        pm = comparisons_to_P(g, attribute=attr, judge=jname, candidates=ds.candidates)
        ref = scores_to_matrix(ds.human_scores, pm, attribute=attr, annotators=names)
        acc = pairwise_accuracy(pm.P, ref, tau=tau)  # NaN with the reason when undefined
        rows.append(
            dict(
                judge=jname,
                attribute=attr,
                tau=tau,
                n_contexts=len(pm.context_ids),
                accuracy=float(acc),
                reason=acc.reason,
            )
        )
    return table_frame(rows, ACCURACY_COLUMNS)
