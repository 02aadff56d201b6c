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
* Parquet (uploads and workspace members, one reader): rows, columns and decompressed size are
  checked from the metadata before anything is decompressed, and the size the values expand
  to (dictionary-encoded text) before they are materialised; the Arrow columns are read as
  stored, ignoring the ``pandas`` metadata; nested columns and text that is not UTF-8 are
  refused; integers with gaps are not rounded through float64.

One module per format family: ``delimited`` (CSV and TSV: :func:`read_delimited`),
``parquet`` (:func:`read_parquet`) and ``jsonrows`` (JSON and JSONL: :func:`parse_json`,
:func:`parse_jsonl`, :func:`jsonl_line` for writing, and the frame builders
:func:`records_frame`, :func:`columns_frame`).
"""

from __future__ import annotations

from data.rawread.delimited import read_delimited
from data.rawread.jsonrows import columns_frame, jsonl_line, parse_json, parse_jsonl, records_frame
from data.rawread.parquet import read_parquet

__all__ = [
    "read_delimited",
    "read_parquet",
    "parse_json",
    "parse_jsonl",
    "records_frame",
    "columns_frame",
    "jsonl_line",
]
