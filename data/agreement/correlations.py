"""Judges against the human reference: correlations, and Williams' tests between judges.

Correlations are taken at three units (``level`` in the tables): item level within each
context, system level over per-system means, overall over all items; intervals resample
contexts. Williams' test compares two judges' correlations with the humans, with a
Benjamini-Hochberg family per attribute and Eval-Prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

import ranking as rk
from data.agreement._tables import ITEM, codes, table_frame
from data.agreement.reference import aligned_scores
from data.schema import DataError, Dataset
from ranking._score_checks import check_choice
from ranking.correlations import METHODS, UNITS

#: Columns of :func:`correlation_table`, in order.
CORRELATION_COLUMNS = (
    "judge prompt_id attribute level method variant value lower upper pvalue n_items n_used "
    "n_dropped_nan n_units n_skipped reason"
).split()
#: Columns of :func:`williams_table`, in order.
WILLIAMS_COLUMNS = (
    "attribute prompt_id judge_a judge_b r_a r_b r_ab n t p p_bh level method reason".split()
)


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
        Kendall's variant (``ranking.correlations.KENDALL_VARIANTS``); ignored by the others.
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


def williams_table(
    ds: Dataset,
    judge=None,
    prompt_id=None,
    attribute=None,
    annotators=None,
    unit: str = "overall",
    method: str = "kendall",
    variant: str = "b",
) -> pd.DataFrame:
    """Williams' test between every pair of judges under the same prompt, per attribute.

    Parameters
    ----------
    ds : Dataset
        Ratings, human scores and (for the system unit) the candidates' systems.
    judge, prompt_id, attribute : str or iterable of str, optional
        The ratings kept; default all.
    annotators : str or iterable of str, optional
        The human reference (``data.agreement.reference_annotators``).
    unit : {"overall", "system"}
        Correlate over all items or over per-system means.
    method : str
        Correlation coefficient.
    variant : str
        Kendall's variant.

    Returns
    -------
    pandas.DataFrame
        :data:`WILLIAMS_COLUMNS`: attribute, prompt_id, judge_a, judge_b, r_a, r_b (each
        judge against the humans on the items both judges have), r_ab, n, t (positive:
        judge_a agrees more), p, p_bh (Benjamini-Hochberg over the judge pairs of one
        attribute and prompt_id), level (``unit``), method, reason. A pair appears once
        (judge_a before judge_b in sorted order); a family with one judge has no rows.

    Raises
    ------
    DataError
        System-level tests without system labels; no ratings, no human reference, or a
        chosen name that does not appear.
    """
    df = aligned_scores(ds, judge, prompt_id, attribute, annotators)
    # Integer codes once for the whole frame; each family is then laid out with numpy
    # (per-family pandas pivots and merges cost more than the tests themselves).
    item_all = df.groupby(ITEM, sort=False, observed=True).ngroup().to_numpy()
    judge_all, judge_labels = pd.factorize(df["judge"], sort=True)
    score_all = df["score"].to_numpy(dtype=np.float64)
    human_all = df["human"].to_numpy(dtype=np.float64)
    sys_all = codes(df["system"])
    rows = []
    families = df.groupby(["attribute", "prompt_id"], sort=True, observed=True).indices
    for (attr, pid), idx in families.items():
        _, item = np.unique(item_all[idx], return_inverse=True)
        present, jcol = np.unique(judge_all[idx], return_inverse=True)
        judges = [str(judge_labels[c]) for c in present]
        if len(judges) < 2:
            continue
        n_items = int(item.max()) + 1
        S = np.full((n_items, len(judges)), np.nan)
        S[item, jcol] = score_all[idx]
        human = np.full(n_items, np.nan)
        human[item] = human_all[idx]
        sysc = np.full(n_items, -1)
        sysc[item] = sys_all[idx]
        systems = sysc if (sysc >= 0).all() else None
        if unit == "system" and systems is None:
            raise DataError(f"{ds.name}: system-level Williams tests need system labels")
        res = rk.williams_matrix(
            S, human, unit=unit, method=method, variant=variant, systems=systems, names=judges
        )
        for a in range(len(judges)):
            for b in range(a + 1, len(judges)):
                rows.append(
                    dict(
                        attribute=attr,
                        prompt_id=pid,
                        judge_a=judges[a],
                        judge_b=judges[b],
                        r_a=res.r_human_pair[a, b],
                        r_b=res.r_human_pair[b, a],
                        r_ab=res.r_between[a, b],
                        n=int(res.n[a, b]),
                        t=res.statistic[a, b],
                        p=res.pvalue[a, b],
                        p_bh=res.pvalue_adjusted[a, b],
                        level=unit,
                        method=method,
                        reason=res.reasons.get((a, b), ""),
                    )
                )
    return table_frame(rows, WILLIAMS_COLUMNS)


def williams_matrix_frame(
    table: pd.DataFrame, attribute: str, prompt_id: str, value: str = "p_bh"
) -> pd.DataFrame:
    """One (attribute, prompt_id) of :func:`williams_table` as a square judge x judge frame.

    Parameters
    ----------
    table : pandas.DataFrame
        A :func:`williams_table`.
    attribute, prompt_id : str
        The family shown.
    value : str
        The column shown ("p_bh", "p", "t", "r_ab", ...).

    Returns
    -------
    pandas.DataFrame
        Judges (sorted) as index and columns, NaN on the diagonal and for pairs not tested.
        "t" is antisymmetric (row judge minus column judge); the others are symmetric.
    """
    sel = table[(table["attribute"] == attribute) & (table["prompt_id"] == prompt_id)]
    judges = sorted(set(sel["judge_a"]) | set(sel["judge_b"]))
    M = pd.DataFrame(np.nan, index=judges, columns=judges)
    sign = -1.0 if value == "t" else 1.0
    for row in sel.itertuples(index=False):
        v = getattr(row, value)
        M.loc[row.judge_a, row.judge_b] = v
        M.loc[row.judge_b, row.judge_a] = sign * v
    return M
