"""Files in and out, per format: CSV, TSV, JSON (records), JSONL and Parquet.

The format follows the file extension (:data:`FORMATS`). :func:`read_frame` reads any file
into a raw frame (text formats keep their cells as strings) through the strict readers of
``data.rawread``, after refusing files that are too large, empty or not UTF-8;
:func:`write_table` writes a table so that reading it back gives the same canonical table in
every format.
"""

from __future__ import annotations

import codecs
import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd

from data import validate as _validate
from data.limits import UPLOAD_LIMITS, Limits
from data.rawread import jsonl_line, parse_json, parse_jsonl, read_delimited, read_parquet
from data.schema import DataError

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


def file_format(name: str | Path) -> str:
    """The format of a file, from its name's extension.

    Parameters
    ----------
    name : str or Path
        The file name or path; the extension is compared case-insensitively.

    Returns
    -------
    str
        One of ``"csv"``, ``"tsv"``, ``"json"``, ``"jsonl"``, ``"parquet"`` (see
        :data:`FORMATS`).

    Raises
    ------
    DataError
        The extension is missing or not one of :data:`FORMATS` (the message lists them).
    """
    suffix = Path(str(name)).suffix.lower()
    if suffix not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise DataError(
            f"{Path(str(name)).name}: cannot tell the file format from the extension "
            f"{suffix or '(none)'!r}; use one of {known}"
        )
    return FORMATS[suffix]


def _check_size(n_bytes: int, source: str, max_bytes: float | None) -> None:
    # read at call time, so that data.validate.MAX_UPLOAD_BYTES stays the one setting
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
        (:func:`data.io.load_dataset` reads the user's own folders with ``LOCAL_LIMITS``).

    Returns
    -------
    pandas.DataFrame
        The file's columns in file order, under the file's headers; the cells of CSV and
        TSV are text, JSON and Parquet keep their types (integers never rounded through
        float64).

    Raises
    ------
    DataError
        Unknown extension, file not found, file too large (in bytes, rows, columns, cells or
        decompressed size), empty, not UTF-8, not parseable, a row whose cell count differs
        from the header's, a nested or repeated JSON value, two columns of the same name.
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


def _json_records(df: pd.DataFrame) -> list[dict]:
    cols = {}
    for col in df.columns:
        s = df[col]
        values = s.astype(object).where(s.notna(), None).tolist()
        cols[str(col)] = [v.item() if isinstance(v, np.generic) else v for v in values]
    names = list(cols)
    return [dict(zip(names, row, strict=True)) for row in zip(*cols.values(), strict=True)]


def _has_carriage_return(df: pd.DataFrame) -> bool:
    for col in df.columns:
        if df[col].dtype.kind in "OSU" or str(df[col].dtype) in ("str", "string"):
            cells = df[col].dropna()
            if any(isinstance(v, str) and "\r" in v for v in cells.tolist()):
                return True
    return any("\r" in str(c) for c in df.columns)


def write_table(df: pd.DataFrame, path: str | Path) -> Path:
    """Write a table in the format of ``path``'s extension; missing values stay missing.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (usually canonical); the index is not written.
    path : str or Path
        The file to write; its folder is created when missing.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    DataError
        The extension is not one of :data:`FORMATS`.

    Notes
    -----
    CSV/TSV write missing floats as empty cells; JSON (a list of records) and JSONL (one
    record a line, its only line break the last character) write ``null``; floats are
    written with full precision, so reading back gives identical values.
    """
    path = Path(path)
    fmt = file_format(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt in ("csv", "tsv"):
        # pandas leaves a cell holding a lone carriage return unquoted, which reads back as
        # a line break; every cell is quoted then (a quoted cell reads as the same text)
        quoting = csv.QUOTE_ALL if _has_carriage_return(df) else csv.QUOTE_MINIMAL
        df.to_csv(path, sep="," if fmt == "csv" else "\t", index=False, na_rep="", quoting=quoting)
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
