"""Which systems an analysis looks at: list them, name the default exclusions, filter.

A dataset's candidates may carry a ``system`` (the generator that wrote them). Some systems
are references rather than generators (HANNA's human-written story): they are named in
``Dataset.reference_systems`` and analyses leave them out by default, as the papers do.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import numpy as np
import pandas as pd

from data.natural import natural_sorted
from data.schema import DataError, Dataset


def systems_of(ds: Dataset) -> list[str]:
    """The systems of ``ds``'s candidates, in natural order.

    Returns
    -------
    list of str
        Distinct non-missing values of ``candidates.system`` ("M2" before "M10"); empty
        when the candidates have no ``system`` column or no system is given.
    """
    cands = ds.candidates
    if "system" not in cands.columns or not len(cands):
        return []
    return natural_sorted(cands["system"].dropna().unique())


def default_excluded(ds: Dataset) -> list[str]:
    """The systems analyses leave out by default: ``ds.reference_systems`` present in ``ds``.

    Returns
    -------
    list of str
        In the order of ``ds.reference_systems``; a reference system no candidate has (a
        filtered view) is not listed.
    """
    if not ds.reference_systems:
        return []
    present = set(systems_of(ds))
    return [s for s in ds.reference_systems if s in present]


def _drop_pairs(table: pd.DataFrame, cols: tuple[str, ...], gone: pd.MultiIndex) -> pd.DataFrame:
    """``table`` without the rows whose (context_id, <col>) is in ``gone``, for any col."""
    if not len(table) or not len(gone):
        return table
    drop = np.zeros(len(table), dtype=bool)
    gone_ids = gone.get_level_values(1).unique()
    for col in cols:
        # the candidate id alone first (cheap), then the (context, candidate) pair
        maybe = np.flatnonzero(table[col].isin(gone_ids).to_numpy())
        if not len(maybe):
            continue
        probe = pd.MultiIndex.from_arrays(
            [table["context_id"].iloc[maybe].to_numpy(), table[col].iloc[maybe].to_numpy()]
        )
        drop[maybe[probe.isin(gone)]] = True
    if not drop.any():
        return table
    return table.loc[~drop].reset_index(drop=True)


def keep_systems(ds: Dataset, exclude: Iterable[str]) -> Dataset:
    """``ds`` without the candidates of the systems in ``exclude`` and everything about them.

    Parameters
    ----------
    ds : Dataset
        A validated dataset; not changed.
    exclude : iterable of str
        Systems to leave out (values of ``candidates.system``).

    Returns
    -------
    Dataset
        Same name and metadata (``reference_systems`` included). Without the excluded
        systems' candidates, their human scores and ratings, and every comparison in which
        one of them is either side. ``ds`` itself when ``exclude`` is empty.

    Raises
    ------
    DataError
        A system in ``exclude`` is not a system of ``ds``; the message lists the known ones.
    """
    exclude = [str(s) for s in exclude]
    if not exclude:
        return ds
    known = systems_of(ds)
    known_set = set(known)
    unknown = [s for s in exclude if s not in known_set]
    if unknown:
        shown = ", ".join(repr(s) for s in known) if known else "none (no 'system' column)"
        raise DataError(
            f"{ds.name}: unknown system(s) {', '.join(repr(s) for s in unknown)} to leave out; "
            f"the systems of this dataset are: {shown}"
        )
    cands = ds.candidates
    out = cands["system"].isin(exclude).to_numpy()
    gone = pd.MultiIndex.from_arrays(
        [cands["context_id"].to_numpy()[out], cands["candidate_id"].to_numpy()[out]]
    )
    return replace(
        ds,
        candidates=cands.loc[~out].reset_index(drop=True),
        human_scores=_drop_pairs(ds.human_scores, ("candidate_id",), gone),
        ratings=_drop_pairs(ds.ratings, ("candidate_id",), gone),
        comparisons=_drop_pairs(ds.comparisons, ("first_id", "second_id"), gone),
    )
