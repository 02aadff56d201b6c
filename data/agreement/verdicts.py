"""Pairwise verdicts against the human annotators' verdicts (PandaLM, LLMFAO).

Human verdicts are comparisons by judges named ``human:...``. Verdicts (A / B / tie, or
p_first read as A above 0.5, B below, tie at 0.5) are matched on context, pair order,
attribute and sample. Every statistic is computed for all (judge, annotator) pairs at once
from grouped counts, so a crowd of hundreds of workers (LLMFAO: 123) costs one merge, not one
merge per pair of workers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from data.natural import natural_key
from data.schema import HUMAN_JUDGE_PREFIX, Dataset

#: The three verdicts, in this order in every count array.
LABELS = ("A", "B", "tie")
_KEYS = ["context_id", "attribute", "first_id", "second_id", "sample"]
#: Columns of :func:`verdict_agreement_table`, in order.
AGREEMENT_COLUMNS = [
    "judge",
    "annotator",
    "n_pairs",
    "agreement",
    "cohen_kappa",
    "is_human",
    "reason",
]
#: Columns of :func:`annotator_summary_table`, in order.
SUMMARY_COLUMNS = ["annotator", "n_verdicts", "n_pairs", "agreement", "cohen_kappa", "reason"]
MAJORITY = "human majority"


def verdict_labels(comps: pd.DataFrame) -> np.ndarray:
    """A / B / tie per comparison row: the verdict, else read from p_first; None if neither."""
    p = comps["p_first"].to_numpy(dtype=np.float64)
    from_p = np.where(p > 0.5, "A", np.where(p < 0.5, "B", "tie")).astype(object)
    from_p[~np.isfinite(p)] = None
    if "verdict" in comps.columns:
        v = comps["verdict"].astype(object).to_numpy()
        given = np.array([isinstance(x, str) and x in LABELS for x in v], dtype=bool)
        from_p[given] = v[given]
    return from_p


def _labelled(comps: pd.DataFrame) -> pd.DataFrame:
    """keys + judge + code (0, 1, 2 for A, B, tie), one row per judge and key, unparsed dropped.

    Keys are strings (ids may mix types across uploads); the first row of a duplicated
    (judge, key) is kept.
    """
    lab = comps[_KEYS + ["judge"]].astype({k: str for k in _KEYS[:4]} | {"judge": str})
    labels = pd.Series(verdict_labels(comps), index=comps.index)
    lab = lab.assign(code=labels.map({k: i for i, k in enumerate(LABELS)}))
    lab = lab.drop_duplicates(_KEYS + ["judge"])
    lab = lab.dropna(subset=["code"])
    return lab.astype({"code": np.int64})


def _majority(human: pd.DataFrame) -> pd.DataFrame:
    """keys + code of the single most common human verdict per key (ties between verdicts:
    no row)."""
    counts = pd.crosstab([human[k] for k in _KEYS], human["code"]).reindex(
        columns=range(len(LABELS)), fill_value=0
    )
    arr = counts.to_numpy()
    top = arr.max(axis=1)
    unique = (arr == top[:, None]).sum(axis=1) == 1
    out = counts.index.to_frame(index=False)[unique]
    return out.assign(code=arr.argmax(axis=1)[unique].astype(np.int64))


def _kappa_frame(pairs: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """n_pairs, agreement and Cohen's kappa per ``by`` group of matched verdicts.

    ``pairs`` has integer columns ``code_j`` and ``code_h``. Kappa is
    ``(p_o - p_e) / (1 - p_e)`` from the two raters' verdict shares, the value of
    :func:`ranking.agreement.cohen_kappa` (unweighted) on the same pairs; NaN with the
    reason when fewer than 2 pairs match or both raters used one and the same verdict.
    """
    n_lab = len(LABELS)
    g = pairs.groupby(by, sort=False, observed=True)
    n = g.size()
    agree = (pairs["code_j"] == pairs["code_h"]).groupby([pairs[b] for b in by], sort=False).sum()
    share_j = pd.crosstab([pairs[b] for b in by], pairs["code_j"]).reindex(
        index=n.index, columns=range(n_lab), fill_value=0
    )
    share_h = pd.crosstab([pairs[b] for b in by], pairs["code_h"]).reindex(
        index=n.index, columns=range(n_lab), fill_value=0
    )
    nn = n.to_numpy(dtype=np.float64)
    sj = share_j.to_numpy(dtype=np.float64) / nn[:, None]
    sh = share_h.to_numpy(dtype=np.float64) / nn[:, None]
    po = agree.reindex(n.index).to_numpy(dtype=np.float64) / nn
    expected_disagreement = 1.0 - (sj * sh).sum(axis=1)
    single = expected_disagreement <= 0.0
    few = nn < 2
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = 1.0 - (1.0 - po) / expected_disagreement
    kappa[single | few] = np.nan
    only = np.asarray(LABELS, dtype=object)[sj.argmax(axis=1)]
    reason = np.where(
        few,
        [f"Cohen's kappa needs at least 2 items rated by both; got {int(k)}" for k in nn],
        np.where(
            single,
            [
                f"Cohen's kappa is undefined: both raters used the single category {c!r} throughout"
                for c in only
            ],
            "",
        ),
    )
    out = n.index.to_frame(index=False)
    return out.assign(n_pairs=n.to_numpy(), agreement=po, cohen_kappa=kappa, reason=reason)


def verdict_agreement_table(ds: Dataset) -> pd.DataFrame:
    """Agreement of every pairwise judge with every human annotator's verdicts.

    The annotator "human majority" (when there are several humans) is the most common human
    verdict of a pair; pairs without a single most common verdict are left out.

    Parameters
    ----------
    ds : Dataset
        Its comparisons, the human verdicts among them.

    Returns
    -------
    pandas.DataFrame
        One row per (judge, annotator), human annotators compared with each other too:
        judge, annotator, n_pairs, agreement (share of identical verdicts), cohen_kappa
        (as ``ranking.agreement.cohen_kappa``), is_human, reason (why a value is NaN,
        e.g. "no pair judged by both"). Judges: models then humans, each in natural order
        (worker2 before worker10); annotators likewise, the majority last. Empty when the dataset has no human verdicts.
    """
    comps = ds.comparisons
    if not len(comps):
        return pd.DataFrame()
    names = comps["judge"].astype(str)
    is_human = names.str.startswith(HUMAN_JUDGE_PREFIX)
    if not is_human.any():
        return pd.DataFrame()
    humans = sorted(names[is_human].unique(), key=natural_key)
    models = sorted(names[~is_human].unique(), key=natural_key)
    lab = _labelled(comps)
    human = lab[lab["judge"].str.startswith(HUMAN_JUDGE_PREFIX)]
    refs = human.rename(columns={"judge": "annotator"})
    annotators = list(humans)
    if len(humans) > 1:
        refs = pd.concat([refs, _majority(human).assign(annotator=MAJORITY)], ignore_index=True)
        annotators.append(MAJORITY)
    pairs = lab.merge(refs, on=_KEYS, suffixes=("_j", "_h"))
    pairs = pairs[pairs["judge"] != pairs["annotator"]]
    stats = _kappa_frame(pairs, ["judge", "annotator"]) if len(pairs) else None
    grid = pd.MultiIndex.from_product([models + humans, annotators], names=["judge", "annotator"])
    grid = grid[grid.get_level_values(0) != grid.get_level_values(1)]
    out = grid.to_frame(index=False)
    if stats is not None:
        out = out.merge(stats, on=["judge", "annotator"], how="left")
    else:
        out = out.assign(n_pairs=0, agreement=np.nan, cohen_kappa=np.nan, reason="")
    missing = out["n_pairs"].isna() | (out["n_pairs"] == 0)
    out["n_pairs"] = out["n_pairs"].fillna(0).astype(np.int64)
    out.loc[missing, "reason"] = "no pair judged by both"
    out["reason"] = out["reason"].fillna("").astype(str)
    out["is_human"] = out["judge"].str.startswith(HUMAN_JUDGE_PREFIX)
    return out.reindex(columns=AGREEMENT_COLUMNS)


def annotator_summary_table(ds: Dataset) -> pd.DataFrame:
    """Each human annotator's verdicts against the majority of the *other* annotators.

    For a crowd too large for an annotator × annotator matrix: per annotator, how many
    verdicts it gave, on how many of them the other annotators have a single most common
    verdict (``n_pairs``), the share it matches (``agreement``) and Cohen's kappa with that
    leave-one-out majority.

    Parameters
    ----------
    ds : Dataset
        Its comparisons; the human verdicts (judges named ``human:...``) are used.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SUMMARY_COLUMNS`, one row per annotator (natural order); NaN with a
        reason where no verdict of the annotator was also given by others. Empty without
        human verdicts.
    """
    comps = ds.comparisons
    if not len(comps):
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    lab = _labelled(comps)
    human = lab[lab["judge"].str.startswith(HUMAN_JUDGE_PREFIX)]
    if not len(human):
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    counts = pd.crosstab([human[k] for k in _KEYS], human["code"]).reindex(
        columns=range(len(LABELS)), fill_value=0
    )
    idx = pd.MultiIndex.from_frame(human[_KEYS])
    others = counts.reindex(idx).to_numpy().copy()
    others[np.arange(len(human)), human["code"].to_numpy()] -= 1
    top = others.max(axis=1)
    unique = (top > 0) & ((others == top[:, None]).sum(axis=1) == 1)
    pairs = pd.DataFrame(
        {
            "annotator": human["judge"].to_numpy()[unique],
            "code_j": human["code"].to_numpy()[unique],
            "code_h": others.argmax(axis=1)[unique],
        }
    )
    n_verdicts = human.groupby("judge").size()
    out = pd.DataFrame({"annotator": n_verdicts.index, "n_verdicts": n_verdicts.to_numpy()})
    if len(pairs):
        out = out.merge(_kappa_frame(pairs, ["annotator"]), on="annotator", how="left")
    else:
        out = out.assign(n_pairs=0, agreement=np.nan, cohen_kappa=np.nan, reason="")
    missing = out["n_pairs"].isna()
    out["n_pairs"] = out["n_pairs"].fillna(0).astype(np.int64)
    out.loc[missing, "reason"] = "no verdict of this annotator has a majority among the others"
    out["reason"] = out["reason"].fillna("").astype(str)
    out = out.sort_values("annotator", key=lambda s: s.map(natural_key), ignore_index=True)
    return out.reindex(columns=SUMMARY_COLUMNS)
