"""JSON and JSONL read strictly: every cell a scalar, or the row, line or column named.

Every cell must be a scalar (text, number, true/false, null), an object may not repeat a key,
nesting too deep for the parser is a message, not a RecursionError. Columns are built here,
not by pandas, so integers are never rounded through float64 (pandas turns
``[2**60 + 1, null]`` into a float); an integer of more than 4,300 digits (more than Python
converts) is kept as its digits, as text. JSONL lines are split on ``\\n`` only: U+2028, U+2029 and
U+0085 are ordinary characters inside strings.
"""

from __future__ import annotations

import json
import re
import sys

import pandas as pd

from data.coerce import EXACT_FLOAT_INT
from data.limits import MAX_JSON_DEPTH, Limits, check_columns, check_rows, row_cap
from data.problems import Problems, row_label
from data.schema import DataError

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


def _integer(digits: str) -> int | str:
    """A JSON integer; one longer than Python converts (``sys.get_int_max_str_digits``,
    4,300 digits) stays its digits, as text: an id or a text field reads it as written, a
    number field refuses it with its row and column (it is no finite number)."""
    limit = sys.get_int_max_str_digits()
    return digits if limit and len(digits.lstrip("-")) > limit else int(digits)


def _loads(text: str):
    return json.loads(text, object_pairs_hook=_pairs, parse_int=_integer)


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
