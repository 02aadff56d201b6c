"""A JudgeScope workspace in one file: datasets, which one is active, and the settings.

The file is a zip archive: ``workspace.json`` (format, version, active dataset, settings, the
saving session's workspace id, and per dataset its name, scales, description, source and
reference systems), one Parquet file per non-empty table of each dataset,
``d<i>/<table>.parquet``, and ``report.json`` (the views collected for the Report page). A
dataset that is an unchanged bundled benchmark (or the demo) is stored by name only and
loaded again from the data folder.

Workspace files are shared, so opening one trusts nothing in it (:func:`read_workspace`): the
archive and every member are read within the bounds of :mod:`data.limits`
(:mod:`data.io.workspace_archive`), every value of the manifest is checked, and every table
is read like an upload (:func:`data.rawread.parquet.read_parquet`: the Arrow columns
as stored, the size they expand to bounded before they are materialised) and validated
(:func:`data.validate.validate_dataset`). A file that fails any check is one
:class:`~data.schema.DataError` naming the member and what is wrong; nothing is opened in part.
"""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass

from data.io.workspace_archive import RESAVE, Archive, WorkspaceLimits, parse_json
from data.limits import MAX_JSON_DEPTH, MAX_WORKSPACE_DATASETS
from data.schema import TABLE_NAMES, DataError, Dataset

FORMAT = "judgescope-workspace"
VERSION = 1
MANIFEST = "workspace.json"
#: The views collected for the Report page (JSON, written by the page layer).
REPORT = "report.json"
#: Setting keys never written to a workspace, whatever a caller passes.
SECRET_WORDS = ("api_key", "apikey", "secret", "password", "token")
_WORKSPACE_ID = re.compile(r"[0-9a-f]{12}")


@dataclass(frozen=True)
class BenchmarkRef:
    """A dataset stored by name: a bundled benchmark, or ``"demo"``."""

    benchmark: str


def _json_safe(value, depth: int = 1):
    """``value`` as JSON data, or raise TypeError (tuples become lists; NaN, integers of
    more than 20 digits and nesting deeper than ``MAX_JSON_DEPTH`` are refused: a workspace
    holding them would not open)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise TypeError("not a finite number")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**20:
        raise TypeError("an integer of more than 20 digits")
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if depth > MAX_JSON_DEPTH:
        raise TypeError(f"nested more than {MAX_JSON_DEPTH} levels deep")
    if isinstance(value, list | tuple):
        return [_json_safe(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_safe(v, depth + 1) for k, v in value.items()}
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
    *,
    report: Mapping | None = None,
    workspace_id: str | None = None,
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
    report : mapping, optional
        The views collected for the Report page, as JSON data (``report.json``; the page
        layer keeps it under ``data.limits.MAX_REPORT_BYTES``).
    workspace_id : str, optional
        The saving session's workspace id (12 hexadecimal digits): a link naming it works
        again once this file is opened.

    Returns
    -------
    bytes
        The zip archive.

    Raises
    ------
    ValueError
        More datasets than ``data.limits.MAX_WORKSPACE_DATASETS``, or a workspace id that is
        not 12 hexadecimal digits: the file would not open again.
    """
    if len(datasets) > MAX_WORKSPACE_DATASETS:
        raise ValueError(
            f"{len(datasets):,} datasets; a workspace holds at most {MAX_WORKSPACE_DATASETS} "
            "(MAX_WORKSPACE_DATASETS in data.limits)"
        )
    if workspace_id is not None and not _WORKSPACE_ID.fullmatch(str(workspace_id)):
        raise ValueError(f"workspace id {workspace_id!r:.40} is not 12 hexadecimal digits")
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
        if workspace_id is not None:
            manifest["workspace_id"] = workspace_id
        if report:
            zf.writestr(REPORT, json.dumps(report, allow_nan=False, separators=(",", ":")))
        zf.writestr(MANIFEST, json.dumps(manifest, indent=1))
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------
# Reading: the manifest checked value by value, every member within bounds


@dataclass(frozen=True)
class Workspace:
    """A workspace file as read by :func:`read_workspace`.

    Attributes
    ----------
    datasets : dict of name to Dataset or BenchmarkRef
        Validated datasets in the file's order; benchmarks stored by name as BenchmarkRef.
    settings : dict
        The saved settings (secrets never among them), plus ``"app.active"``: the name of
        the active dataset (None when the file names none).
    report : dict or None
        The views collected for the Report page (``report.json``, JSON as saved), if any.
    workspace_id : str or None
        The id of the session that saved it (its autosave, and the ``ws=`` of its links).
    """

    datasets: dict
    settings: dict
    report: dict | None = None
    workspace_id: str | None = None


_FOLDER = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: Longest dataset name, description or source a manifest may give.
MAX_NAME, MAX_TEXT = 1_000, 100_000


def _benchmark_names() -> set[str]:
    from data.benchmarks import list_benchmarks

    return {b.name for b in list_benchmarks()} | {"demo"}


class _Manifest:
    """``workspace.json`` checked: every value of the type and form JudgeScope writes."""

    def __init__(self, value, file_name: str, limits: WorkspaceLimits):
        self.source = f"{file_name}, member {MANIFEST}"
        self.problems: list[str] = []
        if not isinstance(value, dict) or value.get("format") != FORMAT:
            raise DataError(f"{self.source} does not describe a JudgeScope workspace")
        version = value.get("version")
        if type(version) is not int or version != VERSION:  # true == 1 in Python
            raise DataError(
                f"{self.source}: workspace version {version!r:.40}; this JudgeScope reads "
                f"version {VERSION} (the integer 1)"
            )
        active = value.get("active")
        if active is not None and not isinstance(active, str):
            self.fail(f"the active dataset is {_kind(active)}, not a dataset name")
        self.active = active
        settings = value.get("settings")
        if settings is not None and not isinstance(settings, dict):
            self.fail(f"the settings are {_kind(settings)}, not an object of setting: value")
        self.settings = settings or {}
        ws = value.get("workspace_id")
        if ws is not None and not (isinstance(ws, str) and _WORKSPACE_ID.fullmatch(ws)):
            self.fail("the workspace_id is not 12 hexadecimal digits")
        self.workspace_id = ws
        datasets = value.get("datasets")
        if not isinstance(datasets, list):
            raise DataError(f"{self.source}: no list of datasets")
        if len(datasets) > limits.max_datasets:
            raise DataError(
                f"{self.source}: {len(datasets):,} datasets, more than the limit of "
                f"{limits.max_datasets} datasets in one workspace (MAX_WORKSPACE_DATASETS in "
                "data.limits); save them in several workspace files"
            )
        self.entries: list[dict] = []
        names, folders = set(), set()
        for pos, entry in enumerate(datasets, start=1):
            entry = self.entry(entry, pos)
            if entry is None:
                continue
            if entry["name"] in names:
                self.fail(f"two datasets are named {entry['name']!r:.80}; names are unique")
            names.add(entry["name"])
            folder = entry.get("folder")
            if folder is not None and folder in folders:
                self.fail(f"two datasets read the folder {folder!r}; each has its own")
            folders.add(folder)
            self.entries.append(entry)
        if self.problems:
            raise DataError(
                f"{self.source}: {len(self.problems)} problem(s); nothing was opened "
                f"({RESAVE}):\n" + "\n".join(f"- {p}" for p in self.problems),
                [f"{self.source}: {p}" for p in self.problems],
            )

    def fail(self, text: str) -> None:
        self.problems.append(text)

    def entry(self, entry, pos: int) -> dict | None:
        """One dataset entry checked (None, with a problem, when it is not usable)."""
        if not isinstance(entry, dict):
            self.fail(f"dataset {pos} is {_kind(entry)}, not an object")
            return None
        name = entry.get("name")
        if not isinstance(name, str) or not name or len(name) > MAX_NAME:
            self.fail(f"dataset {pos} has no name (a text of 1 to {MAX_NAME:,} characters)")
            return None
        what = f"dataset {name!r:.80}"
        if "benchmark" in entry:
            bench = entry["benchmark"]
            if not isinstance(bench, str) or bench not in _benchmark_names():
                self.fail(f"{what} names {bench!r:.80} as its benchmark, not one JudgeScope has")
                return None
            return {"name": name, "benchmark": bench}
        out = {"name": name}
        folder = entry.get("folder")
        if not isinstance(folder, str) or not _FOLDER.fullmatch(folder):
            self.fail(f"{what}: its folder is not a plain name (letters, digits, - and _)")
            return None
        out["folder"] = folder
        tables = entry.get("tables", [])
        if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables):
            self.fail(f"{what}: its tables are not a list of table names")
            return None
        unknown = [t for t in tables if t not in TABLE_NAMES]
        if unknown:
            self.fail(f"{what} names an unknown table {unknown[0]!r:.40}")
        if len(set(tables)) != len(tables):
            self.fail(f"{what} names a table twice")
        out["tables"] = tables
        scales = entry.get("scales")
        if not isinstance(scales, dict) or not all(
            isinstance(v, list) and len(v) == 2 and all(_number(x) for x in v)
            for v in scales.values()
        ):
            self.fail(f"the scales of {what} are not (low, high) pairs of numbers")
            return None
        out["scales"] = {a: (float(lo), float(hi)) for a, (lo, hi) in scales.items()}
        for key in ("description", "source"):
            text = entry.get(key, "")
            if not isinstance(text, str) or len(text) > MAX_TEXT:
                self.fail(f"the {key} of {what} is {_kind(text)}, not a text")
                return None
            out[key] = text
        refs = entry.get("reference_systems", [])  # absent from workspaces saved before
        if not isinstance(refs, list) or not all(isinstance(x, str) for x in refs):
            self.fail(f"the reference_systems of {what} are not a list of names")
            return None
        out["reference_systems"] = tuple(refs)
        return out


def _kind(value) -> str:
    if isinstance(value, bool):
        return f"a boolean ({value})".lower()
    return {dict: "an object", list: "a list", str: "a text", type(None): "null"}.get(
        type(value), "a number"
    )


def _number(x) -> bool:
    return type(x) in (int, float) and math.isfinite(x)


def _read_dataset(
    archive: Archive, entry: dict, file_name: str, limits: WorkspaceLimits, spent: list[int]
) -> Dataset:
    """The tables of one dataset entry, read within bounds (not validated yet)."""
    from data.rawread.parquet import read_parquet

    name = entry["name"]
    tables = {}
    for table in entry["tables"]:
        member = f"{entry['folder']}/{table}.parquet"
        if member not in archive:
            raise DataError(f"{file_name}: {member} (table {table} of {name!r}) is missing")
        data = archive.read(
            member,
            limits.max_member_bytes,
            f"table {table} of {name!r:.80}",
            "MAX_UPLOAD_BYTES in data.validate",
            "keep fewer or smaller datasets in one workspace file",
        )
        sizes: list[int] = []
        tables[table] = read_parquet(
            data, f"{file_name}, member {member}", limits.tables, sizes=sizes
        )
        del data
        spent.append(sum(sizes))
        if sum(spent) > limits.max_total_bytes:
            raise DataError(
                f"{file_name}, member {member}: the tables read so far expand to "
                f"{sum(spent):,} bytes, more than the limit of {limits.max_total_bytes:,} "
                "bytes for one workspace (MAX_WORKSPACE_BYTES in data.limits); save the large "
                "datasets in separate workspace files"
            )
    return Dataset(
        name=name,
        scales=entry["scales"],
        description=entry["description"],
        source=entry["source"],
        reference_systems=entry["reference_systems"],
        **tables,
    )


def read_workspace(
    content: bytes, file_name: str = "workspace", limits: WorkspaceLimits | None = None
) -> Workspace:
    """Read a workspace file written by :func:`save_workspace`, within bounds.

    Nothing is read before it is checked: the archive's member count and directory size
    (``MAX_WORKSPACE_MEMBERS``), each member's flags, compression method, declared size
    (``MAX_MANIFEST_BYTES``, ``MAX_REPORT_BYTES``, ``MAX_UPLOAD_BYTES``; all together
    ``MAX_WORKSPACE_BYTES``) and inflation (``MAX_INFLATION``), the JSON's depth and digits,
    the manifest's every value (types, names unique, one folder per dataset, at most
    ``MAX_WORKSPACE_DATASETS``), and each table like an upload (:mod:`data.limits`, then
    :func:`data.rawread.parquet.read_parquet`, the Arrow columns as stored, then
    :func:`data.validate.validate_dataset`).

    Parameters
    ----------
    content : bytes
        The file.
    file_name : str
        Used in messages.
    limits : WorkspaceLimits, optional
        The bounds (default :class:`~data.io.workspace_archive.WorkspaceLimits`).

    Returns
    -------
    Workspace
        Datasets, settings, the report's views and the saving session's id.

    Raises
    ------
    DataError
        The file is not a zip or not a workspace, damaged, over a limit, a value of its
        manifest is not what JudgeScope writes, a table is missing, damaged or fails
        validation; the message names the file, the member and what is wrong (and the
        limit and what to do). Nothing is returned in part.
    """
    from data.validate import validate_dataset

    limits = limits or WorkspaceLimits()
    archive = Archive(content, file_name, limits)
    try:
        if MANIFEST not in archive:
            raise DataError(
                f"{file_name}: no {MANIFEST} inside; this zip is not a JudgeScope workspace "
                "(save one with the sidebar's Workspace section)"
            )
        source = f"{file_name}, member {MANIFEST}"
        raw = archive.read(
            MANIFEST, limits.max_manifest_bytes, "the manifest", "MAX_MANIFEST_BYTES in data.limits"
        )
        manifest = _Manifest(parse_json(raw, source, limits), file_name, limits)
        report = None
        if REPORT in archive:
            raw = archive.read(
                REPORT, limits.max_report_bytes, "the report", "MAX_REPORT_BYTES in data.limits"
            )
            report = parse_json(raw, f"{file_name}, member {REPORT}", limits)
            if not isinstance(report, dict):
                raise DataError(f"{file_name}, member {REPORT}: not an object of views")
        del raw
        datasets: dict[str, Dataset | BenchmarkRef] = {}
        problems: list[str] = []
        spent: list[int] = []
        for entry in manifest.entries:
            if "benchmark" in entry:
                datasets[entry["name"]] = BenchmarkRef(entry["benchmark"])
                continue
            ds = _read_dataset(archive, entry, file_name, limits, spent)  # bounds: at once
            try:
                sources = {t: f"{file_name}: {ds.name}/{t}" for t in TABLE_NAMES}
                datasets[entry["name"]] = validate_dataset(ds, sources=sources)
            except DataError as err:  # the problems of every dataset, listed together
                problems.extend(err.problems)
        if problems:
            raise DataError(
                f"{file_name}: {len(problems)} problem(s); nothing was opened:\n"
                + "\n".join(f"- {p}" for p in problems),
                problems,
            )
    finally:
        archive.close()
    settings = clean_settings(manifest.settings)
    active = manifest.active
    settings["app.active"] = active if active in datasets else None
    return Workspace(datasets, settings, report, manifest.workspace_id)


def load_workspace(
    content: bytes, file_name: str = "workspace", limits: WorkspaceLimits | None = None
) -> tuple[dict[str, Dataset | BenchmarkRef], dict]:
    """Read a workspace file written by :func:`save_workspace`: (datasets, settings).

    :func:`read_workspace` without the report and the id; the same checks and bounds.

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
        As :func:`read_workspace`.
    """
    ws = read_workspace(content, file_name, limits)
    return ws.datasets, ws.settings
