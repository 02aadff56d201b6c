"""What every importer of a published judgment format shares: strict JSON / JSONL records with
their line numbers, refusals that name file, line and field, the options a user sets, and the
result (a validated Dataset with notes, the verdict map and the baseline).

The importers flatten the records into one row per judged ordered pair (per game) and read
that table with ``data.io.pairwise_tables.pairwise_to_dataset``: the same verdict vocabulary,
strength policy, candidates and contexts, checks and validation as an uploaded pairwise
file; notes name the file's lines rather than rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import numpy as np
import pandas as pd

from data import validate as _validate
from data.io.notes import row_ranges
from data.io.pairwise import PairwiseMapping
from data.io.pairwise_tables import pairwise_to_dataset
from data.limits import MAX_ROWS
from data.problems import Problems
from data.schema import DataError, Dataset

#: A record: (file name, 1-based line, the decoded object).
Record = tuple[str, int, dict]


@dataclass(frozen=True)
class ImportOptions:
    """What the user decides when reading a published judgment file.

    Parameters
    ----------
    strength : str
        How a graded verdict counts (``data.parsing.STRENGTH_POLICIES``); Arena-Hard's own
        rule is ``"weight"`` (a strong verdict weighs 3).
    verdict_map : mapping
        The user's readings of verdict values (value -> grade, A / B / tie, or None), as
        for ``data.io.PairwiseMapping.verdict_map``.
    baseline : str, optional
        The baseline system, for files that do not name it (Arena-Hard v0.1's judgments):
        default the format's published one.
    judge : str, optional
        The judge's name, for files that do not name it (default the folder the file is in,
        ``model_judgment/<judge>/``).
    """

    strength: str = "weight"
    verdict_map: Mapping = field(default_factory=dict)
    baseline: str | None = None
    judge: str | None = None


@dataclass
class Imported:
    """A published judgment file (with its companion files) read into a Dataset.

    Attributes
    ----------
    dataset : Dataset
        Validated, as an upload: contexts (the questions, where given), candidates (the
        systems' answers, where given; ``""`` otherwise), comparisons or ratings.
    format : str
        The format's key (``data.importers.FORMATS``).
    title : str
        The format in words ("Arena-Hard-Auto judgments (v2.0 records)").
    notes : list of str
        What the user should know: the format read, the baseline, presentation order,
        verdicts kept unparsed (by line), companion files used or left out.
    baseline : str or None
        The system every comparison is against, when the format has one (Arena-Hard's
        baseline, MT-Bench's pairwise-baseline model, AlpacaEval's reference generator).
    verdicts : pandas.DataFrame or None
        Every distinct verdict value with its reading (``data.io.verdict_map.verdict_table``).
    """

    dataset: Dataset
    format: str
    title: str
    notes: list[str] = field(default_factory=list)
    baseline: str | None = None
    verdicts: pd.DataFrame | None = None


#: What to do about a number Python will not convert (more than 4,300 digits).
_NO_SUCH = "no judgment file holds such a number: is this the file the benchmark published?"


def base_name(name: str) -> str:
    """The file name without its folders."""
    return PurePosixPath(str(name).replace("\\", "/")).name


def parent_name(name: str) -> str | None:
    """The folder a file is in, when its name has one (``model_judgment/gpt-4/m.jsonl`` ->
    ``gpt-4``)."""
    parts = PurePosixPath(str(name).replace("\\", "/")).parts
    return parts[-2] if len(parts) > 1 else None


def decode(name: str, data: bytes, max_bytes: float | None = None) -> str:
    """The file as UTF-8 text; a DataError naming the file (and line) otherwise."""
    source = base_name(name)
    limit = _validate.MAX_UPLOAD_BYTES if max_bytes is None else max_bytes
    if len(data) > limit:
        raise DataError(
            f"{source}: the file is {len(data):,} bytes, more than the limit of "
            f"{int(limit):,} bytes (MAX_UPLOAD_BYTES); split it into smaller files"
        )
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise DataError(
            f"{source}, line {line}: the file is not UTF-8 text; re-save it with UTF-8 encoding"
        ) from None


def read_records(name: str, data: bytes, *, max_bytes: float | None = None) -> list[Record]:
    """Every record of a JSON (a list of objects) or JSONL (one object a line) file.

    Parameters
    ----------
    name : str
        The file name (its extension tells JSON from JSONL; a ``.json`` file that is not one
        JSON value is read as JSONL, as some tools write).
    data : bytes
        The content.
    max_bytes : float, optional
        Size limit; default ``data.validate.MAX_UPLOAD_BYTES``.

    Returns
    -------
    list of (file, line, dict)
        In file order; the line of a JSON list's element is the line it starts on.

    Raises
    ------
    DataError
        Not UTF-8, not valid JSON (naming the line and column), a record that is not an
        object, no record at all, more than ``data.limits.MAX_ROWS`` records.
    """
    source = base_name(name)
    text = decode(name, data, max_bytes)
    if not text.strip():
        raise DataError(f"{source}: the file is empty; choose the judgment file itself")
    records: list[Record] = []
    stripped = text.lstrip()
    whole = None
    if stripped.startswith("["):
        try:
            whole = json.loads(text)
        except json.JSONDecodeError as err:
            raise DataError(
                f"{source}, line {err.lineno}, column {err.colno}: not valid JSON ({err.msg}); "
                "the file should be a JSON list of records, as published"
            ) from None
        except RecursionError:
            raise DataError(f"{source}: the JSON is nested too deeply to read") from None
        except ValueError as err:  # an integer of more than 4,300 digits
            raise DataError(f"{source}: a number cannot be read ({err}); {_NO_SUCH}") from None
    if whole is not None:
        starts = _element_lines(text) if isinstance(whole, list) else []
        for k, obj in enumerate(whole):
            line = starts[k] if k < len(starts) else 1
            records.append((source, line, obj))
    else:
        for i, line_text in enumerate(text.split("\n"), start=1):
            if not line_text.strip():
                continue
            try:
                obj = json.loads(line_text)
            except RecursionError:
                raise DataError(
                    f"{source}, line {i}: the JSON is nested too deeply to read"
                ) from None
            except json.JSONDecodeError as err:
                raise DataError(
                    f"{source}, line {i}, column {err.colno}: not valid JSON ({err.msg}); each "
                    "line of a JSONL judgment file is one JSON object, as written by the "
                    "benchmark's scripts"
                ) from None
            except ValueError as err:  # an integer of more than 4,300 digits
                raise DataError(
                    f"{source}, line {i}: a number cannot be read ({err}); {_NO_SUCH}"
                ) from None
            records.append((source, i, obj))
    problems = Problems()
    for src, line, obj in records:
        if not isinstance(obj, dict):
            problems.add(
                f"{src}, line {line}: a record is a JSON object ({{...}}), not "
                f"{type(obj).__name__}; is this the judgment file?"
            )
    problems.raise_if_any(source)
    if len(records) > MAX_ROWS:
        raise DataError(
            f"{source}: {len(records):,} records, more than the limit of {MAX_ROWS:,} "
            "(data.limits.MAX_ROWS); split the file"
        )
    return records


def _element_lines(text: str) -> list[int]:
    """The 1-based line each top-level element of a JSON list starts on."""
    out: list[int] = []
    depth = 0
    in_str = esc = False
    line = 1
    expect = False
    for ch in text:
        if ch == "\n":
            line += 1
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
            if depth == 1 and expect:
                out.append(line)
                expect = False
            continue
        if ch in "[{":
            if depth == 1 and expect:
                out.append(line)
                expect = False
            depth += 1
            if depth == 1:
                expect = True
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 1:
            expect = True
        elif depth == 1 and expect and not ch.isspace():
            out.append(line)
            expect = False
    return out


def first_record(name: str, data: bytes) -> dict | None:
    """The first record of a JSON or JSONL file, cheaply (for detecting a format): only that
    record is decoded. None when there is none or it cannot be read."""
    text = data[:4_000_000].decode("utf-8", errors="ignore").lstrip("\ufeff").lstrip()
    decoder = json.JSONDecoder()
    try:
        if text.startswith("["):
            rest = text[1:].lstrip()
            obj, _end = decoder.raw_decode(rest)
        else:
            obj, _end = decoder.raw_decode(text.split("\n", 1)[0])
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


class Fields:
    """Refusals of malformed records, each naming the file, line and field."""

    def __init__(self, source: str, fmt: str):
        self.problems = Problems()
        self.source = source
        self.fmt = fmt

    def need(self, rec: Record, key: str, kinds: tuple, what: str):
        """``rec``'s field ``key`` when it has one of ``kinds``; a problem (and None)
        otherwise."""
        src, line, obj = rec
        if key not in obj:
            self.problems.add(
                f"{src}, line {line}, field '{key}': missing; a {self.fmt} record has {what}"
            )
            return None
        value = obj[key]
        if not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds:
            self.problems.add(f"{src}, line {line}, field '{key}': {_shown(value)} is not {what}")
            return None
        return value

    def bad(self, rec: Record, key: str, message: str) -> None:
        src, line, _obj = rec
        self.problems.add(f"{src}, line {line}, field '{key}': {message}")

    def raise_if_any(self) -> None:
        self.problems.raise_if_any(self.source)


def _shown(value) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_id(value) -> str:
    """A question id or model name as text (a JSON number without ``.0``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def lines_where(files: Sequence[str], lines: Sequence[int]) -> Callable[[Sequence[int]], str]:
    """Positions of the flattened table -> the file lines they come from, for notes:
    ``"m1.jsonl, lines 3–5; m2.jsonl, line 9"``."""
    files_a = np.asarray(files, dtype=object)
    lines_a = np.asarray(lines, dtype=np.int64)

    def where(positions: Iterable[int]) -> str:
        pos = np.unique(np.asarray(list(positions), dtype=np.int64))
        if not len(pos):
            return "no lines"
        parts = []
        for f in pd.unique(files_a[pos]):
            at = pos[files_a[pos] == f]
            parts.append(f"{f}, {row_ranges(lines_a[at] - 1, 'line')}")
        return "; ".join(parts)

    return where


def join_texts(parts: Iterable[str]) -> str:
    """Conversation turns as one text, each turn after a blank line."""
    return "\n\n".join(str(p) for p in parts if p is not None)


#: The note of a reader whose records name questions and models but come without their texts.
NO_TEXTS_NOTE = (
    "No question or answer files given: the contexts and candidates have no text "
    "(add question.jsonl and model_answer/<model>.jsonl to keep them)"
)
#: Columns of the flattened table read by the pairwise mapping of the same name.
_FLAT_COLUMNS = (
    "context_id",
    "context_text",
    "first_system",
    "second_system",
    "first_text",
    "second_text",
    "judge",
    "sample",
    "raw",
)


def sources_label(files: Iterable[str]) -> str:
    """The ``source`` of an imported Dataset: the file names, or their count past three."""
    names = [base_name(n) for n in files]
    return ", ".join(names) if len(names) <= 3 else f"{len(names)} files"


def flat_to_dataset(
    flat: pd.DataFrame,
    verdict: str,
    options: ImportOptions,
    *,
    name: str,
    files: Iterable[str],
) -> tuple[Dataset, list[str]]:
    """The flattened judgment rows read as an uploaded pairwise table.

    Parameters
    ----------
    flat : pandas.DataFrame
        One row per judged ordered pair; the columns of :data:`_FLAT_COLUMNS` it has are
        read as the mapping roles of the same name, ``verdict`` as the verdict; ``_file``
        and ``_line`` (each row's file and line) name the lines in notes and errors; other
        columns are left out.
    verdict : str
        The verdict column.
    options : ImportOptions
        Its verdict map and strength policy.
    name : str
        The Dataset's name.
    files : iterable of str
        The file names read (the Dataset's source, :func:`sources_label`).

    Returns
    -------
    (Dataset, list of str)
        The validated Dataset and the reading's notes.

    Raises
    ------
    DataError
        Everything a pairwise upload checks, naming the file lines.
    """
    roles = {c: c for c in _FLAT_COLUMNS if c in flat.columns}
    mapping = PairwiseMapping(
        **roles, verdict=verdict, verdict_map=options.verdict_map, strength=options.strength
    )
    notes: list[str] = []
    ds = pairwise_to_dataset(
        flat[[c for c in flat.columns if c in roles or c == verdict]],
        mapping,
        name=name,
        source=sources_label(files),
        notes=notes,
        where=lines_where(flat["_file"].tolist(), flat["_line"].tolist()),
    )
    return ds, notes
