"""Services of the Comparison budgets page: budget curves and the comparisons needed.

The curves come from ``ranking.budget.budget_curves`` (raw and debiased, per comparison
strategy); this module chooses the budget grid and shapes the curves into tables. When the
shared debias setting is a calibration (``pages.services.bias.CALIBRATION_MODES``) a third
curve, "as set", runs the same draws on the calibrated P (:func:`budget_as_set`).

Comparison weights (the ``weight`` column, ``PMatrix.weights``): a weighted comparison costs
one comparison of the budget and counts with its weight in every method (win-ratio,
Bradley–Terry, product of experts: ``ranking.budget.budget_curves(weights=)``);
:func:`weights_note` says so on the page.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from data.schema import Dataset
from pages.services.bias import debiased_P
from pages.services.common import cache_data
from pages.services.comparisons import human_reference, pmatrix
from ranking import budget_curves, comparisons_needed
from ranking.budget.curves import kernels_on_disk

#: Comparison strategies of the budget curves and their display names.
STRATEGIES = {
    "random": "random",
    "no-repeat": "no-repeat",
    "symmetric": "symmetric",
    "poe-max-info": "adaptive (PoE max-info)",
    "uncertainty": "adaptive (uncertainty)",
}
#: Ranking methods offered on the page and their display names.
BUDGET_METHODS = {
    "win_ratio": "win-ratio",
    "soft_win_ratio": "soft win-ratio",
    "poe": "product of experts (PoE)",
    "bradley_terry": "Bradley–Terry",
}
#: Decision threshold of the hard win-ratio without debiasing (the page has no threshold of
#: its own; debiasing replaces it by the balanced threshold).
HARD_TAU = 0.5
#: Page method -> ``budget_curves(method=..., tau=...)``: tau=None is the soft outcome.
CURVE_ARGS = {
    "win_ratio": ("win_ratio", HARD_TAU),
    "soft_win_ratio": ("win_ratio", None),
    "poe": ("poe", None),
    "bradley_terry": ("bradley_terry", None),
}
#: The label of the curves on the calibrated P (the shared debias setting).
AS_SET = "as set"
#: Budget grids above this many points are thinned to a geometric grid (unless ``full``).
MAX_BUDGET_POINTS = 40
#: Bradley–Terry takes the same grid as the other methods now that its fits are warm
#: started along the budget in one compiled loop (it had a 10-point grid before).
BT_BUDGET_POINTS = MAX_BUDGET_POINTS


def available_comparisons(P: np.ndarray) -> int:
    """The most comparisons any context has (the end of every budget curve)."""
    finite = np.isfinite(P)
    idx = np.arange(P.shape[1])
    finite[:, idx, idx] = False
    return int(finite.sum(axis=(1, 2)).max())


def budget_grid(
    P: np.ndarray, method: str, strategy: str | None = None, full: bool = False
) -> np.ndarray:
    """Budgets up to the most comparisons any context has; thinned when there are many.

    ``"symmetric"`` shows every pair in both orders and cannot spend an odd budget, so its
    grid holds the same number of even budgets (2, 4, ...). ``full``: every budget (every
    even one for ``"symmetric"``), never thinned.
    """
    n_max = available_comparisons(P)
    n_points = BT_BUDGET_POINTS if method == "bradley_terry" else MAX_BUDGET_POINTS
    step = 2 if strategy == "symmetric" else 1
    n_steps = max(n_max // step, 1)
    if full or n_steps <= n_points:
        return step * np.arange(1, n_steps + 1)
    return step * np.unique(np.round(np.geomspace(1, n_steps, n_points)).astype(np.int64))


def compute_budget(
    P: np.ndarray,
    ref: np.ndarray,
    strategy: str,
    *,
    method: str = "win_ratio",
    correlation: str = "spearman",
    n_draws: int = 20,
    random_state: int = 0,
    debias: tuple = (False, True),
    full: bool = False,
    weights: np.ndarray | None = None,
):
    """``ranking.budget.budget_curves`` for one strategy, with and without debiasing.

    ``weights`` (P's shape, ``PMatrix.weights``; None: every comparison once): each
    comparison counts with its weight, whatever the method.

    ``method`` is a key of :data:`BUDGET_METHODS` (see :data:`CURVE_ARGS`). The page's
    cached :func:`budget` runs it on the judge's P; tests run it on any P. ``debias``:
    the balanced-threshold settings to run ((False,) for a P calibrated beforehand).
    ``full``: every budget (:func:`budget_grid`).
    """
    curve_method, tau = CURVE_ARGS[method]
    return budget_curves(
        P,
        ref,
        budgets=budget_grid(P, method, strategy, full),
        strategies=(strategy,),
        debias=tuple(debias),
        n_draws=int(n_draws),
        method=curve_method,
        correlation=correlation,
        tau=tau,
        random_state=int(random_state),
        weights=weights,
    )


def weights_note(ds: Dataset, attribute: str, judge: str, method: str) -> str | None:
    """One line for the page when the judge's comparisons carry weights; None otherwise."""
    if pmatrix(ds, attribute, judge).weights is None:
        return None
    return (
        "These comparisons carry weights (e.g. Arena-Hard's strong verdicts count 3 "
        "times): a weighted comparison costs one comparison of the budget and counts "
        f"with its weight in the {BUDGET_METHODS.get(method, method)} scores."
    )


def kernels_ready(method: str, strategies, debias: bool = True) -> bool:
    """Whether :func:`budget` runs without compiling first (compiled in this process or on
    disk): ``ranking.budget.curves.kernels_on_disk`` for a page method (:data:`CURVE_ARGS`)."""
    return kernels_on_disk(CURVE_ARGS[method][0], tuple(strategies), bool(debias))


def _debiasing(deb: bool, label: str | None) -> str:
    return label if label is not None else ("debiased" if deb else "raw")


def budget_frame(curves: list, labels: list | None = None) -> pd.DataFrame:
    """Long table of the curves: strategy, debiasing, budget, mean, std, p10, p90.

    ``labels``: per curve, None ("raw" / "debiased" from its setting) or the debiasing
    label to show (:data:`AS_SET` for the curves of :func:`budget_as_set`).
    """
    rows = []
    labels = labels or [None] * len(curves)
    for cur, label in zip(curves, labels, strict=True):
        for si, s in enumerate(cur.strategies):
            for bi, deb in enumerate(cur.debias):
                rows.append(
                    pd.DataFrame(
                        {
                            "strategy": STRATEGIES.get(s, s),
                            "debiasing": _debiasing(deb, label),
                            "budget": cur.budgets,
                            "mean": cur.mean[si, bi],
                            "std": cur.std[si, bi],
                            "p10": cur.p10[si, bi],
                            "p90": cur.p90[si, bi],
                        }
                    )
                )
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def default_target(frame: pd.DataFrame) -> float:
    """A target correlation worth asking about: 90 % of the best mean on the curves."""
    best = frame["mean"].max() if len(frame) else math.nan
    if not math.isfinite(best) or best <= 0:
        return 0.5
    return round(0.9 * float(best), 2)


def needed_frame(
    curves: list, rho: float, n_available: int, labels: list | None = None
) -> pd.DataFrame:
    """Comparisons per context needed to reach mean correlation ``rho``, per curve
    (``labels`` as in :func:`budget_frame`)."""
    rows = []
    labels = labels or [None] * len(curves)
    for cur, label in zip(curves, labels, strict=True):
        for (s, deb), need in comparisons_needed(cur, rho).items():
            rows.append(
                {
                    "strategy": STRATEGIES.get(s, s),
                    "debiasing": _debiasing(deb, label),
                    "comparisons_needed": need,
                    "share_of_available": None if need is None else round(need / n_available, 3),
                }
            )
    return pd.DataFrame(rows)


def _human_scores(ds: Dataset, attribute: str, judge: str):
    """The human reference scores the budget curves correlate with; ValueError when the
    dataset has none."""
    ref = human_reference(ds, attribute, judge)
    if ref is None:
        raise ValueError("budget curves need a human reference; this dataset has none")
    return ref.scores


@cache_data(show_spinner=False, max_entries=64)
def budget(
    ds: Dataset,
    attribute: str,
    judge: str,
    strategy: str,
    method: str = "win_ratio",
    correlation: str = "spearman",
    n_draws: int = 20,
    random_state: int = 0,
    full: bool = False,
):
    """Budget curves of one strategy on the judge's P against the human reference, raw and
    debiased (see :func:`compute_budget`; ``full``: every budget)."""
    scores = _human_scores(ds, attribute, judge)
    return compute_budget(
        pmatrix(ds, attribute, judge).P,
        scores,
        strategy,
        method=method,
        correlation=correlation,
        n_draws=n_draws,
        random_state=random_state,
        full=full,
        weights=pmatrix(ds, attribute, judge).weights,
    )


@cache_data(show_spinner=False, max_entries=64)
def budget_as_set(
    ds: Dataset,
    attribute: str,
    judge: str,
    strategy: str,
    rule: tuple,
    method: str = "win_ratio",
    correlation: str = "spearman",
    n_draws: int = 20,
    random_state: int = 0,
    full: bool = False,
):
    """Budget curves of one strategy on the judge's P as the shared debias ``rule`` sets it
    (``pages.services.bias.debiased_P``; a calibration: the mapped P), without the
    balanced-threshold debiasing of :func:`budget`. Same draws (seed) as :func:`budget`.

    Only soft rules (P changed, no threshold) are accepted: a threshold rule is what the
    "debiased" curve already does along the budget.
    """
    scores = _human_scores(ds, attribute, judge)
    P, tau = debiased_P(ds, attribute, judge, rule)
    if tau is not None:
        raise ValueError(f"budget_as_set takes a rule without a threshold; got {rule!r}")
    return compute_budget(
        P,
        scores,
        strategy,
        method=method,
        correlation=correlation,
        n_draws=n_draws,
        random_state=random_state,
        debias=(False,),
        full=full,
        weights=pmatrix(ds, attribute, judge).weights,
    )
