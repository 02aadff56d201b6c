"""A JudgeScope workspace in one file: datasets, which one is active, and the settings.

The file is a zip archive: ``workspace.json`` (format, version, active dataset, settings, and
per dataset its name, scales, description, source and reference systems) and one Parquet file per non-empty
table of each dataset, ``d<i>/<table>.parquet``. A dataset that is an unchanged bundled
benchmark (or the demo) is stored by name only and loaded again from the data folder.
Opening a file validates every table like an upload (:func:`data.validate.validate_dataset`).
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from data.schema import TABLE_NAMES, DataError, Dataset

FORMAT = "judgescope-workspace"
VERSION = 1
MANIFEST = "workspace.json"
#: Setting keys never written to a workspace, whatever a caller passes.
SECRET_WORDS = ("api_key", "apikey", "secret", "password", "token")


@dataclass(frozen=True)
class BenchmarkRef:
    """A dataset stored by name: a bundled benchmark, or ``"demo"``."""

    benchmark: str


def _json_safe(value):
    """``value`` as JSON data, or raise TypeError (tuples become lists, NaN is refused)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise TypeError("not a finite number")
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    raise TypeError(f"{type(value).__name__} is not stored")


def clean_settings(settings: Mapping | None) -> dict:
    """The settings a workspace keeps: JSON values, no key that looks like a secret.

    Parameters
    ----------
    settings : mapping of str to value, optional
        Session keys and their values.

    Returns
    -------
    dict
        Keys naming an API key, secret, password or token are dropped, and so are values
        that are not plain data (numbers, text, booleans, lists, dicts; NaN dropped).
    """
    out = {}
    for key, value in (settings or {}).items():
        key = str(key)
        if any(word in key.lower().replace("-", "_") for word in SECRET_WORDS):
            continue
        try:
            out[key] = _json_safe(value)
        except TypeError:
            continue
    return out


def save_workspace(
    datasets: Mapping[str, Dataset | BenchmarkRef],
    active: str | None = None,
    settings: Mapping | None = None,
) -> bytes:
    """Write datasets and settings to one zip file.

    Parameters
    ----------
    datasets : mapping of name to Dataset or BenchmarkRef
        In display order; a :class:`BenchmarkRef` is stored by name, a Dataset with all
        five tables, scales, description and source.
    active : str, optional
        The name of the active dataset.
    settings : mapping, optional
        Session settings (see :func:`clean_settings` for what is kept).

    Returns
    -------
    bytes
        The zip archive.
    """
    entries = []
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for i, (name, ds) in enumerate(datasets.items()):
            if isinstance(ds, BenchmarkRef):
                entries.append({"name": str(name), "benchmark": ds.benchmark})
                continue
            folder = f"d{i}"
            tables = []
            for table in TABLE_NAMES:
                frame = ds.table(table)
                if len(frame):
                    out = io.BytesIO()
                    frame.reset_index(drop=True).to_parquet(out, index=False)
                    zf.writestr(f"{folder}/{table}.parquet", out.getvalue())
                    tables.append(table)
            entries.append(
                {
                    "name": str(name),
                    "folder": folder,
                    "tables": tables,
                    "scales": {a: [float(lo), float(hi)] for a, (lo, hi) in ds.scales.items()},
                    "description": ds.description,
                    "source": ds.source,
                    "reference_systems": [str(x) for x in ds.reference_systems],
                }
            )
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "active": active,
            "settings": clean_settings(settings),
            "datasets": entries,
        }
        zf.writestr(MANIFEST, json.dumps(manifest, indent=1))
    return buffer.getvalue()


def _manifest(zf: zipfile.ZipFile, file_name: str) -> dict:
    try:
        manifest = json.loads(zf.read(MANIFEST).decode("utf-8"))
    except KeyError:
        raise DataError(
            f"{file_name}: no {MANIFEST} inside; this zip is not a JudgeScope workspace "
            "(save one with the sidebar's Workspace section)"
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise DataError(f"{file_name}: {MANIFEST} is not readable JSON ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise DataError(f"{file_name}: {MANIFEST} does not describe a JudgeScope workspace")
    if manifest.get("version") != VERSION:
        raise DataError(
            f"{file_name}: workspace version {manifest.get('version')!r}; this JudgeScope "
            f"reads version {VERSION}"
        )
    if not isinstance(manifest.get("datasets"), list):
        raise DataError(f"{file_name}: {MANIFEST} has no list of datasets")
    return manifest


def _read_dataset(zf: zipfile.ZipFile, entry: dict, file_name: str) -> Dataset:
    from data.validate import validate_dataset

    name = str(entry.get("name", ""))
    folder = str(entry.get("folder", ""))
    tables = {}
    for table in entry.get("tables", []):
        if table not in TABLE_NAMES:
            raise DataError(f"{file_name}: dataset {name!r} names an unknown table {table!r}")
        member = f"{folder}/{table}.parquet"
        try:
            tables[table] = pd.read_parquet(io.BytesIO(zf.read(member)))
        except KeyError:
            raise DataError(
                f"{file_name}: {member} (table {table} of {name!r}) is missing"
            ) from None
        except Exception as err:  # a damaged Parquet file
            raise DataError(f"{file_name}: {member} cannot be read ({err})") from None
    try:
        scales = {str(a): (float(lo), float(hi)) for a, (lo, hi) in entry["scales"].items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        raise DataError(
            f"{file_name}: the scales of dataset {name!r} are not (low, high) pairs"
        ) from None
    refs = entry.get("reference_systems", [])  # absent from workspaces saved before
    if not isinstance(refs, list) or not all(isinstance(x, str) for x in refs):
        raise DataError(
            f"{file_name}: the reference_systems of dataset {name!r} are not a list of names"
        )
    ds = Dataset(
        name=name,
        scales=scales,
        description=str(entry.get("description", "")),
        source=str(entry.get("source", "")),
        reference_systems=tuple(refs),
        **tables,
    )
    sources = {t: f"{file_name}: {name}/{t}" for t in TABLE_NAMES}
    return validate_dataset(ds, sources=sources)


def load_workspace(
    content: bytes, file_name: str = "workspace"
) -> tuple[dict[str, Dataset | BenchmarkRef], dict]:
    """Read a workspace file written by :func:`save_workspace`.

    Parameters
    ----------
    content : bytes
        The file.
    file_name : str
        Used in messages.

    Returns
    -------
    datasets : dict of name to Dataset or BenchmarkRef
        Validated datasets, in the file's order; benchmarks stored by name as BenchmarkRef.
    settings : dict
        The saved settings (secrets never among them), plus ``"app.active"``: the name of
        the active dataset (None when the file names none).

    Raises
    ------
    DataError
        The file is not a zip or not a workspace, a table is missing or damaged, or a table
        fails validation (the message names the file, dataset, table, row and column).
    """
    try:
        zf = zipfile.ZipFile(io.BytesIO(content))
    except zipfile.BadZipFile:
        raise DataError(
            f"{file_name}: not a JudgeScope workspace (not a zip archive); save one with the "
            "sidebar's Workspace section"
        ) from None
    with zf:
        manifest = _manifest(zf, file_name)
        datasets: dict[str, Dataset | BenchmarkRef] = {}
        problems = []
        for entry in manifest["datasets"]:
            if not isinstance(entry, dict) or not entry.get("name"):
                problems.append(f"{file_name}: a dataset entry without a name")
                continue
            name = str(entry["name"])
            if entry.get("benchmark"):
                datasets[name] = BenchmarkRef(str(entry["benchmark"]))
                continue
            try:
                datasets[name] = _read_dataset(zf, entry, file_name)
            except DataError as err:
                problems.extend(err.problems)
        if problems:
            raise DataError(
                f"{file_name}: {len(problems)} problem(s); nothing was opened:\n"
                + "\n".join(f"- {p}" for p in problems),
                problems,
            )
    settings = clean_settings(manifest.get("settings") or {})
    active = manifest.get("active")
    settings["app.active"] = str(active) if active in datasets else None
    return datasets, settings
