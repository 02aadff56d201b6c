"""The Examples page's tables: every compared pair of one attribute and judge, cached.

The pair table is ``data.comparative.examples.pair_table`` on the comparison rows the other pairwise
pages use (``comparisons.select_comparisons``), with the human reference the Rankings page
ranks against (``comparisons.reference_for``: mean human score, else the pooled human
verdicts), laid out over every compared candidate, unparsed contexts included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from data.arrays import comparisons_to_P
from data.comparative.examples import oriented, pair_samples, pair_table, search_pairs
from data.schema import HUMAN_JUDGE_PREFIX, Dataset
from pages.services import comparisons
from pages.services.calibration import debiased_outcomes
from pages.services.common import cache_data

#: The rule of the debias setting that decides the probabilities as they are (at 0.5).
SOFT = ("soft", None)
#: The pair table's columns that come from decisions: they follow the debias setting.
DECIDED = ("decision_a_first", "decision_a_second", "flips", "judge_pick", "disagrees")


@dataclass(frozen=True)
class Pairs:
    """The pairs of one attribute and judge and where their human preference comes from.

    Attributes
    ----------
    table : pandas.DataFrame
        ``data.comparative.examples.pair_table``.
    human_source : str or None
        One line naming the human reference; None when the dataset has none.
    same_as_judge : bool
        The reference is made of the judge's own verdicts (the pooled humans).
    both_orders : bool
        Some pair was asked in both orders (else "flips" cannot be told).
    """

    table: pd.DataFrame
    human_source: str | None
    same_as_judge: bool
    both_orders: bool


def _reference(ds: Dataset, attribute: str, judge: str, rows: pd.DataFrame):
    """(context_id, candidate_id, score) table of the human reference, and the Reference."""
    layout = comparisons_to_P(rows, attribute=attribute, judge=judge)
    ref = comparisons.reference_for(ds, attribute, layout)
    if ref is None:
        return None, None
    ctx = np.repeat(layout.context_ids, [len(c) for c in layout.candidate_ids])
    cand = [x for c in layout.candidate_ids for x in c]
    n = layout.n_candidates
    mask = np.arange(ref.scores.shape[1])[None, :] < n[:, None]
    table = pd.DataFrame({"context_id": ctx, "candidate_id": cand, "score": ref.scores[mask]})
    return table, ref


@cache_data(show_spinner="Listing the comparisons…", max_entries=32)
def pairs(ds: Dataset, attribute: str, judge: str, rule: tuple = SOFT) -> Pairs:
    """Every compared pair of ``attribute`` by ``judge`` with its human preference.

    The probabilities are the judge's own; the decisions (each order's winner, flips, the
    judge's pick and its disagreement with the humans) follow ``rule``, the debias setting's
    rule (``pages.services.calibration.Debias.rule``) as every other page applies it.

    Raises
    ------
    DataError
        No comparison of that attribute and judge.
    """
    rows = comparisons.select_comparisons(ds, attribute, judge)
    reference, ref = _reference(ds, attribute, judge, rows)
    table = pair_table(rows, reference)
    if tuple(rule) != SOFT:  # same pairs in the same order: only the decisions change
        decided = pair_table(debiased_outcomes(ds, attribute, judge, rows, tuple(rule)), reference)
        for col in DECIDED:
            table[col] = decided[col].to_numpy()
    if ref is not None and ref.same_as_judge:
        # the pooled humans judged against themselves: no disagreement to tell
        table["disagrees"] = pd.array([pd.NA] * len(table), dtype="boolean")
    o = oriented(rows)
    both = bool(len(o)) and bool(
        o.groupby(["context_id", "a", "b"], sort=False)["a_first"].nunique().max() > 1
    )
    return Pairs(
        table=table,
        human_source=None if ref is None else ref.source,
        same_as_judge=bool(ref is not None and ref.same_as_judge),
        both_orders=both,
    )


@cache_data(show_spinner=False, max_entries=64)
def search(ds: Dataset, attribute: str, judge: str, query: str) -> np.ndarray:
    """Which pairs of :func:`pairs` mention ``query`` (texts, ids, raw answers)."""
    rows = comparisons.select_comparisons(ds, attribute, judge)
    return search_pairs(
        pairs(ds, attribute, judge).table,
        query,
        rows=rows,
        contexts=ds.contexts,
        candidates=ds.candidates,
    )


def texts(ds: Dataset, context_id: str, candidate_ids) -> tuple[str | None, dict[str, str | None]]:
    """The context's text and each candidate's text (None: not in the dataset or blank)."""

    def clean(value) -> str | None:
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return None
        value = str(value)
        return value if value.strip() else None

    context_text = None
    if len(ds.contexts):
        hit = ds.contexts.loc[ds.contexts["context_id"].astype(str) == str(context_id), "text"]
        context_text = clean(hit.iloc[0]) if len(hit) else None
    cands = ds.candidates
    found: dict[str, str | None] = {}
    sel = cands[cands["context_id"].astype(str) == str(context_id)] if len(cands) else cands
    by_id = dict(zip(sel["candidate_id"].astype(str), sel["text"], strict=True)) if len(sel) else {}
    for cid in candidate_ids:
        found[str(cid)] = clean(by_id.get(str(cid)))
    return context_text, found


def systems(ds: Dataset, context_id: str, candidate_ids) -> dict[str, str | None]:
    """The system of each candidate of one context (None where the dataset names none)."""
    cands = ds.candidates
    if not len(cands) or "system" not in cands:
        return {str(c): None for c in candidate_ids}
    sel = cands[cands["context_id"].astype(str) == str(context_id)]
    by_id = dict(zip(sel["candidate_id"].astype(str), sel["system"], strict=True))
    out = {}
    for cid in candidate_ids:
        value = by_id.get(str(cid))
        out[str(cid)] = None if value is None or pd.isna(value) else str(value)
    return out


def answers(ds: Dataset, attribute: str, judge: str, context_id: str, a: str, b: str):
    """Every answer about one pair (``data.comparative.examples.pair_samples``); the pooled humans keep
    each annotator's name."""
    rows = comparisons.select_comparisons(ds, attribute, judge)
    if judge == comparisons.HUMAN_POOL:
        rows = ds.comparisons.loc[rows.index]  # the same rows, judge = the annotator
    return pair_samples(rows, context_id, a, b)


def human_verdicts(ds: Dataset, attribute: str, context_id: str, a: str, b: str):
    """The human annotators' own verdicts on one pair (judges ``human:...``), every order."""
    comps = ds.comparisons
    if not len(comps):
        return pair_samples(comps, context_id, a, b)
    names = comps["judge"].astype(str)
    rows = comps[
        (comps["attribute"].astype(str) == attribute) & names.str.startswith(HUMAN_JUDGE_PREFIX)
    ]
    return pair_samples(rows, context_id, a, b)
