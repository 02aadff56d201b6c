"""Dataset folders: every table of a Dataset in one file each, plus ``dataset.json``."""

from __future__ import annotations

import json
import math
from pathlib import Path, PureWindowsPath

from data.io.formats import file_format, read_frame, write_table
from data.limits import LOCAL_LIMITS
from data.schema import TABLE_NAMES, DataError, Dataset, empty_table
from data.validate import validate_dataset

#: The file of a dataset folder that names its tables.
DATASET_META = "dataset.json"


def save_dataset(ds: Dataset, folder: str | Path, *, fmt: str = "csv") -> Path:
    """Write every table of ``ds`` to ``folder/<table>.<fmt>`` plus ``dataset.json``.

    Parameters
    ----------
    ds : Dataset
        The dataset; empty tables are written too (header only, or an empty file).
    folder : str or Path
        Created when missing; files already there are overwritten.
    fmt : str
        A format of ``data.io.FORMATS`` ("csv", "tsv", "json", "jsonl", "parquet"), with
        or without its dot.

    Returns
    -------
    Path
        ``folder``. ``dataset.json`` keeps the name, description, source, scales,
        reference systems and the table file names.

    Raises
    ------
    DataError
        ``fmt`` is not a known format (checked before anything is written).
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
        "reference_systems": [str(x) for x in ds.reference_systems],
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
    """Read a folder written by :func:`save_dataset`.

    Parameters
    ----------
    folder : str or Path
        The folder holding ``dataset.json``. Its tables are the user's own files: no byte
        limit, and only the column bound of ``data.limits.LOCAL_LIMITS``.

    Returns
    -------
    Dataset
        Validated; a table without a file (not named, or named but absent) is empty.

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
    except (ValueError, RecursionError) as err:  # an integer of over 4,300 digits too
        raise DataError(f"{meta_path}: not valid UTF-8 JSON ({str(err)[:200]})") from None
    files = meta.get("tables", {}) if isinstance(meta, dict) else None
    scales = meta.get("scales", {}) if isinstance(meta, dict) else None
    if not isinstance(files, dict) or not isinstance(scales, dict):
        raise DataError(
            f"{meta_path}: expected an object with 'tables' and 'scales' objects, as written "
            "by save_dataset"
        )
    refs = meta.get("reference_systems", [])  # absent from folders saved before
    if not isinstance(refs, list) or not all(isinstance(x, str) for x in refs):
        raise DataError(
            f"{meta_path}: 'reference_systems' must be a list of system names, e.g. "
            '["Human"], or be left out'
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
        reference_systems=tuple(refs),
        **tables,
    )
    return validate_dataset(ds, sources=sources)
