"""Read and write JudgeScope tables: CSV, TSV, JSON (records), JSONL and Parquet.

The format follows the file extension. Every reader takes a path, or bytes plus a file
name (Streamlit uploads give bytes). Three layouts are understood:

* the long **canonical** format of any table (``data.schema.TABLES``);
* a **wide** format, one row per candidate (or per candidate and annotator) with one column
  per attribute, turned into contexts + candidates + human_scores with a :class:`WideMapping`;
* a **pairwise-verdict** format: one row per judged pair with the context (id, text), both
  candidates (ids, systems, texts), a judge verdict (read with ``data.parsing``'s
  vocabulary: A/B/tie, A>>B, model_a, 1/2/0, ...) or a probability, a human verdict and a
  weight, turned into contexts + candidates + comparisons with a :class:`PairwiseMapping`.

A judgment file in a published format (Arena-Hard, AlpacaEval, MT-Bench) is recognised and
read by its importer (``data.importers``).

:func:`read_upload` is what the app calls: it refuses files that are too large (in bytes,
rows, columns or decompressed size, ``data.limits``), empty, not UTF-8 or malformed (the raw
readers in ``data.rawread`` read every cell where the file puts it or refuse the file), detects
the layout from the columns when not told, asks for it when the columns fit more than one
layout (see :func:`layouts`), and returns a validated :class:`~data.schema.Dataset`. Writing a
table with :func:`write_table` and reading it back with :func:`read_table` gives the same
canonical table in every format.

The package, one module per seam (the names below are all reached as ``data.io.<name>``):

- ``formats``: :func:`file_format`, :func:`read_frame`, :func:`write_table`, ``FORMATS``;
- ``wide``: :class:`WideMapping`, :func:`wide_to_dataset`;
- ``guess``: :func:`guess_wide`, :func:`guess_wide_mapping`, :func:`describe_wide` (columns
  guessed from names, then from values: recurring values are systems);
- ``pairwise``: :class:`PairwiseMapping` (its roles and their aliases),
  :func:`describe_pairwise`, ``VERDICT_SPELLINGS``;
- ``pairwise_guess``: :func:`guess_pairwise`, :func:`guess_pairwise_mapping` (names, then
  values; each guess explained);
- ``pairwise_tables``: :func:`pairwise_to_dataset`, :func:`pairwise_to_comparisons`;
- ``verdict_map``: a file's verdict columns read with the vocabulary, the user's overrides
  and the strength policy (:func:`verdict_table`, the Data page's verdict map);
- ``columns``: the column roles, aliases and cell reading that wide and pairwise share;
- ``upload``: :func:`layouts`, :func:`detect_kind`, :func:`read_table`, ``UPLOAD_KINDS``;
- ``result``: :func:`read_upload`, :func:`read_upload_result` (a :class:`ReadResult`: the
  dataset and notes, the verdict map, the published format and its baseline),
  :func:`preview_upload` (an :class:`UploadPreview`, before loading);
- ``notes``: row ranges and grouped messages for the notes;
- ``folders``: :func:`save_dataset`, :func:`load_dataset`, ``DATASET_META``.

Beside them, reached by their module path: ``merge`` (:func:`~data.io.merge.add_to_dataset`,
one file's tables joined to a dataset), ``workspace`` (datasets and settings in one zip file:
:func:`~data.io.workspace.save_workspace`, :func:`~data.io.workspace.load_workspace`) and
``spreadsheet`` (CSV for spreadsheets, formula injection neutralised:
:func:`~data.io.spreadsheet.spreadsheet_csv`).
"""

from __future__ import annotations

from data.io.folders import DATASET_META, load_dataset, save_dataset
from data.io.formats import FORMATS, file_format, read_frame, write_table
from data.io.guess import describe_wide, guess_wide, guess_wide_mapping
from data.io.pairwise import (
    STRENGTH_POLICIES,
    VERDICT_SPELLINGS,
    PairwiseMapping,
    describe_pairwise,
)
from data.io.pairwise_guess import guess_pairwise, guess_pairwise_mapping
from data.io.pairwise_tables import pairwise_to_comparisons, pairwise_to_dataset
from data.io.result import (
    ReadResult,
    UploadPreview,
    preview_upload,
    read_upload,
    read_upload_result,
)
from data.io.upload import UPLOAD_KINDS, detect_kind, layouts, read_table
from data.io.verdict_map import verdict_table
from data.io.wide import WideMapping, wide_to_dataset

__all__ = [
    "FORMATS",
    "file_format",
    "read_frame",
    "write_table",
    "WideMapping",
    "guess_wide_mapping",
    "wide_to_dataset",
    "PairwiseMapping",
    "VERDICT_SPELLINGS",
    "guess_pairwise_mapping",
    "pairwise_to_comparisons",
    "pairwise_to_dataset",
    "guess_pairwise",
    "describe_pairwise",
    "verdict_table",
    "STRENGTH_POLICIES",
    "UPLOAD_KINDS",
    "layouts",
    "detect_kind",
    "read_table",
    "read_upload",
    "read_upload_result",
    "ReadResult",
    "preview_upload",
    "UploadPreview",
    "guess_wide",
    "describe_wide",
    "DATASET_META",
    "save_dataset",
    "load_dataset",
]
