"""Services of the Position bias page: bias per judge, pairs in both orders, thresholds.

The numbers come from ``ranking.bias`` (first-position win rate, swap consistency, balanced
threshold) and ``ranking.scores`` / ``ranking.metrics``; :func:`rerank` is the threshold
slider's per-update work on the cached P and reference, :func:`rule_update` the same under
any debias rule. The shared debias setting (:class:`Debias`, :func:`resolve_debias`,
:func:`debiased_P`, :func:`debiased_outcomes`, :func:`calibration`) lives in
:mod:`pages.services.calibration` and is re-exported here.

Contexts whose every answer by a judge failed to parse have no comparison in its P: the
pooled numbers leave them out, :func:`unparsed` names them so that the pages can say so,
and per-context values are NaN for any context of P without a comparison.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from data.arrays import PMatrix
from data.schema import Dataset
from pages.services.calibration import (  # noqa: F401  (re-exported: the debias setting)
    CALIBRATION_MODES,
    DEBIAS_MODES,
    Debias,
    balanced_tau,
    calibration,
    calibration_label,
    debiased_outcomes,
    debiased_P,
    decision_text,
    resolve_debias,
)
from pages.services.common import cache_data, mean_finite
from pages.services.comparisons import (
    comparison_attributes,
    human_reference,
    judge_options,
    pmatrix,
    select_comparisons,
)
from ranking import (
    balanced_threshold,
    pairwise_accuracy,
    position_bias,
    spearman,
    swap_consistency,
    threshold_curve,
    win_ratio,
)

#: Thresholds of the accuracy-vs-tau curve.
TAU_GRID = np.round(np.linspace(0.0, 1.0, 101), 2)


@cache_data(show_spinner=False, max_entries=64)
def unparsed(ds: Dataset, attribute: str, judge: str) -> list[str]:
    """Contexts with comparisons of ``attribute`` by ``judge`` of which none was parsed.

    They have no comparison left in the judge's P (``pmatrix`` drops unparsed rows),
    so every statistic of that judge leaves them out.
    """
    rows = select_comparisons(ds, attribute, judge)
    parsed = rows["p_first"].notna().groupby(rows["context_id"].astype(str)).any()
    return sorted(parsed.index[~parsed.to_numpy()].tolist())


@cache_data(show_spinner="Measuring position bias…", max_entries=32)
def bias_table(ds: Dataset) -> pd.DataFrame:
    """Position bias, swap consistency and balanced threshold per judge and attribute.

    ``n_contexts``: contexts with a parsed comparison (the ones measured);
    ``contexts_unparsed``: contexts left out because none of their answers parsed;
    ``weighted``: the judge's comparisons carry weights (the ``weight`` column), so the
    first-position win rate counts each with its weight (``n_comparisons`` counts them
    once each; swap consistency and the balanced threshold ignore the weights).
    """
    rows = []
    for attribute in comparison_attributes(ds):
        for judge in judge_options(ds, attribute):
            pm = pmatrix(ds, attribute, judge)
            finite = np.isfinite(pm.P)
            n_both = int((finite & np.swapaxes(finite, 1, 2)).sum() // 2)
            pb = position_bias(pm.P, weights=pm.weights)
            rows.append(
                {
                    "judge": judge,
                    "attribute": attribute,
                    "n_comparisons": int(finite.sum()),
                    "first_position_win_rate": float(pb),
                    "swap_consistency": float(swap_consistency(pm.P)),
                    "pairs_both_orders": n_both,
                    "balanced_tau": float(balanced_threshold(pm.P)),
                    "n_contexts": pb.n_contexts,
                    "contexts_unparsed": len(unparsed(ds, attribute, judge)),
                    "weighted": pm.weights is not None,
                }
            )
    return pd.DataFrame(rows)


@cache_data(show_spinner=False, max_entries=32)
def order_pairs(ds: Dataset, attribute: str, judge: str) -> pd.DataFrame:
    """Pairs judged in both orders: P(i wins) when i is shown first and when shown second.

    For each such pair (i before j in the candidate order of the context): ``i_first`` =
    P[i, j], ``i_second`` = 1 - P[j, i], ``shift`` = their difference (0 for a judge without
    position bias; positive when the first slot helps).
    """
    pm = pmatrix(ds, attribute, judge)
    P = pm.P
    finite = np.isfinite(P)
    n = P.shape[1]
    # pairs i < j of each context judged in both orders, context by context in the order of
    # np.triu_indices (padding is NaN, so only real candidates take part)
    both = finite & np.swapaxes(finite, 1, 2) & np.triu(np.ones((n, n), dtype=bool), k=1)
    c, i, j = np.nonzero(both)
    names = np.full((P.shape[0], n), None, dtype=object)
    for k, cands in enumerate(pm.candidate_ids):
        names[k, : len(cands)] = cands
    contexts = np.asarray(pm.context_ids, dtype=object)
    i_first = P[c, i, j]
    i_second = 1.0 - P[c, j, i]
    return pd.DataFrame(
        {
            "context_id": contexts[c].tolist(),
            "candidate_i": names[c, i].tolist(),
            "candidate_j": names[c, j].tolist(),
            "i_first": i_first,
            "i_second": i_second,
            "shift": i_first - i_second,
        }
    )


@dataclass(frozen=True)
class Rerank:
    """Every context re-ranked by win-ratio at a threshold, measured against the reference."""

    tau: float | np.ndarray
    position_bias: float
    swap_consistency: float
    accuracy: float
    spearman: float
    spearman_per_context: np.ndarray | None


def rerank(P: np.ndarray, ref: np.ndarray | None, tau, weights: np.ndarray | None = None) -> Rerank:
    """Re-rank every context at ``tau`` (scalar, or one per context) — the slider's update.

    ``weights`` (P's shape, ``PMatrix.weights``): win-ratio and the first-position win rate
    count each comparison with its weight.

    Only numba kernels of ``ranking`` run here (win-ratio, position bias, pairwise accuracy,
    Spearman), each deciding at ``tau`` (one per context when given so); P and the reference
    come from the cache. A statistic with nothing to measure (no pair judged in both orders,
    no pair with two different reference scores) is NaN, shown as n/a.
    """
    if np.ndim(tau) == 0:
        tau = float(tau)
    wr = win_ratio(P, tau, weights=weights)
    pb = position_bias(P, tau, weights=weights)
    swap = swap_consistency(P, tau)
    if ref is None:
        return Rerank(tau, pb, swap, math.nan, math.nan, None)
    rho = spearman(wr, ref)
    return Rerank(tau, pb, swap, pairwise_accuracy(P, ref, tau), mean_finite(rho), rho)


def rerank_frame(pm: PMatrix, before: Rerank, after: Rerank) -> pd.DataFrame:
    """Per context: the threshold used and Spearman with the humans before and after."""
    n = len(pm.context_ids)
    nan = np.full(n, np.nan)
    return pd.DataFrame(
        {
            "context_id": pm.context_ids,
            "tau": np.broadcast_to(np.asarray(after.tau, dtype=np.float64), (n,)),
            "spearman_before": nan
            if before.spearman_per_context is None
            else before.spearman_per_context,
            "spearman_after": nan
            if after.spearman_per_context is None
            else after.spearman_per_context,
        }
    )


@cache_data(show_spinner=False, max_entries=32)
def tau_curve(ds: Dataset, attribute: str, judge: str) -> pd.DataFrame:
    """First-position win rate, pairwise accuracy and mean Spearman along :data:`TAU_GRID`.

    :func:`rerank`'s values at each threshold (``ranking.threshold_curve``: the compared
    cells only, thresholds deciding alike computed once).
    """
    P, ref = _arrays(ds, attribute, judge)
    curve = threshold_curve(P, TAU_GRID, ref, pmatrix(ds, attribute, judge).weights)
    return pd.DataFrame(
        {
            "tau": curve.tau,
            "first_position_win_rate": curve.position_bias,
            "pairwise_accuracy": curve.accuracy,
            "spearman": curve.spearman,
        }
    )


def unparsed_note(ids: list[str]) -> str | None:
    """One line for the pages about the contexts :func:`unparsed` found; None if none."""
    if not ids:
        return None
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    return (
        f"{len(ids)} context(s) where none of this judge's answers could be parsed have no "
        f"comparison and are left out: {shown}. See the raw answers on the Judge page."
    )


def weights_note(ds: Dataset, attribute: str, judge: str) -> str | None:
    """One line for the pages when the judge's comparisons carry weights; None otherwise."""
    w = pmatrix(ds, attribute, judge).weights
    if w is None:
        return None
    values = np.unique(w[np.isfinite(w) & (w != 1.0)])
    shown = ", ".join(f"{v:g}" for v in values[:5]) + (" …" if values.size > 5 else "")
    return (
        f"These comparisons carry weights ({shown}; e.g. Arena-Hard's strong verdicts count "
        "3 times): the first-position win rate and win-ratio count each comparison with its "
        "weight; comparison counts, swap consistency and the balanced threshold count each "
        "comparison once."
    )


def _arrays(ds: Dataset, attribute: str, judge: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The cached P and human reference scores (None without a reference)."""
    ref = human_reference(ds, attribute, judge)
    return pmatrix(ds, attribute, judge).P, None if ref is None else ref.scores


def threshold_update(ds: Dataset, attribute: str, judge: str, tau) -> Rerank:
    """The slider's per-update work: cached P and reference, then :func:`rerank` at ``tau``."""
    return rerank(*_arrays(ds, attribute, judge), tau, pmatrix(ds, attribute, judge).weights)


def rule_update(ds: Dataset, attribute: str, judge: str, rule: tuple) -> Rerank:
    """:func:`rerank` under a debias ``rule`` (:attr:`Debias.rule` or ``raw_rule``).

    The hard rules decide the cached P at their threshold (as :func:`threshold_update`);
    the soft ones ("alpha", "calibrate", "soft") decide their probabilities
    (:func:`debiased_P`: reweighted, or mapped by the fitted calibration) at 0.5, which is
    how Rankings decides them. ``Rerank.tau`` is the threshold the decisions used.
    """
    P, tau = debiased_P(ds, attribute, judge, rule)
    weights = pmatrix(ds, attribute, judge).weights
    return rerank(P, _arrays(ds, attribute, judge)[1], 0.5 if tau is None else tau, weights)
