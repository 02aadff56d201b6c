"""Calibration of a judge side by side: no correction, one threshold, and whole monotone maps.

:func:`calibration_table` ranks one attribute's contexts with the judge's P under each way
of correcting it (``METHODS``) and measures the result against the humans:

* ``off``: the probabilities as they are;
* ``balanced_tau``: hard decisions at ``ranking.balanced_threshold`` (first slot wins half);
* ``alpha``: ``ranking.debias`` at ``alpha_for_tau(balanced tau)`` (soft, decides as tau);
* ``swap``: ``ranking.calibrate(P, "swap")``, label-free, fitted on the pairs judged in both
  orders;
* ``isotonic`` / ``platt``: ``ranking.calibrate`` against the human pairwise labels,
  cross-fitted over contexts (each context mapped without its own labels).

The human reference is ``data.comparative.tables.human_scores_for`` (mean human scores, else the
win-ratio of pooled human verdicts), laid out like the judge's P.
:func:`reliability_frame` gives the reliability diagram of one method before and after.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import rankdata

import ranking
from data.bias.cycles import cycles_pmatrix
from data.bias.pmatrix import compared_layout, prebuilt
from data.comparative.tables import human_scores_for, judge_pmatrix
from data.schema import DataError, Dataset

__all__ = [
    "CALIBRATION_COLUMNS",
    "METHODS",
    "RELIABILITY_COLUMNS",
    "calibration_table",
    "corrected",
    "judge_inputs",
    "reliability_frame",
]

#: The corrections compared, with their labels.
METHODS = {
    "off": "Off (probabilities as they are)",
    "balanced_tau": "Balanced tau (hard decisions)",
    "alpha": "Soft reweighting (alpha at the balanced tau)",
    "swap": "Swap calibration (label-free)",
    "isotonic": "Calibrated to humans (isotonic, cross-fitted)",
    "platt": "Calibrated to humans (Platt, cross-fitted)",
}
CALIBRATION_COLUMNS = (
    "method",
    "label",
    "available",
    "reason",
    "first_win_rate",
    "swap_consistency",
    "pairwise_accuracy",
    "spearman",
    "ece",
    "disagreement",
    "contexts_reordered",
)
RELIABILITY_COLUMNS = ("stage", "bin_mid", "mean_p", "mean_y", "count")


def _mean_finite(values) -> float:
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else math.nan


def _disagreement(P) -> float:
    Pt = np.swapaxes(P, 1, 2)
    cells = np.isfinite(P) & np.isfinite(Pt) & np.triu(np.ones(P.shape[1:], bool), 1)[None]
    return float(np.mean(np.abs(P[cells] - (1.0 - Pt[cells])))) if cells.any() else math.nan


def _rank_rows(scores) -> tuple[np.ndarray, np.ndarray]:
    """Per context the ranks (ties averaged) among its scored candidates, all rows at once.

    Returns ``(scored, ranks)``: where each score is finite, and its rank among the finite
    scores of its row (NaN elsewhere). Unscored cells are ranked last as +inf, so the ranks
    of the scored ones are exactly those of ``rankdata`` over the scored ones alone.
    """
    s = np.asarray(scores, dtype=np.float64)
    ok = np.isfinite(s)
    if not s.size:
        return ok, np.full(s.shape, np.nan)
    ranks = rankdata(np.where(ok, s, np.inf), axis=1)
    ranks[~ok] = np.nan
    return ok, ranks


def _reordered(raw_ranks, scores) -> float:
    """Share of contexts (with >= 2 scored candidates) ranked differently from the raw one."""
    ok0, r0 = raw_ranks
    ok1, r1 = _rank_rows(scores)
    counted = ok0.sum(axis=1) >= 2
    if not counted.any():
        return math.nan
    same = (ok0 == ok1).all(axis=1) & (np.where(ok0, r0, -1.0) == np.where(ok1, r1, -1.0)).all(
        axis=1
    )
    return float(np.mean(~same[counted]))


def judge_inputs(ds: Dataset, attribute: str, judge: str, *, cycles_pm=None) -> tuple:
    """The judge's P and the human reference the calibration tables start from.

    Parameters
    ----------
    ds : Dataset
        Its comparisons (and human scores or verdicts).
    attribute, judge : str
        The selection.
    cycles_pm : PMatrix, optional
        ``data.bias.cycles_pmatrix`` of this selection, already built for the transitivity
        tables: the P is re-laid out from it (``data.bias.pmatrix.compared_layout``) rather
        than averaged from the comparisons again. Built here when None.

    Returns
    -------
    (PMatrix, (ndarray or None, str))
        The P laid out as ``data.comparative.tables.judge_pmatrix`` lays it out (equal to it cell
        for cell) and ``human_scores_for`` of it: build them once per judge and pass them
        as ``pm=`` / ``reference=`` to :func:`calibration_table` and
        :func:`reliability_frame`.

    Raises
    ------
    DataError
        No parsed comparison for this attribute and judge.
    ValueError
        ``cycles_pm`` built for another attribute or judge.
    """
    cycles_pm = prebuilt(cycles_pm, ds, attribute, judge, cycles_pmatrix, "cycles_pm")
    pm = None if cycles_pm is None else compared_layout(cycles_pm)
    if pm is None:
        raise DataError(
            f"{ds.name}: no parsed comparison for attribute {attribute!r} by judge {judge!r}"
        )
    return pm, human_scores_for(ds, attribute, pm)


def _inputs(ds, attribute, judge, pm, reference):
    """(P, ref, source) from the prebuilt ``pm`` / ``reference`` or built here."""
    hint = "the PMatrix of judge_inputs(ds, attribute, judge)"
    pm = prebuilt(pm, ds, attribute, judge, judge_pmatrix, hint=hint)
    ref, source = human_scores_for(ds, attribute, pm) if reference is None else reference
    if ref is not None and np.shape(ref) != pm.P.shape[:2]:
        raise ValueError(
            f"reference scores have shape {np.shape(ref)}, the judge's P {pm.P.shape}: pass "
            "the reference of judge_inputs(ds, attribute, judge)"
        )
    return pm.P, ref, source


def corrected(P, method: str, reference=None, *, random_state=0):
    """P under one correction of :data:`METHODS`: (P', tau, reason, calibration result).

    Parameters
    ----------
    P : ndarray, shape (n_contexts, N, N)
        The judge's probabilities.
    method : str
        A key of :data:`METHODS`.
    reference : ndarray, shape (n_contexts, N), optional
        Human scores laid out like P (needed by "isotonic" and "platt").
    random_state : int, default 0
        Folds of the cross-fitted methods.

    Returns
    -------
    tuple
        P' (the corrected probabilities; P itself when unavailable), tau (None for soft
        outcomes, else the decision threshold), reason (None when available, else why not)
        and the ``ranking.CalibrationResult`` (None for the non-calibration methods).

    Raises
    ------
    ValueError
        Unknown method.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {list(METHODS)}")
    if method == "off":
        return P, None, None, None
    if method in ("balanced_tau", "alpha"):
        tau = ranking.balanced_threshold(P)
        if not math.isfinite(float(tau)):
            return P, None, tau.reason, None
        if method == "balanced_tau":
            return P, float(tau), None, None
        if not 0.0 < float(tau) < 1.0:
            return P, None, f"the balanced tau is {float(tau):g}: no finite alpha", None
        return ranking.debias(P, ranking.alpha_for_tau(float(tau))), None, None, None
    if method != "swap" and reference is None:
        return P, None, "no human reference for this attribute", None
    res = ranking.calibrate(P, method, reference, random_state=random_state)
    return res.P, None, res.reason, res


def calibration_table(
    ds: Dataset, attribute: str, judge: str, *, pm=None, reference=None
) -> pd.DataFrame:
    """Every correction of :data:`METHODS` side by side, measured against the humans.

    Parameters
    ----------
    ds : Dataset
        Its comparisons (and human scores or verdicts for the reference).
    attribute, judge : str
        The selection.
    pm : PMatrix, optional
        The judge's P as :func:`judge_inputs` builds it; used as is (built here if None).
    reference : (ndarray or None, str), optional
        The human reference of ``pm`` as :func:`judge_inputs` gives it (``human_scores_for``);
        built here if None.

    Returns
    -------
    DataFrame
        One row per method, columns :data:`CALIBRATION_COLUMNS`: ``available`` and
        ``reason`` (why a method cannot run: no pair judged in both orders, no humans);
        ``first_win_rate`` (``ranking.position_bias``) and ``swap_consistency`` (hard, at
        the method's threshold, 0.5 for the soft ones); ``pairwise_accuracy`` and
        ``spearman`` (win-ratio against the human scores, mean over contexts); ``ece`` (the
        corrected probabilities, or the decisions of "balanced_tau", against the human
        pairwise labels; held out for the human methods); ``disagreement`` (mean
        |p_ij - (1 - p_ji)| over pairs judged in both orders); ``contexts_reordered`` (share
        of contexts whose win-ratio ranking differs from the uncorrected one). The human
        columns are NaN without a reference (``df.attrs["reference"]`` says which).

    Raises
    ------
    DataError
        No parsed comparison for this attribute and judge.
    ValueError
        ``pm`` built for another selection, or ``reference`` of another shape.
    """
    P, ref, source = _inputs(ds, attribute, judge, pm, reference)
    labels = None if ref is None else ranking.pairwise_labels(P, ref)
    cells = None if labels is None else np.isfinite(P) & np.isfinite(labels)
    raw_ranks = _rank_rows(ranking.win_ratio(P))
    rows = []
    for method, label in METHODS.items():
        Pm, tau, reason, _ = corrected(P, method, ref)
        row = dict.fromkeys(CALIBRATION_COLUMNS, math.nan)
        row.update(method=method, label=label, available=reason is None, reason=reason)
        if reason is None:
            t = 0.5 if tau is None else tau
            probs = Pm if tau is None else ranking.decide(Pm, tau)
            wr = ranking.win_ratio(Pm, tau)
            row.update(
                first_win_rate=float(ranking.position_bias(Pm, t)),
                swap_consistency=float(ranking.swap_consistency(Pm, t)),
                disagreement=_disagreement(probs),
                contexts_reordered=_reordered(raw_ranks, wr),
            )
            if ref is not None:
                row.update(
                    pairwise_accuracy=float(ranking.pairwise_accuracy(Pm, ref, t)),
                    spearman=_mean_finite(ranking.spearman(wr, ref)),
                    ece=ranking.ece(probs[cells], labels[cells]),
                )
        rows.append(row)
    df = pd.DataFrame(rows, columns=list(CALIBRATION_COLUMNS))
    df.attrs["reference"] = source
    return df


def reliability_frame(
    ds: Dataset,
    attribute: str,
    judge: str,
    method: str,
    *,
    n_bins: int = 10,
    pm=None,
    reference=None,
) -> pd.DataFrame:
    """Reliability diagram of the judge before and after one correction.

    Parameters
    ----------
    ds : Dataset
    attribute, judge : str
    method : str
        A key of :data:`METHODS` ("balanced_tau" shows its hard decisions).
    n_bins : int, default 10
        Equal-width bins of p.
    pm, reference : optional
        Prebuilt inputs, as for :func:`calibration_table`.

    Returns
    -------
    DataFrame
        Columns :data:`RELIABILITY_COLUMNS`, ``n_bins`` rows per stage ("before": the
        judge's p; "after": the corrected p, held out for the human methods); empty bins
        have count 0 and NaN means. Without a human reference the frame is empty; when the
        method is unavailable only "before" is given. ``df.attrs["reason"]`` says why
        (None otherwise), ``df.attrs["reference"]`` what the labels are.

    Raises
    ------
    DataError
        No parsed comparison for this attribute and judge.
    ValueError
        Unknown method; ``pm`` or ``reference`` built for another selection.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {list(METHODS)}")
    P, ref, source = _inputs(ds, attribute, judge, pm, reference)
    empty = pd.DataFrame(columns=list(RELIABILITY_COLUMNS))
    if ref is None:
        empty.attrs.update(reason=source, reference=source)
        return empty
    labels = ranking.pairwise_labels(P, ref)
    cells = np.isfinite(P) & np.isfinite(labels)
    if not cells.any():
        why = "no judged pair has a human label (tied or missing human scores)"
        empty.attrs.update(reason=why, reference=source)
        return empty
    Pm, tau, reason, _ = corrected(P, method, ref)
    stages = [("before", P)]
    if reason is None:
        stages.append(("after", Pm if tau is None else ranking.decide(Pm, tau)))
    parts = []
    for stage, probs in stages:
        r = ranking.reliability(probs[cells], labels[cells], n_bins=n_bins)
        parts.append(
            pd.DataFrame(
                {
                    "stage": stage,
                    "bin_mid": r.bin_mid,
                    "mean_p": r.mean_p,
                    "mean_y": r.mean_y,
                    "count": r.count,
                }
            )
        )
    df = pd.concat(parts, ignore_index=True)
    df.attrs.update(reason=reason, reference=source)
    return df
