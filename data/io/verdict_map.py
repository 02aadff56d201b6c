"""The verdict columns of a file read with the one verdict vocabulary of ``data.parsing``
(``data.parsing.vocabulary``), with the user's overrides and strength policy.

Nothing here knows a spelling: :func:`read_verdicts` is
:func:`data.parsing.read_verdict_column` plus the cells as written (for ``raw`` and the
notes), and :func:`verdict_table` is :func:`data.parsing.verdict_map` over the judge and the
human verdict columns together, as the Data page shows it for the user to check and change.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from data.coerce import to_str_series
from data.parsing import read_verdict_column, verdict_map

#: A reading the user can give a value in the verdict map: label -> grade (None: leave the
#: value unparsed). The labels are what the Data page's editable table offers.
READINGS: dict[str, int | None] = {
    "A>>B: first much better (+2)": 2,
    "A>B: first better (+1)": 1,
    "A=B: tie (0)": 0,
    "B>A: second better (-1)": -1,
    "B>>A: second much better (-2)": -2,
    "not understood (kept unparsed)": None,
}
_LABEL_OF_GRADE = {g: label for label, g in READINGS.items()}


def reading_label(grade) -> str:
    """The :data:`READINGS` label of a grade (NaN or None: not understood)."""
    if grade is None or pd.isna(grade):
        return _LABEL_OF_GRADE[None]
    return _LABEL_OF_GRADE[int(grade)]


def read_verdicts(
    column: pd.Series, policy: str, overrides: Mapping | None = None
) -> tuple[pd.DataFrame, np.ndarray, pd.Series]:
    """A verdict column read with the vocabulary.

    Parameters
    ----------
    column : pandas.Series
        The cells as read.
    policy : str
        The strength policy (``data.parsing.STRENGTH_POLICIES``).
    overrides : mapping, optional
        The user's verdict map: value -> grade, ``"A"``/``"B"``/``"tie"`` or None.

    Returns
    -------
    read : pandas.DataFrame
        :func:`data.parsing.read_verdict_column`: verdict, grade, p_first, weight, known,
        missing (fresh RangeIndex).
    unparsed : numpy.ndarray of bool
        Cells holding a value that is not understood (empty cells are missing, not
        unparsed).
    text : pandas.Series
        The cells as written, stripped (for ``raw`` and the notes).
    """
    column = column.reset_index(drop=True)
    read = read_verdict_column(column, policy=policy, overrides=overrides or None)
    unparsed = (~read["known"] & ~read["missing"]).to_numpy()
    text = to_str_series(column).str.strip()
    return read, unparsed, text


def _label(grade, stated) -> str:
    """The reading of a value: a :data:`READINGS` label, or the probability it states."""
    if stated is not None and not pd.isna(stated):
        return f"P(first better) = {float(stated):.3g}, as written"
    return reading_label(grade)


def verdict_table(
    columns: Mapping[str, pd.Series], overrides: Mapping | None = None
) -> pd.DataFrame:
    """Every distinct verdict value of the given columns with its reading.

    Parameters
    ----------
    columns : mapping of str to pandas.Series
        Header -> cells: the judge's and the human verdict column.
    overrides : mapping, optional
        The user's verdict map (value -> grade, A / B / tie, or None).

    Returns
    -------
    pandas.DataFrame
        One row per (column, distinct value), empty cells left out, in order of first
        appearance: ``column``, ``value`` (as written: the key of an override), ``rows``
        (how many cells), ``reading`` (the reading used: a :data:`READINGS` label, or the
        probability the value states), ``vocabulary`` (the vocabulary's own reading, before
        the overrides), ``grade`` (the grade used; NaN when not understood), ``form`` and
        ``meaning`` (the vocabulary's), ``changed`` (the user's reading is used).
    """
    overrides = dict(overrides or {})
    parts = []
    for header, column in columns.items():
        column = column.reset_index(drop=True)
        used = verdict_map(column, overrides or None)
        own = verdict_map(column)
        keep = ~used["missing"].to_numpy()
        used, own = used[keep].reset_index(drop=True), own[keep].reset_index(drop=True)
        if not len(used):
            continue
        value = [str(v).strip() for v in used["value"]]
        parts.append(
            pd.DataFrame(
                {
                    "column": str(header),
                    "value": pd.Series(value, dtype="str"),
                    "rows": used["count"].to_numpy(dtype=np.int64),
                    "reading": [
                        _label(g, p) for g, p in zip(used["grade"], used["p_first"], strict=True)
                    ],
                    "vocabulary": [
                        _label(g, p) for g, p in zip(own["grade"], own["p_first"], strict=True)
                    ],
                    "grade": used["grade"].to_numpy(dtype=np.float64),
                    "form": own["form"].astype(str).to_numpy(),
                    "meaning": own["meaning"].astype(str).to_numpy(),
                    "changed": [v in overrides for v in value],
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            columns=[
                "column",
                "value",
                "rows",
                "reading",
                "vocabulary",
                "grade",
                "form",
                "meaning",
                "changed",
            ]
        )
    return pd.concat(parts, ignore_index=True)


def overrides_from_table(base: pd.DataFrame, edited: pd.DataFrame) -> dict[str, int | None]:
    """The verdict map the user's edits give.

    Parameters
    ----------
    base : pandas.DataFrame
        ``value`` and ``reading`` as the vocabulary reads them (the ``vocabulary`` column of
        :func:`verdict_table`).
    edited : pandas.DataFrame
        The same rows with ``reading`` as the user left it.

    Returns
    -------
    dict of str to int or None
        Value -> grade (None: leave unparsed) for every row whose reading the user changed
        to one of :data:`READINGS`.
    """
    out: dict[str, int | None] = {}
    for value, old, new in zip(base["value"], base["reading"], edited["reading"], strict=True):
        if new != old and new in READINGS:
            out[str(value)] = READINGS[new]
    return out
