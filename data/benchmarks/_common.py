"""Small helpers shared by the benchmark loaders: reading files, building canonical tables,
parsing judge answers in bulk."""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from data.schema import TABLES, VERDICT_P_FIRST, DataError, empty_table


def read_json(path: Path) -> Any:
    """A JSON file, with a DataError naming the file and position when it is malformed.

    Parameters
    ----------
    path : Path
        The file, read as UTF-8.

    Returns
    -------
    object
        The decoded JSON value.

    Raises
    ------
    DataError
        The file is not valid JSON (the message gives line and column, and suggests deleting
        the file so that it is fetched again).
    """
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"{path}: not valid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg}); "
            f"the file may be truncated: delete it so that it is fetched again"
        ) from exc


def read_jsonl(path: Path) -> list[dict]:
    """The values of the JSON-lines file ``path`` (UTF-8), one per non-blank line in file
    order; a line that is not valid JSON raises a DataError naming the file and line."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for n_line, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"{path}, line {n_line}: not valid JSON ({exc.msg}); the file may be "
                    f"truncated: delete it so that it is fetched again"
                ) from exc
    return rows


class _NoClassesUnpickler(pickle.Unpickler):
    """Reads pickles of plain containers only: every class lookup is refused, so a pickle
    cannot run code while loading."""

    def find_class(self, module: str, name: str):  # noqa: D401 - pickle API
        raise DataError(
            f"refused to load {module}.{name} from a pickle: benchmark pickles may hold only "
            f"plain dict/list/str/float data"
        )


def load_plain_pickle(path: Path) -> Any:
    """Unpickle a file that holds only built-in containers (see :class:`_NoClassesUnpickler`).

    Parameters
    ----------
    path : Path
        The pickle file.

    Returns
    -------
    object
        The unpickled data: built-in containers, strings and numbers only.

    Raises
    ------
    DataError
        The pickle refers to a class or function (every such lookup is refused, so nothing
        runs while loading), or is not a readable pickle (corrupt or truncated); the
        message starts with the path.
    """
    with open(path, "rb") as f:
        try:
            return _NoClassesUnpickler(f).load()
        except DataError as exc:
            raise DataError(f"{path}: {exc}") from exc
        except (pickle.UnpicklingError, EOFError) as exc:
            raise DataError(f"{path}: not a readable pickle ({exc})") from exc


def table(name: str, columns: Mapping[str, Sequence[Any] | np.ndarray]) -> pd.DataFrame:
    """A canonical table from column arrays: canonical column order and dtypes.

    Optional columns not given are left out; ids and texts become strings, ``sample`` int64,
    scores and probabilities float64.

    Parameters
    ----------
    name : str
        A table of :data:`data.schema.TABLES` (``"contexts"``, ``"candidates"``,
        ``"human_scores"``, ``"comparisons"``, ``"ratings"``).
    columns : mapping of str to sequence or ndarray
        Column name -> values, all of the same length.

    Returns
    -------
    pandas.DataFrame
        Columns in canonical order. id and text values pass through ``str()``; ``verdict``
        becomes a pandas ``str`` array with None kept missing. With every column empty, the
        canonical empty table of ``name``.

    Raises
    ------
    ValueError
        A column the table does not have; columns of different lengths; a required column
        missing (checked only when the columns are not empty).
    """
    spec = TABLES[name]
    unknown = set(columns) - set(spec)
    if unknown:
        raise ValueError(f"table {name!r} has no column(s) {sorted(unknown)}")
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"table {name!r}: columns have different lengths {sorted(lengths)}")
    if lengths == {0}:
        return empty_table(name)
    out = {}
    for col, (kind, required) in spec.items():
        if col not in columns:
            if required:
                raise ValueError(f"table {name!r} needs column {col!r}")
            continue
        values = columns[col]
        if kind == "float":
            out[col] = np.asarray(values, dtype=np.float64)
        elif kind == "int":
            out[col] = np.asarray(values, dtype=np.int64)
        elif kind == "verdict":
            out[col] = pd.array(list(values), dtype="str")
        else:
            out[col] = pd.array([str(v) for v in values], dtype="str")
    return pd.DataFrame(out)


def parse_all(
    parse: Callable[[str], Any], texts: Iterable[str]
) -> tuple[list[Any], list[str | None]]:
    """Apply a :mod:`data.parsing` function to many answers, once per distinct answer.

    Parameters
    ----------
    parse : callable
        Takes one answer and returns a :class:`~data.parsing.Parsed`.
    texts : iterable of str
        The raw answers.

    Returns
    -------
    (values, reasons)
        ``values[i]`` is None where ``reasons[i]`` says why the answer did not parse.
    """
    memo: dict[str, Any] = {}
    values: list[Any] = []
    reasons: list[str | None] = []
    for text in texts:
        hit = memo.get(text)
        if hit is None:
            hit = memo[text] = parse(text)
        values.append(hit.value)
        reasons.append(hit.reason)
    return values, reasons


def comparisons(
    columns: Mapping[str, Sequence[Any]], verdicts: Sequence[str | None]
) -> pd.DataFrame:
    """A canonical comparisons table from columns and parsed verdicts, every row sample 0.

    Parameters
    ----------
    columns : mapping of str to sequence
        The other columns of the table (context_id, attribute, judge, first_id, second_id,
        raw ...), as :func:`table` takes them.
    verdicts : sequence of {"A", "B", "tie", None}
        Parsed verdicts, one per row; "A" means the candidate shown first wins.

    Returns
    -------
    pandas.DataFrame
        ``p_first`` 1.0, 0.0 and 0.5 for "A", "B" and "tie", NaN for None; ``verdict`` the
        verdicts unchanged; ``sample`` 0.

    Raises
    ------
    KeyError
        A verdict other than "A", "B", "tie" or None.
    """
    p = np.array(
        [VERDICT_P_FIRST[v] if v is not None else np.nan for v in verdicts], dtype=np.float64
    )
    sample = np.zeros(len(p), dtype=np.int64)
    return table(
        "comparisons", {**columns, "p_first": p, "verdict": list(verdicts), "sample": sample}
    )


def judged_pairs(rows: Sequence[tuple], attribute: str) -> pd.DataFrame:
    """:func:`comparisons` of one attribute from ``(context_id, judge, first_id, second_id,
    verdict, raw)`` tuples, one per comparison, in order."""
    columns = ("context_id", "judge", "first_id", "second_id", "verdict", "raw")
    cols = {name: [r[k] for r in rows] for k, name in enumerate(columns)}
    verdicts = cols.pop("verdict")
    return comparisons({**cols, "attribute": [attribute] * len(rows)}, verdicts)


def concat(name: str, frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate canonical tables of one kind (an empty table when there are none).

    Parameters
    ----------
    name : str
        The kind of table (a name of :data:`data.schema.TABLES`).
    frames : iterable of pandas.DataFrame
        Tables of that kind; empty ones are skipped.

    Returns
    -------
    pandas.DataFrame
        The non-empty frames one after the other with a new 0..n-1 index, or the canonical
        empty table of ``name`` when none has rows.
    """
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty_table(name)
    return pd.concat(frames, ignore_index=True)
