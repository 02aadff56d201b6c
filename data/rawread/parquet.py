"""Parquet read strictly: bounds checked from the metadata before anything is decompressed.

Rows, columns and decompressed size are checked from the metadata; nested columns and text
that is not UTF-8 are refused; integers with gaps are not rounded through float64.
"""

from __future__ import annotations

import io

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from data.coerce import EXACT_FLOAT_INT
from data.limits import Limits, check_parquet_metadata
from data.problems import Problems, row_label
from data.schema import DataError


def read_parquet(data: bytes, source: str, limits: Limits) -> pd.DataFrame:
    """Read a Parquet file, refused from its metadata (before decompressing) when over limits.

    Parameters
    ----------
    data : bytes
        The file's bytes.
    source : str
        The file, for messages.
    limits : data.limits.Limits
        Checked from the metadata (:func:`data.limits.check_parquet_metadata`).

    Returns
    -------
    pandas.DataFrame
        The table; binary columns decoded as UTF-8 text; an integer column with gaps whose
        values pass 2**53 kept as exact Python ints (pandas would round them through
        float64).

    Raises
    ------
    DataError
        Not readable as Parquet, over the limits, two columns of one name, a nested column,
        values that fail validation (e.g. text that is not UTF-8), binary cells that are not
        UTF-8.
    """

    def unreadable(err: Exception) -> DataError:
        return DataError(
            f"{source}: not a readable Parquet file ({type(err).__name__}: {err}); save it "
            "again as Parquet or upload CSV"
        )

    try:
        meta = pq.ParquetFile(io.BytesIO(data))
        schema = meta.schema_arrow
    except Exception as err:  # pyarrow raises several types for a corrupt file
        raise unreadable(err) from None
    check_parquet_metadata(source, meta.metadata, schema, limits)
    problems = Problems()
    seen: set[str] = set()
    for field_ in schema:
        if field_.name in seen:
            problems.add(
                f"{source}, column {field_.name!r}: two columns have this name; rename one"
            )
        seen.add(field_.name)
        if pa.types.is_nested(field_.type) or pa.types.is_union(field_.type):
            problems.add(
                f"{source}, column {field_.name!r}: holds nested values ({field_.type}), not "
                "table cells; a cell is text, a number or a boolean, so flatten the column"
            )
    problems.raise_if_any(source)
    try:
        table = meta.read()
    except Exception as err:
        raise unreadable(err) from None
    for name, column in zip(table.column_names, table.columns, strict=True):
        try:
            column.validate(full=True)  # e.g. text that is not UTF-8 in a damaged file
        except pa.ArrowException as err:
            problems.add(f"{source}, column {name!r}: the values cannot be read ({err})")
    problems.raise_if_any(source)
    try:
        frame = table.to_pandas()
    except Exception as err:
        raise unreadable(err) from None
    for field_ in schema:
        if field_.name not in frame.columns:
            continue  # restored as the index
        if pa.types.is_binary(field_.type) or pa.types.is_large_binary(field_.type):
            frame[field_.name] = _utf8_cells(frame[field_.name], field_.name, source, problems)
        elif pa.types.is_integer(field_.type) and frame[field_.name].dtype.kind == "f":
            # pandas turns integers with gaps into float64, which rounds past 2**53
            values = table.column(field_.name).to_pylist()
            if any(v is not None and abs(v) > EXACT_FLOAT_INT for v in values):
                frame[field_.name] = pd.Series(values, index=frame.index, dtype=object)
    problems.raise_if_any(source)
    return frame


def _utf8_cells(column: pd.Series, name: str, source: str, problems: Problems) -> pd.Series:
    """A binary Parquet column as text; a cell that is not UTF-8 is a problem, not replaced."""
    out = []
    for pos, value in enumerate(column.tolist()):
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                problems.add(
                    f"{source}, {row_label(pos)}, column {name!r}: the bytes are not UTF-8 "
                    "text; store the column as UTF-8 strings"
                )
        out.append(value)
    return pd.Series(out, index=column.index, dtype=object)
