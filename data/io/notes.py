"""Notes a reader gives back with a table it could read: what it guessed, what it kept aside.

A note is one plain sentence for the user (a :class:`str`); readers return them in a list
(``ReadResult.notes``). Row numbers follow ``data.problems.row_label``: data rows counted
from 1, the header not counted; runs of consecutive rows are written as ranges
("rows 19–24").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from data.natural import natural_sorted

#: Names listed in one note before the rest are counted.
MAX_NAMED = 12


def row_ranges(positions: Iterable[int], what: str = "row") -> str:
    """The data rows at 0-based ``positions`` as the user counts them, runs as ranges.

    Parameters
    ----------
    positions : iterable of int
        0-based positions in the table (any order, repeats allowed).
    what : str
        What is counted: ``"row"`` (data rows), or ``"line"`` (lines of a JSONL file,
        ``positions`` then 0-based lines).

    Returns
    -------
    str
        ``"row 3"``, ``"rows 19–24"`` or ``"rows 1, 4, 7–9"``; at most 8 runs are spelled
        out, then ``"and N more"``.
    """
    rows = np.unique(np.asarray(list(positions), dtype=np.int64)) + 1
    if len(rows) == 0:
        return f"no {what}s"
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    runs = [(int(r[0]), int(r[-1])) for r in np.split(rows, breaks)]
    parts = [f"{a}" if a == b else f"{a}–{b}" for a, b in runs[:8]]
    more = len(runs) - 8
    text = ", ".join(parts) + (f" and {more} more run(s)" if more > 0 else "")
    return (f"{what} " if len(rows) == 1 else f"{what}s ") + text


def grouped(
    messages: Sequence[str],
    positions: Sequence[int],
    where: Callable[[Sequence[int]], str] = row_ranges,
) -> list[str]:
    """One line per distinct message with the rows it was found on.

    Parameters
    ----------
    messages : sequence of str
        The message of each offending row.
    positions : sequence of int
        The 0-based row of each message (same length).
    where : callable, optional
        Positions -> where they are, for the user (default :func:`row_ranges`; a reader of
        a file whose rows are not the table's passes one naming its lines).

    Returns
    -------
    list of str
        ``"<message>: rows 19–24"``, most frequent message first (ties in first-seen order).
    """
    rows: dict[str, list[int]] = {}
    for msg, pos in zip(messages, positions, strict=True):
        rows.setdefault(msg, []).append(int(pos))
    order = sorted(rows, key=lambda m: -len(rows[m]))
    return [f"{m}: {where(rows[m])}" for m in order]


def named(values: Iterable, what: str) -> str:
    """``values`` in natural order, at most :data:`MAX_NAMED` shown, the rest counted.

    Parameters
    ----------
    values : iterable
        Names (ids) to show.
    what : str
        What they are, plural ("contexts"), for the count.

    Returns
    -------
    str
        ``"'c1', 'c2', 'c10'"`` or ``"'c1', ... and 30 more contexts"``.
    """
    vals = natural_sorted(values)
    shown = ", ".join(repr(v) for v in vals[:MAX_NAMED])
    more = len(vals) - MAX_NAMED
    return shown + (f" and {more} more {what}" if more > 0 else "")
