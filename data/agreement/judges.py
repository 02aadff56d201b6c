"""The judges themselves: self-consistency across samples, pairwise accuracy against the
human reference, and agreement of pairwise verdicts with the human annotators' verdicts."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ranking as rk
from data.agreement._tables import ITEM, pick, table_frame, wide
from data.agreement.reference import reference_annotators, select_ratings
from data.schema import HUMAN_JUDGE_PREFIX, Dataset

#: Columns of :func:`self_consistency_table`, in order.
CONSISTENCY_COLUMNS = (
    "judge prompt_id attribute n_items n_samples icc2k icc2k_lower icc2k_upper icc2k_items "
    "share_identical n_nan reason"
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
        sample numbers), icc2k (ICC2k with the samples as raters), icc2k_lower,
        icc2k_upper, icc2k_items (items with every sample parsed), share_identical, n_nan
        (samples missing or unparsed), reason. A judge with one sample per item gets NaN
        with the reason.

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
        rows.append(
            {
                **base,
                "icc2k": res.icc.value,
                "icc2k_lower": res.icc.lower,
                "icc2k_upper": res.icc.upper,
                "icc2k_items": res.n_items_icc,
                "share_identical": res.share_identical,
                "n_nan": res.n_nan_samples,
                "reason": res.reason,
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
        :data:`ACCURACY_COLUMNS`: judge, attribute, tau, accuracy (``ranking.metrics
        .pairwise_accuracy``: over the pairs whose human scores differ), n_contexts, reason
        (why the accuracy is NaN, e.g. no pair whose human scores differ).

    Raises
    ------
    DataError
        No reference annotators, or a chosen name that does not appear.
    """
    from data.arrays import comparisons_to_P, scores_to_matrix
    from ranking.metrics import pairwise_accuracy

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


def _verdict_labels(comps: pd.DataFrame) -> np.ndarray:
    """A / B / tie per comparison row: the verdict, else read from p_first; None if neither."""
    p = comps["p_first"].to_numpy(dtype=np.float64)
    from_p = np.where(p > 0.5, "A", np.where(p < 0.5, "B", "tie")).astype(object)
    from_p[~np.isfinite(p)] = None
    if "verdict" in comps.columns:
        v = comps["verdict"].astype(object).to_numpy()
        given = np.array([isinstance(x, str) and x in ("A", "B", "tie") for x in v])
        from_p[given] = v[given]
    return from_p


def verdict_agreement_table(ds: Dataset) -> pd.DataFrame:
    """Agreement of every pairwise judge with every human annotator's verdicts (PandaLM).

    Human verdicts are comparisons by judges named ``human:...``. Verdicts (A / B / tie, or
    p_first read as A above 0.5, B below, tie at 0.5) are matched on context, pair order,
    attribute and sample. The annotator "human majority" (when there are several humans) is
    the most common human verdict of a pair; pairs without a single most common verdict
    are left out.

    Parameters
    ----------
    ds : Dataset
        Its comparisons, the human verdicts among them.

    Returns
    -------
    pandas.DataFrame
        One row per (judge, annotator), human annotators compared with each other too:
        judge, annotator, n_pairs, agreement (share of identical verdicts), cohen_kappa
        (``ranking.reliability.cohen_kappa``), is_human, reason (why a value is NaN). Empty
        when the dataset has no human verdicts.
    """
    comps = ds.comparisons
    if not len(comps):
        return pd.DataFrame()
    names = comps["judge"].astype(str)
    human = names.str.startswith(HUMAN_JUDGE_PREFIX)
    if not human.any():
        return pd.DataFrame()
    keys = ["context_id", "attribute", "first_id", "second_id", "sample"]
    lab = comps[keys + ["judge"]].astype({k: str for k in keys[:4]}).copy()
    lab["label"] = _verdict_labels(comps)
    humans = sorted(names[human].unique())
    models = sorted(names[~human].unique())
    by_judge = {j: g.drop(columns="judge").drop_duplicates(keys) for j, g in lab.groupby("judge")}
    hv = lab[human.to_numpy()].dropna(subset=["label"])
    counts = hv.groupby(keys + ["label"], observed=True).size().rename("n").reset_index()
    top = counts.sort_values("n", ascending=False).groupby(keys, observed=True)
    best = top.head(1).set_index(keys)
    second = top.nth(1).set_index(keys)["n"] if len(counts) else pd.Series(dtype=float)
    tie = best["n"].reindex(best.index).eq(second.reindex(best.index)).fillna(False)
    majority = best[~tie.to_numpy()].reset_index()[keys + ["label"]]
    refs = {h: by_judge[h] for h in humans}
    if len(humans) > 1:
        refs["human majority"] = majority
    rows = []
    for j in models + humans:
        for h, ref in refs.items():
            if j == h:
                continue
            both = by_judge[j].merge(ref, on=keys, suffixes=("_j", "_h"))
            both = both.dropna(subset=["label_j", "label_h"])
            row = dict(judge=j, annotator=h, n_pairs=len(both), reason="")
            if not len(both):
                rows.append(
                    {
                        **row,
                        "agreement": np.nan,
                        "cohen_kappa": np.nan,
                        "reason": "no pair judged by both",
                    }
                )
                continue
            row["agreement"] = float((both["label_j"] == both["label_h"]).mean())
            kappa = rk.cohen_kappa(
                both["label_j"].to_numpy(object), both["label_h"].to_numpy(object)
            )
            row.update(cohen_kappa=kappa.value, reason=kappa.reason)
            rows.append(row)
    out = pd.DataFrame(rows)
    out["is_human"] = out["judge"].str.startswith(HUMAN_JUDGE_PREFIX)
    return out.reindex(
        columns=["judge", "annotator", "n_pairs", "agreement", "cohen_kappa", "is_human", "reason"]
    )
