"""Parquet read strictly and within bounds: uploads and workspace members alike.

One reader (:func:`read_parquet`). Rows, columns and the row groups' decompressed size are
checked from the metadata; those sizes count a dictionary-encoded column's indices, not the
text they expand to (5 KB of Parquet can expand to gigabytes), so the size the values expand
to is bounded too, counted on the dictionaries before any text is materialised. The columns
are the ones the Arrow schema stores: the ``pandas`` metadata is ignored (it can restore a
column as the index, or rename and swap columns). Nested columns and text that is not UTF-8
are refused; integers with gaps are not rounded through float64.
"""

from __future__ import annotations

import io
import re

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from data.coerce import EXACT_FLOAT_INT
from data.limits import Limits, check_parquet_metadata
from data.problems import Problems, row_label
from data.schema import DataError

#: The name pandas gives an unnamed index it writes as a column: not the table's data.
_PANDAS_INDEX = re.compile(r"__index_level_\d+__")


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


def _variable_width(t: pa.DataType) -> bool:
    return (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or getattr(pa.types, "is_string_view", lambda _: False)(t)
        or getattr(pa.types, "is_binary_view", lambda _: False)(t)
    )


def _cell_type(t: pa.DataType) -> bool:
    """Whether values of type ``t`` are table cells (text, bytes, numbers, booleans,
    dates and times, or a dictionary of those)."""
    if pa.types.is_dictionary(t):
        return _cell_type(t.value_type)
    if isinstance(t, pa.BaseExtensionType) or pa.types.is_nested(t) or pa.types.is_union(t):
        return False
    return _variable_width(t) or t.num_fields == 0 and _fixed_bytes(t) is not None


def _fixed_bytes(t: pa.DataType) -> int | None:
    """Bytes of one value of a fixed-width type (booleans: 1, as pandas holds them; a
    column of nulls: 8, one object pointer each); None for a type that has no fixed width."""
    if pa.types.is_null(t):
        return 8
    try:
        return max(t.bit_width // 8, 1)
    except ValueError:
        return None


def _too_big(source: str, size: int, limit: int, what: str) -> DataError:
    return DataError(
        f"{source}: {what} expand to {size / 1e6:,.1f} MB ({size:,} bytes), more than the "
        f"limit of {limit / 1e6:,.1f} MB ({limit:,} bytes, MAX_DECOMPRESSED_BYTES in "
        "data.limits); split the table into smaller files or keep only the columns needed"
    )


def _expanded_text_bytes(column: pa.ChunkedArray) -> int:
    """Bytes the values of a dictionary-read text column take once decoded."""
    total = 0
    for chunk in column.chunks:
        lengths = pc.binary_length(chunk.dictionary)
        total += int(pc.sum(pc.take(lengths, chunk.indices)).as_py() or 0)
    return total


def read_parquet(
    data: bytes, source: str, limits: Limits, *, sizes: list[int] | None = None
) -> pd.DataFrame:
    """Read a Parquet file within ``limits``, its columns as the Arrow schema stores them.

    Checked before any value is materialised: the metadata (columns, rows, cells, the row
    groups' decompressed size: :func:`data.limits.check_parquet_metadata`), the schema (two
    columns of one name, nested, union or extension values, column chunks said to live in
    another file), then the size the values expand to: rows x width for fixed-width
    columns, and for text and binary columns the sum of their values' lengths, counted on
    the dictionaries they are read into (a dictionary-encoded column of a 5 KB file can
    expand to gigabytes); all together at most ``limits.max_decompressed_bytes``.

    The ``pandas`` metadata is ignored: a column stored as the index
    (``df.set_index("system").to_parquet()``) comes back as a column, and crafted metadata
    cannot rename or swap columns. An unnamed index pandas wrote as a column
    (``__index_level_0__``, from a filtered frame written without ``index=False``) is left
    out: it holds row labels, not the table's cells.

    Parameters
    ----------
    data : bytes
        The file's bytes.
    source : str
        The file (or archive member), for messages.
    limits : data.limits.Limits
        The bounds.
    sizes : list of int, optional
        Receives the size the values expand to, in bytes (a caller bounding several files
        together adds them up).

    Returns
    -------
    pandas.DataFrame
        One column per stored column, in file order, with a RangeIndex; binary columns
        decoded as UTF-8 text; an integer column with gaps whose values pass 2**53 kept as
        exact Python ints.

    Raises
    ------
    DataError
        Not readable as Parquet, over a limit (the message names the limit, its value in
        ``data.limits`` and what to do), a column that holds no table cells, text that is
        not UTF-8.
    """

    def unreadable(err: Exception) -> DataError:
        return DataError(
            f"{source}: not a readable Parquet file ({type(err).__name__}: {str(err)[:200]}); "
            "save it again as Parquet or upload CSV"
        )

    try:
        meta = pq.ParquetFile(io.BytesIO(data))
        schema = meta.schema_arrow
        metadata = meta.metadata
        external = any(
            metadata.row_group(i).column(j).file_path
            for i in range(metadata.num_row_groups)
            for j in range(metadata.num_columns)
        )
    except Exception as err:  # pyarrow raises several types for a corrupt file
        raise unreadable(err) from None
    check_parquet_metadata(source, metadata, schema, limits)
    problems = Problems()
    if external:
        problems.add(
            f"{source}: its column chunks are said to live in another file; a table is "
            "read from its own bytes only, so save it again as one Parquet file"
        )
    seen: set[str] = set()
    for field_ in schema:
        if field_.name in seen:
            problems.add(
                f"{source}, column {field_.name!r}: two columns have this name; rename one"
            )
        seen.add(field_.name)
        if not _cell_type(field_.type):
            problems.add(
                f"{source}, column {field_.name!r}: holds values of type {field_.type}, not "
                "table cells; a cell is text, a number or a boolean, so flatten the column"
            )
    problems.raise_if_any(source)
    rows, limit = int(metadata.num_rows), limits.max_decompressed_bytes
    fixed = sum(
        rows * (_fixed_bytes(f.type.index_type if pa.types.is_dictionary(f.type) else f.type) or 0)
        for f in schema
    )
    if limit is not None and fixed > limit:
        raise _too_big(source, fixed, limit, "the fixed-width values")
    text = [f.name for f in schema if _variable_width(f.type)]
    try:
        table = pq.ParquetFile(io.BytesIO(data), read_dictionary=text).read(
            use_pandas_metadata=False
        )
    except Exception as err:
        raise unreadable(err) from None
    if table.column_names != list(schema.names) or table.num_rows != rows:
        raise unreadable(ValueError("the data do not match the file's schema"))
    expanded = fixed + sum(_expanded_text_bytes(table.column(name)) for name in text)
    if limit is not None and expanded > limit:
        raise _too_big(source, expanded, limit, "the values (text decoded from its dictionaries)")
    if sizes is not None:
        sizes.append(expanded)
    columns = []
    for name in table.column_names:
        column = table.column(name)
        try:
            if name in text:
                wanted = schema.field(name).type
                column = pa.chunked_array(
                    [c.dictionary_decode().cast(wanted) for c in column.chunks], wanted
                )
            column.validate(full=True)  # e.g. text that is not UTF-8 in a damaged file
        except pa.ArrowException as err:
            problems.add(f"{source}, column {name!r}: the values cannot be read ({err})")
            continue
        columns.append(column)
    problems.raise_if_any(source)
    table = pa.Table.from_arrays(columns, schema=schema.remove_metadata())
    try:
        frame = table.to_pandas(ignore_metadata=True)
    except Exception as err:
        raise unreadable(err) from None
    frame.columns = list(schema.names)
    for pos, field_ in enumerate(schema):
        name = frame.columns[pos]
        if pa.types.is_binary(field_.type) or pa.types.is_large_binary(field_.type):
            frame[name] = _utf8_cells(frame.iloc[:, pos], name, source, problems)
        elif pa.types.is_integer(field_.type) and frame.iloc[:, pos].dtype.kind == "f":
            # pandas turns integers with gaps into float64, which rounds past 2**53
            values = table.column(pos).to_pylist()
            if any(v is not None and abs(v) > EXACT_FLOAT_INT for v in values):
                frame[name] = pd.Series(values, index=frame.index, dtype=object)
    problems.raise_if_any(source)
    # an unnamed pandas index (a filtered frame written without index=False) is no column
    unnamed = [c for c in frame.columns if _PANDAS_INDEX.fullmatch(c)]
    return frame.drop(columns=unnamed) if unnamed else frame
