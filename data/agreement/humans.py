"""The human annotators among themselves: inter-annotator agreement, the human baseline and
the correlation between every pair of annotators."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

import ranking as rk
from data.agreement._tables import ITEM, codes, pick, table_frame, wide
from data.agreement.reference import annotator_groups
from data.schema import Dataset
from ranking._core import check_choice
from ranking.agreement import BASELINE_REFERENCES, METHODS, UNITS

#: Columns of :func:`iaa_table`, in order.
IAA_COLUMNS = (
    "group attribute n_items n_annotators icc2k icc2k_lower icc2k_upper icc2k_items "
    "alpha_nominal alpha_ordinal alpha_interval share_all_agree reason"
).split()
#: Columns of :func:`human_baseline_table`, in order.
BASELINE_COLUMNS = (
    "group attribute level method reference annotator value n_used n_dropped_nan reason".split()
)
#: Columns of :func:`annotator_pairs_table`, in order.
PAIRS_COLUMNS = "group attribute annotator_a annotator_b level method value n_used reason".split()


def rating_matrix(hs: pd.DataFrame, names: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """The items x annotators matrix of human scores.

    Parameters
    ----------
    hs : pandas.DataFrame
        Human scores of one attribute.
    names : list of str
        The annotators, in the order of the columns.

    Returns
    -------
    Y : numpy.ndarray of float64
        Shape (items, annotators); NaN where an annotator did not score an item (the mean
        where one scored it twice).
    items : pandas.DataFrame
        The items (context_id, candidate_id), in order of first appearance.
    """
    M, items, _ = wide(hs, "annotator", columns=names)
    return M, items


def _group_scores(
    ds: Dataset, attribute, groups: dict[str, list[str]] | None
) -> Iterator[tuple[str, list[str], str, pd.DataFrame]]:
    """(group, annotators, attribute, human scores) per group of two or more and attribute."""
    groups = groups if groups is not None else annotator_groups(ds)
    hs = pick(ds.human_scores, "attribute", attribute, f"{ds.name} human_scores")
    for gname, names in groups.items():
        if len(names) < 2:
            continue
        sub = pick(hs, "annotator", names, f"{ds.name} human_scores")
        for attr, g in sub.groupby("attribute", sort=True, observed=True):
            yield gname, list(names), attr, g


def _units(ds: Dataset, items: pd.DataFrame, has_sys: bool):
    """Context codes and system codes (None without labels for every item) of the items."""
    ctx = codes(items["context_id"])
    if not has_sys:
        return ctx, None
    sys_col = items.merge(
        ds.candidates[[*ITEM, "system"]].drop_duplicates(ITEM), on=ITEM, how="left"
    )["system"]
    return ctx, (codes(sys_col) if sys_col.notna().all() else None)


def _group_units(ds: Dataset, attribute, groups: dict[str, list[str]] | None):
    """(group, annotators, attribute, rating matrix, context codes, system codes or None) per
    group of two or more and attribute: :func:`_group_scores` with the items' units."""
    has_sys = "system" in ds.candidates.columns
    for gname, names, attr, g in _group_scores(ds, attribute, groups):
        Y, items = rating_matrix(g, names)
        ctx, sysc = _units(ds, items, has_sys)
        yield gname, names, attr, Y, ctx, sysc


def iaa_table(
    ds: Dataset,
    attribute=None,
    groups: dict[str, list[str]] | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Inter-annotator agreement per annotator group and attribute.

    Parameters
    ----------
    ds : Dataset
        Its human scores.
    attribute : str or iterable of str, optional
        The attributes kept; default all.
    groups : dict of str to list of str, optional
        Group -> annotators; default :func:`data.agreement.annotator_groups`. Groups with a
        single annotator are left out.
    confidence : float
        Coverage of the ICC interval.

    Returns
    -------
    pandas.DataFrame
        :data:`IAA_COLUMNS`: group, attribute, n_items, n_annotators, icc2k, icc2k_lower,
        icc2k_upper, icc2k_items (items rated by every annotator), alpha_nominal,
        alpha_ordinal, alpha_interval (Krippendorff's alpha at three scales),
        share_all_agree, reason (why a value is NaN).

    Raises
    ------
    DataError
        An attribute or annotator that does not appear in the human scores.
    """
    rows = []
    for gname, names, attr, g in _group_scores(ds, attribute, groups):
        Y, _ = rating_matrix(g, names)
        row = dict(group=gname, attribute=attr, n_items=Y.shape[0], n_annotators=len(names))
        reasons = []
        res = rk.icc(Y, kind="ICC2k", confidence=confidence)
        row.update(
            icc2k=res.value,
            icc2k_lower=res.lower,
            icc2k_upper=res.upper,
            icc2k_items=res.n_items,
        )
        if res.reason:
            reasons.append(f"ICC2k: {res.reason}")
        for scale in ("nominal", "ordinal", "interval"):
            alpha = rk.krippendorff_alpha(Y, scale)
            row[f"alpha_{scale}"] = alpha.value
            if alpha.reason:
                reasons.append(f"alpha ({scale}): {alpha.reason}")
        share = rk.share_all_agree(Y)
        row["share_all_agree"] = share.value
        reasons.append(share.reason)
        row["reason"] = "; ".join(dict.fromkeys(r for r in reasons if r))
        rows.append(row)
    return table_frame(rows, IAA_COLUMNS)


def human_baseline_table(
    ds: Dataset,
    attribute=None,
    groups: dict[str, list[str]] | None = None,
    units: Sequence[str] = ("overall", "system"),
    method: str = "kendall",
    variant: str = "b",
    reference: str = "others",
) -> pd.DataFrame:
    """Each annotator against the mean of the other annotators of the group (or of all).

    Parameters
    ----------
    ds : Dataset
        Its human scores and (for the system unit) the candidates' systems.
    attribute : str or iterable of str, optional
        The attributes kept; default all.
    groups : dict of str to list of str, optional
        Group -> annotators; default :func:`data.agreement.annotator_groups`. Groups with a
        single annotator are left out.
    units : sequence of {"overall", "system", "item"}
        Aggregation units of the correlation.
    method : str
        Correlation coefficient.
    variant : str
        Kendall's variant.
    reference : {"others", "all"}
        "others": each annotator vs the mean of the other annotators (leave-one-out);
        "all": vs the mean of all annotators of the group, self included (the upper bound
        of Chhun et al. 2024, whose HANNA figures use it).

    Returns
    -------
    pandas.DataFrame
        :data:`BASELINE_COLUMNS`: group, attribute, level (the unit), method, reference,
        annotator ("mean" for the mean over annotators), value, n_used, n_dropped_nan,
        reason. Without system labels the system unit is one "mean" row with NaN and the
        reason.

    Raises
    ------
    ValueError
        An unknown reference.
    DataError
        An attribute or annotator that does not appear in the human scores.
    """
    check_choice(reference, BASELINE_REFERENCES, "reference")
    rows = []
    for gname, names, attr, Y, ctx, sysc in _group_units(ds, attribute, groups):
        for unit in units:
            base = dict(group=gname, attribute=attr, level=unit, method=method)
            base["reference"] = reference
            if unit == "system" and sysc is None:
                rows.append(
                    {
                        **base,
                        "annotator": "mean",
                        "value": np.nan,
                        "reason": "candidates carry no system labels",
                    }
                )
                continue
            res = rk.human_baseline(
                Y,
                contexts=ctx,
                systems=sysc,
                unit=unit,
                method=method,
                variant=variant,
                reference=reference,
            )
            for name, r in zip(names, res.results, strict=True):
                rows.append(
                    {
                        **base,
                        "annotator": name,
                        "value": r.value,
                        "n_used": r.n_used,
                        "n_dropped_nan": r.n_dropped_nan,
                        "reason": r.reason,
                    }
                )
            rows.append({**base, "annotator": "mean", "value": res.mean, "reason": res.reason})
    return table_frame(rows, BASELINE_COLUMNS)


def annotator_pairs_table(
    ds: Dataset,
    attribute=None,
    groups: dict[str, list[str]] | None = None,
    method: str = "kendall",
    variant: str = "b",
    unit: str = "overall",
) -> pd.DataFrame:
    """The correlation between every pair of annotators of a group (Chiang & Lee, Table 6).

    Parameters
    ----------
    ds : Dataset
        Its human scores and (for the system unit) the candidates' systems.
    attribute : str or iterable of str, optional
        The attributes kept; default all.
    groups : dict of str to list of str, optional
        Group -> annotators; default :func:`data.agreement.annotator_groups`. Groups with a
        single annotator are left out.
    method : {"kendall", "spearman", "pearson"}
        Correlation coefficient (``ranking.correlation``).
    variant : str
        Kendall's variant.
    unit : {"overall", "system", "item"}
        Overall pools every item both annotators scored; system correlates per-system
        means; item correlates within each context and averages.

    Returns
    -------
    pandas.DataFrame
        :data:`PAIRS_COLUMNS`, one row per pair (annotator_a before annotator_b in the
        group's order) and attribute: group, attribute, annotator_a, annotator_b, level,
        method, value, n_used (items both scored; items one of them left blank are left
        out), reason (why value is NaN).

    Raises
    ------
    ValueError
        An unknown method or unit.
    DataError
        An attribute or annotator that does not appear in the human scores.
    """
    check_choice(method, METHODS, "method")
    check_choice(unit, UNITS, "unit")
    rows = []
    for gname, names, attr, Y, ctx, sysc in _group_units(ds, attribute, groups):
        for a in range(len(names)):
            for b in range(a + 1, len(names)):
                base = dict(
                    group=gname,
                    attribute=attr,
                    annotator_a=names[a],
                    annotator_b=names[b],
                    level=unit,
                    method=method,
                )
                if unit == "system" and sysc is None:
                    rows.append({**base, "value": np.nan, "reason": "no system labels"})
                    continue
                res = rk.correlation(
                    Y[:, a],
                    Y[:, b],
                    unit=unit,
                    method=method,
                    variant=variant,
                    contexts=ctx,
                    systems=sysc,
                )
                rows.append(
                    {**base, "value": res.value, "n_used": res.n_used, "reason": res.reason}
                )
    return table_frame(rows, PAIRS_COLUMNS)
