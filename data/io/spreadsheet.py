"""CSV meant for spreadsheets, with formula injection neutralised.

A spreadsheet opening a CSV runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a
formula (and a leading tab or carriage return can hide one), so a judge's answer or an
uploaded id such as ``=HYPERLINK("http://...")`` would run on the reader's machine. Every
export meant for a spreadsheet goes through :func:`spreadsheet_csv`, which prefixes such text
cells (and column names) with ``'``, the spreadsheet convention for "this is text".

Only text is changed: numbers in numeric columns stay numbers (``-0.5`` is not touched), and
so does text that is just a plain number, which no spreadsheet reads as a formula. The tables
passed in are never modified; files written for JudgeScope itself (``data.io.write_table``)
stay exact.
"""

from __future__ import annotations

import re

import pandas as pd

#: First characters that make a spreadsheet read a cell as a formula.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def neutralise(value):
    """``value`` made safe for a spreadsheet cell.

    Parameters
    ----------
    value : object
        One cell or column name.

    Returns
    -------
    object
        Text starting with one of :data:`FORMULA_START` gets a leading ``'``, unless it is a
        plain number such as ``-0.5`` or ``+3e2``; anything else is returned unchanged.
    """
    if (
        isinstance(value, str)
        and value.startswith(FORMULA_START)
        and not _PLAIN_NUMBER.fullmatch(value)
    ):
        return "'" + value
    return value


def _is_text_column(column: pd.Series) -> bool:
    return not (
        pd.api.types.is_numeric_dtype(column.dtype)
        or pd.api.types.is_bool_dtype(column.dtype)
        or pd.api.types.is_datetime64_any_dtype(column.dtype)
        or pd.api.types.is_timedelta64_dtype(column.dtype)
    )


def neutralise_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells and column names cannot start a formula.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; it is not modified.

    Returns
    -------
    pandas.DataFrame
        Same shape and index; every column that is not numeric, boolean, datetime or
        timedelta, and every column name (each level of a MultiIndex), passed through
        :func:`neutralise`.
    """
    out = {}
    for pos in range(df.shape[1]):
        column = df.iloc[:, pos]
        if _is_text_column(column):
            column = column.astype(object).map(neutralise)
        out[pos] = column
    safe = pd.DataFrame(out, index=df.index)
    if isinstance(df.columns, pd.MultiIndex):
        safe.columns = pd.MultiIndex.from_tuples(
            [tuple(neutralise(v) for v in key) for key in df.columns], names=df.columns.names
        )
    else:
        safe.columns = pd.Index([neutralise(c) for c in df.columns], name=df.columns.name)
    return safe


def spreadsheet_csv(df: pd.DataFrame) -> str:
    """``df`` as CSV text for a spreadsheet, formula injection neutralised: its
    :func:`neutralise_formulas` as CSV, without the index (``df`` is not modified)."""
    return neutralise_formulas(df).to_csv(index=False)
