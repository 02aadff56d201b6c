"""Correlation of judge scores with human scores, per item, system or overall, with intervals.

The three aggregation units of the papers: ``"item"`` correlates the candidates within each
context and averages over contexts (the "summary level" of comparative assessment),
``"system"`` correlates per-system means, ``"overall"`` pools every item. Intervals come from
the context bootstrap (:mod:`ranking.agreement.bootstrap`), per-context values from the segment
kernels (:mod:`ranking.agreement.segments`).

Conventions of the agreement statistics (here, :mod:`ranking.agreement.reliability` and
:mod:`ranking.agreement.significance`): scores are 1-D float arrays aligned with ``contexts`` /
``systems`` label arrays; rating matrices are (n_items, n_raters) with NaN for a missing or
unparsed rating. NaN judge outputs are left out and counted in ``n_dropped_nan``, never
imputed. ``unit`` names the aggregation unit, ``confidence`` the coverage of an interval,
``scale`` Krippendorff's level of measurement. Estimates expose ``.value`` (with
``.lower`` / ``.upper`` where there is an interval), tests ``.statistic`` and ``.pvalue``.
Shape problems and unknown options raise ``ValueError``; data that leave a statistic
undefined (constant scores, too few valid items) give NaN together with a ``reason`` string,
never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ranking._core.checks import check_random_state
from ranking._core.score_checks import (
    as_labels,
    as_scores,
    check_choice,
    check_confidence,
    join_reasons,
    label_codes,
)

from .bootstrap import (
    _boot_mean,
    _boot_pooled,
    _boot_system,
    _boot_weights,
    _percentile_interval,
)
from .segments import _OK, MIN_POOLED, _segment_corr, _snap_ties, _status_reason

__all__ = ["CorrelationResult", "correlation", "UNITS", "METHODS", "KENDALL_VARIANTS"]

UNITS = ("item", "system", "overall")
METHODS = ("spearman", "kendall", "pearson")
KENDALL_VARIANTS = ("b", "c")


@dataclass(frozen=True, eq=False)
class CorrelationResult:
    """Judge-human correlation at one aggregation unit.

    ``value`` is the correlation (item level: the mean of per-context correlations) and
    ``pvalue`` scipy's p-value of it (overall, system; NaN at item level);
    ``lower``/``upper`` the bootstrap percentile interval (NaN when ``n_boot`` = 0);
    ``n_used`` items that entered the statistic; ``n_dropped_nan`` items left out because the
    judge or human score is NaN; ``per_context`` the per-context correlations at item level
    (NaN for skipped contexts, in the order of ``context_labels``); ``reason`` says why the
    value is NaN or which contexts / bootstrap replicates were left out ("" when nothing was).
    ``n_units`` counts what was correlated (contexts used, systems, or items) and
    ``n_skipped`` the contexts (item level) or systems skipped.
    """

    value: float
    lower: float
    upper: float
    n_used: int
    n_dropped_nan: int
    per_context: np.ndarray | None
    reason: str
    unit: str
    method: str
    pvalue: float = np.nan
    n_units: int = 0
    n_skipped: int = 0
    context_labels: np.ndarray | None = None
    n_boot: int = 0


def check_options(unit, method, variant):
    """Raise ValueError for an unknown aggregation unit, method or Kendall variant."""
    check_choice(unit, UNITS, "unit")
    check_choice(method, METHODS, "method")
    check_choice(variant, KENDALL_VARIANTS, "variant")


def correlation(
    judge,
    human,
    unit="item",
    method="spearman",
    variant="b",
    contexts=None,
    systems=None,
    n_boot=0,
    confidence=0.95,
    random_state=None,
):
    """Correlation of judge scores with human scores per item, system or overall.

    Parameters
    ----------
    judge, human : array_like of shape (n_items,)
        Scores aligned item by item. NaN marks an unparsed judge output (or a missing human
        score); such items are left out and counted in ``n_dropped_nan``, never imputed.
    unit : {"item", "system", "overall"}
        What is correlated. ``"item"``: the candidates within each context, averaged over
        contexts (the "summary-level" of comparative assessment); contexts with fewer than 2
        valid items or constant scores are skipped and counted in ``reason``. ``"system"``:
        per-system means of the valid items, then one correlation over systems.
        ``"overall"``: all valid items pooled.
    method : {"spearman", "kendall", "pearson"}
    variant : {"b", "c"}
        Kendall's tau-b or tau-c (ignored by the other methods).
    contexts : array_like of shape (n_items,), optional
        Context label of each item. Required for ``unit="item"``; elsewhere it defines the
        units the bootstrap resamples (each item is its own unit when omitted).
    systems : array_like of shape (n_items,), optional
        System label of each item; required for ``unit="system"``.
    n_boot : int
        Bootstrap replicates (0: no interval). Replicates resample whole contexts with
        replacement; replicates where the statistic is undefined are left out and counted.
    confidence : float
        Coverage of the percentile interval (which, near +-1 or with few systems, need not
        contain the estimate).
    random_state : None, int or numpy Generator
        Seed of the bootstrap.

    Returns
    -------
    CorrelationResult
        ``value`` NaN with a ``reason`` when fewer than 3 valid items (or systems) remain,
        when either side is constant, or when every judge score is NaN. Point values are
        scipy's (overall, system); item-level per-context values use vectorised twins of
        scipy's formulas (checked against scipy in the tests). System means that differ only
        by floating-point rounding count as tied.

    Raises
    ------
    ValueError
        Unknown unit/method/variant, arrays that are not 1-D or differ in length, infinite
        scores, missing ``contexts`` for ``unit="item"`` or ``systems`` for ``unit="system"``.
    """
    check_options(unit, method, variant)
    confidence = check_confidence(confidence)
    if int(n_boot) != n_boot or n_boot < 0:
        raise ValueError(f"n_boot must be a non-negative integer; got {n_boot!r}")
    n_boot = int(n_boot)
    j = as_scores(judge, "judge")
    h = as_scores(human, "human", n=j.shape[0])
    n = j.shape[0]
    if n == 0:
        raise ValueError("judge and human scores are empty")
    if contexts is not None:
        contexts = as_labels(contexts, n, "contexts")
    if systems is not None:
        systems = as_labels(systems, n, "systems")
    if unit == "item" and contexts is None:
        raise ValueError("unit='item' correlates within each context: pass contexts=")
    if unit == "system" and systems is None:
        raise ValueError("unit='system' averages per system: pass systems=")

    valid = np.isfinite(j) & np.isfinite(h)
    n_dropped = int(n - valid.sum())
    common = dict(unit=unit, method=method, n_boot=n_boot)

    def nan_result(reason, n_used=0, **extra):
        return CorrelationResult(
            np.nan, np.nan, np.nan, n_used, n_dropped, None, reason, **common, **extra
        )

    if not np.isfinite(j).any():
        return nan_result(f"all {n} judge scores are NaN (unparsed)")
    if not np.isfinite(h).any():
        return nan_result(f"all {n} human scores are NaN")

    rng = check_random_state(random_state)
    boot = dict(n_boot=n_boot, confidence=confidence, random_state=random_state, rng=rng)
    if unit == "item":
        return _item_level(j, h, valid, contexts, method, variant, boot, n_dropped, common)

    x, y = j[valid], h[valid]
    units = n_units = None
    if n_boot:
        if contexts is not None:
            units, _ = label_codes(contexts[valid])
        else:
            units = np.arange(x.shape[0], dtype=np.int64)
        n_units = int(units.max()) + 1 if units.shape[0] else 0

    if unit == "overall":
        px, py, what, skipped, skip_note = x, y, "items", 0, ""

        def replicate(W):
            return _boot_pooled(x, y, units, n_units, method, variant, W)

    else:  # system level
        sys_codes, sys_labels = label_codes(systems[valid])
        n_sys = sys_labels.shape[0]
        counts = np.bincount(sys_codes, minlength=n_sys).astype(np.float64)
        px = _snap_ties(np.bincount(sys_codes, x, n_sys) / counts)
        py = _snap_ties(np.bincount(sys_codes, y, n_sys) / counts)
        what = "systems"
        skipped = label_codes(systems)[1].shape[0] - n_sys
        skip_note = f"{skipped} system(s) with no valid item left out" if skipped else ""

        def replicate(W):
            return _boot_system(x, y, units, n_units, sys_codes, n_sys, method, variant, W)

    problem = _pooled_problem(px, py, what)
    if problem:
        return nan_result(
            join_reasons(problem, skip_note), n_used=int(x.shape[0]), n_skipped=skipped
        )
    value, pvalue = _scipy_corr(px, py, method, variant)
    lower, upper, note = _boot_interval(boot, n_units, replicate)
    return CorrelationResult(
        value,
        lower,
        upper,
        int(x.shape[0]),
        n_dropped,
        None,
        join_reasons(skip_note, note),
        pvalue=pvalue,
        n_units=int(px.shape[0]),
        n_skipped=skipped,
        **common,
    )


def _item_level(j, h, valid, contexts, method, variant, boot, n_dropped, common):
    codes_all, labels = label_codes(contexts)
    n_ctx = labels.shape[0]
    seg = codes_all[valid]
    per_ctx, status = _segment_corr(j[valid], h[valid], seg, n_ctx, method, variant)
    ok = status == _OK
    reason = _status_reason(status)
    n_used = int(np.isin(seg, np.flatnonzero(ok)).sum())
    extra = dict(
        per_context=per_ctx,
        context_labels=labels,
        n_units=int(ok.sum()),
        n_skipped=int((~ok).sum()),
        **common,
    )
    if not ok.any():
        return CorrelationResult(
            np.nan,
            np.nan,
            np.nan,
            0,
            n_dropped,
            reason=join_reasons("no context has 2 or more valid, non-constant scores", reason),
            **extra,
        )
    used = per_ctx[ok]
    value = float(used.mean())
    lower, upper, note = _boot_interval(boot, used.shape[0], lambda W: _boot_mean(used, W))
    return CorrelationResult(
        value, lower, upper, n_used, n_dropped, reason=join_reasons(reason, note), **extra
    )


def _boot_interval(boot, n_units, replicates):
    """Percentile interval and note of the bootstrap in ``boot`` over ``n_units`` resampling
    units, ``replicates(W)`` giving one value per row of resampling counts W; (NaN, NaN, "")
    when there is no bootstrap (n_boot 0)."""
    if not boot["n_boot"]:
        return np.nan, np.nan, ""
    W = _boot_weights(boot["random_state"], boot["rng"], boot["n_boot"], n_units)
    return _percentile_interval(replicates(W), boot["confidence"])


#: scipy's Kendall without its axis / NaN-policy dispatch layer, which inspects the call's
#: signature each time: two thirds of a call on HANNA's pooled items (1.06 -> 0.38 ms). The
#: inputs here are finite 1-D arrays of 3 or more items already, so the layer has nothing to
#: do; the values are the same (tests/ranking/test_correlations.py). The public function
#: where a scipy has no unwrapped one.
_kendalltau = getattr(stats.kendalltau, "__wrapped__", stats.kendalltau)


def _scipy_corr(x, y, method, variant):
    """scipy's value and p-value (the reference numbers users see)."""
    if method == "spearman":
        res = stats.spearmanr(x, y)
    elif method == "kendall":
        res = _kendalltau(x, y, variant=variant)
    else:
        res = stats.pearsonr(x, y)
    return float(res.statistic), float(res.pvalue)


def _pooled_problem(x, y, what):
    if x.shape[0] < MIN_POOLED:
        return f"fewer than {MIN_POOLED} valid {what} ({x.shape[0]})"
    if np.all(x == x[0]):
        return f"judge scores are constant over the valid {what}; correlation undefined"
    if np.all(y == y[0]):
        return f"human scores are constant over the valid {what}; correlation undefined"
    return ""
