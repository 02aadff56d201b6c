"""Problems found in a file or table, collected and reported at once in one DataError.

Every checker (the raw readers, the layouts, validation) adds one line per problem to a
:class:`Problems`: the file (or table), the row (:func:`row_label`: the 1-based data row as
the user sees it in the file, header not counted), the column, what is wrong and what to do.
Only the first :data:`MAX_LISTED` lines are spelled out; the rest are counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from data.schema import DataError

#: Problem lines spelled out in one error message; the rest are counted.
MAX_LISTED = 20


class Problems:
    """Collects problem lines, keeping the first ``MAX_LISTED`` and counting the rest.

    Attributes
    ----------
    lines : list of str
        The problem lines kept, at most :data:`MAX_LISTED`, in the order they were added.
    n_total : int
        Every problem added, listed or not.

    Notes
    -----
    A ``Problems`` is true when at least one problem was added.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n_total = 0

    def add(self, line: str) -> None:
        """Add one problem line (kept while fewer than ``MAX_LISTED`` are listed).

        Parameters
        ----------
        line : str
            The problem: file, row and column, what is wrong, what to do.
        """
        self.n_total += 1
        if len(self.lines) < MAX_LISTED:
            self.lines.append(line)

    def add_rows(self, positions: Iterable[int], make_line: Callable[[int], str]) -> None:
        """Add one problem per offending row, building only the lines that will be listed.

        Parameters
        ----------
        positions : array-like of int
            0-based positions of the offending rows in the table.
        make_line : callable
            Called with one position (an int) to build that row's problem line.
        """
        positions = np.asarray(positions)
        room = max(MAX_LISTED - len(self.lines), 0)
        for pos in positions[:room]:
            self.lines.append(make_line(int(pos)))
        self.n_total += len(positions)

    def __bool__(self) -> bool:
        return self.n_total > 0

    def error(self, what: str) -> DataError:
        """One DataError listing every problem (capped) found in ``what``.

        Parameters
        ----------
        what : str
            The file, table or dataset the problems were found in (for the first line).

        Returns
        -------
        DataError
            Its message: a count, then one ``- line`` per listed problem and a count of the
            ones not listed; its ``problems``: the listed lines (plus that count).
        """
        listed = list(self.lines)
        n_more = self.n_total - len(listed)
        if n_more > 0:
            listed.append(f"... and {n_more} more problem(s) of the same kinds")
        head = (
            f"{self.n_total} problem(s) found in {what} "
            "(rows are data rows counted from 1, the header row not counted):"
        )
        return DataError("\n".join([head, *("- " + line for line in listed)]), problems=listed)

    def raise_if_any(self, what: str) -> None:
        """Raise :meth:`error` when any problem was added; otherwise do nothing.

        Parameters
        ----------
        what : str
            The file, table or dataset the problems were found in.

        Raises
        ------
        DataError
            At least one problem was added.
        """
        if self:
            raise self.error(what)


def row_label(pos: int) -> str:
    """The user-facing name of the data row at 0-based position ``pos``.

    Parameters
    ----------
    pos : int
        0-based position in the table.

    Returns
    -------
    str
        ``"row <pos + 1>"``: data rows counted from 1, the header not counted.
    """
    return f"row {pos + 1}"
