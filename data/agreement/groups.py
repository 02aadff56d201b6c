"""Two groups of systems compared, by the judge and by the humans (Chiang & Lee 2023, Table 1).

Chiang & Lee rate human-written and GPT-2 stories with the same Likert questionnaire, by
English teachers and by an LLM, and report for each rater the mean and standard deviation of
each group and Welch's t-test between the groups: does the LLM see the difference the humans
see? :func:`compare_groups` does that for any per-item score frame (one row per rated item,
a ``system`` column and one or more score columns: a judge's ratings, a ranking's scores,
the human scores, the ratings under each prompt); :func:`group_comparison_table` lays it out
for a judge's ratings beside the human scores. Welch's test itself is
``ranking.agreement.welch_t``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from data.agreement.reference import aligned_scores
from data.natural import natural_sorted
from data.schema import DataError, Dataset
from ranking import welch_t

__all__ = ["COMPARE_COLUMNS", "GROUP_COLUMNS", "compare_groups", "group_comparison_table"]

#: The statistics columns of :func:`compare_groups` (after its ``by`` columns and ``score``).
STAT_COLUMNS = [
    "mean_a",
    "std_a",
    "n_a",
    "mean_b",
    "std_b",
    "n_b",
    "statistic",
    "pvalue",
    "df",
    "n_dropped_nan",
    "reason",
]
#: Columns of :func:`group_comparison_table`, in order.
GROUP_COLUMNS = ["judge", "prompt_id", "attribute", "rater", *STAT_COLUMNS]
#: Columns of :func:`compare_groups` without ``by`` columns.
COMPARE_COLUMNS = ["score", *STAT_COLUMNS]


def _systems(known, group: Iterable[str], name: str, where: str, table: str) -> list[str]:
    wanted = [str(s) for s in group]
    if not wanted:
        raise DataError(f"{where}: group {name} is empty; pick at least one system for it")
    unknown = [s for s in wanted if s not in known]
    if unknown:
        raise DataError(
            f"{where}: group {name}: system(s) {', '.join(map(repr, unknown))} not in the "
            f"{table}; available: {', '.join(map(repr, natural_sorted(known)))}"
        )
    return wanted


def _groups(known, group_a, group_b, where: str, table: str) -> tuple[list[str], list[str]]:
    a = _systems(known, group_a, "A", where, table)
    b = _systems(known, group_b, "B", where, table)
    both = natural_sorted(set(a) & set(b))
    if both:
        raise DataError(
            f"{where}: system(s) {', '.join(map(repr, both))} in both groups; each system "
            "may be in one group only"
        )
    return a, b


def _welch_row(values: np.ndarray, in_a: np.ndarray, in_b: np.ndarray) -> dict:
    res = welch_t(values[in_a], values[in_b])
    return {c: getattr(res, c) for c in STAT_COLUMNS}


def compare_groups(
    frame: pd.DataFrame,
    group_a: Iterable[str],
    group_b: Iterable[str],
    values,
    *,
    by=(),
    system: str = "system",
    name: str = "scores",
    systems: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Mean ± sd of two groups of systems and Welch's t between them, per score column.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per item (e.g. a context and candidate), its ``system`` and its scores.
    group_a, group_b : iterable of str
        Systems of each group; non-empty, disjoint, and present in ``frame``.
    values : str or list of str
        The score columns to compare (each gets its own rows).
    by : str or list of str, optional
        Columns that split the items first (one comparison per value, e.g. an attribute).
    system : str
        The column with the system of each item.
    name : str
        What ``frame`` is, for error messages.
    systems : iterable of str, optional
        The systems a group may name (default: those in ``frame``). A wider set (every
        system of the dataset) lets a group name a system with no score here: its group
        then has fewer values, and the test says so when it has too few.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, then :data:`COMPARE_COLUMNS`: ``score`` (the column compared),
        each group's mean, standard deviation (ddof=1) and number of finite values,
        Welch's ``statistic``, two-sided ``pvalue`` and ``df``, the NaN scores left out
        (``n_dropped_nan``) and the ``reason`` when the test is undefined (NaN).

    Raises
    ------
    DataError
        A missing column, an empty group, a system not in ``frame``, a system in both.
    """
    values = [values] if isinstance(values, str) else list(values)
    by = [by] if isinstance(by, str) else list(by)
    missing = [c for c in [system, *by, *values] if c not in frame.columns]
    if missing:
        raise DataError(
            f"{name}: no column(s) {', '.join(map(repr, missing))}; the columns are "
            f"{', '.join(map(repr, frame.columns))}"
        )
    if systems is None:
        known, table = set(frame[system].dropna().astype(str)), "scores"
    else:
        known, table = {str(s) for s in systems}, "systems"
    a, b = _groups(known, group_a, group_b, name, table)
    labels = frame[system].astype(str)
    in_a, in_b = labels.isin(a).to_numpy(), labels.isin(b).to_numpy()
    arrays = {v: pd.to_numeric(frame[v], errors="coerce").to_numpy(np.float64) for v in values}
    if by:
        parts = frame.groupby(by, sort=True, observed=True).indices.items()
    else:
        parts = [((), np.arange(len(frame)))]
    rows = []
    for key, idx in parts:
        key = key if isinstance(key, tuple) else (key,)
        sel = np.zeros(len(frame), dtype=bool)
        sel[idx] = True
        for v in values:
            row = dict(zip(by, key, strict=True))
            row["score"] = v
            row.update(_welch_row(arrays[v], sel & in_a, sel & in_b))
            rows.append(row)
    return pd.DataFrame(rows, columns=[*by, *COMPARE_COLUMNS])


def group_comparison_table(
    ds: Dataset,
    group_a: Iterable[str],
    group_b: Iterable[str],
    *,
    judge=None,
    prompt_id=None,
    attribute=None,
    annotators=None,
) -> pd.DataFrame:
    """Mean and sd of two groups of systems, and Welch's t between them, per rater.

    The unit is the rated item (context, candidate): the judge's score is the mean of its
    parsed samples, the human score the mean over ``annotators`` (as in
    :func:`data.agreement.aligned_scores`, whose items are used for both raters, so that
    the judge and the humans are compared on the same items).

    Parameters
    ----------
    ds : Dataset
        Needs ratings, human scores and a ``system`` column in the candidates table.
    group_a, group_b : iterable of str
        Systems of each group; non-empty and disjoint.
    judge, prompt_id, attribute : str or list of str, optional
        Selection of the ratings (default: all).
    annotators : str or list of str, optional
        The human reference (default: the only annotator group; see
        :func:`data.agreement.human_reference`).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`GROUP_COLUMNS`: per judge, prompt and attribute one row with
        ``rater`` "judge" and one with "human": the groups' means, standard deviations
        (ddof=1) and item counts, Welch's ``statistic``, two-sided ``pvalue`` and ``df``,
        the NaN scores left out (``n_dropped_nan``) and the ``reason`` when the test is
        undefined (NaN: a group with fewer than 2 scores, or both constant).

    Raises
    ------
    DataError
        No ratings or system labels; an empty group, a system not in the candidates
        table, a system in both groups; unknown judge, prompt, attribute or annotator.
    """
    cands = ds.candidates
    if "system" not in cands.columns or not cands["system"].notna().any():
        raise DataError(
            f"{ds.name}: candidates carry no system labels, so there are no groups of systems "
            "to compare; add a 'system' column to the candidates table"
        )
    known = set(cands["system"].dropna().astype(str))
    a, b = _groups(known, group_a, group_b, ds.name, "candidates table")
    df = aligned_scores(
        ds, judge=judge, prompt_id=prompt_id, attribute=attribute, annotators=annotators
    )
    out = compare_groups(
        df,
        a,
        b,
        ["score", "human"],
        by=["judge", "prompt_id", "attribute"],
        name=ds.name,
        systems=known,
    )
    out = out.rename(columns={"score": "rater"})
    out["rater"] = out["rater"].map({"score": "judge", "human": "human"})
    return out[GROUP_COLUMNS]
