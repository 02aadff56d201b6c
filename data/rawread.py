"""Strict readers of the upload formats (CSV, TSV, JSON, JSONL, Parquet): every cell where
the file puts it, or a :class:`~data.schema.DataError` naming the file and the row, line or
column. ``data.io.read_frame`` picks the reader by the file's extension.

* CSV/TSV: the header is read first, so the column bound is checked before any table is built;
  a row with more or fewer cells than the header is refused with its row and line (pandas
  shifted an extra cell into the next column and padded short rows silently); a quoted cell
  that is never closed (which would swallow the rest of the file) is refused; two columns with
  the same header are refused. Cells stay text.
* JSON/JSONL: every cell must be a scalar (text, number, true/false, null), an object may not
  repeat a key, nesting too deep for the parser is a message, not a RecursionError. Columns
  are built here, not by pandas, so integers are never rounded through float64 (pandas turns
  ``[2**60 + 1, null]`` into a float). JSONL lines are split on ``\\n`` only: U+2028, U+2029
  and U+0085 are ordinary characters inside strings.
* Parquet: rows, columns and decompressed size are checked from the metadata before anything
  is decompressed; nested columns and text that is not UTF-8 are refused; integers with gaps
  are not rounded through float64.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from data.coerce import EXACT_FLOAT_INT
from data.limits import (
    MAX_JSON_DEPTH,
    Limits,
    check_columns,
    check_parquet_metadata,
    check_rows,
    row_cap,
)
from data.problems import Problems, row_label
from data.schema import DataError

# ---------------------------------------------------------------------------------------
# CSV and TSV


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
        if start is not None:
            line = header_lines + body.count("\n", 0, start) + 1
            problems = Problems()
            problems.add(_unclosed_message(source, n_rows, line))
            raise problems.error(source)
    check_rows(source, n_rows, n, limits)
    frame = table.to_pandas()
    frame.columns = names
    return frame


# ---------------------------------------------------------------------------------------
# Parquet


def read_parquet(data: bytes, source: str, limits: Limits) -> pd.DataFrame:
    """Read a Parquet file, refused from its metadata (before decompressing) when over limits.

    Parameters
    ----------
    data : bytes
        The file's bytes.
    source : str
        The file, for messages.
    limits : data.limits.Limits
        Checked from the metadata (:func:`data.limits.check_parquet_metadata`).

    Returns
    -------
    pandas.DataFrame
        The table; binary columns decoded as UTF-8 text; an integer column with gaps whose
        values pass 2**53 kept as exact Python ints (pandas would round them through
        float64).

    Raises
    ------
    DataError
        Not readable as Parquet, over the limits, two columns of one name, a nested column,
        values that fail validation (e.g. text that is not UTF-8), binary cells that are not
        UTF-8.
    """

    def unreadable(err: Exception) -> DataError:
        return DataError(
            f"{source}: not a readable Parquet file ({type(err).__name__}: {err}); save it "
            "again as Parquet or upload CSV"
        )

    try:
        meta = pq.ParquetFile(io.BytesIO(data))
        schema = meta.schema_arrow
    except Exception as err:  # pyarrow raises several types for a corrupt file
        raise unreadable(err) from None
    check_parquet_metadata(source, meta.metadata, schema, limits)
    problems = Problems()
    seen: set[str] = set()
    for field_ in schema:
        if field_.name in seen:
            problems.add(
                f"{source}, column {field_.name!r}: two columns have this name; rename one"
            )
        seen.add(field_.name)
        if pa.types.is_nested(field_.type) or pa.types.is_union(field_.type):
            problems.add(
                f"{source}, column {field_.name!r}: holds nested values ({field_.type}), not "
                "table cells; a cell is text, a number or a boolean, so flatten the column"
            )
    problems.raise_if_any(source)
    try:
        table = meta.read()
    except Exception as err:
        raise unreadable(err) from None
    for name, column in zip(table.column_names, table.columns, strict=True):
        try:
            column.validate(full=True)  # e.g. text that is not UTF-8 in a damaged file
        except pa.ArrowException as err:
            problems.add(f"{source}, column {name!r}: the values cannot be read ({err})")
    problems.raise_if_any(source)
    try:
        frame = table.to_pandas()
    except Exception as err:
        raise unreadable(err) from None
    for field_ in schema:
        if field_.name not in frame.columns:
            continue  # restored as the index
        if pa.types.is_binary(field_.type) or pa.types.is_large_binary(field_.type):
            frame[field_.name] = _utf8_cells(frame[field_.name], field_.name, source, problems)
        elif pa.types.is_integer(field_.type) and frame[field_.name].dtype.kind == "f":
            # pandas turns integers with gaps into float64, which rounds past 2**53
            values = table.column(field_.name).to_pylist()
            if any(v is not None and abs(v) > EXACT_FLOAT_INT for v in values):
                frame[field_.name] = pd.Series(values, index=frame.index, dtype=object)
    problems.raise_if_any(source)
    return frame


def _utf8_cells(column: pd.Series, name: str, source: str, problems: Problems) -> pd.Series:
    """A binary Parquet column as text; a cell that is not UTF-8 is a problem, not replaced."""
    out = []
    for pos, value in enumerate(column.tolist()):
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                problems.add(
                    f"{source}, {row_label(pos)}, column {name!r}: the bytes are not UTF-8 "
                    "text; store the column as UTF-8 strings"
                )
        out.append(value)
    return pd.Series(out, index=column.index, dtype=object)


# ---------------------------------------------------------------------------------------
# JSON and JSONL

_SCALARS = (str, int, float, bool, type(None))
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class _RepeatedKeys(dict):
    """An object that named a key more than once (``repeated`` holds those keys)."""

    repeated: list[str]


def _pairs(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set = set()
        twice = [k for k, _ in pairs if k in seen or seen.add(k)]
        obj = _RepeatedKeys(obj)
        obj.repeated = list(dict.fromkeys(twice))
    return obj


def _loads(text: str):
    return json.loads(text, object_pairs_hook=_pairs)


def _too_deep(text: str) -> tuple[int, int]:
    """(line, column) where nesting first exceeds ``MAX_JSON_DEPTH`` (1, 1 if never)."""
    depth = 0
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                pos = m.start()
                return text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)
        elif tok in "]}":
            depth -= 1
    return 1, 1


def _decode_json(text: str, source: str, line_no: int, advice: str):
    """``text`` decoded; a DataError naming the line and column where it is not valid JSON.

    ``line_no`` is the line of a JSONL file that ``text`` is (0: ``text`` is a whole file,
    and the decoder's own line counts).
    """
    try:
        return _loads(text)
    except json.JSONDecodeError as err:
        line, col = line_no or err.lineno, err.colno
        problem = f"not valid JSON ({err.msg}); {advice}"
    except RecursionError:
        line, col = _too_deep(text)
        line = line_no or line
        problem = (
            f"the JSON is nested more than {MAX_JSON_DEPTH} levels deep here (MAX_JSON_DEPTH "
            "in data.limits); a table cell is text, a number, true/false or null, so flatten "
            "nested fields into columns"
        )
    raise DataError(f"{source}, line {line}, column {col}: {problem}")


def _column(values: list) -> pd.Series:
    """One column from JSON values, without rounding integers through float64."""
    kinds = set(map(type, values))
    if kinds <= {str, type(None)}:
        return pd.Series(values, dtype="str")
    if kinds <= {int, float, type(None)}:
        if int not in kinds:
            return pd.Series(values, dtype="float64")
        if kinds == {int}:
            return pd.Series(values)  # int64, uint64, or exact Python ints in an object column
        if all(
            -EXACT_FLOAT_INT <= v <= EXACT_FLOAT_INT for v in values if type(v) is int
        ):  # float64 holds every such integer exactly
            return pd.Series(values, dtype="float64")
    return pd.Series(values, dtype=object)


def _problem_cells(values: list, col: str, source: str, check_text: bool, problems: Problems):
    for pos, v in enumerate(values):
        if type(v) in (dict, list, _RepeatedKeys):
            what = "a list" if type(v) is list else "an object"
            problems.add(
                f"{source}, {row_label(pos)}, column {col!r}: the value is {what}, not a table "
                "cell; a cell is text, a number, true/false or null, so flatten nested fields "
                "into columns"
            )
        elif check_text and type(v) is str and _SURROGATE.search(v):
            problems.add(
                f"{source}, {row_label(pos)}, column {col!r}: the text holds an unpaired "
                "surrogate escape (\\ud800-\\udfff), which is not a character; fix the escape "
                "or write the character itself"
            )
        if len(problems.lines) >= 5:
            return


def records_frame(records: list, source: str, limits: Limits, check_text: bool = False):
    """A frame from a list of JSON row objects.

    Parameters
    ----------
    records : list
        Decoded JSON rows; each must be an object (a dict).
    source : str
        The file, for messages.
    limits : data.limits.Limits
        Rows and columns (the union of the keys) are bounded as the rows are read.
    check_text : bool
        Also refuse text holding an unpaired surrogate (the file had a ``\\ud800``-style
        escape).

    Returns
    -------
    pandas.DataFrame
        One column per key in order of first appearance; a row without a key is missing
        there. Empty for no records.

    Raises
    ------
    DataError
        A row that is not an object, an object repeating a key, too many rows or columns,
        a nested cell or a bad surrogate (see :func:`columns_frame`).
    """
    if limits.max_rows is not None and len(records) > limits.max_rows:
        check_rows(source, len(records), 1, limits)
    keys: dict = {}
    problems = Problems()
    for pos, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise DataError(
                f'{source}, {row_label(pos)}: expected an object {{"column": value, ...}} per '
                f"row, got {type(rec).__name__}; write one JSON object per table row"
            )
        if type(rec) is _RepeatedKeys:
            for key in rec.repeated:
                problems.add(
                    f"{source}, {row_label(pos)}, column {key!r}: the object names this key "
                    "more than once, so it is not clear which value to keep; keep one"
                )
        keys.update(rec)
        if limits.max_columns is not None and len(keys) > limits.max_columns:
            check_columns(source, list(keys), limits)
    problems.raise_if_any(source)
    if not records:
        return pd.DataFrame()
    check_rows(source, len(records), len(keys), limits)
    columns = {k: [rec.get(k) for rec in records] for k in keys}
    return columns_frame(columns, source, check_text)


def columns_frame(columns: dict, source: str, check_text: bool = False) -> pd.DataFrame:
    """A frame from columns of JSON values.

    Parameters
    ----------
    columns : dict of str to list
        Column name -> its values, all of one length.
    source : str
        The file, for messages.
    check_text : bool
        Also refuse text and column names holding an unpaired surrogate.

    Returns
    -------
    pandas.DataFrame
        Text columns as ``str``; numbers as float64 where that is exact, int64/uint64 for
        integers, else Python objects (integers are never rounded through float64).

    Raises
    ------
    DataError
        A cell that is a list or an object, or (with ``check_text``) an unpaired surrogate,
        named by row and column.
    """
    problems = Problems()
    for col, values in columns.items():
        if check_text and _SURROGATE.search(col):
            problems.add(
                f"{source}, column {col!r}: the column name holds an unpaired surrogate escape "
                "(\\ud800-\\udfff); fix the escape"
            )
        kinds = set(map(type, values))
        if not kinds <= set(_SCALARS) or (check_text and str in kinds):
            _problem_cells(values, col, source, check_text, problems)
    problems.raise_if_any(source)
    return pd.DataFrame({k: _column(v) for k, v in columns.items()})


def parse_json(text: str, source: str, limits: Limits) -> pd.DataFrame:
    """Read a JSON table: a list of row objects, ``{"data": [...]}``, or an object of columns.

    Parameters
    ----------
    text : str
        The file's text.
    source : str
        The file, for messages.
    limits : data.limits.Limits
        Rows and columns.

    Returns
    -------
    pandas.DataFrame
        See :func:`records_frame` and :func:`columns_frame`.

    Raises
    ------
    DataError
        Not valid JSON or nested too deeply (line and column named), a repeated key,
        columns of different lengths, another top-level shape, anything
        :func:`records_frame` refuses.
    """
    obj = _decode_json(text, source, 0, "fix the file or save it again from a JSON-aware tool")
    check_text = _SURROGATE_ESCAPE.search(text) is not None
    if type(obj) is _RepeatedKeys:
        raise DataError(
            f"{source}: the top-level object names {', '.join(map(repr, obj.repeated))} more "
            "than once; keep one of each"
        )
    if isinstance(obj, dict) and len(obj) == 1 and isinstance(next(iter(obj.values())), list):
        # {"data": [...]} wrappers are common in exported files
        inner = next(iter(obj.values()))
        if all(isinstance(r, dict) for r in inner):
            obj = inner
    if isinstance(obj, list):
        return records_frame(obj, source, limits, check_text)
    if isinstance(obj, dict) and all(isinstance(v, list) for v in obj.values()):
        lengths = {len(v) for v in obj.values()}
        if len(lengths) > 1:
            raise DataError(
                f"{source}: the JSON columns have different lengths ({sorted(lengths)}); every "
                "column must have one value per row"
            )
        check_columns(source, list(obj), limits)
        check_rows(source, next(iter(lengths), 0), len(obj), limits)
        return columns_frame(obj, source, check_text)
    raise DataError(
        f'{source}: expected a JSON list of row objects ([{{"column": value}}, ...]) or an '
        f"object of equal-length column lists; got {type(obj).__name__}"
    )


def parse_jsonl(text: str, source: str, limits: Limits) -> pd.DataFrame:
    """Read a JSONL table: one JSON object per line.

    Parameters
    ----------
    text : str
        The file's text; lines end at ``\\n`` only (a ``\\r`` before it is ignored, and
        U+2028, U+2029 and U+0085 are ordinary characters); blank lines are skipped.
    source : str
        The file, for messages.
    limits : data.limits.Limits
        Rows are bounded while reading, columns as in :func:`records_frame`.

    Returns
    -------
    pandas.DataFrame
        See :func:`records_frame`.

    Raises
    ------
    DataError
        A line that is not valid JSON, nested too deeply or not an object (its line
        named), too many rows, anything :func:`records_frame` refuses.
    """
    records = []
    cap = row_cap(limits, 1)
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        if cap is not None and len(records) >= cap:
            check_rows(source, len(records) + 1, 1, limits)
        rec = _decode_json(line, source, line_no, "a JSONL file holds one JSON object per line")
        if not isinstance(rec, dict):
            raise DataError(
                f"{source}, line {line_no}: expected a JSON object per line, got "
                f"{type(rec).__name__}"
            )
        records.append(rec)
    return records_frame(records, source, limits, _SURROGATE_ESCAPE.search(text) is not None)


#: Characters ``str.splitlines`` breaks on that JSON may leave raw inside strings.
_LINE_BREAKS_IN_STRINGS = str.maketrans(
    {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
)


def jsonl_line(record: dict) -> str:
    """One JSONL line for a record, as :func:`parse_jsonl` reads it back.

    Parameters
    ----------
    record : dict
        JSON-serialisable scalars by column name (no NaN: missing values are None).

    Returns
    -------
    str
        The record as JSON (UTF-8 characters kept) and a ``\\n``, the only line break in it:
        U+2028, U+2029 and U+0085 inside strings are escaped.

    Raises
    ------
    ValueError
        A value is NaN or infinite.
    """
    text = json.dumps(record, ensure_ascii=False, allow_nan=False)
    return text.translate(_LINE_BREAKS_IN_STRINGS) + "\n"
