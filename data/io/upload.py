"""Uploads: which layout a file's columns describe, and reading a file into a Dataset.

:func:`read_upload` is what the app calls: the file is read strictly (``data.io.formats``),
its layout is detected from the columns when not told (:func:`layouts`), and asked for when
the columns fit more than one layout; the canonical, wide (``data.io.wide``) or
pairwise-verdict (``data.io.pairwise``) table is then validated into a
:class:`~data.schema.Dataset`. :func:`read_table` reads one canonical table.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from data.coerce import normalise_column
from data.io.formats import read_frame
from data.io.guess import guess_wide_mapping
from data.io.pairwise_guess import guess_pairwise_mapping
from data.schema import TABLE_NAMES, TABLES, DataError
from data.validate import validate_table

#: Layouts :func:`read_upload` understands besides the canonical table names.
UPLOAD_KINDS = (*TABLE_NAMES, "long", "wide", "pairwise", "published")

#: How the pairwise layout is offered ("Read as pairwise verdicts (...)").
PAIRWISE_LAYOUT = "pairwise verdicts (one row per judged pair: candidates, verdicts, texts)"

#: Required columns that wide and candidate files share with the long tables.
_SHARED_COLUMNS = {"context_id", "candidate_id", "text", "system"}
_HOW_TO_CHOOSE = {"wide": "'wide'", "pairwise": "'pairwise'"}


def _required(name: str) -> list[str]:
    return [c for c, (_kind, required) in TABLES[name].items() if required]


def _near_complete(columns, cutoff: float = 0.75) -> list[str]:
    """Tables whose every required column is present or closely spelled (a likely typo)."""
    norm = [normalise_column(c) for c in columns]
    out = []
    for name in TABLE_NAMES:
        free = [c for c in norm if c not in TABLES[name]]
        ok = True
        for col in _required(name):
            if col in norm:
                continue
            close = difflib.get_close_matches(col, free, n=1, cutoff=cutoff)
            if not close:
                ok = False
                break
            free.remove(close[0])
        if ok:
            out.append(name)
    return out


def _closest_table(columns) -> str | None:
    """The canonical table whose required columns best match ``columns`` (typos allowed)."""
    norm = [normalise_column(c) for c in columns]
    best, best_score = None, 0.0
    for name in TABLE_NAMES:
        required = _required(name)
        hits = sum(
            1 for c in required if c in norm or difflib.get_close_matches(c, norm, n=1, cutoff=0.6)
        )
        score = hits / len(required) + 0.01 * hits  # prefer the larger table on a tie
        if hits and score > best_score:
            best, best_score = name, score
    return best


def layouts(columns, frame: pd.DataFrame | None = None) -> list[tuple[str, str]]:
    """Every layout the columns could describe, best first.

    Parameters
    ----------
    columns : iterable
        The file's headers.
    frame : pandas.DataFrame, optional
        The file's cells; with it, only columns holding numbers count as score columns of
        the wide layout.

    Returns
    -------
    list of (str, str)
        (kind, description) pairs. A complete (or misspelled) comparisons, ratings or
        human_scores table is that table alone. Otherwise each of these that fits: the
        pairwise-verdict format, or failing it the long table the columns mostly match
        (with the required columns it lacks); the wide format; candidates or contexts.
        More than one means the file is ambiguous; none, that it is not recognised.
    """
    cols = list(columns)
    near = _near_complete(cols)
    for name in ("comparisons", "ratings", "human_scores"):
        if name in near:
            return [(name, f"a {name} table")]
    norm = {normalise_column(c) for c in cols}
    found = []
    if guess_pairwise_mapping(cols, frame) is not None:
        found.append(("pairwise", PAIRWISE_LAYOUT))
    else:
        partial = []
        for name in ("comparisons", "ratings", "human_scores"):
            required = _required(name)
            present = [c for c in required if c in norm]
            if 2 * len(present) >= len(required) and set(present) - _SHARED_COLUMNS:
                missing = ", ".join(repr(c) for c in required if c not in norm)
                desc = f"a {name} table without its column(s) {missing}"
                partial.append((len(present) / len(required), len(required), name, desc))
        if partial:
            found.append(max(partial)[2:])
    wide = guess_wide_mapping(cols, frame)
    if wide is not None:
        shown = ", ".join(repr(str(c)) for c in wide.attributes)
        found.append(("wide", f"a wide table with human score column(s) {shown}"))
    for name in ("candidates", "contexts"):
        if name in near:
            found.append((name, f"a {name} table"))
            break
    return found


def detect_kind(columns, frame: pd.DataFrame | None = None) -> str | None:
    """The layout a set of column headers describes, or None when it cannot be told.

    Parameters
    ----------
    columns : iterable
        The file's headers.
    frame : pandas.DataFrame, optional
        The file's cells (see :func:`layouts`).

    Returns
    -------
    str or None
        A canonical table name, ``"wide"`` or ``"pairwise"``. None when no layout fits, and
        also when the columns fit more than one (see :func:`layouts`), for example
        ``context_id, candidate_id, text, n_words``: candidates with a word count, or a wide
        table whose 'n_words' column holds human scores.
    """
    found = layouts(columns, frame)
    return found[0][0] if len(found) == 1 else None


def _ambiguous_layout(source: str, columns, found) -> DataError:
    shown = ", ".join(repr(str(c)) for c in columns)
    options = " or ".join(desc for _kind, desc in found)
    choose = sorted({_HOW_TO_CHOOSE.get(kind, "'long'") for kind, _desc in found})
    kinds = sorted({kind for kind, _desc in found} | {"long"})
    return DataError(
        f"{source}, columns {shown}: the layout is ambiguous; the file could be {options}. "
        f"Say which it is rather than have it guessed: choose the format {' or '.join(choose)} "
        f"on the Data page (in code: read_upload(..., kind=...) with one of {', '.join(kinds)}, "
        "or a WideMapping / PairwiseMapping)"
    )


def _unknown_layout(source: str, columns) -> DataError:
    shown = ", ".join(repr(str(c)) for c in columns) or "none"
    return DataError(
        f"{source}: cannot tell which table this is from its columns ({shown}). Use the "
        "column names of a canonical table (contexts: context_id, text; candidates: "
        "context_id, candidate_id, text; human_scores: context_id, candidate_id, attribute, "
        "annotator, score; comparisons: context_id, attribute, judge, first_id, second_id, "
        "p_first, sample; ratings: context_id, candidate_id, attribute, judge, prompt_id, "
        "sample, score), a wide table (context_id, candidate_id and one column per "
        "attribute) or a pairwise table (first, second and verdict or probability)"
    )


def read_table(
    path: str | Path,
    name: str | None = None,
    *,
    data: bytes | None = None,
    scale: Mapping[str, tuple[float, float]] | None = None,
    allow_empty: bool = True,
    max_bytes: float | None = None,
) -> pd.DataFrame:
    """Read one canonical (long-format) table and validate it.

    Parameters
    ----------
    path : str or Path
        File to read, or with ``data`` the file name.
    name : str, optional
        Table name (``data.schema.TABLE_NAMES``); detected from the columns when omitted
        (the closest table, typos allowed, when the columns do not say).
    data : bytes, optional
        File content, when it does not come from disk.
    scale : mapping of attribute to (low, high), optional
        Score range check for human scores.
    allow_empty : bool
        Accept a 0-byte file (as written for an empty JSONL table) when ``name`` is given.
    max_bytes : float, optional
        Size limit; default ``data.validate.MAX_UPLOAD_BYTES``.

    Returns
    -------
    pandas.DataFrame
        The canonical table (see :func:`data.validate.validate_table`).

    Raises
    ------
    DataError
        Everything :func:`data.io.read_frame` and :func:`data.validate.validate_table`
        check; columns that match no canonical table.
    """
    source = Path(str(path)).name
    frame = read_frame(
        path, data, max_bytes=max_bytes, allow_empty=allow_empty and name is not None
    )
    if name is None:
        name = detect_kind(frame.columns)
        if name not in TABLE_NAMES:
            name = _closest_table(frame.columns)
            if name is None:
                raise _unknown_layout(source, frame.columns)
    return validate_table(frame, name, source, scale)
