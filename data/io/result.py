"""Reading an upload into a Dataset with what the reader guessed and kept aside.

:func:`read_upload_result` is the reader the app calls: a :class:`ReadResult` holds the
dataset and the notes (the layout and columns guessed, verdicts not understood and kept as
unparsed comparisons, contexts left without a usable verdict). :func:`read_upload` gives the
dataset alone. :func:`preview_upload` reads a file the way it would be loaded, before the
user commits, and never raises for bad data: the error is part of the preview.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from data.io.columns import alias_conflicts
from data.io.formats import read_frame
from data.io.guess import describe_wide, guess_wide
from data.io.notes import row_ranges
from data.io.pairwise import PAIR_ROLES, PairwiseMapping, describe_pairwise
from data.io.pairwise_guess import guess_pairwise
from data.io.pairwise_tables import CONFLICT_ROLES, pairwise_to_dataset
from data.io.upload import (
    PAIRWISE_LAYOUT,
    UPLOAD_KINDS,
    _ambiguous_layout,
    _closest_table,
    _near_complete,
    _unknown_layout,
    layouts,
)
from data.io.verdict_map import verdict_table
from data.io.wide import WIDE_ROLES, WideMapping, wide_to_dataset
from data.overview import table_summary
from data.schema import TABLE_NAMES, DataError, Dataset
from data.validate import self_comparisons, validate_dataset

_LONG_ORDER = ("comparisons", "ratings", "human_scores", "candidates", "contexts")


@dataclass
class ReadResult:
    """A file read into a Dataset, with what the user should know about the reading.

    Attributes
    ----------
    dataset : Dataset
        Validated; ``sources`` names the file for each table it fills.
    kind : str
        The layout read: a canonical table name, ``"wide"`` or ``"pairwise"``.
    mapping : WideMapping or PairwiseMapping or None
        The columns read (given or guessed), for the wide and pairwise layouts.
    notes : list of str
        Sentences for the user: the layout and columns guessed, the verdicts not understood
        (kept as unparsed comparisons, grouped by message with their rows), the contexts
        left without a usable verdict.
    guessed : bool
        The layout was guessed from the columns (the caller did not say).
    alternatives : list of (str, str)
        Other layouts the columns fit, as (kind, description): offer them to the user.
    verdicts : pandas.DataFrame or None
        Pairwise layout with a verdict or human verdict column: every distinct verdict
        value with its reading (``data.io.verdict_map.verdict_table``), for the user to
        check and change (``PairwiseMapping.verdict_map``).
    format : str or None
        A published judgment format read by its importer (``data.importers``): its name,
        e.g. ``"arena-hard"``; None for the layouts above.
    baseline : str or None
        The baseline system the file's comparisons are against, when the format names one
        (Arena-Hard, MT-Bench pairwise-baseline, AlpacaEval's reference outputs).
    mapping_notes : list of str
        The first notes, when the mapping was guessed: what was read from which column and
        why each column was taken (kept by the Data page while the user edits the mapping).
    """

    dataset: Dataset
    kind: str
    mapping: WideMapping | PairwiseMapping | None = None
    notes: list[str] = field(default_factory=list)
    guessed: bool = False
    alternatives: list[tuple[str, str]] = field(default_factory=list)
    verdicts: pd.DataFrame | None = None
    format: str | None = None
    baseline: str | None = None
    mapping_notes: list[str] = field(default_factory=list)


def _pick_kind(frame, source, kind, mapping, strict):
    """(kind, how it was guessed, alternatives) for reading ``frame``.

    How: "" (told), "only" (the one layout the columns fit), "first" (the best of several),
    "closest" (no layout fits; the closest canonical table).
    """
    if kind == "long":
        near = _near_complete(frame.columns)
        kind = next((n for n in _LONG_ORDER if n in near), None) or _closest_table(frame.columns)
        if kind is None:
            raise _unknown_layout(source, frame.columns)
        return kind, "", []
    if kind is not None:
        return kind, "", []
    if isinstance(mapping, WideMapping):
        return "wide", "", []
    if isinstance(mapping, PairwiseMapping):
        return "pairwise", "", []
    found = layouts(frame.columns, frame)
    if len(found) > 1 and strict:
        raise _ambiguous_layout(source, frame.columns, found)
    if found:
        return found[0][0], "first" if len(found) > 1 else "only", list(found[1:])
    closest = _closest_table(frame.columns)
    if closest is None:
        raise _unknown_layout(source, frame.columns)
    return closest, "closest", []


def _pairwise_fits(frame: pd.DataFrame, alternatives) -> bool:
    """Whether the pairwise layout, not yet offered, reads the file's columns."""
    if any(k == "pairwise" for k, _d in alternatives):
        return False
    try:
        return guess_pairwise(frame)[0] is not None
    except DataError:
        return False


def _guessed_failed(source: str, columns, kind: str, alternatives, err: DataError) -> DataError:
    shown = ", ".join(repr(str(c)) for c in columns)
    what = {"wide": "a wide table", "pairwise": "a pairwise-verdict table"}.get(
        kind, f"a {kind} table"
    )
    others = [k for k in ("wide", "pairwise", "long") if k != kind] if not alternatives else []
    alt = "; ".join(desc for _k, desc in alternatives) or " or ".join(others)
    head = (
        f"{source}: read as {what}, the layout guessed from its columns ({shown}), and that "
        f"failed. The columns could also be {alt}: choose the format on the Data page (in "
        "code: read_upload(..., kind=...)). What went wrong when read as "
        f"{what}:"
    )
    return DataError(head + "\n" + str(err), problems=[head, *err.problems])


def read_upload_result(
    name: str,
    data: bytes,
    kind: str | None = None,
    mapping: WideMapping | PairwiseMapping | None = None,
    *,
    scales: Mapping[str, tuple[float, float]] | None = None,
    max_bytes: float | None = None,
    strict_layout: bool = True,
    frame: pd.DataFrame | None = None,
    companions: Mapping[str, bytes] | None = None,
    options=None,
) -> ReadResult:
    """Read an uploaded file into a validated Dataset, with notes (what the app calls).

    A judgment file in a published format (Arena-Hard, AlpacaEval, MT-Bench: see
    ``data.importers``) is recognised when ``kind`` is omitted and read by its importer,
    as published: ``kind`` ``"published"``, ``format`` the format's key, the first note
    naming it, ``baseline`` the baseline system.

    Parameters
    ----------
    name : str
        The file name as uploaded; its extension picks the format.
    data : bytes
        The file content.
    kind : str, optional
        One of ``UPLOAD_KINDS``: a canonical table name, ``"long"`` (some canonical table,
        told by the columns), ``"wide"`` or ``"pairwise"``; detected from the columns (and
        from ``mapping``'s type) when omitted.
    mapping : WideMapping or PairwiseMapping, optional
        Column mapping for the wide and pairwise layouts; guessed when omitted.
    scales : mapping of attribute to (low, high), optional
        Human score ranges, checked and stored in the Dataset.
    max_bytes : float, optional
        Size limit; default ``data.validate.MAX_UPLOAD_BYTES``.
    strict_layout : bool
        When the columns fit more than one layout and ``kind`` is omitted: True refuses the
        file naming them; False reads the first and lists the others in ``alternatives``.
    frame : pandas.DataFrame, optional
        The file as already read by :func:`data.io.read_frame` (not read again).
    companions : mapping of str to bytes, optional
        For a published format, the other files of the upload: more judgment files of the
        same format (read with this one: the other models of an Arena-Hard run) and the
        files that give the texts (its question file and model answer files).
    options : data.importers.ImportOptions, optional
        For a published format: strength policy, verdict map, baseline and judge where the
        file does not name them.

    Returns
    -------
    ReadResult
        The dataset (named after the file) and notes. A verdict that is not understood
        does not refuse a pairwise file: it becomes an unparsed comparison (see
        :func:`data.io.pairwise_to_comparisons`).

    Raises
    ------
    DataError
        Every problem found, naming the file, row and column (see
        :func:`data.io.read_upload`). When the layout was guessed, the message first says
        which one and what else the columns could be.
    ValueError
        ``kind`` is not one of ``UPLOAD_KINDS``.
    TypeError
        ``mapping`` does not fit ``kind``.
    """
    source = Path(name).name
    if kind is not None and kind not in UPLOAD_KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(UPLOAD_KINDS)}")
    if kind in (None, "published") and mapping is None and frame is None:
        published = _read_published(name, data, companions, options, max_bytes, kind)
        if published is not None:
            return published
    if frame is None:
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
    kind, guessed, alternatives = _pick_kind(frame, source, kind, mapping, strict_layout)
    try:
        result = _read(frame, source, kind, mapping, scales)
    except DataError as err:
        if guessed and kind in TABLE_NAMES and _pairwise_fits(frame, alternatives):
            # a long-table reading that failed, of columns a pairwise reading fits
            alternatives = [*alternatives, ("pairwise", PAIRWISE_LAYOUT)]
            raise _guessed_failed(source, frame.columns, kind, alternatives, err) from err
        if guessed in ("first", "closest"):
            raise _guessed_failed(source, frame.columns, kind, alternatives, err) from err
        raise
    result.guessed, result.alternatives = bool(guessed), alternatives
    result.dataset.sources = {t: [source] for t in TABLE_NAMES if len(result.dataset.table(t))}
    return result


def _read_published(name, data, companions, options, max_bytes, kind) -> ReadResult | None:
    """The file read by the importer of its published format; None when it is in none."""
    from data.importers import FORMATS, detect_format, read_published

    fmt = detect_format(name, data)
    if fmt is None:
        if kind == "published":
            raise DataError(
                f"{Path(name).name}: not a published judgment format ("
                + "; ".join(f.title for f in FORMATS.values())
                + "); choose another format"
            )
        return None
    # the other files of the upload: more judgment files of the format, and the question
    # and answer files
    files, texts = {name: data}, {}
    for other, content in (companions or {}).items():
        (files if detect_format(other, content) == fmt else texts)[other] = content
    imported = read_published(
        files, texts, options, format=fmt, name=Path(name).stem, max_bytes=max_bytes
    )
    ds = imported.dataset
    shown = [Path(n).name for n in files]
    ds.sources = {t: list(shown) for t in TABLE_NAMES if len(ds.table(t))}
    return ReadResult(
        ds,
        "published",
        None,
        imported.notes,
        verdicts=imported.verdicts,
        format=imported.format,
        baseline=imported.baseline,
    )


def _read(frame, source, kind, mapping, scales) -> ReadResult:
    scales = {str(k): tuple(v) for k, v in (scales or {}).items()}
    stem = Path(source).stem
    sources = {t: source for t in TABLE_NAMES}
    notes: list[str] = []
    if kind == "wide":
        if mapping is None:
            alias_conflicts(frame.columns, WIDE_ROLES, source)
            mapping, notes = guess_wide(frame.reset_index(drop=True))
            if mapping is None:
                raise DataError(
                    f"{source}: cannot read this as a wide table; it needs a context id and a "
                    "candidate id column (context_id, candidate_id) and one score column per "
                    "attribute, or give a WideMapping naming the columns"
                )
        if not isinstance(mapping, WideMapping):
            raise TypeError("kind='wide' needs a WideMapping")
        ds = wide_to_dataset(frame, mapping, name=stem, source=source, scales=scales)
        guessed_notes = list(notes)
        if not notes:
            notes = [describe_wide(mapping)]
        return ReadResult(ds, kind, mapping, notes, mapping_notes=guessed_notes)
    if kind == "pairwise":
        if mapping is not None and not isinstance(mapping, PairwiseMapping):
            raise TypeError("kind='pairwise' needs a PairwiseMapping")
        head: list[str] = []
        guessed_notes: list[str] = []
        if mapping is None:
            alias_conflicts(frame.columns, {r: PAIR_ROLES[r] for r in CONFLICT_ROLES}, source)
            mapping, head = guess_pairwise(frame)
            if mapping is None:
                raise DataError(
                    f"{source}: cannot read this as a pairwise-verdict table; it needs, for each "
                    "of the two candidates, an id, a system or a text column (first / second, "
                    "model_a / model_b, output_1 / output_2) and a verdict, probability or "
                    "human verdict column (verdict, winner, p_first, label), or give a "
                    "PairwiseMapping naming the columns"
                )
            guessed_notes = list(head)
        else:
            head = [describe_pairwise(mapping)]
        read_notes: list[str] = []
        ds = pairwise_to_dataset(
            frame, mapping, name=stem, source=source, notes=read_notes, scales=scales
        )
        verdict_cols = {
            c: frame[c] for c in (mapping.verdict, mapping.human_verdict) if c in frame.columns
        }
        verdicts = verdict_table(verdict_cols, mapping.verdict_map) if verdict_cols else None
        result = ReadResult(
            ds, kind, mapping, head + read_notes, verdicts=verdicts, mapping_notes=guessed_notes
        )
        return result
    notes = [f"read as a {kind} table"]
    if kind == "comparisons":
        # the baseline judged against itself (an arena's self-comparisons): skipped and
        # counted, as the pairwise reader does, never a refusal of the whole file
        same = self_comparisons(frame)
        if len(same):
            notes.append(
                f"{source}: {len(same)} of {len(frame)} row(s) compare a candidate with itself "
                "(first_id = second_id, e.g. the baseline against itself) and are skipped: "
                f"{row_ranges(same)}"
            )
            kept = Dataset(name=stem, scales=scales, source=source)
            setattr(kept, kind, frame.drop(index=frame.index[same]))
            try:
                return ReadResult(validate_dataset(kept, sources=sources), kind, None, notes)
            except DataError:
                pass  # checked again whole below, so that the problems name the file's rows
    ds = Dataset(name=stem, scales=scales, source=source)
    setattr(ds, kind, frame)
    return ReadResult(validate_dataset(ds, sources=sources), kind, None, notes)


def read_upload(
    name: str,
    data: bytes,
    kind: str | None = None,
    mapping: WideMapping | PairwiseMapping | None = None,
    *,
    scales: Mapping[str, tuple[float, float]] | None = None,
    max_bytes: float | None = None,
) -> Dataset:
    """Read an uploaded file into a validated Dataset.

    The dataset of :func:`read_upload_result`, which also gives the notes.

    Parameters
    ----------
    name, data, kind, mapping, scales, max_bytes
        As for :func:`read_upload_result`: ``kind`` is asked for (a DataError naming the
        layouts the columns fit) when it is omitted and the columns fit more than one layout.

    Returns
    -------
    Dataset
        Named after the file; only the tables the file fills are non-empty. Verdicts that
        are not understood are unparsed comparisons (p_first NaN, text in ``raw``).

    Raises
    ------
    DataError
        Every problem found, naming the file, row and column: too large, empty, not UTF-8,
        unparseable (see :func:`data.io.read_frame`), unknown or ambiguous layout, two
        columns that a guessed mapping would read as the same field, plus everything
        :func:`data.validate.validate_dataset` checks.
    ValueError
        ``kind`` is not one of ``UPLOAD_KINDS``.
    TypeError
        ``mapping`` does not fit ``kind``.
    """
    return read_upload_result(name, data, kind, mapping, scales=scales, max_bytes=max_bytes).dataset


@dataclass
class UploadPreview:
    """A file read the way it would be loaded, before the user commits.

    Attributes
    ----------
    columns : list of str
        The file's headers (empty when the file could not be read at all).
    n_rows : int
        Data rows in the file.
    kind : str or None
        The layout read (or tried); None when the file could not be read.
    layouts : list of (str, str)
        Every layout the columns fit, best first (see :func:`data.io.layouts`).
    result : ReadResult or None
        The reading, when it worked.
    error : DataError or None
        Why it did not.
    mapping : WideMapping or PairwiseMapping or None
        The mapping used or guessed (wide and pairwise layouts), to pre-fill a form.
    """

    columns: list[str]
    n_rows: int
    kind: str | None
    layouts: list[tuple[str, str]]
    result: ReadResult | None = None
    error: DataError | None = None
    mapping: WideMapping | PairwiseMapping | None = None

    def heads(self, n: int = 5) -> dict[str, pd.DataFrame]:
        """The first ``n`` rows of each table the file fills, by table name."""
        if self.result is None:
            return {}
        ds = self.result.dataset
        return {t: ds.table(t).head(n) for t in TABLE_NAMES if len(ds.table(t))}

    def summary(self) -> pd.DataFrame:
        """What each table the file fills holds (:func:`data.overview.table_summary`)."""
        return table_summary(self.result.dataset) if self.result is not None else pd.DataFrame()


#: Previews kept (:func:`preview_upload`): Streamlit reruns the page on every widget change,
#: and a wide file's preview costs seconds; the last few files and mappings are kept.
PREVIEW_CACHE_SIZE = 4
_PREVIEWS: OrderedDict = OrderedDict()
_PREVIEWS_LOCK = threading.Lock()


def preview_upload(
    name: str,
    data: bytes,
    kind: str | None = None,
    mapping: WideMapping | PairwiseMapping | None = None,
    *,
    scales: Mapping[str, tuple[float, float]] | None = None,
    max_bytes: float | None = None,
    companions: Mapping[str, bytes] | None = None,
    options=None,
) -> UploadPreview:
    """Read a file as :func:`read_upload_result` would, keeping an error instead of raising.

    The same file bytes with the same kind, mapping, scales and limits give the kept preview
    (a copy: its lists and result may be changed without changing the kept one); the last
    :data:`PREVIEW_CACHE_SIZE` are kept. A published file read with companions or options
    is read every time.

    Parameters
    ----------
    name, data, kind, mapping, scales, max_bytes, companions, options
        As for :func:`read_upload_result`; ``kind`` may also be ``"auto"`` (the same as
        None). A file in a published judgment format gives ``kind`` ``"published"`` (no
        columns; ``n_rows`` the comparisons or ratings read). When the columns fit several layouts, the first is read and the others are
        offered (``result.alternatives``) rather than refused.

    Returns
    -------
    UploadPreview
        Never raises a DataError: a file that cannot be read has ``error`` set.
    """
    from data import validate as _validate
    from data.limits import UPLOAD_LIMITS

    key = None
    if companions is None and options is None:
        key = (
            name,
            hashlib.sha256(data).digest(),
            kind,
            repr(mapping),
            repr(sorted((scales or {}).items())),
            max_bytes,
            _validate.MAX_UPLOAD_BYTES,
            repr(UPLOAD_LIMITS),
        )
        with _PREVIEWS_LOCK:
            kept = _PREVIEWS.get(key)
            if kept is not None:
                _PREVIEWS.move_to_end(key)
                return _copy_preview(kept)
    preview = _read_preview(
        name,
        data,
        kind,
        mapping,
        scales=scales,
        max_bytes=max_bytes,
        companions=companions,
        options=options,
    )
    if key is not None:
        with _PREVIEWS_LOCK:
            _PREVIEWS[key] = _copy_preview(preview)
            while len(_PREVIEWS) > PREVIEW_CACHE_SIZE:
                _PREVIEWS.popitem(last=False)
    return preview


def _copy_preview(preview: UploadPreview) -> UploadPreview:
    """A copy whose lists, result and dataset are its own (the tables are shared: nothing
    changes a table in place)."""
    result = preview.result
    if result is not None:
        result = copy.copy(result)
        result.dataset = copy.copy(result.dataset)
        result.notes = list(result.notes)
    return dataclasses.replace(
        preview, columns=list(preview.columns), layouts=list(preview.layouts), result=result
    )


def _read_preview(
    name: str,
    data: bytes,
    kind: str | None,
    mapping: WideMapping | PairwiseMapping | None,
    *,
    scales: Mapping[str, tuple[float, float]] | None,
    max_bytes: float | None,
    companions: Mapping[str, bytes] | None,
    options,
) -> UploadPreview:
    """:func:`preview_upload`, read now."""
    kind = None if kind == "auto" else kind
    if kind in (None, "published") and mapping is None:
        from data.importers import detect_format

        if kind == "published" or detect_format(name, data) is not None:
            try:
                result = read_upload_result(
                    name,
                    data,
                    "published",
                    scales=scales,
                    max_bytes=max_bytes,
                    companions=companions,
                    options=options,
                )
            except DataError as err:
                return UploadPreview([], 0, "published", [], error=err)
            ds = result.dataset
            n = len(ds.comparisons) or len(ds.ratings)
            return UploadPreview([], n, "published", [], result=result)
    try:
        frame = read_frame(name, data, max_bytes=max_bytes)
    except DataError as err:
        return UploadPreview([], 0, None, [], error=err)
    columns = [str(c) for c in frame.columns]
    found = layouts(frame.columns, frame) if len(frame.columns) else []
    preview = UploadPreview(columns, len(frame), kind, found, mapping=mapping)
    try:
        result = read_upload_result(
            name, data, kind, mapping, scales=scales, strict_layout=False, frame=frame
        )
    except DataError as err:
        preview.error = err
        if preview.kind is None:
            preview.kind = found[0][0] if found else _closest_table(frame.columns)
        if preview.mapping is None and preview.kind == "wide":
            preview.mapping = guess_wide(frame.reset_index(drop=True))[0]
        if preview.mapping is None and preview.kind == "pairwise":
            preview.mapping = guess_pairwise(frame)[0]
        if (
            kind in (None, "long")
            and preview.kind in TABLE_NAMES
            and _pairwise_fits(frame, preview.layouts)
        ):
            # the long-table reading failed: offer "Read as pairwise verdicts"
            preview.layouts = [*preview.layouts, ("pairwise", PAIRWISE_LAYOUT)]
        return preview
    preview.result, preview.kind, preview.mapping = result, result.kind, result.mapping
    return preview
