"""The scores the agreement tables compare: the human reference and the judges' scores.

The human reference is the mean over the chosen annotators of each (context, candidate,
attribute). Annotators named ``<group>_<n>`` (``expert_1``, ``crowd_3``) form groups; when a
data set has several groups the reference must be chosen with ``annotators=``. A judge's score
of an item is the mean of its parsed samples.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from data.agreement._tables import ITEM, as_list, pick_rows
from data.schema import DataError, Dataset

_GROUP = re.compile(r"^(?P<group>.+?)[_\-]?\d+$")


def annotator_groups(ds: Dataset) -> dict[str, list[str]]:
    """Annotators grouped by name: ``expert_1``..``expert_3`` -> ``expert``.

    Parameters
    ----------
    ds : Dataset
        Its human scores name the annotators.

    Returns
    -------
    dict of str to list of str
        Group -> its annotators, both sorted; a name without a trailing number is a group of
        its own (``expert_mean``, ``mean``). Empty without human scores.
    """
    groups: dict[str, list[str]] = {}
    names = (
        sorted(ds.human_scores["annotator"].astype(str).unique()) if len(ds.human_scores) else []
    )
    for name in names:
        m = _GROUP.match(name)
        groups.setdefault(m.group("group") if m else name, []).append(name)
    return groups


def reference_annotators(ds: Dataset, annotators=None) -> list[str]:
    """The annotators whose mean is the human reference.

    Parameters
    ----------
    ds : Dataset
        Its human scores name the annotators.
    annotators : str or iterable of str, optional
        The annotators chosen; default the only annotator group.

    Returns
    -------
    list of str
        ``annotators`` as a list, or the members of the only group.

    Raises
    ------
    DataError
        No human scores, or several annotator groups and no choice (the message lists the
        groups).
    """
    if annotators is not None:
        return as_list(annotators)
    groups = annotator_groups(ds)
    if not groups:
        raise DataError(f"{ds.name}: no human scores; agreement with humans needs them")
    if len(groups) > 1:
        listing = "; ".join(f"{g}: {', '.join(m)}" for g, m in groups.items())
        raise DataError(
            f"{ds.name}: human scores come from several annotator groups ({listing}); pass "
            "annotators=[...] (--annotators on the command line) to choose the human reference"
        )
    return next(iter(groups.values()))


def human_reference(ds: Dataset, annotators=None, attribute=None) -> pd.DataFrame:
    """Mean human score per (context, candidate, attribute) over the chosen annotators.

    Parameters
    ----------
    ds : Dataset
        The dataset.
    annotators : str or iterable of str, optional
        The reference annotators (see :func:`reference_annotators`).
    attribute : str or iterable of str, optional
        The attributes kept; default all.

    Returns
    -------
    pandas.DataFrame
        Columns context_id, candidate_id, attribute, human, n_annotators, in order of first
        appearance; NaN scores are left out of the mean and the count.

    Raises
    ------
    DataError
        No reference annotators (see :func:`reference_annotators`), or an annotator or
        attribute that does not appear in the human scores.
    """
    names = reference_annotators(ds, annotators)
    chosen = {"annotator": names, "attribute": attribute}
    columns = [*ITEM, "attribute", "score"]
    hs = pick_rows(ds.human_scores, chosen, f"{ds.name} human_scores", columns)
    out = (
        hs.groupby([*ITEM, "attribute"], sort=False, observed=True)["score"]
        .agg(human="mean", n_annotators="count")
        .reset_index()
    )
    return out


def select_ratings(ds: Dataset, judge=None, prompt_id=None, attribute=None) -> pd.DataFrame:
    """The ratings of the chosen judges, prompts and attributes.

    Parameters
    ----------
    ds : Dataset
        The dataset.
    judge, prompt_id, attribute : str or iterable of str, optional
        The names kept in each column; default all.

    Returns
    -------
    pandas.DataFrame
        The rows of ``ds.ratings`` kept, in table order.

    Raises
    ------
    DataError
        A chosen name that does not appear in its column.
    """
    return _ratings(ds, judge, prompt_id, attribute)


def _ratings(ds: Dataset, judge, prompt_id, attribute, columns=None) -> pd.DataFrame:
    chosen = {"judge": judge, "prompt_id": prompt_id, "attribute": attribute}
    return pick_rows(ds.ratings, chosen, f"{ds.name} ratings", columns)


def judge_scores(ds: Dataset, judge=None, prompt_id=None, attribute=None) -> pd.DataFrame:
    """Judge score per (context, candidate, attribute, judge, prompt_id).

    Parameters
    ----------
    ds, judge, prompt_id, attribute
        The ratings kept, as for :func:`select_ratings`.

    Returns
    -------
    pandas.DataFrame
        Columns context_id, candidate_id, attribute, judge, prompt_id, score (the mean of the
        parsed samples, NaN when none parsed), n_samples, n_unparsed.

    Raises
    ------
    DataError
        A chosen name that does not appear in the ratings.
    """
    keys = [*ITEM, "attribute", "judge", "prompt_id"]
    r = _ratings(ds, judge, prompt_id, attribute, columns=[*keys, "score"])
    out = (
        r.groupby(keys, sort=False, observed=True)["score"]
        .agg(score="mean", n_samples="size", n_parsed="count")
        .reset_index()
    )
    out["n_unparsed"] = out["n_samples"] - out["n_parsed"]
    return out.drop(columns="n_parsed")


def aligned_scores(
    ds: Dataset, judge=None, prompt_id=None, attribute=None, annotators=None
) -> pd.DataFrame:
    """Judge scores joined with the human reference and the candidates' systems.

    Parameters
    ----------
    ds, judge, prompt_id, attribute
        The ratings kept, as for :func:`select_ratings`.
    annotators : str or iterable of str, optional
        The reference annotators (see :func:`reference_annotators`).

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`judge_scores`, then human, n_annotators and system: one row per
        item the judge rated (unparsed ones kept with NaN score) that has a human score;
        ``system`` is NaN where the candidates table has none.

    Raises
    ------
    DataError
        No ratings, no reference annotators, or a chosen name that does not appear.
    """
    if not len(ds.ratings):
        raise DataError(f"{ds.name}: no judge ratings (absolute scores) to compare with humans")
    js = judge_scores(ds, judge, prompt_id, attribute)
    hr = human_reference(ds, annotators, attribute)
    out = js.merge(hr, on=[*ITEM, "attribute"], how="inner")
    cands = ds.candidates
    if "system" in cands.columns:
        out = out.merge(cands[[*ITEM, "system"]].drop_duplicates(ITEM), on=ITEM, how="left")
    else:
        out["system"] = np.nan
    return out
