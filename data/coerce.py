"""Cells brought to the canonical dtypes exactly, or named as bad; headers normalised.

Each ``coerce_*`` function takes a column as read and returns ``(coerced, bad)``: the column
in its canonical dtype and the 0-based positions of the cells that cannot be read as that
kind. Identifiers, texts and verdicts become pandas ``str`` columns (identifiers stripped of
surrounding spaces; a missing text is ``""``; a missing verdict is NaN), floats ``float64``
(NaN = missing), whole numbers ``int64``, grades (-2 ... +2) and weights (finite, > 0; an
empty cell is the default 1) ``float64``. Nothing is read approximately: whole numbers are
parsed exactly and refused outside int64 (never wrapped or rounded through float64); an id
given as a floating-point number is refused when a float cannot hold it exactly (infinite,
or a whole number from 2**53 on). :func:`bad_cell_message` says what is wrong with a bad cell
and what to do.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

#: Cell texts that mean "missing" in a numeric column (compared case-insensitively).
NA_TOKENS = frozenset({"", "nan", "na", "n/a", "null", "none"})

#: Whole numbers from here on are not all representable as float64 (2**53 + 1 is not).
EXACT_FLOAT_INT = 2**53
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")

# Verdict spellings accepted in the canonical ``verdict`` column (case-insensitive).
_VERDICT_CANON = {"a": "A", "b": "B", "tie": "tie"}


def normalise_column(name) -> str:
    """A header as it is compared with canonical names.

    Parameters
    ----------
    name : object
        The header cell (any value; it is turned into text).

    Returns
    -------
    str
        Trimmed, lower case, each run of spaces and dashes replaced by ``_``
        (``" Context-ID"`` -> ``"context_id"``).
    """
    return re.sub(r"[\s\-]+", "_", str(name).strip()).lower()


def _show(value) -> str:
    """A cell value as it should be quoted in a message (short)."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_missing_scalar(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def _float_to_str(v: float) -> str:
    if math.isfinite(v) and v.is_integer():
        # a numeric id read as float (e.g. from a column with gaps): 7.0 means "7"; int() is
        # exact for every float, so two different floats never give the same text
        return str(int(v))
    return repr(v)


def _scalar_to_str(v):
    if _is_missing_scalar(v):
        return np.nan
    if isinstance(v, float | np.floating):
        return _float_to_str(float(v))
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace")
    return str(v)


def to_str_series(s: pd.Series) -> pd.Series:
    """Any column as a pandas ``str`` column, keeping missing values as NaN.

    Parameters
    ----------
    s : pandas.Series
        The column as read (text, numbers, booleans or mixed Python objects).

    Returns
    -------
    pandas.Series
        Same index, dtype ``str``. A whole float is written without its ``.0`` (an id read
        as float from a column with gaps: 7.0 is ``"7"``), exactly however large; other
        floats as ``repr``; bytes decoded as UTF-8 (undecodable bytes replaced).
    """
    if s.dtype == "str":
        return s
    if pd.api.types.is_float_dtype(s.dtype):
        vals = s.to_numpy(dtype=np.float64)
        integral = np.isfinite(vals) & (vals == np.round(vals))
        if integral.all() and (np.abs(vals) < EXACT_FLOAT_INT).all():
            return s.astype("int64").astype("str")
        out = [_scalar_to_str(v) for v in vals]
        return pd.Series(out, index=s.index, dtype="str")
    if pd.api.types.is_integer_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
        return s.astype("str")
    return pd.Series([_scalar_to_str(v) for v in s.tolist()], index=s.index, dtype="str")


def _inexact_float(v) -> bool:
    """A float that cannot stand for an id: infinite, or a whole number from 2**53 on."""
    if isinstance(v, bool) or not isinstance(v, float | np.floating):
        return False
    v = float(v)
    return not math.isnan(v) and (math.isinf(v) or abs(v) >= EXACT_FLOAT_INT)


def coerce_id(s: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """An identifier column as stripped text; empty cells and inexact float ids are bad.

    ``(coerced, bad)`` of the column as read, as every ``coerce_*`` (module docstring):
    ``coerced`` of dtype ``str``, surrounding spaces stripped (a missing cell stays NaN);
    ``bad`` the empty or missing cells and the floats that cannot hold an id exactly
    (infinite, or a whole number from 2**53 on).
    """
    out = to_str_series(s).str.strip()
    bad = (out.isna() | (out == "")).to_numpy()
    if pd.api.types.is_float_dtype(s.dtype):
        vals = s.to_numpy(dtype=np.float64)
        bad = bad | np.isinf(vals) | (np.abs(vals) >= EXACT_FLOAT_INT)
    elif s.dtype == object:
        bad = bad | np.fromiter((_inexact_float(v) for v in s.tolist()), dtype=bool, count=len(s))
    return out, np.flatnonzero(bad)


def id_problem(col: str, value) -> str:
    """What is wrong with ``value`` as an id of column ``col``, and what to do.

    Parameters
    ----------
    col : str
        The column, as it should be named in the message.
    value : object
        The offending cell (a bad position of :func:`coerce_id`).

    Returns
    -------
    str
        ``"column '<col>': ..."``: an inexact floating-point id, or an empty cell.
    """
    if _inexact_float(value):
        return (
            f"column '{col}': the id {float(value)!r} is a floating-point number, which cannot "
            f"hold an id exactly (whole numbers from 2^53 = {EXACT_FLOAT_INT:,} on, and "
            "infinity, lose digits); write ids as text (in JSON: in quotes) or as integers"
        )
    return f"column '{col}': the cell is empty; every row needs a value here"


def _coerce_text(s: pd.Series):
    out = to_str_series(s).fillna("")
    return out, np.empty(0, dtype=np.int64)


def _coerce_verdict(s: pd.Series):
    out = to_str_series(s).str.strip()
    low = out.str.lower()
    canon = low.map(_VERDICT_CANON)
    missing = out.isna() | (out == "")
    bad = canon.isna() & ~missing
    out = canon.where(~missing, np.nan).astype("str")
    return out, np.flatnonzero(bad.to_numpy())


def coerce_float(s: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """A column of numbers as ``float64``; text that is no number, and infinities, are bad.

    ``(coerced, bad)`` of the column as read, as every ``coerce_*`` (module docstring):
    ``coerced`` of dtype ``float64``, NaN where the cell is missing (empty, or one of
    :data:`NA_TOKENS`) or bad; ``bad`` the cells that are not numbers, are infinite, or are
    booleans (every cell of a boolean column).
    """
    if pd.api.types.is_bool_dtype(s.dtype):
        return s.astype("float64"), np.flatnonzero(np.ones(len(s), dtype=bool))
    if pd.api.types.is_numeric_dtype(s.dtype):
        out = s.astype("float64")
        return out, np.flatnonzero(np.isinf(out.to_numpy()))
    text = to_str_series(s).str.strip()
    is_na = text.isna() | text.str.lower().isin(NA_TOKENS)
    num = pd.to_numeric(text.where(~is_na, np.nan), errors="coerce").astype("float64")
    vals = num.to_numpy()
    bad = (np.isnan(vals) & ~is_na.to_numpy()) | np.isinf(vals)
    num[bad] = np.nan
    return num, np.flatnonzero(bad)


def stacked_cells(frame: pd.DataFrame, cols: list, as_text: bool = False) -> pd.Series:
    """The cells of ``cols``, column after column, as one Series with a RangeIndex (column
    ``k`` holds positions ``k * len(frame)`` to ``(k + 1) * len(frame) - 1``).

    Columns of one dtype keep it; with ``as_text`` every column goes through
    :func:`to_str_series` first. Text columns are stacked through one numpy array, not one
    Series per column (1,000 columns: milliseconds, not a second).
    """
    dtypes = {str(frame[c].dtype) for c in cols}
    if len(dtypes) == 1 and dtypes <= {"str"} and len(cols) > 1:
        values = frame[cols].to_numpy(dtype=object).T.ravel()
        return pd.Series(values, dtype="str")
    parts = [to_str_series(frame[c]) if as_text else frame[c] for c in cols]
    return pd.concat([p.reset_index(drop=True) for p in parts], ignore_index=True)


def dtype_groups(frame: pd.DataFrame, cols: list):
    """The columns of ``cols`` grouped by dtype, in first-seen order, each group with whether
    it can be read stacked (:func:`stacked_cells`): more than one column, rows in the frame,
    and a dtype other than ``object`` (mixed Python values such as 1, 1.0 and True read
    differently, so those columns are read one by one).

    Yields
    ------
    (list, bool)
        A group's columns, and whether to read them together.
    """
    groups: dict[str, list] = {}
    for c in cols:
        groups.setdefault(str(frame[c].dtype), []).append(c)
    for group in groups.values():
        yield group, len(group) > 1 and len(frame) > 0 and frame[group[0]].dtype != object


def coerce_float_columns(frame: pd.DataFrame, cols: list) -> dict:
    """:func:`coerce_float` of several columns, the text ones parsed together.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as read.
    cols : list
        Its columns to coerce (distinct labels).

    Returns
    -------
    dict
        Column -> (float64 numpy array, bad positions), as :func:`coerce_float` gives them.
        Columns of one dtype go through one call (a file of 1,000 score columns is parsed
        once, not 1,000 times); every cell reads as it would alone.
    """
    out: dict = {}
    n = len(frame)
    for group, together in dtype_groups(frame, cols):
        if not together:
            for c in group:
                num, bad = coerce_float(frame[c])
                out[c] = (num.to_numpy(), bad)
            continue
        cells = stacked_cells(frame, group)
        num, bad = coerce_float(cells)
        values = num.to_numpy().reshape(len(group), n)
        flags = np.zeros(len(cells), dtype=bool)
        flags[bad] = True
        flags = flags.reshape(len(group), n)
        for k, c in enumerate(group):
            out[c] = (values[k], np.flatnonzero(flags[k]))
    return out


def coerce_grade(s: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """A column of grades (``comparisons.grade``) as ``float64``: whole numbers -2 ... +2.

    ``(coerced, bad)`` of the column as read, as every ``coerce_*`` (module docstring):
    ``coerced`` of dtype ``float64``, NaN where the cell is missing (a plain verdict has no
    grade) or bad; ``bad`` the cells that are not numbers, or numbers that are not one of
    -2, -1, 0, 1, 2.
    """
    num, bad = coerce_float(s)
    vals = num.to_numpy(dtype=np.float64, copy=True)
    off = np.isfinite(vals) & ~np.isin(vals, (-2.0, -1.0, 0.0, 1.0, 2.0))
    vals[off] = np.nan
    bad = np.union1d(bad, np.flatnonzero(off)).astype(np.int64)
    return pd.Series(vals, index=s.index, dtype="float64"), bad


def _is_blank(v) -> bool:
    return _is_missing_scalar(v) or (isinstance(v, str) and not v.strip())


def coerce_weight(s: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """A column of weights (``comparisons.weight``) as ``float64``: finite numbers > 0.

    ``(coerced, bad)`` of the column as read, as every ``coerce_*`` (module docstring):
    ``coerced`` of dtype ``float64``, an empty cell (empty text, None, or a missing value of a
    numeric column) the default weight 1, NaN where the cell is bad; ``bad`` the cells that
    are not finite numbers > 0: text that is no number, written NaN (``"nan"``, ``"NA"``),
    infinities, 0 and negative numbers, booleans.
    """
    n = len(s)
    if pd.api.types.is_bool_dtype(s.dtype):
        return pd.Series(np.full(n, np.nan), index=s.index), np.arange(n, dtype=np.int64)
    if pd.api.types.is_numeric_dtype(s.dtype):
        vals = s.to_numpy(dtype=np.float64, na_value=np.nan).copy()
        blank = np.isnan(vals)
    else:
        text = to_str_series(s).str.strip()
        if s.dtype == "str":  # text cells, the common case: no booleans, no None
            blank = (text.isna() | (text == "")).to_numpy(dtype=bool)
            booleans = np.zeros(n, dtype=bool)
        else:
            cells = s.tolist()
            blank = np.fromiter((_is_blank(v) for v in cells), dtype=bool, count=n)
            booleans = np.fromiter(
                (isinstance(v, bool | np.bool_) for v in cells), dtype=bool, count=n
            )
        vals = pd.to_numeric(text.where(~blank, np.nan), errors="coerce").to_numpy(
            dtype=np.float64, na_value=np.nan, copy=True
        )
        vals[booleans] = np.nan
    vals[blank] = 1.0
    bad = ~np.isfinite(vals) | (vals <= 0)
    vals[bad] = np.nan
    return pd.Series(vals, index=s.index, dtype="float64"), np.flatnonzero(bad)


def outside(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Which values are finite numbers outside ``[lo, hi]`` (NaN, missing, is never outside).

    Parameters
    ----------
    values : numpy.ndarray of float
        Coerced numbers (see :func:`coerce_float`).
    lo, hi : float
        The allowed range, both ends included.

    Returns
    -------
    numpy.ndarray of bool
        True where a value is finite and below ``lo`` or above ``hi``.
    """
    return np.isfinite(values) & ((values < lo) | (values > hi))


def _int_value(v) -> int | None:
    """The exact whole number ``v`` stands for (text, int or float), or None; text of more
    than 19 significant digits gives a stand-in outside int64 (+-2**64), not the number."""
    if isinstance(v, bool | np.bool_) or _is_missing_scalar(v):
        return None
    if isinstance(v, int | np.integer):
        return int(v)
    if isinstance(v, float | np.floating):
        v = float(v)
        return int(v) if math.isfinite(v) and v.is_integer() else None
    text = str(v).strip()
    if _INTEGER_TEXT.fullmatch(text):
        if len(text.lstrip("+-").lstrip("0")) > 19:
            # outside int64 whatever the digits; int() refuses more than 4,300 of them
            return -(2**64) if text.startswith("-") else 2**64
        return int(text)  # exact
    try:
        f = float(text)
    except ValueError:
        return None
    return int(f) if math.isfinite(f) and f.is_integer() and "_" not in text else None


def coerce_int(s: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """Whole numbers as int64, exactly: never rounded through float64, never wrapped around.

    ``(coerced, bad)`` of the column as read, as every ``coerce_*`` (module docstring):
    ``coerced`` of dtype ``int64``, 0 where the cell is bad; ``bad`` the missing cells, the
    cells that are not whole numbers (``1.5``, ``"x"``, booleans) and the whole numbers
    outside int64.
    """
    n = len(s)
    if pd.api.types.is_bool_dtype(s.dtype):
        return pd.Series(np.zeros(n, dtype=np.int64), index=s.index), np.arange(n)
    if pd.api.types.is_integer_dtype(s.dtype) and s.dtype.kind == "i":
        return s.astype("int64"), np.empty(0, dtype=np.int64)
    if pd.api.types.is_float_dtype(s.dtype) or s.dtype.kind == "u":
        vals = s.to_numpy(dtype=np.float64)
        ok = np.isfinite(vals) & (vals == np.round(vals)) & (vals >= -(2.0**63)) & (vals < 2.0**63)
        if s.dtype.kind == "u":
            ok &= s.to_numpy() <= _INT64_MAX
            out = np.where(ok, s.to_numpy(), 0).astype(np.int64)
        else:
            out = np.where(ok, vals, 0).astype(np.int64)
        return pd.Series(out, index=s.index), np.flatnonzero(~ok)
    out = np.zeros(n, dtype=np.int64)
    ok = np.zeros(n, dtype=bool)
    if s.dtype == "str":
        # the common case, text cells: up to 18 digits always fit in int64
        text = s.str.strip()
        short = text.str.fullmatch(r"[+-]?[0-9]{1,18}").fillna(False).to_numpy(dtype=bool)
        out[short] = text[short].astype("int64").to_numpy()
        ok |= short
    rest = np.flatnonzero(~ok)
    values = s.to_numpy(dtype=object)
    for pos in rest:
        v = _int_value(values[pos])
        if v is not None and _INT64_MIN <= v <= _INT64_MAX:
            out[pos], ok[pos] = v, True
    return pd.Series(out, index=s.index), np.flatnonzero(~ok)


_COERCE = {
    "id": coerce_id,
    "text": _coerce_text,
    "verdict": _coerce_verdict,
    "float": coerce_float,
    "int": coerce_int,
    "grade": coerce_grade,
    "weight": coerce_weight,
}


def coerce(kind: str, s: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """A column brought to the canonical dtype of a column kind of ``data.schema.TABLES``.

    Parameters
    ----------
    kind : {"id", "text", "verdict", "float", "int", "grade", "weight"}
        The column kind.
    s : pandas.Series
        The column as read.

    Returns
    -------
    coerced : pandas.Series
        ``id``: see :func:`coerce_id`; ``text``: dtype ``str``, a missing cell ``""`` (never
        bad); ``verdict``: ``"A"``, ``"B"``, ``"tie"`` (read case-insensitively) or NaN for
        an empty cell; ``float``: see :func:`coerce_float`; ``int``: see :func:`coerce_int`;
        ``grade``: see :func:`coerce_grade`; ``weight``: see :func:`coerce_weight`.
    bad : numpy.ndarray of int
        0-based positions of the cells that cannot be read as ``kind``
        (:func:`bad_cell_message` says why).

    Raises
    ------
    KeyError
        ``kind`` is not a column kind.
    """
    return _COERCE[kind](s)


def bad_cell_message(kind: str, col: str, value) -> str:
    """What is wrong with a bad cell of a column of kind ``kind``, and what to do.

    Parameters
    ----------
    kind : {"id", "text", "verdict", "float", "int", "grade", "weight"}
        The column kind (as for :func:`coerce`).
    col : str
        The column, as it should be named in the message.
    value : object
        The offending cell as read.

    Returns
    -------
    str
        ``"column '<col>': ..."``: an empty or inexact id, a verdict that is not A / B /
        tie, a whole number outside int64 or no whole number, a grade that is not one of
        -2 ... +2, a weight that is not a finite number > 0, an infinite number, or a cell
        that is not a number.
    """
    if kind == "id":
        if _inexact_float(value):
            return id_problem(col, value)
        return f"column '{col}': the cell is empty; every row needs a {col}"
    if kind == "verdict":
        return (
            f"column '{col}': verdict {_show(value)} is not one of A, B, tie; write A (the first "
            "candidate won), B (the second won) or tie, or leave the cell empty"
        )
    if kind == "int":
        whole = _int_value(value)
        if whole is not None:
            return (
                f"column '{col}': {_show(value)} is outside the whole numbers that can be "
                "stored (-2^63 to 2^63 - 1); samples are numbered 0, 1, 2, ..."
            )
        return (
            f"column '{col}': {_show(value)} is not a whole number; write 0, 1, 2, ... "
            "(use 0 when there is a single sample)"
        )
    if kind == "grade":
        return (
            f"column '{col}': {_show(value)} is not a grade; a grade is a whole number from -2 "
            "to +2 (+2 the first candidate much better, +1 better, 0 a tie, -1 / -2 the "
            "second better / much better), so write one of -2, -1, 0, 1, 2, or leave the cell "
            "empty for a verdict without strengths"
        )
    if kind == "weight":
        return (
            f"column '{col}': {_show(value)} is not a usable weight; a weight says how many "
            "games' worth the comparison counts (Arena-Hard: 3 for a strong verdict), so write "
            "a finite number greater than 0, leave the cell empty for the default 1, or drop "
            "the row"
        )
    if isinstance(value, float) and math.isinf(value):
        return f"column '{col}': {value} is infinite; write a finite number or leave the cell empty"
    return (
        f"column '{col}': {_show(value)} is not a number; write a number such as 4 or 3.5, "
        "or leave the cell empty if the value is missing"
    )
