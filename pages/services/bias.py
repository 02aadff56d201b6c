"""Services of the Position bias page: bias per judge, pairs in both orders, thresholds.

The numbers come from ``ranking.bias`` (first-position win rate, swap consistency, balanced
threshold) and ``ranking.scores`` / ``ranking.metrics``; :func:`rerank` is the threshold
slider's per-update work on the cached P and reference.

Contexts whose every answer by a judge failed to parse have no comparison in its P: the
pooled numbers leave them out, :func:`unparsed` names them so that the pages can say so, and per-context values are NaN for any context of P without a comparison.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from data.arrays import PMatrix
from data.schema import Dataset
from pages.services.common import cache_data, fmt, mean_finite
from pages.services.comparisons import (
    comparison_attributes,
    human_reference,
    judge_options,
    pmatrix,
    select_comparisons,
)
from ranking.bias import (
    alpha_for_tau,
    balanced_threshold,
    debias,
    position_bias,
    swap_consistency,
)
from ranking.calibration import CalibrationResult, calibrate
from ranking.decisions import decide
from ranking.metrics import pairwise_accuracy, spearman
from ranking.scores import win_ratio

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
    ``contexts_unparsed``: contexts left out because none of their answers parsed.
    """
    rows = []
    for attribute in comparison_attributes(ds):
        for judge in judge_options(ds, attribute):
            pm = pmatrix(ds, attribute, judge)
            finite = np.isfinite(pm.P)
            n_both = int((finite & np.swapaxes(finite, 1, 2)).sum() // 2)
            pb = position_bias(pm.P)
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
    out = []
    for c, cands in enumerate(pm.candidate_ids):
        n = len(cands)
        block = np.asarray(pm.P[c, :n, :n])
        i, j = np.triu_indices(n, k=1)
        both = np.isfinite(block[i, j]) & np.isfinite(block[j, i])
        i, j = i[both], j[both]
        out.append(
            pd.DataFrame(
                {
                    "context_id": pm.context_ids[c],
                    "candidate_i": [cands[k] for k in i],
                    "candidate_j": [cands[k] for k in j],
                    "i_first": block[i, j],
                    "i_second": 1.0 - block[j, i],
                }
            )
        )
    df = pd.concat(out, ignore_index=True) if out else pd.DataFrame()
    if len(df):
        df["shift"] = df["i_first"] - df["i_second"]
    return df


@dataclass(frozen=True)
class Rerank:
    """Every context re-ranked by win-ratio at a threshold, measured against the reference."""

    tau: float | np.ndarray
    position_bias: float
    swap_consistency: float
    accuracy: float
    spearman: float
    spearman_per_context: np.ndarray | None


def rerank(P: np.ndarray, ref: np.ndarray | None, tau) -> Rerank:
    """Re-rank every context at ``tau`` (scalar, or one per context) — the slider's update.

    Only numba kernels of ``ranking`` run here (win-ratio, position bias, pairwise accuracy,
    Spearman), each deciding at ``tau`` (one per context when given so); P and the reference
    come from the cache. A statistic with nothing to measure (no pair judged in both orders,
    no pair with two different reference scores) is NaN, shown as n/a.
    """
    if np.ndim(tau) == 0:
        tau = float(tau)
    wr = win_ratio(P, tau)
    pb = position_bias(P, tau)
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
    """First-position win rate, pairwise accuracy and mean Spearman along :data:`TAU_GRID`."""
    P, ref = _arrays(ds, attribute, judge)
    rows = []
    for t in TAU_GRID:
        r = rerank(P, ref, float(t))
        rows.append(
            {
                "tau": float(t),
                "first_position_win_rate": r.position_bias,
                "pairwise_accuracy": r.accuracy,
                "spearman": r.spearman,
            }
        )
    return pd.DataFrame(rows)


def unparsed_note(ids: list[str]) -> str | None:
    """One line for the pages about the contexts :func:`unparsed` found; None if none."""
    if not ids:
        return None
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    return (
        f"{len(ids)} context(s) where none of this judge's answers could be parsed have no "
        f"comparison and are left out: {shown}. See the raw answers on the Judge page."
    )


@cache_data(show_spinner=False, max_entries=64)
def balanced_tau(ds: Dataset, attribute: str, judge: str, per_context: bool = False):
    """``ranking.bias.balanced_threshold`` of the judge's P (one tau, or one per context)."""
    return balanced_threshold(pmatrix(ds, attribute, judge).P, per_context=per_context)


def _arrays(ds: Dataset, attribute: str, judge: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The cached P and human reference scores (None without a reference)."""
    ref = human_reference(ds, attribute, judge)
    return pmatrix(ds, attribute, judge).P, None if ref is None else ref.scores


def threshold_update(ds: Dataset, attribute: str, judge: str, tau) -> Rerank:
    """The slider's per-update work: cached P and reference, then :func:`rerank` at ``tau``."""
    return rerank(*_arrays(ds, attribute, judge), tau)


# ---------------------------------------------------------------------------------------
# The debias setting shared by the pages (app.debias.mode, app.debias.tau)
# ---------------------------------------------------------------------------------------

#: Debias modes, in display order, with their labels.
DEBIAS_MODES = {
    "off": "Off",
    "tau": "Threshold tau",
    "per_context": "Balanced tau per context",
    "alpha": "Soft reweighting (alpha)",
    "swap": "Swap calibration (label-free)",
    "isotonic": "Calibrated to humans (isotonic)",
}
#: Debias modes that calibrate P with a fitted monotone map (``ranking.calibrate``).
CALIBRATION_MODES = ("swap", "isotonic")


@dataclass(frozen=True)
class Debias:
    """One debias setting resolved for an attribute and judge.

    Attributes
    ----------
    mode : str
        A key of :data:`DEBIAS_MODES`.
    rule : tuple
        Hashable rule for the cached services: ``("soft", None)`` (probabilities as they
        are), ``("hard", tau)`` (decisions at one threshold), ``("per_context", None)``
        (decisions at each context's balanced threshold) or ``("alpha", alpha)`` (soft
        probabilities reweighted by ``ranking.debias``) or ``("calibrate", method)``
        (probabilities mapped by ``ranking.calibrate``, "swap" or "isotonic").
    raw_rule : tuple
        The same rule without correction: decisions at tau = 0.5 for the hard modes,
        the probabilities as they are otherwise.
    tau : float or ndarray
        The threshold the decisions use (per context for "per_context"; 0.5 when off; the
        equivalent threshold for alpha).
    alpha : float or None
        The reweighting of "alpha".
    label, raw_label : str
        One line each for the pages ("tau = 0.62 (hard decisions)", "tau = 0.5").
    unavailable : str or None
        Why the mode asked for cannot run for this judge (a calibration with no pair judged
        in both orders, or no human labels); the setting is then "off". None otherwise.
    """

    mode: str
    rule: tuple
    raw_rule: tuple
    tau: float | np.ndarray
    alpha: float | None
    label: str
    raw_label: str
    unavailable: str | None = None

    @property
    def active(self) -> bool:
        return self.mode != "off"


def resolve_debias(ds: Dataset, attribute: str, judge: str, mode: str, tau: float) -> Debias:
    """The debias setting (``mode``, the shared ``tau``) for one attribute and judge.

    "tau": hard decisions at ``tau``; "per_context": hard decisions at each context's
    balanced threshold (``ranking.balanced_threshold``); "alpha": soft probabilities
    reweighted by alpha = ``ranking.alpha_for_tau(tau)``, so that a 0.5 threshold on them
    takes the decisions of ``tau``; "swap" / "isotonic": soft probabilities mapped by the
    monotone map of :func:`calibration` (label-free, or fitted to the human labels and
    cross-fitted over contexts); "off" (or an unknown mode): nothing changes. A calibration
    that cannot be fitted for this judge gives "off" with the reason in ``unavailable``.

    Raises
    ------
    ValueError
        "alpha" with tau not strictly between 0 and 1.
    """
    soft = ("soft", None)
    if mode == "tau":
        t = float(tau)
        return Debias(
            mode,
            ("hard", t),
            ("hard", 0.5),
            t,
            None,
            f"tau = {t:.2f} (hard decisions)",
            "tau = 0.5",
        )
    if mode == "per_context":
        taus = balanced_tau(ds, attribute, judge, per_context=True)
        shown = f"{np.nanmin(taus):.2f}–{np.nanmax(taus):.2f}" if np.isfinite(taus).any() else "n/a"
        return Debias(
            mode,
            ("per_context", None),
            ("hard", 0.5),
            taus,
            None,
            f"balanced tau per context ({shown}, hard decisions)",
            "tau = 0.5",
        )
    if mode == "alpha":
        t = float(tau)
        a = float(alpha_for_tau(t))
        return Debias(
            mode,
            ("alpha", a),
            soft,
            t,
            a,
            f"alpha = {a:.3f} (soft reweighting, as tau = {t:.2f})",
            "probabilities as they are",
        )
    if mode in CALIBRATION_MODES:
        res = calibration(ds, attribute, judge, mode)
        if res.reason is not None:
            return Debias(
                "off",
                soft,
                soft,
                0.5,
                None,
                f"off ({DEBIAS_MODES[mode].lower()} unavailable)",
                "probabilities as they are",
                unavailable=res.reason,
            )
        return Debias(
            mode,
            ("calibrate", mode),
            soft,
            0.5,
            None,
            calibration_label(res),
            "probabilities as they are",
        )
    return Debias("off", soft, soft, 0.5, None, "off", "probabilities as they are")


@cache_data(show_spinner=False, max_entries=64)
def calibration(ds: Dataset, attribute: str, judge: str, method: str) -> CalibrationResult:
    """``ranking.calibrate`` of the judge's P ("swap", or "isotonic" / "platt" against the
    human reference, folds seeded with 0 so that every page sees the same map).

    Without a human reference the human methods come back unfitted, with the reason.
    """
    P = pmatrix(ds, attribute, judge).P
    if method == "swap":
        return calibrate(P, "swap")
    ref = human_reference(ds, attribute, judge)
    if ref is None:
        return calibrate(P, method, None)
    if ref.same_as_judge:
        return _unfitted(
            P, method, "the only human reference is this judge's own verdicts (pooled humans)"
        )
    return calibrate(P, method, ref.scores, random_state=0)


def _unfitted(P: np.ndarray, method: str, reason: str) -> CalibrationResult:
    res = calibrate(P, method, None)
    return dataclasses.replace(res, reason=reason)


def calibration_label(res: CalibrationResult) -> str:
    """One line for the pages: which map, fitted on what, and what it changed."""
    if res.method == "swap":
        return (
            f"swap calibration (label-free, {res.n_fit} both-order cells; order disagreement "
            f"{fmt(res.disagreement_before)} → {fmt(res.disagreement_after)})"
        )
    return (
        f"calibrated to humans ({res.method}, cross-fitted on {res.n_fit} labelled cells; "
        f"ECE {fmt(res.ece_before)} → {fmt(res.ece_after)})"
    )


def debiased_P(ds: Dataset, attribute: str, judge: str, rule: tuple) -> tuple[np.ndarray, object]:
    """(P, tau) to rank with under ``rule`` (see :class:`Debias`).

    tau is None for soft outcomes (rank the probabilities themselves), else the threshold
    (one per context for "per_context") at which ``ranking`` decides.
    """
    P = pmatrix(ds, attribute, judge).P
    kind, value = rule
    if kind == "hard":
        return P, float(value)
    if kind == "per_context":
        taus = np.asarray(balanced_tau(ds, attribute, judge, per_context=True), dtype=float)
        return P, np.where(np.isfinite(taus), taus, 0.5)
    if kind == "alpha":
        return debias(P, value), None
    if kind == "calibrate":
        res = calibration(ds, attribute, judge, value)
        return (P if res.reason is not None else res.P), None
    return P, None


def debiased_outcomes(
    ds: Dataset, attribute: str, judge: str, rows: pd.DataFrame, rule: tuple
) -> pd.DataFrame:
    """``rows`` (comparison rows of the judge) with ``p_first`` turned into outcomes.

    Hard rules: decisions 1 / 0 / 0.5 (``ranking.decide``) at the rule's threshold, or at
    the balanced threshold of each row's context; "alpha": reweighted probabilities;
    "calibrate": each row's p_first mapped by the calibration's map fitted on all the data
    (``CalibrationResult.apply``; the cross-fitted P of :func:`debiased_P` maps each
    context with its fold's map instead); "soft": unchanged. Unparsed rows stay NaN.
    """
    kind, value = rule
    if kind == "soft":
        return rows
    p = rows["p_first"].to_numpy(dtype=np.float64)
    if kind == "calibrate":
        res = calibration(ds, attribute, judge, value)
        return rows if res.reason is not None else rows.assign(p_first=res.apply(p))
    if kind == "alpha":
        out = np.full(p.shape, np.nan)
        ok = np.isfinite(p)
        if ok.any():
            out[ok] = debias(p[ok], value)
        return rows.assign(p_first=out)
    if kind == "per_context":
        pm = pmatrix(ds, attribute, judge)
        taus = balanced_tau(ds, attribute, judge, per_context=True)
        lut = dict(zip(pm.context_ids, np.asarray(taus, dtype=float), strict=True))
        row_tau = rows["context_id"].astype(str).map(lut).to_numpy(dtype=float)
        row_tau = np.where(np.isfinite(row_tau), row_tau, 0.5)
    else:
        row_tau = np.full(len(p), float(value))
    if not len(p):
        return rows
    return rows.assign(p_first=decide(p.reshape(-1, 1), row_tau).reshape(-1))
