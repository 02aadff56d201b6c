"""CSV and TSV read strictly: every cell where the file puts it, or the row and line named.

The header is read first, so the column bound is checked before any table is built; a row
with more or fewer cells than the header is refused with its row and line (pandas shifted an
extra cell into the next column and padded short rows silently); a quoted cell that is never
closed (which would swallow the rest of the file) is refused; two columns with the same
header are refused. Cells stay text.
"""

from __future__ import annotations

import csv
import io

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from data.limits import Limits, check_columns, check_rows
from data.problems import Problems
from data.schema import DataError


def _allow_fields_up_to(n_chars: int) -> None:
    # the csv module refuses cells over 128 KiB by default; a document can be longer. The
    # setting is process-wide, so it only ever grows.
    if csv.field_size_limit() < n_chars + 1:
        csv.field_size_limit(n_chars + 1)


def _kind(sep: str) -> str:
    return "TSV" if sep == "\t" else "CSV"


def _header(text: str, source: str, sep: str) -> tuple[list[str], int, int]:
    """(header cells, text offset after the header, lines the header took up to its end)."""
    stream = io.StringIO(text, newline="")
    reader = csv.reader(stream, delimiter=sep)
    _allow_fields_up_to(len(text))
    try:
        for row in reader:
            if row:  # blank lines before the header are skipped, like blank data rows
                return row, stream.tell(), reader.line_num
    except csv.Error as err:
        raise DataError(
            f"{source}, line {reader.line_num}: the header row could not be read as "
            f"{_kind(sep)} ({err}); the first line must name the columns"
        ) from None
    raise DataError(f"{source}: the file has no header row; the first line must name the columns")


def _column_names(header: list[str], source: str) -> list[str]:
    names = [h if h != "" else f"Unnamed: {i}" for i, h in enumerate(header)]
    seen: dict[str, int] = {}
    problems = Problems()
    for i, name in enumerate(names):
        if name in seen:
            problems.add(
                f"{source}, columns {seen[name] + 1} and {i + 1} ({name!r}): the header names "
                "the same column twice, so it is not clear which one holds the values; rename "
                "or remove one of them"
            )
        else:
            seen[name] = i
    problems.raise_if_any(source)
    return names


def _unclosed_quote(body: str, last_cell: str, sep: str) -> int | None:
    """Offset in ``body`` of a quote opened at a cell's start and never closed, or None.

    A quoted cell that is never closed runs to the end of the file, so the last cell read is
    the rest of the file verbatim (with doubled quotes undone).
    """
    tail = '"' + last_cell.replace('"', '""')
    if not body.endswith(tail):
        return None
    start = len(body) - len(tail)
    if start == 0 or body[start - 1] in (sep, "\n", "\r"):
        return start
    return None


def _ends_in_quotes(raw: bytes, sep: str, n: int) -> bool:
    """Whether the file ends inside a quoted cell, told by reading it again with a line
    break and a sentinel appended: inside quotes they join the last cell; after a closed
    quote they start a row of their own. :func:`_unclosed_quote` cannot tell a cell that
    ends in a quoted line break (``c,"\\n"`` and a final line break) from a quote opened
    on the last line; this is asked only when it suspects one."""
    sentinel = "\n\x01"
    try:
        table = pacsv.read_csv(
            io.BytesIO(raw + sentinel.encode()),
            read_options=pacsv.ReadOptions(
                column_names=[f"c{i}" for i in range(n)],
                block_size=max(1 << 20, min(len(raw) + 3, (1 << 31) - 1)),
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=sep, newlines_in_values=True, invalid_row_handler=lambda row: "skip"
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={f"c{i}": pa.string() for i in range(n)},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowException:
        return True
    last = table.column(n - 1)[table.num_rows - 1].as_py() if table.num_rows else ""
    return last.endswith(sentinel)


def _unclosed_message(source: str, row: int, line: int) -> str:
    return (
        f'{source}, row {row} (line {line} of the file): a quoted cell starts here (") and is '
        "never closed, so the rest of the file would be read as one cell; close the quote or "
        "remove it"
    )


def _ragged_error(body: str, source: str, sep: str, n: int, line0: int, fallback: str) -> DataError:
    """List the rows whose cell count differs from the header's (the slow path)."""
    problems = Problems()
    reader = csv.reader(io.StringIO(body, newline=""), delimiter=sep)
    row, start, last = 0, 1, None
    try:
        while True:
            start = reader.line_num + 1
            cells = next(reader, None)
            if cells is None:
                break
            if not cells:
                continue
            row, last = row + 1, (row + 1, line0 + start, cells)
            if len(cells) == n:
                continue
            if len(cells) > n:
                advice = (
                    f"a cell holding a {'tab' if sep == chr(9) else 'comma'} must be in double "
                    'quotes ("doc, one"); otherwise remove the extra cells'
                )
            else:
                advice = (
                    "every row needs a cell for every column (an empty cell still needs its "
                    f"{'tab' if sep == chr(9) else 'comma'}); add the missing cells or remove the row"
                )
            problems.add(
                f"{source}, row {row} (line {line0 + start} of the file): {len(cells)} cells, "
                f"but the header has {n} columns; {advice}"
            )
    except csv.Error as err:
        problems.add(f"{source}, row {row + 1} (line {line0 + start} of the file): {err}")
    if last is not None and last[2] and _unclosed_quote(body, last[2][-1], sep) is not None:
        problems.add(_unclosed_message(source, last[0], last[1]))
    if not problems:
        problems.add(fallback)
    return problems.error(source)


def read_delimited(data: bytes, text: str, source: str, sep: str, limits: Limits) -> pd.DataFrame:
    """Read CSV (``sep=","``) or TSV (``sep="\\t"``) into a frame of text cells.

    Parameters
    ----------
    data : bytes
        The file's bytes without a byte-order mark.
    text : str
        The same, decoded.
    source : str
        The file, for messages.
    sep : {",", "\\t"}
        The delimiter.
    limits : data.limits.Limits
        Columns are checked from the header before any table is built, rows before the
        frame is made.

    Returns
    -------
    pandas.DataFrame
        One ``str`` column per header cell (an empty header cell is ``Unnamed: <i>``), every
        cell as written (never converted, never missing); blank lines skipped.

    Raises
    ------
    DataError
        No header, a header naming a column twice, too many columns or rows, a row with
        more or fewer cells than the header (each listed by row and line), a quoted cell
        never closed.
    """
    header, offset, header_lines = _header(text, source, sep)
    check_columns(source, header, limits)
    names = _column_names(header, source)
    n = len(header)
    body = text[offset:]
    raw = data[len(text[:offset].encode("utf-8")) :]
    internal = [f"c{i}" for i in range(n)]
    if not raw.strip(b"\r\n"):
        return pd.DataFrame({name: pd.Series([], dtype="str") for name in names})
    bad: list = []

    def on_bad(row) -> str:
        if not bad:
            bad.append(row.text)
        bad.append(None)
        return "skip"

    try:
        table = pacsv.read_csv(
            io.BytesIO(raw),
            read_options=pacsv.ReadOptions(
                column_names=internal, block_size=max(1 << 20, min(len(raw) + 1, (1 << 31) - 1))
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=sep, newlines_in_values=True, invalid_row_handler=on_bad
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={c: pa.string() for c in internal},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowException) as err:
        failed = (
            f"{source}: could not be read as {_kind(sep)} ({err}); check that every row has as "
            "many cells as the header"
        )
    else:
        failed = (
            f"{source}: {len(bad) - 1} row(s) do not have the header's {n} cells (the first: "
            f"{bad[0][:80]!r}); every row needs one cell per column"
            if bad
            else None
        )
    if failed:
        # the rows are listed by the slow path; the message above is its fallback
        raise _ragged_error(body, source, sep, n, header_lines, failed)
    n_rows = table.num_rows
    if n_rows:
        start = _unclosed_quote(body, table.column(n - 1)[n_rows - 1].as_py(), sep)
        if start is not None and _ends_in_quotes(raw, sep, n):
            line = header_lines + body.count("\n", 0, start) + 1
            problems = Problems()
            problems.add(_unclosed_message(source, n_rows, line))
            raise problems.error(source)
    check_rows(source, n_rows, n, limits)
    frame = table.to_pandas()
    frame.columns = names
    return frame
