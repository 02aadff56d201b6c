"""The human reference of a judge's P by integer lookups (``human_scores_for``'s values).

``data.comparative.human_scores_for`` lays the human reference out like a PMatrix through
string merges (``scores_to_matrix``) or a per-row Python test and a second
``comparisons_to_P`` (pooled human verdicts). :func:`human_reference` gives the same arrays,
float for float, by looking each human row up once in the P's (context, candidate) layout
(one ``MultiIndex.get_indexer``) and averaging with ``np.bincount`` over the same rows in the
same order; anything it does not handle the same way (a self-comparison, a layout without
candidates) goes to ``human_scores_for`` itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import ranking as rk
from data.agreement import reference_annotators
from data.arrays import PMatrix
from data.comparative import human_scores_for
from data.schema import HUMAN_JUDGE_PREFIX, Dataset

__all__ = ["human_reference"]


def _layout(pm: PMatrix):
    """(MultiIndex of (context, candidate) over the layout, context row, position) flat."""
    sizes = np.array([len(c) for c in pm.candidate_ids], dtype=np.int64)
    ctx = np.repeat(np.asarray(pm.context_ids, dtype=object), sizes)
    cand = np.asarray([str(x) for ids in pm.candidate_ids for x in ids], dtype=object)
    row = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    pos = np.arange(sizes.sum(), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return pd.MultiIndex.from_arrays([ctx.astype(str), cand.astype(str)]), row, pos


def _cells(keys: pd.MultiIndex, context_ids, candidate_ids) -> np.ndarray:
    probe = pd.MultiIndex.from_arrays(
        [pd.Series(context_ids).astype(str), pd.Series(candidate_ids).astype(str)]
    )
    return keys.get_indexer(probe).astype(np.int64)


def human_reference(ds: Dataset, attribute: str, pm: PMatrix) -> tuple[np.ndarray | None, str]:
    """Human reference scores laid out like ``pm`` (``human_scores_for(ds, attribute, pm)``).

    Parameters
    ----------
    ds : Dataset
        Its human scores, else its human comparisons (judges ``human:...``).
    attribute : str
        The attribute.
    pm : PMatrix
        The layout (its judge, when human, is left out of the pooled human verdicts).

    Returns
    -------
    (ndarray of shape (n_contexts, N_max) or None, str)
        Exactly what ``data.comparative.human_scores_for`` returns with the default
        annotators: the mean human score per candidate of the only annotator group, else
        the win-ratio of the pooled human verdicts per context; NaN where missing; None and
        the reason when there is no human reference.

    Raises
    ------
    DataError
        Several annotator groups in the human scores (as ``human_scores_for``).
    """
    attribute = str(attribute)
    hs = ds.human_scores
    if not sum(len(c) for c in pm.candidate_ids) or {"judge", "prompt_id"} & set(hs.columns):
        # nothing to look up, or scores_to_matrix's one-judge / one-prompt checks apply
        return human_scores_for(ds, attribute, pm)
    keys, row, pos = _layout(pm)
    n_ctx, n_max = pm.P.shape[:2]
    of_attribute = hs["attribute"].astype(str) == attribute if len(hs) else None
    if of_attribute is not None and of_attribute.any():  # no per-element iteration
        names = reference_annotators(ds, None)
        sel = hs[of_attribute]
        known = set(sel["annotator"].astype(str).unique())
        if any(a not in known for a in names):  # the message of scores_to_matrix
            return human_scores_for(ds, attribute, pm)
        sel = sel[sel["annotator"].astype(str).isin(names)]
        at = _cells(keys, sel["context_id"], sel["candidate_id"])
        vals = pd.to_numeric(sel["score"], errors="coerce").to_numpy(dtype=np.float64)
        keep = (at >= 0) & np.isfinite(vals)
        flat = row[at[keep]] * n_max + pos[at[keep]]
        sums = np.bincount(flat, weights=vals[keep], minlength=n_ctx * n_max)
        counts = np.bincount(flat, minlength=n_ctx * n_max)
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        scores = scores.reshape(n_ctx, n_max)
        if np.isfinite(scores).sum() >= 2:
            who = names[0] if len(names) == 1 else f"{len(names)} annotators"
            return scores, f"mean human score ({who})"
    return _pooled_verdicts(ds, attribute, pm, keys, row, pos)


def _pooled_verdicts(ds, attribute, pm, keys, row, pos):
    comps = ds.comparisons
    none = None, f"no human scores or human verdicts for attribute {attribute!r}"
    if not len(comps):
        return none
    names = comps["judge"].astype(str)
    keep = (
        names.str.startswith(HUMAN_JUDGE_PREFIX)
        & (names != str(pm.judge))
        & (comps["attribute"].astype(str) == attribute)
        & comps["p_first"].notna()
    )
    rows = comps[keep]
    if not len(rows):
        return none
    first = _cells(keys, rows["context_id"], rows["first_id"])
    second = _cells(keys, rows["context_id"], rows["second_id"])
    inside = (first >= 0) & (second >= 0)
    if (inside & (first == second)).any():  # comparisons_to_P refuses it: say it as it does
        return human_scores_for(ds, attribute, pm)
    first, second = first[inside], second[inside]
    if not len(first):
        return none
    n_ann = rows.loc[inside, "judge"].nunique()
    p = rows.loc[inside, "p_first"].to_numpy(dtype=np.float64)
    # comparisons_to_P over these rows with the layout as candidates: the contexts with a
    # row, in layout order, padded to their own widest context
    present = np.unique(row[first])
    n_sub = int(max(len(pm.candidate_ids[c]) for c in present))
    sub = np.full(len(pm.context_ids), -1, dtype=np.int64)
    sub[present] = np.arange(len(present))
    c = sub[row[first]]
    flat = (c * n_sub + pos[first]) * n_sub + pos[second]
    valid = np.isfinite(p)
    size = len(present) * n_sub * n_sub
    sums = np.bincount(flat[valid], weights=p[valid], minlength=size)
    counts = np.bincount(flat[valid], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        P = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    scores = np.full(pm.P.shape[:2], np.nan)
    scores[present, :n_sub] = rk.win_ratio(P.reshape(len(present), n_sub, n_sub), tau=0.5)
    return scores, f"win-ratio of the pooled verdicts of {n_ann} human annotator(s)"
