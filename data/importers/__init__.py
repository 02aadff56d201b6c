"""Importers of the field's published judgment files, each read as its benchmark writes it.

One module per format, one entry that tells the format from a file's first record:

- ``arena_hard``: Arena-Hard-Auto ``model_judgment/<judge>/<model>.jsonl`` (v0.1 and v2.0
  records; two games, the baseline shown first in game 1; graded labels ``A>>B`` ...);
- ``alpaca_eval``: AlpacaEval ``results/<model>/<annotator>/annotations.json`` (preference
  1 / 2 / 1.5, or 2 - P(output_1 better));
- ``mt_bench``: MT-Bench (FastChat ``llm_judge``) ``<judge>_pair.jsonl`` (two games,
  ``g1_winner`` / ``g2_winner``) and ``<judge>_single.jsonl`` (1–10 ratings).

Each gives an :class:`Imported`: a Dataset validated as an upload (contexts with the
questions, candidates with the answers where the question and answer files are given too,
comparisons with grade, weight, raw, judge and the game as ``sample``, or ratings), notes
that say what was read and how, the verdict map, and the baseline: ``Imported.baseline``
(``ReadResult.baseline`` through ``data.io.read_upload_result``), named in the notes and in
the dataset's ``description`` ("...; baseline 'gpt-4-0314'"), which the Data page shows and
workspaces keep. Malformed records are refused naming the file, line and field.

Usage::

    from data.importers import detect_format, read_published, load_published

    detect_format("gpt-4-0613.jsonl", data)          # "arena-hard"
    imported = read_published({"gpt-4-0613.jsonl": data},
                              companions={"question.jsonl": q, "gpt-4-0314.jsonl": a})
    imported.dataset, imported.notes, imported.baseline
    load_published("data/arena-hard-v0.1")           # a benchmark folder on disk

The Data page reads an uploaded file through ``data.io.read_upload_result``, which hands a
file in a published format to :func:`read_published` (with a note naming the format).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from data.importers import alpaca_eval, arena_hard, mt_bench
from data.importers._common import Imported, ImportOptions, base_name, first_record
from data.schema import DataError


@dataclass(frozen=True)
class Format:
    """A published judgment format.

    Attributes
    ----------
    key : str
        Its name (``"arena-hard"``, ...).
    title : str
        In words.
    looks_like : callable
        One record -> whether it is this format's.
    read : callable
        ``(files, companions, options, name=...) -> Imported``.
    companions : str
        What else the user may give for the texts.
    """

    key: str
    title: str
    looks_like: Callable[[dict], bool]
    read: Callable[..., Imported]
    companions: str


#: The formats, in the order they are tried.
FORMATS: dict[str, Format] = {
    f.key: f
    for f in (
        Format(
            arena_hard.FORMAT,
            arena_hard.TITLE,
            arena_hard.looks_like,
            arena_hard.read,
            "question.jsonl and model_answer/<model>.jsonl (the baseline's too)",
        ),
        Format(
            mt_bench.FORMAT_PAIR,
            mt_bench.TITLE_PAIR,
            mt_bench.looks_like_pair,
            mt_bench.read_pair,
            "question.jsonl and model_answer/<model>.jsonl",
        ),
        Format(
            mt_bench.FORMAT_SINGLE,
            mt_bench.TITLE_SINGLE,
            mt_bench.looks_like_single,
            mt_bench.read_single,
            "question.jsonl and model_answer/<model>.jsonl",
        ),
        Format(
            alpaca_eval.FORMAT,
            alpaca_eval.TITLE,
            alpaca_eval.looks_like,
            alpaca_eval.read,
            "nothing: the annotations carry their texts",
        ),
    )
}

_JSON_EXTENSIONS = (".json", ".jsonl")


def detect_format(name: str, data: bytes) -> str | None:
    """The published format of a judgment file, from its first record.

    Parameters
    ----------
    name : str
        The file name (only ``.json`` and ``.jsonl`` files are looked at).
    data : bytes
        The content.

    Returns
    -------
    str or None
        A key of :data:`FORMATS`; None when the file is not one of them (a question or
        answer file is not a judgment file either).
    """
    if not str(name).lower().endswith(_JSON_EXTENSIONS):
        return None
    record = first_record(name, data)
    if record is None:
        return None
    for fmt in FORMATS.values():
        if fmt.looks_like(record):
            return fmt.key
    return None


def read_published(
    files: Mapping[str, bytes],
    companions: Mapping[str, bytes] | None = None,
    options: ImportOptions | None = None,
    *,
    format: str | None = None,
    name: str | None = None,
    max_bytes: float | None = None,
) -> Imported:
    """Judgment files of one published format read into a Dataset.

    Parameters
    ----------
    files : mapping of str to bytes
        File name -> content: the judgment files (all of one format).
    companions : mapping of str to bytes, optional
        The question and answer files that give the texts (see :data:`FORMATS`).
    options : ImportOptions, optional
        Strength policy, verdict map, baseline and judge for files that do not name them.
    format : str, optional
        A key of :data:`FORMATS`; detected from the first file when omitted.
    name : str, optional
        The Dataset's name (default the first file's stem).
    max_bytes : float, optional
        Size limit of each file.

    Returns
    -------
    Imported

    Raises
    ------
    DataError
        No file, a format that cannot be told, files of different formats, and what the
        format's reader refuses (naming file, line and field).
    """
    if not files:
        raise DataError("no judgment file given")
    found = {n: detect_format(n, d) for n, d in files.items()}
    if format is None:
        kinds = {k for k in found.values() if k is not None}
        if not kinds:
            shown = ", ".join(base_name(n) for n in files)
            raise DataError(
                f"{shown}: not a published judgment format JudgeScope reads ("
                + "; ".join(f.title for f in FORMATS.values())
                + "); upload it as a table (long, wide or pairwise) instead"
            )
        if len(kinds) > 1 or None in found.values():
            shown = "; ".join(f"{base_name(n)}: {k or 'not recognised'}" for n, k in found.items())
            raise DataError(f"the files are not all of one format ({shown}); read them apart")
        format = kinds.pop()
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    stem = name or Path(base_name(next(iter(files)))).stem
    imported = FORMATS[format].read(
        files, companions, options or ImportOptions(), name=stem, max_bytes=max_bytes
    )
    # the baseline travels with the dataset too (the Data page shows the description)
    imported.dataset.description = imported.title + (
        f"; baseline '{imported.baseline}'" if imported.baseline else ""
    )
    return imported


def load_published(
    folder: str | Path,
    options: ImportOptions | None = None,
    *,
    judge: str | None = None,
    format: str | None = None,
) -> Imported:
    """A benchmark folder on disk read with its texts: Arena-Hard's or MT-Bench's
    ``data/<bench>/`` (``question.jsonl``, ``model_answer/``, ``model_judgment/``) or an
    AlpacaEval results folder (``annotations.json`` files).

    Parameters
    ----------
    folder : str or Path
        The folder.
    options : ImportOptions, optional
        As for :func:`read_published`.
    judge : str, optional
        Only the judgments of this judge (Arena-Hard: ``model_judgment/<judge>/``; MT-Bench:
        ``model_judgment/<judge>_pair.jsonl``).
    format : str, optional
        Only the judgment files of this format (a key of :data:`FORMATS`: MT-Bench's
        folder holds both ``_pair`` and ``_single`` files).

    Returns
    -------
    Imported
        As :func:`read_published` gives it, the folder's texts joined.

    Raises
    ------
    DataError
        No judgment file in the folder, and what :func:`read_published` refuses.
    """
    root = Path(folder)
    if not root.is_dir():
        raise DataError(f"{root}: not a folder")
    judged = sorted(p for p in root.rglob("*") if p.suffix in _JSON_EXTENSIONS and p.is_file())
    files, companions = {}, {}
    for p in judged:
        rel = p.relative_to(root).as_posix()
        data = p.read_bytes()
        fmt = detect_format(rel, data)
        mine = judge is None or judge in rel.split("/") or p.name.startswith(f"{judge}_")
        if fmt is not None and mine and format in (None, fmt):
            files[rel] = data
        elif p.name == "question.jsonl" or "model_answer" in rel.split("/"):
            companions[rel] = data
    if not files:
        raise DataError(f"{root}: no judgment file of a published format found")
    kinds = {detect_format(n, d) for n, d in files.items()}
    if len(kinds) > 1:
        raise DataError(
            f"{root}: judgment files of several formats ({', '.join(sorted(kinds))}); read "
            "them apart (format=...)"
        )
    return read_published(files, companions, options, name=root.name)


__all__ = [
    "FORMATS",
    "Format",
    "ImportOptions",
    "Imported",
    "detect_format",
    "read_published",
    "load_published",
]
