"""Columns of a wide or pairwise-verdict file mapped to the roles of a layout.

Shared by ``data.io.wide`` and ``data.io.pairwise``: a role (context id, first candidate,
verdict, ...) is found among a file's headers by its aliases (:func:`find_alias`), two
headers that could both play one role are refused (:func:`alias_conflicts`), the columns a
mapping names are looked up in the file (:func:`resolve_columns`), and id and number columns
are read with one problem per bad cell (:func:`id_column`, :func:`number_column`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from data.coerce import coerce_float, coerce_id, id_problem, normalise_column
from data.problems import Problems, row_label


def find_alias(columns: Iterable, aliases: Sequence[str], taken: Iterable = ()) -> str | None:
    """The first header that is one of ``aliases`` (compared normalised), or None.

    Parameters
    ----------
    columns : iterable
        The file's headers.
    aliases : sequence of str
        Normalised names of the role, most specific first; the first alias present wins.
    taken : iterable, optional
        Headers already given another role, skipped.

    Returns
    -------
    str or None
        The header as the file spells it.
    """
    taken = list(taken)
    by_norm = {normalise_column(c): c for c in columns if c not in taken}
    for alias in aliases:
        if alias in by_norm:
            return by_norm[alias]
    return None


def alias_conflicts(columns: Iterable, roles: Mapping[str, tuple[str, ...]], source: str) -> None:
    """Refuse two columns that a guessed mapping would both read as the same field.

    Without this the first one found wins silently (``verdict`` and ``winner``, or
    ``Verdict`` and ``verdict``).

    Parameters
    ----------
    columns : iterable
        The file's headers.
    roles : mapping of role to aliases
        The roles of a layout and their normalised aliases.
    source : str
        The file, for the messages.

    Raises
    ------
    DataError
        One problem per role that more than one header could play.
    """
    columns = list(columns)
    problems = Problems()
    for role, aliases in roles.items():
        hits = [c for c in columns if normalise_column(c) in aliases]
        if len(hits) > 1:
            shown = " and ".join(repr(str(c)) for c in hits)
            problems.add(
                f"{source}, columns {shown}: each could be the {role.replace('_', ' ')} column, "
                "so it is not clear which one to read; keep one of them (rename or remove the "
                "others) or give the mapping of columns explicitly"
            )
    problems.raise_if_any(source)


def resolve_column(
    frame: pd.DataFrame, col: str, role: str, source: str, problems: Problems
) -> str | None:
    """The frame's column for the mapping entry ``col``: exact, then normalised match.

    Parameters
    ----------
    frame : pandas.DataFrame
        The file as read.
    col : str
        The column the mapping names.
    role : str
        What the mapping reads from it ("first", "attribute", ...), for the message.
    source : str
        The file, for the message.
    problems : Problems
        Where a missing column is reported (with the closest header, if any, and the
        headers found).

    Returns
    -------
    str or None
        The header as the file spells it; None when the file has no such column.
    """
    if col in frame.columns:
        return col
    by_norm = {normalise_column(c): c for c in frame.columns}
    if normalise_column(col) in by_norm:
        return by_norm[normalise_column(col)]
    close = difflib.get_close_matches(str(col), [str(c) for c in frame.columns], n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    problems.add(
        f"{source}, column '{col}': the mapping names it as the {role} column but the file has "
        f"no such column{hint} (columns found: {', '.join(map(str, frame.columns))})"
    )
    return None


def resolve_columns(
    frame: pd.DataFrame, mapping: object, roles: Iterable[str], source: str, problems: Problems
) -> dict[str, str]:
    """The frame's column of every role that ``mapping`` names (see :func:`resolve_column`).

    Parameters
    ----------
    frame : pandas.DataFrame
        The file as read.
    mapping : WideMapping or PairwiseMapping
        Names a column (or None) in the attribute of each role.
    roles : iterable of str
        The roles to look up, in order.
    source : str
        The file, for the messages.
    problems : Problems
        Where missing columns are reported.

    Returns
    -------
    dict of str to str
        Role -> header, for the roles whose column the mapping names and the file has.
    """
    found = {}
    for role in roles:
        col = getattr(mapping, role)
        if col is not None:
            found[role] = resolve_column(frame, col, role, source, problems)
    return found


def id_column(frame: pd.DataFrame, col: str, source: str, problems: Problems) -> pd.Series:
    """Column ``col`` of ``frame`` as ids; each empty or inexact id is a problem.

    Parameters
    ----------
    frame : pandas.DataFrame
        The file as read, with a RangeIndex (positions name the rows).
    col : str
        The header of the id column.
    source : str
        The file, for the messages.
    problems : Problems
        Where bad cells are reported, by row and column.

    Returns
    -------
    pandas.Series
        The ids as stripped text (see :func:`data.coerce.coerce_id`).
    """
    out, bad = coerce_id(frame[col])
    problems.add_rows(
        bad, lambda p: f"{source}, {row_label(p)}, " + id_problem(col, frame[col].iloc[p])
    )
    return out


def number_column(
    frame: pd.DataFrame,
    col: str,
    source: str,
    problems: Problems,
    advice: str,
    coerced: tuple | None = None,
) -> np.ndarray:
    """Column ``col`` of ``frame`` as float64; each cell that is not a number is a problem.

    Parameters
    ----------
    frame, col, source, problems
        As for :func:`id_column` (``col`` the number column); a bad cell is reported as
        ``"<source>, row <n>, column '<col>': <cell> is not a number; <advice>"``.
    advice : str
        What to write instead.
    coerced : tuple, optional
        The column already coerced (:func:`data.coerce.coerce_float_columns`).

    Returns
    -------
    numpy.ndarray of float64
        NaN where a cell is empty or bad (see :func:`data.coerce.coerce_float`).
    """
    if coerced is None:
        num, bad = coerce_float(frame[col])
        coerced = (num.to_numpy(), bad)
    values, bad = coerced
    problems.add_rows(
        bad,
        lambda p: (
            f"{source}, {row_label(p)}, column '{col}': {frame[col].iloc[p]!r} is not a "
            f"number; {advice}"
        ),
    )
    return values
