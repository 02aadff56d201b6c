"""Judges against the human reference: correlations (Williams' tests: ``williams``).

Correlations are taken at three units (``level`` in the tables): item level within each
context, system level over per-system means, overall over all items; intervals resample
contexts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

import ranking as rk
from data.agreement._tables import codes, table_frame
from data.agreement.reference import aligned_scores
from data.schema import Dataset
from ranking._core import check_choice
from ranking.agreement import METHODS, UNITS

#: Columns of :func:`correlation_table`, in order.
CORRELATION_COLUMNS = (
    "judge prompt_id attribute level method variant value lower upper pvalue n_items n_used "
    "n_dropped_nan n_units n_skipped reason"
).split()


def correlation_table(
    ds: Dataset,
    judge=None,
    prompt_id=None,
    attribute=None,
    annotators=None,
    units: Sequence[str] = ("overall", "system", "item"),
    methods: Sequence[str] = ("kendall",),
    variant: str = "b",
    n_boot: int = 1000,
    confidence: float = 0.95,
    random_state: int | None = 0,
) -> pd.DataFrame:
    """Judge-human correlations: one row per judge x prompt x attribute x unit x method.

    Parameters
    ----------
    ds : Dataset
        Ratings, human scores and (for the system unit) the candidates' systems.
    judge, prompt_id, attribute : str or iterable of str, optional
        The ratings kept; default all.
    annotators : str or iterable of str, optional
        The human reference (``data.agreement.reference_annotators``).
    units : sequence of {"overall", "system", "item"}
        Item level correlates within each context (``context_id``), system level over
        ``system`` means, overall pools all items.
    methods : sequence of {"kendall", "spearman", "pearson"}
        Correlation coefficients.
    variant : str
        Kendall's variant (``ranking.agreement.KENDALL_VARIANTS``); ignored by the others.
    n_boot : int
        Bootstrap replicates of the interval, resampling contexts.
    confidence : float
        Coverage of the interval.
    random_state : int or None
        Seed of the bootstrap; the same seed in every cell, so that a cell's interval does
        not depend on which others were asked for.

    Returns
    -------
    pandas.DataFrame
        :data:`CORRELATION_COLUMNS`: judge, prompt_id, attribute, level (the unit), method,
        variant, value, lower, upper, pvalue, n_items (rated by the judge and the humans),
        n_used, n_dropped_nan, n_units (contexts / systems / items correlated), n_skipped,
        reason (why a value is NaN, e.g. no system labels).

    Raises
    ------
    ValueError
        An unknown unit or method.
    DataError
        No ratings, no human reference, or a chosen name that does not appear.
    """
    for u in units:
        check_choice(u, UNITS, "unit")
    for m in methods:
        check_choice(m, METHODS, "method")
    df = aligned_scores(ds, judge, prompt_id, attribute, annotators)
    score = df["score"].to_numpy(dtype=np.float64)
    human = df["human"].to_numpy(dtype=np.float64)
    ctx_all = codes(df["context_id"])
    sys_all = codes(df["system"])
    rows = []
    groups = df.groupby(["judge", "prompt_id", "attribute"], sort=True, observed=True).indices
    for (jname, pid, attr), idx in groups.items():
        x, y, ctx, sysc = score[idx], human[idx], ctx_all[idx], sys_all[idx]
        has_sys = bool((sysc >= 0).all())
        for unit in units:
            for method in methods:
                base = dict(
                    judge=jname,
                    prompt_id=pid,
                    attribute=attr,
                    level=unit,
                    method=method,
                    variant=variant if method == "kendall" else "",
                    n_items=len(idx),
                )
                if unit == "system" and not has_sys:
                    rows.append(
                        {**base, "value": np.nan, "reason": "candidates carry no system labels"}
                    )
                    continue
                # The same seed in every cell: a cell's interval does not depend on which
                # others were asked for, and judges are resampled alike.
                res = rk.correlation(
                    x,
                    y,
                    unit=unit,
                    method=method,
                    variant=variant,
                    contexts=ctx,
                    systems=sysc if has_sys else None,
                    n_boot=n_boot,
                    confidence=confidence,
                    random_state=random_state,
                )
                rows.append({**base, **_corr_fields(res)})
    return table_frame(rows, CORRELATION_COLUMNS)


def _corr_fields(res: rk.CorrelationResult) -> dict:
    return dict(
        value=res.value,
        lower=res.lower,
        upper=res.upper,
        pvalue=res.pvalue,
        n_used=res.n_used,
        n_dropped_nan=res.n_dropped_nan,
        n_units=res.n_units,
        n_skipped=res.n_skipped,
        reason=res.reason,
    )
