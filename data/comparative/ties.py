"""Tie models against "a tie is half a win": systems ranked three ways from one judge's verdicts.

Bradley–Terry with a tie counted as half a win for each side (the plain model), the Davidson
(1970) and the Rao–Kupper (1967) tie models (``ranking.bradley_terry(ties=...)``), fitted on
the same flat comparisons the systems ranking uses (``data.flat.flat_comparisons``). A
comparison is a tie when its p_first is 0.5 (a "tie" verdict); other outcomes count as they
are (1 / 0, or a soft probability of the first winning).

The three log-likelihoods are comparable: the half-win model is read as the Davidson model with
nu = 2 and doubled scores, whose likelihood is the half-win likelihood (P(win) = p^2,
P(tie) = 2 p (1 - p), ``ranking.tie_model_fit``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from data.flat import flat_comparisons
from data.natural import natural_key
from data.schema import DataError
from ranking import bradley_terry, competition_ranks, kendall, tie_model_fit

__all__ = ["MODEL_LABELS", "TieModels", "tie_models"]

#: summary ``model`` label -> ``table`` score column
MODEL_LABELS = {"half-win": "half_win", "Davidson": "davidson", "Rao–Kupper": "rao_kupper"}
_TIES = {"half-win": None, "Davidson": "davidson", "Rao–Kupper": "rao-kupper"}


@dataclass(frozen=True)
class TieModels:
    """Systems scored by three treatments of ties.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per system, best half-win score first (equal scores in natural order):
        ``system``, ``half_win``, ``davidson``, ``rao_kupper`` (Bradley–Terry scores,
        log-strengths centred to mean 0), ``rank_half_win``, ``rank_davidson``,
        ``rank_rao_kupper`` (1 = best, equal scores share), ``n_comparisons``, ``n_ties``.
    summary : pandas.DataFrame
        One row per model (``model``: "half-win", "Davidson", "Rao–Kupper"): ``tie_param``
        (Davidson's nu, Rao–Kupper's theta; NaN for half-win), ``tie_low``, ``tie_high`` (its
        95 % Fisher interval), ``observed_tie_rate``, ``predicted_tie_rate`` (mean model
        probability of a tie over the comparisons), ``log_lik`` (three-outcome
        log-likelihood), ``kendall_vs_half_win`` (Kendall tau-b of the system scores).
    notes : list of str
        The fits' notes (boundary, components, fallback prior), each once.
    n_comparisons : int
        Comparisons used (parsed, between two different systems).
    """

    table: pd.DataFrame
    summary: pd.DataFrame
    notes: list = field(default_factory=list)
    n_comparisons: int = 0


def tie_models(
    comparisons: pd.DataFrame,
    *,
    attribute: str,
    judge: str,
    item: str = "system",
    candidates: pd.DataFrame | None = None,
    confidence: float = 0.95,
) -> TieModels:
    """Half-win, Davidson and Rao–Kupper Bradley–Terry over the systems of one judge.

    Parameters
    ----------
    comparisons : pandas.DataFrame
        Canonical comparisons table (rows of other attributes or judges are left out).
    attribute, judge : str
        The selection (as ``data.flat.flat_comparisons``).
    item : {"system", "candidate"}
        What is ranked (``data.flat.flat_comparisons``).
    candidates : pandas.DataFrame, optional
        Candidates table with a ``system`` column; required for ``item="system"``.
    confidence : float, default 0.95
        Coverage of the tie parameter's Fisher interval.

    Returns
    -------
    TieModels

    Raises
    ------
    DataError
        As ``data.flat.flat_comparisons``; or fewer than two items or no usable comparison
        (every p_first NaN, or all between candidates of one system).
    """
    fc = flat_comparisons(
        comparisons, attribute=attribute, judge=judge, item=item, candidates=candidates
    )
    n_items = len(fc.items)
    if n_items < 2 or not len(fc.p):
        raise DataError(
            f"no usable comparison of {attribute!r} by {judge!r} between two different "
            f"{item}s (answers unparsed, or every pair within one {item}): nothing to rank"
        )
    kw = dict(first=fc.first, second=fc.second, outcome=fc.p, n_items=n_items)
    tie = (fc.p == 0.5).astype(float)
    scores, rows, notes = {}, [], []
    for label, ties in _TIES.items():
        if ties is None:
            res = bradley_terry(**kw)
        else:
            res = bradley_terry(**kw, ties=ties, intervals="fisher", confidence=confidence)
        fit = tie_model_fit(fc.first, fc.second, fc.p, res.scores, ties or "half-win",
                            res.tie_param)  # fmt: skip
        scores[label] = res.scores
        rows.append(
            {
                "model": label,
                "tie_param": math.nan if ties is None else res.tie_param,
                "tie_low": math.nan if ties is None else res.tie_low,
                "tie_high": math.nan if ties is None else res.tie_high,
                "observed_tie_rate": fit.observed_tie_rate,
                "predicted_tie_rate": fit.predicted_tie_rate,
                "log_lik": fit.log_lik,
                "kendall_vs_half_win": float(kendall(res.scores, scores["half-win"])),
            }
        )
        notes += [f"{label}: {n}" for n in res.notes if f"{label}: {n}" not in notes]
    counts = np.bincount(fc.first, minlength=n_items) + np.bincount(fc.second, minlength=n_items)
    n_ties = np.bincount(fc.first, tie, n_items) + np.bincount(fc.second, tie, n_items)
    table = pd.DataFrame({"system": fc.items})
    for label, col in MODEL_LABELS.items():
        table[col] = scores[label]
    for label, col in MODEL_LABELS.items():
        table[f"rank_{col}"] = competition_ranks(scores[label])
    table["n_comparisons"] = counts.astype(int)
    table["n_ties"] = n_ties.astype(int)
    table = _best_first(table, "half_win")
    if tie.sum() > 0:
        notes.append(
            "log-likelihoods are over three outcomes (first wins, tie, second wins); the "
            "half-win model is read as Davidson's with nu = 2 and doubled scores, whose "
            "likelihood is the half-win one"
        )
    return TieModels(table=table, summary=pd.DataFrame(rows), notes=notes,
                     n_comparisons=int(len(fc.p)))  # fmt: skip


def _best_first(table: pd.DataFrame, score: str) -> pd.DataFrame:
    keyed = table.assign(_k=table["system"].map(natural_key)).sort_values("_k")
    keyed = keyed.sort_values(score, ascending=False, kind="stable", na_position="last")
    return keyed.drop(columns="_k").reset_index(drop=True)
