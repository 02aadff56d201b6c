"""Two readings of judge ratings: as published, and cleaned.

Some benchmarks publish judge ratings that need cleaning: HANNA's per-story LLM ratings are
means over three tries, and a failed try entered some means as 0 or -1. The loader keeps the
published value as the rating's ``raw`` text and puts the cleaned value in ``score`` (NaN for
a mean outside the scale). The papers' numbers come from the published values, so both
readings are offered:

- ``"published"``: each rating's score is its raw text read as a number, where it is one;
- ``"cleaned"``: the scores as loaded.

A rating's raw text counts as a published value only when every non-empty raw text of its
judge is a number (HANNA's LLM judges). A judge whose raw texts are answers ("Score: 4", or
a bare "3" among sentences, as in TopicalChat's G-Eval outputs) keeps its parsed scores in
both readings: its unparsed answers are no published ratings. A dataset "has readings" when
the two readings differ for at least one rating.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from data.schema import DataError, Dataset

#: The readings, the default first.
READINGS = ("published", "cleaned")

_LABELS = {
    "published": "as published",
    "cleaned": "cleaned (published values outside the scale left out)",
}


def _published(ratings: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(numbers read from ``raw``, NaN where it is no number; mask of ratings that differ)."""
    if not len(ratings) or "raw" not in ratings.columns:
        return np.empty(0), np.zeros(len(ratings), dtype=bool)
    raw = ratings["raw"]
    num = np.full(len(ratings), np.nan)
    # only non-empty raw texts can be numbers (most are empty: automatic measures)
    some = np.flatnonzero((raw.notna() & (raw != "")).to_numpy())
    num[some] = pd.to_numeric(raw.iloc[some], errors="coerce").to_numpy(dtype=np.float64)
    score = ratings["score"].to_numpy(dtype=np.float64)
    parsed = np.isfinite(num)
    answers = some[~parsed[some]]  # raw texts that are no number: answers, not values
    if len(answers):
        answering = ratings["judge"].iloc[answers].unique()
        parsed &= ~ratings["judge"].isin(answering).to_numpy()
    differs = parsed & ~(num == score)  # a NaN score with a numeric raw text differs
    return num, differs


def has_readings(ds: Dataset) -> bool:
    """Whether the published and cleaned readings of ``ds``'s ratings differ.

    Returns
    -------
    bool
        True when some rating's raw text is a published value (see the module notes: every
        non-empty raw text of its judge is a number) that differs from its score (a NaN
        score included).
    """
    return bool(_published(ds.ratings)[1].any())


def _check(reading: str) -> str:
    if reading not in READINGS:
        raise DataError(
            f"unknown reading {reading!r} of the judge ratings; choose one of "
            + ", ".join(repr(r) for r in READINGS)
        )
    return reading


def with_reading(ds: Dataset, reading: str) -> Dataset:
    """``ds`` with its ratings' scores in the given reading.

    Parameters
    ----------
    ds : Dataset
        Any dataset; not changed.
    reading : {"published", "cleaned"}
        ``"cleaned"``: the scores as loaded. ``"published"``: each score replaced by the
        rating's raw text read as a number, for the judges whose raw texts are all numbers
        (see the module notes).

    Returns
    -------
    Dataset
        ``ds`` itself for ``"cleaned"`` or when no rating differs; otherwise a copy whose
        ratings table has the published scores (the other tables shared).

    Raises
    ------
    DataError
        ``reading`` is not one of :data:`READINGS`.
    """
    if _check(reading) == "cleaned":
        return ds
    num, differs = _published(ds.ratings)
    if not differs.any():
        return ds
    ratings = ds.ratings.copy()
    ratings["score"] = np.where(differs, num, ratings["score"].to_numpy(dtype=np.float64))
    return replace(ds, ratings=ratings)


def reading_note(ds: Dataset, reading: str) -> str:
    """One sentence for the user: which reading is in use and how many ratings it changes.

    Parameters
    ----------
    ds : Dataset
        The dataset as loaded (cleaned reading).
    reading : {"published", "cleaned"}
        The reading in use.

    Returns
    -------
    str
        E.g. "Judge ratings as published: 1,234 of 126,720 ratings differ from the cleaned
        reading." When the readings do not differ, says so.

    Raises
    ------
    DataError
        ``reading`` is not one of :data:`READINGS`.
    """
    _check(reading)
    n = len(ds.ratings)
    n_diff = int(_published(ds.ratings)[1].sum())
    if not n_diff:
        return f"Judge ratings as loaded: the published and cleaned readings agree on all {n:,} ratings."
    other = "cleaned" if reading == "published" else "published"
    return (
        f"Judge ratings {_LABELS[reading]}: {n_diff:,} of {n:,} ratings differ from the "
        f"{other} reading."
    )
