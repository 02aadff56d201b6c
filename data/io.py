"""Read and write JudgeScope tables: CSV, TSV, JSON (records), JSONL and Parquet.

The format follows the file extension. Every reader takes a path, or bytes plus a file
name (Streamlit uploads give bytes). Three layouts are understood:

* the long **canonical** format of any table (``data.schema.TABLES``);
* a **wide** format, one row per candidate (or per candidate and annotator) with one column
  per attribute, turned into contexts + candidates + human_scores with a :class:`WideMapping`;
* a **pairwise-verdict** format: context, first, second and a verdict (A/B/tie, 1/2/0,
  first/second/tie) and/or a probability, turned into the comparisons table with a
  :class:`PairwiseMapping`.

:func:`read_upload` is what the app calls: it refuses files that are too large (in bytes,
rows, columns or decompressed size, ``data.limits``), empty, not UTF-8 or malformed (the raw
readers in ``data.rawread`` read every cell where the file puts it or refuse the file), detects
the layout from the columns when not told, asks for it when the columns fit more than one
layout (see :func:`layouts`), and returns a validated :class:`~data.schema.Dataset`. Writing a
table with :func:`write_table` and reading it back with :func:`read_table` gives the same
canonical table in every format.
"""

from __future__ import annotations

import codecs
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath

import numpy as np
import pandas as pd

from data import validate as _validate
from data.limits import LOCAL_LIMITS, UPLOAD_LIMITS, Limits
from data.rawread import jsonl_line, parse_json, parse_jsonl, read_delimited, read_parquet
from data.schema import TABLE_NAMES, TABLES, DataError, Dataset, empty_table
from data.validate import (
    Problems,
    normalise_column,
    row_label,
    to_str_series,
    validate_dataset,
    validate_table,
)

#: File extension -> format name.
FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}

#: Layouts :func:`read_upload` understands besides the canonical table names.
UPLOAD_KINDS = (*TABLE_NAMES, "long", "wide", "pairwise")

DATASET_META = "dataset.json"


def file_format(name: str | Path) -> str:
    """Format name (csv, tsv, json, jsonl, parquet) from a file name's extension."""
    suffix = Path(str(name)).suffix.lower()
    if suffix not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise DataError(
            f"{Path(str(name)).name}: cannot tell the file format from the extension "
            f"{suffix or '(none)'!r}; use one of {known}"
        )
    return FORMATS[suffix]


# ---------------------------------------------------------------------------------------
# Raw reading


def _check_size(n_bytes: int, source: str, max_bytes: float | None) -> None:
    limit = _validate.MAX_UPLOAD_BYTES if max_bytes is None else max_bytes
    if n_bytes > limit:
        raise DataError(
            f"{source}: the file is {n_bytes / 1e6:,.1f} MB ({n_bytes:,} bytes), more than the "
            f"limit of {limit / 1e6:,.1f} MB ({int(limit):,} bytes, MAX_UPLOAD_BYTES); split it "
            "into smaller files, keep only the columns needed, or save it as Parquet"
        )


def _decode(data: bytes, source: str) -> str:
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[bom:].decode("utf-8")
    except UnicodeDecodeError as err:
        offset = err.start + bom
        line = data[:offset].count(b"\n") + 1
        raise DataError(
            f"{source}, line {line}: the file is not UTF-8 text (byte 0x{data[offset]:02x} at "
            f"byte offset {offset} cannot be decoded); re-save the file with UTF-8 encoding "
            "(e.g. 'CSV UTF-8' in Excel, character set 'Unicode (UTF-8)' in LibreOffice) and "
            "load it again"
        ) from None


def read_frame(
    name: str | Path,
    data: bytes | None = None,
    *,
    max_bytes: float | None = None,
    allow_empty: bool = False,
    limits: Limits | None = None,
) -> pd.DataFrame:
    """Read a file into a raw DataFrame (cells of text formats stay strings).

    Parameters
    ----------
    name : str or Path
        The path to read, or (with ``data``) the file name, used for the format and messages.
    data : bytes, optional
        The file's content (an upload); when given, nothing is read from disk.
    max_bytes : float, optional
        Size limit; default ``data.validate.MAX_UPLOAD_BYTES``.
    allow_empty : bool
        Return an empty frame for a 0-byte file instead of raising.
    limits : data.limits.Limits, optional
        Rows, columns, cells and decompressed size; default ``data.limits.UPLOAD_LIMITS``
        (:func:`load_dataset` reads the user's own folders with ``LOCAL_LIMITS``).

    Raises
    ------
    DataError
        Unknown extension, file too large (in bytes, rows, columns, cells or decompressed
        size), empty, not UTF-8, not parseable, a row whose cell count differs from the
        header's, a nested or repeated JSON value, two columns of the same name.
    """
    fmt = file_format(name)
    source = Path(str(name)).name
    limits = UPLOAD_LIMITS if limits is None else limits
    if data is None:
        path = Path(name)
        if not path.is_file():
            raise DataError(f"{path}: file not found")
        _check_size(path.stat().st_size, source, max_bytes)
        data = path.read_bytes()
    else:
        _check_size(len(data), source, max_bytes)
    if len(data) == 0 or data.isspace():
        if allow_empty:
            return pd.DataFrame()
        raise DataError(
            f"{source}: the file is empty ({len(data)} bytes{', only white space' if data else ''}); "
            "choose the file that holds the table"
        )
    if fmt == "parquet":
        return read_parquet(data, source, limits)
    text = _decode(data, source)
    if fmt in ("csv", "tsv"):
        raw = data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data
        return read_delimited(raw, text, source, "," if fmt == "csv" else "\t", limits)
    if fmt == "json":
        return parse_json(text, source, limits)
    return parse_jsonl(text, source, limits)


# ---------------------------------------------------------------------------------------
# Canonical tables


def _near_complete(columns, cutoff: float = 0.75) -> list[str]:
    """Tables whose every required column is present or closely spelled (a likely typo)."""
    import difflib

    norm = [normalise_column(c) for c in columns]
    out = []
    for name in TABLE_NAMES:
        free = [c for c in norm if c not in TABLES[name]]
        ok = True
        for col in (c for c, (_k, req) in TABLES[name].items() if req):
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


#: Required columns that wide and candidate files share with the long tables.
_SHARED_COLUMNS = {"context_id", "candidate_id", "text", "system"}
_HOW_TO_CHOOSE = {"wide": "'wide'", "pairwise": "'pairwise'"}


def layouts(columns, frame: pd.DataFrame | None = None) -> list[tuple[str, str]]:
    """Every layout the columns could describe, as (kind, description); best first.

    A complete (or misspelled) comparisons, ratings or human_scores table is that table.
    Otherwise each of these that fits is listed: the pairwise-verdict format, or failing it
    the long table the columns mostly match (with the required columns it lacks); the wide
    format (with ``frame``, only columns holding numbers count as score columns); candidates
    or contexts. More than one means the file is ambiguous.
    """
    cols = list(columns)
    near = _near_complete(cols)
    for name in ("comparisons", "ratings", "human_scores"):
        if name in near:
            return [(name, f"a {name} table")]
    norm = {normalise_column(c) for c in cols}
    found = []
    if guess_pairwise_mapping(cols) is not None:
        found.append(("pairwise", "a pairwise-verdict table (first, second, verdict)"))
    else:
        partial = []
        for name in ("comparisons", "ratings", "human_scores"):
            required = [c for c, (_k, req) in TABLES[name].items() if req]
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

    None also when the columns fit more than one layout (see :func:`layouts`), for example
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


def _closest_table(columns) -> str | None:
    """The canonical table whose required columns best match ``columns`` (typos allowed)."""
    import difflib

    norm = [normalise_column(c) for c in columns]
    best, best_score = None, 0.0
    for name in TABLE_NAMES:
        required = [c for c, (_k, req) in TABLES[name].items() if req]
        hits = sum(
            1 for c in required if c in norm or difflib.get_close_matches(c, norm, n=1, cutoff=0.6)
        )
        score = hits / len(required) + 0.01 * hits  # prefer the larger table on a tie
        if hits and score > best_score:
            best, best_score = name, score
    return best


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
        Table name (``data.schema.TABLE_NAMES``); detected from the columns when omitted.
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


def _json_records(df: pd.DataFrame) -> list[dict]:
    cols = {}
    for col in df.columns:
        s = df[col]
        values = s.astype(object).where(s.notna(), None).tolist()
        cols[str(col)] = [v.item() if isinstance(v, np.generic) else v for v in values]
    names = list(cols)
    return [dict(zip(names, row, strict=True)) for row in zip(*cols.values(), strict=True)]


def write_table(df: pd.DataFrame, path: str | Path) -> Path:
    """Write a table in the format of ``path``'s extension; missing values stay missing.

    CSV/TSV write missing floats as empty cells; JSON/JSONL write ``null``; floats are
    written with full precision, so reading back gives identical values.
    """
    path = Path(path)
    fmt = file_format(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt in ("csv", "tsv"):
        df.to_csv(path, sep="," if fmt == "csv" else "\t", index=False, na_rep="")
    elif fmt == "parquet":
        df.to_parquet(path, index=False)
    else:
        records = _json_records(df)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            if fmt == "json":
                json.dump(records, fh, ensure_ascii=False, allow_nan=False, indent=0)
            else:
                fh.writelines(jsonl_line(rec) for rec in records)
    return path


# ---------------------------------------------------------------------------------------
# Wide format

_CONTEXT_ALIASES = ("context_id", "context", "doc_id", "document_id", "item_id")
_CANDIDATE_ALIASES = ("candidate_id", "candidate", "response_id", "output_id")
_SYSTEM_ALIASES = ("system", "system_id", "model", "model_id")
_CONTEXT_TEXT_ALIASES = ("context_text", "source_text", "document_text", "source", "document")
_CANDIDATE_TEXT_ALIASES = ("candidate_text", "text", "output", "response", "summary")
_ANNOTATOR_ALIASES = ("annotator", "annotator_id", "rater", "worker", "worker_id")


@dataclass(frozen=True)
class WideMapping:
    """Columns of a wide table: one row per candidate (or per candidate and annotator).

    Parameters
    ----------
    context_id, candidate_id : str
        Columns holding the ids.
    system, context_text, candidate_text : str, optional
        Columns with the system name, the context text and the candidate text.
    attributes : mapping of column to attribute, or to (attribute, annotator)
        Score columns. A plain attribute name takes the annotator from the ``annotator``
        column (or ``default_annotator``); a pair names the annotator of that column (e.g.
        ``{"coh_a1": ("coherence", "a1"), "coh_a2": ("coherence", "a2")}``).
    annotator : str, optional
        Column holding the annotator of each row (one row per candidate and annotator).
    default_annotator : str
        Annotator name when neither a column nor a pair names one.
    """

    context_id: str
    candidate_id: str
    system: str | None = None
    context_text: str | None = None
    candidate_text: str | None = None
    attributes: Mapping[str, str | tuple[str, str]] = field(default_factory=dict)
    annotator: str | None = None
    default_annotator: str = "human"


_WIDE_ROLES = {
    "context_id": _CONTEXT_ALIASES,
    "candidate_id": _CANDIDATE_ALIASES,
    "system": _SYSTEM_ALIASES,
    "context_text": _CONTEXT_TEXT_ALIASES,
    "candidate_text": _CANDIDATE_TEXT_ALIASES,
    "annotator": _ANNOTATOR_ALIASES,
}


def _find_alias(columns, aliases, taken=()) -> str | None:
    by_norm = {normalise_column(c): c for c in columns if c not in taken}
    for alias in aliases:
        if alias in by_norm:
            return by_norm[alias]
    return None


def guess_wide_mapping(columns, frame: pd.DataFrame | None = None) -> WideMapping | None:
    """A :class:`WideMapping` guessed from the headers, or None.

    Needs a context id and a candidate id column (``context_id``/``context``/``doc_id``...,
    ``candidate_id``/``candidate``...); system, texts and annotator columns are recognised
    by name; every other column is an attribute. With ``frame``, a column none of whose
    cells is a number (e.g. free-text notes) is left out rather than reported.
    """
    cols = list(columns)
    roles: dict = {}
    for role, aliases in _WIDE_ROLES.items():
        roles[role] = _find_alias(cols, aliases, taken=list(roles.values()))
        if roles[role] is None and role in ("context_id", "candidate_id"):
            return None
    taken = [c for c in roles.values() if c is not None]
    attributes = {}
    for col in cols:
        if col in taken:
            continue
        if frame is not None:
            num, _bad = _validate._coerce_float(frame[col])
            if num.notna().sum() == 0:
                continue
        attributes[col] = normalise_column(col)
    if not attributes:
        return None
    return WideMapping(attributes=attributes, **roles)


def _resolve_column(frame, col, role, source, problems: Problems):
    """The frame's column for mapping entry ``col`` (exact, then normalised match)."""
    import difflib

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


def wide_to_dataset(
    frame: pd.DataFrame,
    mapping: WideMapping,
    *,
    name: str = "upload",
    source: str = "wide table",
    scales: Mapping[str, tuple[float, float]] | None = None,
) -> Dataset:
    """Turn a wide table into contexts + candidates + human_scores.

    Rows are checked in the wide table itself, so messages name its rows and columns. Empty
    score cells are skipped (not every annotator scores every attribute). The contexts table
    is filled only when ``mapping.context_text`` is given; candidate texts default to ``""``.

    Raises
    ------
    DataError
        Mapped column missing, empty id, score that is not a number or is outside
        ``scales``, the same candidate (and annotator) on two rows.
    """
    problems = Problems()
    frame = frame.reset_index(drop=True)
    roles = {
        "context_id": mapping.context_id,
        "candidate_id": mapping.candidate_id,
        "system": mapping.system,
        "context_text": mapping.context_text,
        "candidate_text": mapping.candidate_text,
        "annotator": mapping.annotator,
    }
    cols = {
        role: _resolve_column(frame, col, role, source, problems)
        for role, col in roles.items()
        if col is not None
    }
    attr_cols = {}
    for col, target in mapping.attributes.items():
        found = _resolve_column(frame, col, "attribute", source, problems)
        if found is not None:
            attr_cols[found] = target
    if not mapping.attributes:
        problems.add(
            f"{source}: the mapping names no attribute column; map at least one score column "
            "to an attribute"
        )
    by_target: dict = {}
    for col, target in attr_cols.items():
        key = (str(target), None) if isinstance(target, str) else tuple(map(str, target))
        by_target.setdefault(key, []).append(col)
    for (attribute, annotator), same in by_target.items():
        if len(same) > 1:
            problems.add(
                f"{source}, columns {' and '.join(repr(str(c)) for c in same)}: all hold the "
                f"scores of attribute '{attribute}'"
                + (f" by annotator '{annotator}'" if annotator else "")
                + ", so each candidate would be scored twice; keep one column or map them to "
                "different attributes or annotators"
            )
    problems.raise_if_any(source)

    ids = {}
    for role in ("context_id", "candidate_id", "annotator"):
        if role in cols:
            ids[role], bad = _validate._coerce_id(frame[cols[role]])
            problems.add_rows(
                bad,
                lambda p, c=cols[role]: (
                    f"{source}, {row_label(p)}, " + _validate.id_problem(c, frame[c].iloc[p])
                ),
            )
    scales = dict(scales or {})
    n_rows = len(frame)
    score_cols, attr_names, annotator_names = [], [], []
    for col, target in attr_cols.items():
        attribute, annotator = (target, None) if isinstance(target, str) else target
        num, bad = _validate._coerce_float(frame[col])
        problems.add_rows(
            bad,
            lambda p, col=col: (
                f"{source}, {row_label(p)}, column '{col}': {frame[col].iloc[p]!r} is not a "
                "number; write a number such as 4 or 3.5, or leave the cell empty"
            ),
        )
        vals = num.to_numpy()
        if str(attribute) in scales:
            lo, hi = scales[str(attribute)]
            outside = np.flatnonzero(np.isfinite(vals) & ((vals < lo) | (vals > hi)))
            problems.add_rows(
                outside,
                lambda p, col=col, attribute=attribute, lo=lo, hi=hi, vals=vals: (
                    f"{source}, {row_label(p)}, column '{col}': {vals[p]:g} is outside the "
                    f"scale of '{attribute}' ({lo:g} to {hi:g}); fix the score or state the "
                    "right scale"
                ),
            )
        score_cols.append(vals)
        attr_names.append(str(attribute))
        annotator_names.append(annotator)
    if problems:
        raise problems.error(source)

    key_cols = ["context_id", "candidate_id"] + (["annotator"] if "annotator" in ids else [])
    keys = pd.DataFrame({k: ids[k] for k in key_cols})
    dup = keys.duplicated(keep=False).to_numpy()
    if dup.any():
        shown_cols = [cols[k] for k in key_cols]
        _validate._report_duplicates(
            keys.set_axis(shown_cols, axis=1), shown_cols, dup, source, problems, "row key"
        )
        raise problems.error(source)

    ctx_ids, cand_ids = ids["context_id"], ids["candidate_id"]
    first_of_candidate = ~keys[["context_id", "candidate_id"]].duplicated().to_numpy()
    cand = pd.DataFrame(
        {
            "context_id": ctx_ids[first_of_candidate],
            "candidate_id": cand_ids[first_of_candidate],
            "system": (
                to_str_series(frame[cols["system"]])[first_of_candidate]
                if "system" in cols
                else np.nan
            ),
            "text": (
                to_str_series(frame[cols["candidate_text"]])[first_of_candidate]
                if "candidate_text" in cols
                else ""
            ),
        }
    )
    contexts = empty_table("contexts")
    if "context_text" in cols:
        first_of_context = ~ctx_ids.duplicated().to_numpy()
        contexts = pd.DataFrame(
            {
                "context_id": ctx_ids[first_of_context],
                "text": to_str_series(frame[cols["context_text"]])[first_of_context],
            }
        )

    values = np.column_stack(score_cols) if score_cols else np.empty((n_rows, 0))
    rows, which = np.nonzero(np.isfinite(values))  # row-major: file order
    row_annotator = (
        ids["annotator"].to_numpy()[rows]
        if "annotator" in ids
        else np.full(len(rows), str(mapping.default_annotator), dtype=object)
    )
    col_annotator = np.array(annotator_names, dtype=object)[which]
    annotator = np.where(pd.isna(col_annotator), row_annotator, col_annotator)
    human = pd.DataFrame(
        {
            "context_id": ctx_ids.to_numpy()[rows],
            "candidate_id": cand_ids.to_numpy()[rows],
            "attribute": np.array(attr_names, dtype=object)[which],
            "annotator": annotator,
            "score": values[rows, which],
        }
    )
    ds = Dataset(
        name=name,
        contexts=contexts,
        candidates=cand,
        human_scores=human,
        scales={k: tuple(v) for k, v in scales.items()},
        source=source,
    )
    return validate_dataset(ds, sources={t: source for t in TABLE_NAMES})


# ---------------------------------------------------------------------------------------
# Pairwise-verdict format

_FIRST_ALIASES = ("first_id", "first", "a", "candidate_a", "first_candidate", "model_a", "system_a")
_SECOND_ALIASES = (
    "second_id",
    "second",
    "b",
    "candidate_b",
    "second_candidate",
    "model_b",
    "system_b",
)
_VERDICT_ALIASES = ("verdict", "winner", "label", "choice", "preference")
_PROB_ALIASES = ("p_first", "probability", "prob", "p", "p_a", "prob_a")
_PAIR_CONTEXT_ALIASES = ("context_id", "context", "question_id", "doc_id", "item_id")

#: Verdict spellings of the pairwise-verdict format (compared case-insensitively).
VERDICT_SPELLINGS = {
    "a": "A",
    "1": "A",
    "1.0": "A",
    "first": "A",
    "b": "B",
    "2": "B",
    "2.0": "B",
    "second": "B",
    "tie": "tie",
    "0": "tie",
    "0.0": "tie",
    "draw": "tie",
    "equal": "tie",
}
_VERDICT_P = {"A": 1.0, "B": 0.0, "tie": 0.5}


@dataclass(frozen=True)
class PairwiseMapping:
    """Columns of a pairwise-verdict table: one row per judged ordered pair (per sample).

    ``first`` was shown first (slot A). At least one of ``verdict`` (A/B/tie, 1/2/0,
    first/second/tie) and ``probability`` (P(first is better)) must be given; with only a
    verdict, p_first is 1 / 0 / 0.5. Optional columns fall back to the defaults; without a
    ``sample`` column, repeated rows of the same pair become samples 0, 1, 2, ...
    """

    first: str
    second: str
    verdict: str | None = None
    probability: str | None = None
    context_id: str | None = None
    attribute: str | None = None
    judge: str | None = None
    sample: str | None = None
    raw: str | None = None
    default_context: str = "all"
    default_attribute: str = "overall"
    default_judge: str = "uploaded"


_PAIR_ROLES = {
    "first": _FIRST_ALIASES,
    "second": _SECOND_ALIASES,
    "verdict": _VERDICT_ALIASES,
    "probability": _PROB_ALIASES,
    "context_id": _PAIR_CONTEXT_ALIASES,
    "attribute": ("attribute", "aspect", "criterion"),
    "judge": ("judge", "evaluator"),
    "sample": ("sample", "sample_id"),
    "raw": ("raw", "raw_output", "output_text"),
}


def guess_pairwise_mapping(columns) -> PairwiseMapping | None:
    """A :class:`PairwiseMapping` guessed from the headers, or None."""
    cols = list(columns)
    found = {}
    for role, aliases in _PAIR_ROLES.items():
        found[role] = _find_alias(cols, aliases, taken=(found.get("first"),))
    if found["first"] is None or found["second"] is None:
        return None
    if found["verdict"] is None and found["probability"] is None:
        return None
    return PairwiseMapping(**found)


def _alias_conflicts(columns, roles: Mapping[str, tuple[str, ...]], source: str) -> None:
    """Refuse two columns that a guessed mapping would both read as the same field.

    Without this the first one found wins silently (``verdict`` and ``winner``, or
    ``Verdict`` and ``verdict``).
    """
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


def pairwise_to_comparisons(
    frame: pd.DataFrame,
    mapping: PairwiseMapping | None = None,
    *,
    source: str = "pairwise table",
) -> pd.DataFrame:
    """Turn a pairwise-verdict table into the canonical comparisons table.

    Rows map one to one, in order, so messages name the rows of ``frame``.

    Raises
    ------
    DataError
        No usable columns, empty ids, a verdict not understood, a probability that is not a
        number or outside [0, 1], a candidate compared with itself.
    """
    frame = frame.reset_index(drop=True)
    if mapping is None:
        _alias_conflicts(frame.columns, _PAIR_ROLES, source)
        mapping = guess_pairwise_mapping(frame.columns)
        if mapping is None:
            raise DataError(
                f"{source}: not a pairwise-verdict table; it needs columns for the first and "
                "second candidate (first, second) and a verdict (A/B/tie) or a probability "
                f"(p_first); columns found: {', '.join(map(str, frame.columns))}"
            )
    if mapping.verdict is None and mapping.probability is None:
        raise DataError(
            f"{source}: the mapping needs a verdict column, a probability column or both"
        )
    problems = Problems()
    named = {
        "first": mapping.first,
        "second": mapping.second,
        "verdict": mapping.verdict,
        "probability": mapping.probability,
        "context_id": mapping.context_id,
        "attribute": mapping.attribute,
        "judge": mapping.judge,
        "sample": mapping.sample,
        "raw": mapping.raw,
    }
    cols = {
        role: _resolve_column(frame, col, role, source, problems)
        for role, col in named.items()
        if col is not None
    }
    problems.raise_if_any(source)
    n = len(frame)

    def ids(role, default):
        if role not in cols:
            return pd.Series([str(default)] * n, dtype="str")
        out, bad = _validate._coerce_id(frame[cols[role]])
        problems.add_rows(
            bad,
            lambda p: (
                f"{source}, {row_label(p)}, "
                + _validate.id_problem(cols[role], frame[cols[role]].iloc[p])
            ),
        )
        return out

    first = ids("first", None)
    second = ids("second", None)
    context = ids("context_id", mapping.default_context)
    attribute = ids("attribute", mapping.default_attribute)
    judge = ids("judge", mapping.default_judge)

    same = np.flatnonzero(((first == second) & first.notna()).to_numpy())
    problems.add_rows(
        same,
        lambda p: (
            f"{source}, {row_label(p)}, column '{cols['second']}': candidate {first.iloc[p]!r} "
            "is compared with itself; a comparison needs two different candidates"
        ),
    )

    verdict = pd.Series([np.nan] * n, dtype="str")
    if "verdict" in cols:
        text = to_str_series(frame[cols["verdict"]]).str.strip()
        missing = (text.isna() | (text == "")).to_numpy()
        verdict = text.str.lower().map(VERDICT_SPELLINGS).astype("str")
        bad = np.flatnonzero(verdict.isna().to_numpy() & ~missing)
        problems.add_rows(
            bad,
            lambda p: (
                f"{source}, {row_label(p)}, column '{cols['verdict']}': verdict "
                f"{frame[cols['verdict']].iloc[p]!r} is not understood; write A / B / tie "
                "(or 1 / 2 / 0, or first / second / tie) or leave the cell empty"
            ),
        )
    if "probability" in cols:
        num, bad = _validate._coerce_float(frame[cols["probability"]])
        problems.add_rows(
            bad,
            lambda p: (
                f"{source}, {row_label(p)}, column '{cols['probability']}': "
                f"{frame[cols['probability']].iloc[p]!r} is not a number; write a probability "
                "between 0 and 1 or leave the cell empty"
            ),
        )
        p_first = num.to_numpy()
        outside = np.flatnonzero(np.isfinite(p_first) & ((p_first < 0) | (p_first > 1)))
        problems.add_rows(
            outside,
            lambda p: (
                f"{source}, {row_label(p)}, column '{cols['probability']}': {p_first[p]:g} is "
                "outside [0, 1]; the probability that the first candidate is better must lie "
                "between 0 and 1"
            ),
        )
    else:
        p_first = verdict.map(_VERDICT_P).to_numpy(dtype=np.float64, na_value=np.nan)

    if "sample" in cols:
        sample_series, bad = _validate._coerce_int(frame[cols["sample"]])
        problems.add_rows(
            bad,
            lambda p: (
                f"{source}, {row_label(p)}, column '{cols['sample']}': "
                f"{frame[cols['sample']].iloc[p]!r} is not a whole number"
            ),
        )
        sample = sample_series.to_numpy()
    problems.raise_if_any(source)
    if "sample" not in cols:
        keys = pd.DataFrame({"c": context, "a": attribute, "j": judge, "f": first, "s": second})
        sample = keys.groupby(list(keys.columns), sort=False).cumcount().to_numpy()
    raw = to_str_series(frame[cols["raw"]]).fillna("") if "raw" in cols else ""
    out = pd.DataFrame(
        {
            "context_id": context,
            "attribute": attribute,
            "judge": judge,
            "first_id": first,
            "second_id": second,
            "p_first": p_first,
            "verdict": verdict,
            "sample": sample,
            "raw": raw,
        }
    )
    return validate_table(out, "comparisons", source)


# ---------------------------------------------------------------------------------------
# Uploads


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


def read_upload(
    name: str,
    data: bytes,
    kind: str | None = None,
    mapping: WideMapping | PairwiseMapping | None = None,
    *,
    scales: Mapping[str, tuple[float, float]] | None = None,
    max_bytes: float | None = None,
) -> Dataset:
    """Read an uploaded file into a validated Dataset (what the app calls).

    Parameters
    ----------
    name : str
        The file name as uploaded; its extension picks the format.
    data : bytes
        The file content.
    kind : str, optional
        One of ``UPLOAD_KINDS``: a canonical table name, ``"long"`` (some canonical table,
        told by the columns), ``"wide"`` or ``"pairwise"``; detected from the columns (and
        from ``mapping``'s type) when omitted, and asked for (a DataError naming the layouts
        the columns fit) when the columns fit more than one layout.
    mapping : WideMapping or PairwiseMapping, optional
        Column mapping for the wide and pairwise layouts; guessed from the headers when
        omitted.
    scales : mapping of attribute to (low, high), optional
        Human score ranges, checked and stored in the Dataset.
    max_bytes : float, optional
        Size limit; default ``data.validate.MAX_UPLOAD_BYTES``.

    Returns
    -------
    Dataset
        Named after the file; only the tables the file fills are non-empty.

    Raises
    ------
    DataError
        Every problem found, naming the file, row and column: too large, empty, not UTF-8,
        unparseable (see :func:`read_frame`), unknown or ambiguous layout, two columns that a
        guessed mapping would read as the same field, plus everything
        :func:`data.validate.validate_dataset` checks.
    """
    source = Path(name).name
    if kind is not None and kind not in UPLOAD_KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(UPLOAD_KINDS)}")
    frame = read_frame(name, data, max_bytes=max_bytes)
    if len(frame) == 0:
        raise DataError(
            f"{source}: the file has no data rows"
            + (
                f" (only the header: {', '.join(map(str, frame.columns))})"
                if len(frame.columns)
                else ""
            )
            + "; choose the file that holds the table"
        )
    if kind == "long":
        # some canonical table; which one is told by the columns
        near = _near_complete(frame.columns)
        order = ("comparisons", "ratings", "human_scores", "candidates", "contexts")
        kind = next((n for n in order if n in near), None) or _closest_table(frame.columns)
        if kind is None:
            raise _unknown_layout(source, frame.columns)
    if kind is None:
        if isinstance(mapping, WideMapping):
            kind = "wide"
        elif isinstance(mapping, PairwiseMapping):
            kind = "pairwise"
        else:
            found = layouts(frame.columns, frame)
            if len(found) > 1:
                raise _ambiguous_layout(source, frame.columns, found)
            kind = found[0][0] if found else _closest_table(frame.columns)
            if kind is None:
                raise _unknown_layout(source, frame.columns)
    scales = {str(k): tuple(v) for k, v in (scales or {}).items()}
    stem = Path(source).stem
    if kind == "wide":
        if mapping is None:
            _alias_conflicts(frame.columns, _WIDE_ROLES, source)
            mapping = guess_wide_mapping(frame.columns, frame)
            if mapping is None:
                raise DataError(
                    f"{source}: cannot read this as a wide table; it needs a context id and a "
                    "candidate id column (context_id, candidate_id) and one score column per "
                    "attribute, or give a WideMapping naming the columns"
                )
        if not isinstance(mapping, WideMapping):
            raise TypeError("kind='wide' needs a WideMapping")
        return wide_to_dataset(frame, mapping, name=stem, source=source, scales=scales)
    if kind == "pairwise":
        if mapping is not None and not isinstance(mapping, PairwiseMapping):
            raise TypeError("kind='pairwise' needs a PairwiseMapping")
        comparisons = pairwise_to_comparisons(frame, mapping, source=source)
        ds = Dataset(name=stem, comparisons=comparisons, scales=scales, source=source)
        return validate_dataset(ds, sources={t: source for t in TABLE_NAMES})
    ds = Dataset(name=stem, scales=scales, source=source)
    setattr(ds, kind, frame)
    return validate_dataset(ds, sources={t: source for t in TABLE_NAMES})


# ---------------------------------------------------------------------------------------
# Whole datasets


def save_dataset(ds: Dataset, folder: str | Path, *, fmt: str = "csv") -> Path:
    """Write every table of ``ds`` to ``folder/<table>.<fmt>`` plus ``dataset.json``.

    ``dataset.json`` keeps the name, description, source, scales and the table file names.
    Returns the folder.
    """
    folder = Path(folder)
    ext = "." + fmt.lstrip(".").lower()
    file_format(f"table{ext}")  # refuse an unknown format before writing anything
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for name in TABLE_NAMES:
        files[name] = f"{name}{ext}"
        write_table(ds.table(name), folder / files[name])
    meta = {
        "name": ds.name,
        "description": ds.description,
        "source": ds.source,
        "scales": {str(k): [float(v[0]), float(v[1])] for k, v in ds.scales.items()},
        "tables": files,
    }
    (folder / DATASET_META).write_text(
        json.dumps(meta, ensure_ascii=False, indent=2), encoding="utf-8"
    )
    return folder


def _table_path(folder: Path, fname, meta_path: Path, name: str) -> Path:
    """The file of table ``name`` named in ``dataset.json``; it must lie inside ``folder``."""
    where = f"{meta_path}, tables.{name}"
    if not isinstance(fname, str) or not fname.strip():
        raise DataError(f"{where}: {fname!r} is not a file name; write the table's file name")
    rel = Path(fname)
    if rel.is_absolute() or rel.anchor or PureWindowsPath(fname).anchor or ".." in rel.parts:
        raise DataError(
            f"{where}: {fname!r} points outside the dataset folder; table files are named "
            "relative to the folder holding dataset.json, without '..' or a leading '/'"
        )
    root = folder.resolve()
    path = (folder / rel).resolve()
    if not path.is_relative_to(root):
        raise DataError(
            f"{where}: {fname!r} is a link to {path}, outside the dataset folder {root}; copy "
            "the table into the folder instead of linking to it"
        )
    return path


def load_dataset(folder: str | Path) -> Dataset:
    """Read a folder written by :func:`save_dataset` (tables without a file are empty).

    Raises
    ------
    DataError
        No or unreadable ``dataset.json``; a table file named outside the folder (an absolute
        path, ``..``, or a link leading out of it); any problem of the tables themselves.
    """
    folder = Path(folder)
    meta_path = folder / DATASET_META
    if not meta_path.is_file():
        raise DataError(
            f"{folder}: no {DATASET_META} here; is this a folder written by save_dataset?"
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
        raise DataError(f"{meta_path}: not valid UTF-8 JSON ({err})") from None
    files = meta.get("tables", {}) if isinstance(meta, dict) else None
    scales = meta.get("scales", {}) if isinstance(meta, dict) else None
    if not isinstance(files, dict) or not isinstance(scales, dict):
        raise DataError(
            f"{meta_path}: expected an object with 'tables' and 'scales' objects, as written "
            "by save_dataset"
        )
    tables, sources = {}, {}
    for name in TABLE_NAMES:
        fname = files.get(name)
        path = _table_path(folder, fname, meta_path, name) if fname is not None else None
        if path is None or not path.is_file():
            tables[name] = empty_table(name)
            continue
        tables[name] = read_frame(path, allow_empty=True, max_bytes=math.inf, limits=LOCAL_LIMITS)
        sources[name] = str(path)
    ds = Dataset(
        name=str(meta.get("name", folder.name)),
        scales={str(k): v for k, v in scales.items()},  # checked by validate_dataset
        description=str(meta.get("description", "")),
        source=str(meta.get("source", "")),
        **tables,
    )
    return validate_dataset(ds, sources=sources)
