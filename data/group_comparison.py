"""Two groups of systems compared, by the judge and by the humans (Chiang & Lee 2023, Table 1).

Chiang & Lee rate human-written and GPT-2 stories with the same Likert questionnaire, by
English teachers and by an LLM, and report for each rater the mean and standard deviation of
each group and Welch's t-test between the groups: does the LLM see the difference the humans
see? :func:`group_comparison_table` lays that table out for any two disjoint groups of
systems; Welch's test itself is ``ranking.significance.welch_t``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from data.agreement import aligned_scores
from data.schema import DataError, Dataset
from ranking.significance import welch_t

__all__ = ["GROUP_COLUMNS", "group_comparison_table"]

#: Columns of :func:`group_comparison_table`, in order.
GROUP_COLUMNS = [
    "judge",
    "prompt_id",
    "attribute",
    "rater",
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


def _systems(ds: Dataset, group: Iterable[str], name: str) -> list[str]:
    wanted = [str(s) for s in group]
    if not wanted:
        raise DataError(f"{ds.name}: group {name} is empty; pick at least one system for it")
    known = set(ds.candidates["system"].dropna().astype(str))
    unknown = [s for s in wanted if s not in known]
    if unknown:
        raise DataError(
            f"{ds.name}: group {name}: system(s) {', '.join(map(repr, unknown))} not in the "
            f"candidates table; available: {', '.join(map(repr, sorted(known)))}"
        )
    return wanted


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
    a = _systems(ds, group_a, "A")
    b = _systems(ds, group_b, "B")
    both = sorted(set(a) & set(b))
    if both:
        raise DataError(
            f"{ds.name}: system(s) {', '.join(map(repr, both))} in both groups; each system "
            "may be in one group only"
        )
    df = aligned_scores(
        ds, judge=judge, prompt_id=prompt_id, attribute=attribute, annotators=annotators
    )
    system = df["system"].astype(str)
    in_a, in_b = system.isin(a).to_numpy(), system.isin(b).to_numpy()
    rows = []
    for (j, p, attr), idx in df.groupby(
        ["judge", "prompt_id", "attribute"], sort=True, observed=True
    ).indices.items():
        sel = np.zeros(len(df), dtype=bool)
        sel[idx] = True
        for rater, column in (("judge", "score"), ("human", "human")):
            values = df[column].to_numpy(dtype=np.float64)
            res = welch_t(values[sel & in_a], values[sel & in_b])
            rows.append(
                {
                    "judge": j,
                    "prompt_id": p,
                    "attribute": attr,
                    "rater": rater,
                    "mean_a": res.mean_a,
                    "std_a": res.std_a,
                    "n_a": res.n_a,
                    "mean_b": res.mean_b,
                    "std_b": res.std_b,
                    "n_b": res.n_b,
                    "statistic": res.statistic,
                    "pvalue": res.pvalue,
                    "df": res.df,
                    "n_dropped_nan": res.n_dropped_nan,
                    "reason": res.reason,
                }
            )
    return pd.DataFrame(rows, columns=GROUP_COLUMNS)
