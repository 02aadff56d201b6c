"""Resource bounds of the readers: rows, columns, cells and decompressed size.

The byte limit on a file (``data.validate.MAX_UPLOAD_BYTES``) bounds what is uploaded, not
what it becomes: a 316 KB Parquet file can decompress to 20 million rows, and a 349 KB CSV
header can name 40,000 columns. These limits are checked as early as the format allows:
Parquet from its metadata before anything is decompressed, CSV and JSON column counts before
a table is built, rows before the cells are checked. Every message states the limit and what
to do.
"""

from __future__ import annotations

from dataclasses import dataclass

from data.schema import DataError

#: Data rows of one file.
MAX_ROWS = 5_000_000
#: Columns of one file (a wide table has one per attribute, or per attribute and annotator).
MAX_COLUMNS = 1_000
#: Cells (rows x columns) of one file.
MAX_CELLS = 50_000_000
#: Decompressed size of a Parquet file's data, in bytes (read from its metadata).
MAX_DECOMPRESSED_BYTES = 1 << 30
#: Nesting depth of JSON reported when the parser gives up (a table cell is never nested).
MAX_JSON_DEPTH = 64

# Workspace files (``data.io.workspace``): every table member is held to the upload limits
# (:data:`UPLOAD_LIMITS`), and the archive to these.
#: Datasets in one workspace file (20,000 entries naming one table took minutes to open).
MAX_WORKSPACE_DATASETS = 64
#: Members of one workspace archive: the manifest, the report, five tables per dataset.
MAX_WORKSPACE_MEMBERS = 2 + 5 * MAX_WORKSPACE_DATASETS
#: Bytes of one workspace's members together, decompressed (each member is also held to
#: ``data.validate.MAX_UPLOAD_BYTES``), and of its tables' values together once expanded.
MAX_WORKSPACE_BYTES = 2 << 30
#: Bytes of a workspace's manifest (``workspace.json``: names, scales, settings).
MAX_MANIFEST_BYTES = 4 << 20
#: Bytes of a workspace's report (``report.json``: the views collected for the Report page).
MAX_REPORT_BYTES = 32 << 20
#: How many times a member of a workspace may inflate (decompressed over compressed bytes)
#: once it is over 1 MiB decompressed: JudgeScope's own members inflate 1.5 to 3 times, a
#: deflate bomb about 1,000 times.
MAX_INFLATION = 100
#: Digits of an integer in a workspace's JSON (Python refuses more than 4,300 with a bare
#: ValueError; no setting needs more than 20).
MAX_INT_DIGITS = 20


@dataclass(frozen=True)
class Limits:
    """Bounds a reader enforces; ``None`` turns a bound off.

    Attributes
    ----------
    max_rows : int or None
        Data rows of one file (default :data:`MAX_ROWS`).
    max_columns : int or None
        Columns of one file (default :data:`MAX_COLUMNS`).
    max_cells : int or None
        Rows x columns of one file (default :data:`MAX_CELLS`).
    max_decompressed_bytes : int or None
        Decompressed size of a Parquet file's data, from its metadata (default
        :data:`MAX_DECOMPRESSED_BYTES`).
    """

    max_rows: int | None = MAX_ROWS
    max_columns: int | None = MAX_COLUMNS
    max_cells: int | None = MAX_CELLS
    max_decompressed_bytes: int | None = MAX_DECOMPRESSED_BYTES


#: What uploads are held to.
UPLOAD_LIMITS = Limits()
#: Folders on the user's own disk (``load_dataset``): size is theirs to choose, but no table
#: has a thousand columns.
LOCAL_LIMITS = Limits(max_rows=None, max_cells=None, max_decompressed_bytes=None)


def check_columns(source: str, columns, limits: Limits) -> None:
    """Refuse a file with more than ``limits.max_columns`` columns.

    Parameters
    ----------
    source : str
        The file, for the message.
    columns : sequence
        The header cells (or JSON keys) in file order.
    limits : Limits
        The bounds.

    Raises
    ------
    DataError
        Too many columns; the message names the first column over the limit and the limit.
    """
    limit = limits.max_columns
    n = len(columns)
    if limit is None or n <= limit:
        return
    raise DataError(
        f"{source}, column {limit + 1:,} ({str(columns[limit])[:40]!r}): the file has {n:,} "
        f"columns, more than the limit of {limit:,} columns (MAX_COLUMNS in data.limits); a "
        "table needs its id columns and one column per attribute, so keep only the columns "
        "needed or split the file"
    )


def row_cap(limits: Limits, n_columns: int) -> int | None:
    """Most data rows a file with ``n_columns`` columns may have.

    Parameters
    ----------
    limits : Limits
        The bounds.
    n_columns : int
        Columns of the file (0 counts as 1).

    Returns
    -------
    int or None
        The smaller of ``max_rows`` and ``max_cells // n_columns`` (those that are set);
        None when neither is.
    """
    caps = []
    if limits.max_rows is not None:
        caps.append(limits.max_rows)
    if limits.max_cells is not None:
        caps.append(limits.max_cells // max(n_columns, 1))
    return min(caps) if caps else None


def check_rows(source: str, n_rows: int, n_columns: int, limits: Limits) -> None:
    """Refuse more data rows than ``limits`` allow for ``n_columns`` columns.

    Parameters
    ----------
    source : str
        The file, for the message.
    n_rows : int
        Data rows of the file (or the rows read so far, when reading stops early).
    n_columns : int
        Columns of the file.
    limits : Limits
        The bounds (see :func:`row_cap`).

    Raises
    ------
    DataError
        Over the row or the cell bound; the message names the first row over it, the
        limit, and suggests splitting the file.
    """
    cap = row_cap(limits, n_columns)
    if cap is None or n_rows <= cap:
        return
    if limits.max_rows is not None and n_rows > limits.max_rows:
        what = f"more than the limit of {limits.max_rows:,} data rows (MAX_ROWS in data.limits)"
    else:
        what = (
            f"{n_rows:,} rows x {n_columns:,} columns, more than the limit of "
            f"{limits.max_cells:,} cells (MAX_CELLS in data.limits)"
        )
    raise DataError(
        f"{source}, row {cap + 1:,}: the file has {what}; split it into several files "
        "(for example one per attribute or per judge) and load them one by one"
    )


def check_parquet_metadata(source: str, metadata, schema, limits: Limits) -> None:
    """Refuse a Parquet file whose metadata exceed ``limits``, before decompressing it.

    Parameters
    ----------
    source : str
        The file, for the message.
    metadata : pyarrow.parquet.FileMetaData
        The file's metadata (row count, row groups and their sizes).
    schema : pyarrow.Schema
        Its Arrow schema (the column names).
    limits : Limits
        The bounds.

    Raises
    ------
    DataError
        Too many columns, rows or cells, or data that decompress to more than
        ``limits.max_decompressed_bytes`` (the sum of the row groups' sizes).
    """
    check_columns(source, list(schema.names), limits)
    check_rows(source, int(metadata.num_rows), len(schema.names), limits)
    limit = limits.max_decompressed_bytes
    if limit is None:
        return
    size = sum(
        max(int(metadata.row_group(i).total_byte_size), 0) for i in range(metadata.num_row_groups)
    )
    if size > limit:
        raise DataError(
            f"{source}: the Parquet file's data decompress to {size / 1e6:,.1f} MB ({size:,} "
            f"bytes, from its metadata), more than the limit of {limit / 1e6:,.1f} MB "
            f"({limit:,} bytes, MAX_DECOMPRESSED_BYTES in data.limits); split it into smaller "
            "files or keep only the columns needed"
        )
