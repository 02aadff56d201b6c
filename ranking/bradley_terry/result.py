"""The result of ``ranking.bradley_terry`` and how every fitting path assembles it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .intervals import bounds
from .newton import RIDGE_FALLBACK

__all__ = ["BTResult", "result", "notes"]


@dataclass(frozen=True)
class BTResult:
    """Result of :func:`bradley_terry`.

    For P input every per-context field has a leading ``n_contexts`` axis (scores have shape
    (n_contexts, N)); for flat input they are scalars and scores have shape (n_items,).

    Attributes
    ----------
    scores : ndarray
        Log-strengths theta, centred to mean 0 per connected component; NaN for items with no
        comparison.
    converged : ndarray of bool or bool
        Whether the last full Newton step was smaller than ``tol`` (max |delta theta|).
    n_iter : ndarray of int or int
        Newton iterations used.
    max_change : ndarray of float or float
        max |delta theta| of the last Newton step.
    lower, upper : ndarray or None
        Interval bounds for ``scores`` at ``confidence`` (None when ``intervals`` is None).
    finite_mle : ndarray of bool or bool
        False where, with ridge == 0, some component had no finite MLE and was fitted with
        ``RIDGE_FALLBACK`` (with ridge > 0 it still reports whether the plain MLE exists).
    component : ndarray of int
        Connected-component label of each item (-1: never compared).
    n_components : ndarray of int or int
        Number of connected components (> 1: scores of different components not comparable).
    ridge : ndarray of float
        Ridge actually used per item (``ridge``, 0, or ``RIDGE_FALLBACK``); same shape as
        scores.
    method : str
        Solver and interval method used.
    notes : tuple of str
        Human-readable flags (fallback prior used, several components, no convergence).
    coef, coef_se, coef_low, coef_high : ndarray of shape (k,) or None
        With ``features``: the covariate coefficients beta (log-odds per unit of the
        covariate), their Fisher standard errors and interval at ``confidence`` (bootstrap
        percentiles when ``intervals="bootstrap"``, Fisher otherwise); NaN for a covariate
        that is not identifiable. None without features.
    """

    scores: np.ndarray
    converged: np.ndarray | bool
    n_iter: np.ndarray | int
    max_change: np.ndarray | float
    lower: np.ndarray | None
    upper: np.ndarray | None
    finite_mle: np.ndarray | bool
    component: np.ndarray
    n_components: np.ndarray | int
    ridge: np.ndarray
    method: str
    notes: tuple[str, ...]
    coef: np.ndarray | None = None
    coef_se: np.ndarray | None = None
    coef_low: np.ndarray | None = None
    coef_high: np.ndarray | None = None
    #: the flat fit's data for ``ranking.controlled_win_rates`` (None for P input)
    fit: object = field(default=None, repr=False, compare=False)
    #: with ``intervals="bootstrap"``: the refitted scores, shape (n_boot, *scores.shape)
    samples: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: with ``ties``: the tie parameter (Davidson's nu >= 0, Rao–Kupper's theta >= 1) and its
    #: interval at ``confidence``; None otherwise
    tie_param: float | None = None
    tie_low: float | None = None
    tie_high: float | None = None


def result(theta, fitted, *, per_context, method, se, replicates, options):
    """The BTResult of a fit, with Fisher or bootstrap intervals when asked.

    ``fitted`` is (converged, n_iter, max_change, component, n_components, finite_mle,
    ridge used); ``se()`` gives the Fisher standard errors and ``replicates()`` the
    (n_boot, ...) refitted scores, each called only for its kind of interval.
    """
    converged, n_iter, max_change, comp, n_comp, fin, ridge_used = fitted
    kept = {}

    def keep():
        kept["samples"] = replicates()
        return kept["samples"]

    lower, upper, how = bounds(
        options["intervals"], theta, options["confidence"], options["n_boot"], se, keep
    )
    return BTResult(
        scores=theta,
        converged=converged,
        n_iter=n_iter,
        max_change=max_change,
        lower=lower,
        upper=upper,
        finite_mle=fin,
        component=comp,
        n_components=n_comp,
        ridge=ridge_used,
        method=method + how,
        notes=notes(n_comp, fin, converged, options["ridge"], per_context),
        samples=kept.get("samples"),
    )


def notes(n_components, finite, converged, ridge, per_context):
    notes = []

    def where(idx):
        return f"context(s) {idx[:10].tolist()}" if per_context else "the item set"

    multi = np.flatnonzero(np.atleast_1d(n_components) > 1)
    if multi.size:
        notes.append(
            f"{where(multi)}: comparison graph has several connected components; scores are "
            "centred per component and not comparable across components"
        )
    nf = np.flatnonzero(~np.atleast_1d(finite))
    if nf.size and ridge == 0:
        notes.append(
            f"{where(nf)}: no finite MLE (some items never lose or never win within their "
            f"component); those components were fitted with ridge = {RIDGE_FALLBACK}"
        )
    nc = np.flatnonzero(~np.atleast_1d(converged))
    if nc.size:
        notes.append(f"{where(nc)}: Newton iteration did not converge within max_iter")
    return tuple(notes)
