"""P arrays and the human reference of one attribute and judge.

Shared by every page on pairwise comparisons (Rankings, Position bias, Comparison budgets,
Prompt sensitivity): which attributes and judges to offer, the comparison rows of a choice,
their P array (``data.arrays.comparisons_to_P``) and the human scores laid out beside it.

:func:`pmatrix` and :func:`human_reference` are shared read-only through
``st.cache_resource`` (the threshold slider reads them on every update); the human scores of
any other layout of P come from :func:`reference_for`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from data.arrays import PMatrix, comparisons_to_P, scores_to_matrix
from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset
from pages.services.common import cache_data, cache_resource
from ranking import win_ratio

#: Judge label of every human annotator's comparisons taken together.
HUMAN_POOL = "human annotators (pooled)"
#: Individual human judges are offered one by one only up to this many (LLMFAO has 124).
MAX_LISTED_HUMANS = 10


@cache_data(show_spinner=False, max_entries=64)
def comparison_attributes(ds: Dataset) -> list[str]:
    """Attributes that have at least one comparison with a parsed probability, sorted."""
    comps = ds.comparisons
    if not len(comps):
        return []
    ok = comps["p_first"].notna()
    return sorted(comps.loc[ok, "attribute"].astype(str).unique())


@cache_data(show_spinner=False, max_entries=64)
def judge_options(ds: Dataset, attribute: str) -> list[str]:
    """Judges to offer for ``attribute``: model judges, then the human pool, then humans.

    Several human annotators (judges named ``human:...``) are offered together as
    ``HUMAN_POOL``; one by one too when there are at most ``MAX_LISTED_HUMANS``.
    """
    comps = ds.comparisons
    if not len(comps):
        return []
    judges = comps.loc[comps["attribute"].astype(str) == attribute, "judge"].astype(str).unique()
    humans = sorted(j for j in judges if j.startswith(HUMAN_JUDGE_PREFIX))
    models = sorted(j for j in judges if not j.startswith(HUMAN_JUDGE_PREFIX))
    if len(humans) <= 1:
        return models + humans
    return models + [HUMAN_POOL] + (humans if len(humans) <= MAX_LISTED_HUMANS else [])


def select_comparisons(ds: Dataset, attribute: str, judge: str) -> pd.DataFrame:
    """Comparison rows of one attribute and judge (``HUMAN_POOL``: all human judges, relabelled).

    Raises
    ------
    DataError
        When nothing is selected.
    """
    comps = ds.comparisons
    if not len(comps):
        raise DataError(f"{ds.name}: the dataset has no pairwise comparisons")
    rows = comps[comps["attribute"].astype(str) == attribute]
    names = rows["judge"].astype(str)
    if judge == HUMAN_POOL:
        rows = rows[names.str.startswith(HUMAN_JUDGE_PREFIX)].assign(judge=HUMAN_POOL)
    else:
        rows = rows[names == judge]
    if not len(rows):
        raise DataError(f"{ds.name}: no comparisons for attribute {attribute!r} by judge {judge!r}")
    return rows


@cache_resource(show_spinner=False, max_entries=32)
def pmatrix(ds: Dataset, attribute: str, judge: str) -> PMatrix:
    """P of one attribute and judge (candidates per context: the compared ones, sorted).

    Read-only and shared (``st.cache_resource``): no copy per call.

    Comparisons whose answer could not be parsed (p_first NaN) are left out first, so no
    context is left without a comparison (the contexts of P are the ones with a parsed answer).
    """
    rows = select_comparisons(ds, attribute, judge)
    rows = rows[rows["p_first"].notna()]
    if not len(rows):
        raise DataError(
            f"{ds.name}: every comparison for attribute {attribute!r} by judge {judge!r} is "
            "unparsed (p_first missing); see the raw answers on the Judge page"
        )
    pm = comparisons_to_P(rows, attribute=attribute, judge=judge)
    # Shared through st.cache_resource: nobody may change it in place.
    pm.P.setflags(write=False)
    pm.counts.setflags(write=False)
    if pm.weights is not None:
        pm.weights.setflags(write=False)
    return pm


@dataclass(frozen=True)
class Reference:
    """Human reference scores laid out like a :class:`PMatrix`.

    Attributes
    ----------
    scores : ndarray, shape (n_contexts, N_max)
        Higher is better; NaN where a candidate has no reference.
    source : str
        One line saying where the scores come from (shown on the pages).
    same_as_judge : bool
        The reference is built from the very comparisons being ranked (the human pool
        ranked against itself): agreement is then trivially high.
    """

    scores: np.ndarray
    source: str
    same_as_judge: bool = False


def score_source(annotators: list[str]) -> str:
    """What a reference built from human scores is, for the pages.

    One annotator whose name says it is a mean (SummEval's ``expert_mean``: the mean of 3
    experts, stored pre-averaged) is not "1 annotator".
    """
    if len(annotators) == 1:
        name = annotators[0]
        if "mean" in name.lower() or "avg" in name.lower():
            return f"human score {name!r} (already a mean over annotators)"
        return f"human score of annotator {name!r}"
    return f"mean human score over {len(annotators)} annotators"


def reference_for(ds: Dataset, attribute: str, pm: PMatrix) -> Reference | None:
    """Human reference for the candidates of ``pm`` (any layout), or None when there is none.

    Mean human score over annotators when ``human_scores`` rate ``attribute``; otherwise the
    win-ratio at tau = 0.5 (``ranking.scores.win_ratio``, each verdict with its weight) of
    the pooled human verdicts in the comparisons (judges ``human:...``), leaving out the
    selected human judge itself.
    """
    hs = ds.human_scores
    if len(hs) and attribute in set(hs["attribute"].astype(str)):
        scores = scores_to_matrix(hs, pm, attribute=attribute)
        if np.isfinite(scores).sum() >= 2:
            names = hs.loc[hs["attribute"].astype(str) == attribute, "annotator"].astype(str)
            scores.setflags(write=False)
            return Reference(scores, score_source(sorted(names.unique())))

    comps = ds.comparisons
    if not len(comps):
        return None
    rows = comps[comps["attribute"].astype(str) == attribute]
    names = rows["judge"].astype(str)
    human = names.str.startswith(HUMAN_JUDGE_PREFIX)
    if pm.judge is not None and pm.judge.startswith(HUMAN_JUDGE_PREFIX):
        human &= names != pm.judge  # an annotator is compared with the others
    rows = rows[human & rows["p_first"].notna()]
    # keep only pairs inside the layout of pm
    layout = {ctx: set(cands) for ctx, cands in zip(pm.context_ids, pm.candidate_ids, strict=True)}
    inside = [
        ctx in layout and a in layout[ctx] and b in layout[ctx]
        for ctx, a, b in zip(
            rows["context_id"].astype(str),
            rows["first_id"].astype(str),
            rows["second_id"].astype(str),
            strict=True,
        )
    ]
    rows = rows[np.asarray(inside, dtype=bool)]
    if not len(rows):
        return None
    n_ann = rows["judge"].nunique()
    order = dict(zip(pm.context_ids, pm.candidate_ids, strict=True))
    hp = comparisons_to_P(
        rows.assign(judge=HUMAN_POOL), attribute=attribute, judge=HUMAN_POOL, candidates=order
    )
    scores = np.full(pm.P.shape[:2], np.nan)
    where = {ctx: c for c, ctx in enumerate(pm.context_ids)}
    rows_idx = [where[ctx] for ctx in hp.context_ids]
    scores[rows_idx, : hp.P.shape[1]] = win_ratio(hp.P, tau=0.5, weights=hp.weights)
    scores.setflags(write=False)
    return Reference(
        scores,
        f"win-ratio of the pooled verdicts of {n_ann} human annotator(s)",
        same_as_judge=pm.judge == HUMAN_POOL,
    )


@cache_resource(show_spinner=False, max_entries=32)
def human_reference(ds: Dataset, attribute: str, judge: str) -> Reference | None:
    """Human reference laid out like ``pmatrix(ds, attribute, judge)`` (read-only, shared);
    None when the dataset has none (see :func:`reference_for`)."""
    return reference_for(ds, attribute, pmatrix(ds, attribute, judge))
