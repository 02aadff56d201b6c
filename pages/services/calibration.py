"""The debias setting every page shares (``app.debias.mode``, ``app.debias.tau``): decision
thresholds and fitted calibrations of the judge's probabilities.

:func:`resolve_debias` turns a mode and tau into a :class:`Debias` for one attribute and judge;
:func:`debiased_P` and :func:`debiased_outcomes` apply its rule to the cached P and to comparison
rows (Rankings, Leaderboard, Comparison budgets, Position bias). The calibration modes ("swap",
"isotonic") use the cached :func:`calibration` (``ranking.calibrate``). Moved out of
:mod:`pages.services.bias`, which re-exports every name, so ``bias.resolve_debias`` etc. still work.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from data.schema import HUMAN_JUDGE_PREFIX, Dataset
from pages.services.common import cache_data, fmt
from pages.services.comparisons import human_reference, pmatrix
from ranking import CalibrationResult, alpha_for_tau, balanced_threshold, calibrate, debias, decide


@cache_data(show_spinner=False, max_entries=64)
def balanced_tau(ds: Dataset, attribute: str, judge: str, per_context: bool = False):
    """``ranking.bias.balanced_threshold`` of the judge's P (one tau, or one per context)."""
    return balanced_threshold(pmatrix(ds, attribute, judge).P, per_context=per_context)


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


def decision_text(setting: Debias) -> str:
    """How a single comparison is decided under ``setting``, for the pages' help texts:
    "first wins when p > 0.62", "… when the swap-calibrated p > 0.5", …"""
    kind, value = setting.rule
    if kind == "hard":
        return f"first wins when p > {fmt(value, 2)}"
    if kind == "per_context":
        return "first wins when p > its context's balanced tau"
    if kind == "alpha":
        return f"first wins when the reweighted p' > 0.5, i.e. p > {fmt(setting.tau, 2)}"
    if kind == "calibrate":
        which = "swap-calibrated" if value == "swap" else "human-calibrated"
        return f"first wins when the {which} p > 0.5"
    return "first wins when p > 0.5"


@cache_data(show_spinner="Debiasing the pairwise judges…", max_entries=16)
def debiased_dataset(ds: Dataset, mode: str, tau: float) -> tuple[Dataset, list[str]]:
    """``ds`` with every model judge's comparisons turned into outcomes by the shared setting.

    For each (attribute, judge) of the comparisons whose judge is not human, the setting is
    resolved (:func:`resolve_debias`) and the rows go through :func:`debiased_outcomes`; their
    ``verdict`` is cleared so that verdict-based statistics read the debiased p (A above 0.5,
    B below, tie at 0.5). Human verdicts are the reference and stay as they are.

    Returns
    -------
    (Dataset, list of str)
        The copy, and one note per judge and attribute whose setting is unavailable (ranked as
        off, the reason given). ``ds`` itself when ``mode`` is "off".
    """
    if mode == "off" or not len(ds.comparisons):
        return ds, []
    comps = ds.comparisons
    human = comps["judge"].astype(str).str.startswith(HUMAN_JUDGE_PREFIX).to_numpy()
    p = comps["p_first"].to_numpy(dtype=np.float64, copy=True)
    if "verdict" not in comps.columns:  # optional column: nothing to clear
        comps = comps.assign(verdict=pd.Series(np.nan, index=comps.index, dtype=object))
    verdict = comps["verdict"].astype(object).to_numpy(copy=True)
    keys = comps[["attribute", "judge"]].astype(str)
    notes = []
    for (attribute, judge), idx in keys[~human].groupby(["attribute", "judge"]).indices.items():
        where = np.flatnonzero(~human)[idx]
        setting = resolve_debias(ds, attribute, judge, mode, tau)
        if setting.unavailable:
            notes.append(f"{judge} ({attribute}): {setting.unavailable}")
        if setting.rule[0] == "soft":
            continue
        rows = comps.iloc[where]
        p[where] = debiased_outcomes(ds, attribute, judge, rows, setting.rule)["p_first"]
        verdict[where] = np.nan
    new = comps.assign(
        p_first=p, verdict=pd.Series(verdict, index=comps.index, dtype=comps["verdict"].dtype)
    )
    return dataclasses.replace(ds, comparisons=new), notes
