"""Cached rationale tables for the Rationales page (``data.rationales``).

Every function takes the dataset, the judge (its name and, for a ratings judge, its prompt)
and the attribute (None: every criterion the judge answered). The map is seeded
(:data:`SEED`) and cached per setting, so a rerun (a click on a point) redraws instantly.
"""

from __future__ import annotations

import pandas as pd

from data import rationales as rat
from data.schema import DataError, Dataset
from pages.services.common import cache_data

#: The seed of the map's sample, SVD, t-SNE and KMeans: the same settings give the same map.
SEED = 0
#: At most this many points are mapped and drawn (a seeded sample beyond).
MAX_POINTS = 1500


@cache_data(show_spinner="Reading the judge's rationales…", max_entries=16)
def frame(ds: Dataset, judge: str, prompt_id: str | None) -> tuple[pd.DataFrame, dict, str]:
    """(rationales of every criterion, counts, "") or (empty, counts, why there are none)."""
    try:
        rows = rat.rationales(ds, None, judge, prompt_id)
    except DataError as err:
        return pd.DataFrame(), {}, str(err)
    return rows, dict(rows.attrs.get("counts", {})), ""


def subset(ds: Dataset, judge: str, prompt_id: str | None, attribute: str | None) -> pd.DataFrame:
    """The rationales of one criterion (None: all)."""
    rows, _, _ = frame(ds, judge, prompt_id)
    if attribute is None or not len(rows):
        return rows
    return rows[rows["attribute"] == attribute].reset_index(drop=True)


@cache_data(show_spinner=False, max_entries=32)
def counts(ds: Dataset, judge: str, prompt_id: str | None, attribute: str | None) -> dict:
    """answers / errors / empty / kept for one criterion (None: all); {} without answers."""
    if attribute is None:
        return frame(ds, judge, prompt_id)[1]
    try:
        return dict(rat.rationales(ds, attribute, judge, prompt_id).attrs["counts"])
    except DataError:
        return {}


@cache_data(show_spinner="Finding keywords…", max_entries=32)
def keywords(
    ds: Dataset, judge: str, prompt_id: str | None, attribute: str | None, by: str, n: int
) -> tuple[pd.DataFrame, str]:
    """(the keyword table of :func:`data.rationales.keyword_table`, "") or (empty, why)."""
    rows = subset(ds, judge, prompt_id, attribute)
    try:
        return rat.keyword_table(rows, by, n=n), ""
    except DataError as err:
        return pd.DataFrame(), str(err)


@cache_data(show_spinner="Mapping the rationales (TF-IDF, SVD, t-SNE)…", max_entries=16)
def rationale_map(
    ds: Dataset, judge: str, prompt_id: str | None, attribute: str | None, n_clusters: int
) -> tuple[rat.RationaleMap | None, str]:
    """(the seeded map, "") or (None, why there is none)."""
    rows = subset(ds, judge, prompt_id, attribute)
    try:
        return (
            rat.rationale_map(
                rows, n_clusters=n_clusters, max_points=MAX_POINTS, random_state=SEED
            ),
            "",
        )
    except DataError as err:
        return None, str(err)


@cache_data(show_spinner="Checking what the rationales cite…", max_entries=16)
def citations(
    ds: Dataset, judge: str, prompt_id: str | None, attribute: str | None, use_context: bool
) -> tuple[pd.DataFrame, dict]:
    """(:func:`data.rationales.unsupported_citations` rows, :func:`citation_summary`)."""
    rows = subset(ds, judge, prompt_id, attribute)
    if not len(rows):
        return pd.DataFrame(), {}
    checked = rat.unsupported_citations(rows, ds, use_context=use_context)
    return checked, rat.citation_summary(checked)
