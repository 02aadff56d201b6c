"""The workspace: every dataset of the session and its settings, saved to one file and
opened again (sidebar), and autosaved on this machine so that a refresh brings uploads back.

Uploads and judged copies live in the browser session only. As soon as the session has one,
the whole workspace is written to ``<cache>/workspaces/<id>.zip`` (``data.paths
.user_cache_dir``; ``JUDGESCOPE_CACHE`` moves it) and the random id goes into the URL as
``ws=``: a refresh, or the link opened on this machine, loads it again. API keys are never
kept in settings, so they never reach the file (:func:`data.io.workspace.clean_settings`).

The views collected for the Report page go with the workspace too (the file's
``report.json``, and ``<id>.report.json`` beside the autosave, rewritten when they change;
:mod:`pages.shell.report_store`), so a refresh keeps the report. The file records the
session's id: a link to uploaded data opened elsewhere waits for its workspace file
(:data:`PENDING_LINK`, set by :mod:`pages.shell.url`), and opening that file keeps the
dataset names and takes the id the link names, so the link then works on this machine too.

Opening a file or a link never breaks a page: :func:`data.io.workspace.read_workspace`
refuses a bad file with a DataError, and anything else is shown as a message too, with
nothing already open changed.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from pathlib import Path

import streamlit as st

from data.io.workspace import (
    BenchmarkRef,
    Workspace,
    clean_settings,
    read_workspace,
    save_workspace,
)
from data.io.workspace_archive import WorkspaceLimits, parse_json
from data.limits import MAX_MANIFEST_BYTES, MAX_REPORT_BYTES
from data.paths import user_cache_dir
from data.schema import DataError, Dataset
from pages.shell import report_store, session, ui
from pages.shell.tokens import token

WS = "app.ws"  # this session's workspace id (only once it has something to autosave)
_SAVED = "app.ws.saved"  # what the last autosave held (names and revisions)
_OPENED = "app.ws.opened"  # note of the last file opened
_SETTINGS = "app.ws.settings"  # the settings last autosaved
_REPORT = "app.ws.report"  # what the report held when last autosaved
#: A link that named data of another session, waiting for its workspace file:
#: {"dataset": name, "ws": id or None, "params": the link's other query parameters}.
PENDING_LINK = "app.url.pending"
_ID = re.compile(r"[0-9a-f]{12}")  # the whole text (fullmatch): no trailing newline


def valid_id(ws) -> bool:
    """Whether ``ws`` is a workspace id as :func:`autosave` makes them (12 hex digits)."""
    return isinstance(ws, str) and _ID.fullmatch(ws) is not None


def folder() -> Path:
    """Where autosaved workspaces live: ``<user cache>/workspaces``."""
    return user_cache_dir() / "workspaces"


def workspace_id() -> str | None:
    return st.session_state.get(WS)


def _entries() -> dict[str, Dataset | BenchmarkRef]:
    """The session's datasets, shared benchmarks by name only."""
    out: dict[str, Dataset | BenchmarkRef] = {}
    for name, ds in session.datasets().items():
        source = session.shared_source(ds)
        out[name] = BenchmarkRef(source) if source else ds
    return out


def _report(registry=None, names=None) -> dict | None:
    """The report's views of the session's datasets as JSON data (bounded in size)."""
    registry = st.session_state.get(ui.REPORT, {}) if registry is None else registry
    names = list(session.datasets()) if names is None else names
    return report_store.report_json(registry, names)[0]


def workspace_bytes() -> bytes:
    """The session as a workspace file (datasets, active one, kept settings, the report's
    views, the session's id)."""
    return save_workspace(
        _entries(),
        session.active_name(),
        session.kept(),
        report=_report(),
        workspace_id=workspace_id(),
    )


def autosave() -> None:
    """Write the workspace when the session holds data that only it has (uploads, runs)."""
    ss = st.session_state
    entries = _entries()
    if not any(isinstance(v, Dataset) for v in entries.values()):
        return
    marks = tuple(
        (n, token(v) if isinstance(v, Dataset) else v.benchmark) for n, v in entries.items()
    )
    if ss.get(_SAVED) == marks:
        return
    ws = ss.setdefault(WS, uuid.uuid4().hex[:12])
    try:
        folder().mkdir(parents=True, exist_ok=True)
        path = folder() / f"{ws}.zip"
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(
            save_workspace(
                entries,
                session.active_name(),
                session.kept(),
                report=_report(),
                workspace_id=ws,
            )
        )
        tmp.replace(path)
        ss[_SAVED] = marks
    except (OSError, ValueError) as err:  # a full or read-only disk: the session goes on
        logging.getLogger("judgescope").warning("workspace autosave failed: %s", err)
        session.note(
            f"Autosave failed ({ui.safe(err, 200)}); save the workspace file from the sidebar."
        )


def autosave_settings() -> None:
    """Write the kept settings beside the autosaved workspace when they changed (cheap:
    JSON only), so that a refresh finds the settings of every page, not only the URL's;
    and the report's views when they changed (:func:`autosave_report`)."""
    ws = workspace_id()
    if not ws:
        return
    autosave_report(ws)
    values = clean_settings(session.kept())
    values["app.active"] = session.active_name()
    if st.session_state.get(_SETTINGS) == values:
        return
    try:
        path = folder() / f"{ws}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(values))
        tmp.replace(path)
        st.session_state[_SETTINGS] = values
    except (OSError, TypeError, ValueError) as err:
        logging.getLogger("judgescope").warning("settings autosave failed: %s", err)


def autosave_report(ws: str) -> None:
    """Write the report's views to ``<id>.report.json`` when they changed."""
    registry = st.session_state.get(ui.REPORT, {})
    mark = report_store.signature(registry)
    if st.session_state.get(_REPORT) == mark:
        return
    try:
        report = _report(registry)
        path = folder() / f"{ws}.report.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(report, allow_nan=False, separators=(",", ":")))
        tmp.replace(path)
        st.session_state[_REPORT] = mark
    except (OSError, TypeError, ValueError) as err:
        logging.getLogger("judgescope").warning("report autosave failed: %s", err)


def _saved_json(path: Path, limit: int):
    """A JSON file autosaved beside a workspace, read within bounds (None when there is
    none, or it is too large or unreadable)."""
    try:
        if path.stat().st_size > limit:
            return None
        return parse_json(path.read_bytes(), path.name, WorkspaceLimits())
    except (OSError, DataError):
        return None


def _saved_settings(ws: str) -> dict:
    """The settings autosaved beside workspace ``ws`` (empty when none or unreadable)."""
    values = _saved_json(folder() / f"{ws}.json", MAX_MANIFEST_BYTES)
    return clean_settings(values) if isinstance(values, dict) else {}


def _load_refs(loaded: dict) -> tuple[dict[str, Dataset], list[str]]:
    """Benchmarks stored by name loaded again (the server's shared copies)."""
    out, problems = {}, []
    for name, item in loaded.items():
        if isinstance(item, BenchmarkRef):
            try:
                out[name] = (
                    session.demo()
                    if item.benchmark == session.DEMO
                    else session.load_benchmark(item.benchmark)
                )
            except Exception as err:  # missing files offline
                problems.append(f"benchmark {item.benchmark!r} could not be loaded: {err}")
        else:
            out[name] = item
    return out, problems


def apply(
    loaded: dict,
    settings: dict,
    label: str,
    *,
    report: dict | None = None,
    workspace_id: str | None = None,
) -> list[str]:
    """Add the workspace's datasets (renamed on a clash), its settings and its report's
    views; the problems.

    A link waiting for its workspace file (:data:`PENDING_LINK`) whose ``ws=`` is this
    file's id gives the session that id, when the session has none yet and no workspace of
    that id is saved on this machine: the autosave goes under it, so the link works here
    from now on.
    """
    datasets, problems = _load_refs(loaded)
    renamed = {}
    current = session.datasets()
    for name, ds in datasets.items():
        new = name
        if new in current and current[new] is not ds:
            new = f"{name} ({label})"
        renamed[name] = new
        if current.get(new) is not ds:
            session.register(new, ds, activate=False)
    for key, value in settings.items():
        if key != "app.active":
            session.put(key, value)
    active = renamed.get(settings.get("app.active"))
    if active in session.datasets():
        st.session_state[session.ACTIVE] = active
    try:
        report_store.restore(report, renamed)
    except Exception:  # the report is a convenience: the datasets are open
        logging.getLogger("judgescope").exception("restoring the report's views failed")
    pending = st.session_state.get(PENDING_LINK) or {}
    if (
        workspace_id is not None
        and pending.get("ws") == workspace_id
        and WS not in st.session_state
        and valid_id(workspace_id)
        and not (folder() / f"{workspace_id}.zip").exists()
    ):
        st.session_state[WS] = workspace_id
    st.session_state.pop(_SAVED, None)  # saved again with its settings and active dataset
    st.session_state.pop(_REPORT, None)
    autosave()
    return problems


def restore_from_url(seed: dict) -> str | None:
    """A new session opened with ``ws=<id>``: load that autosaved workspace.

    Returns the link's workspace id when it is well formed but not saved on this machine
    (the link's data then needs the workspace file it came from: :mod:`pages.shell.url`
    says so once, with the dataset it names), else None. A malformed ``ws=`` is noted.
    """
    ws = seed.pop("ws", None)
    if not ws:
        return None
    if not valid_id(ws):
        session.note(
            f"Link: ws='{ui.safe(ws, 40)}' is not a workspace id (12 hexadecimal digits); ignored."
        )
        return None
    path = folder() / f"{ws}.zip"
    if not path.is_file():
        return ws
    try:
        opened = read_workspace(path.read_bytes(), path.name)
        st.session_state[WS] = ws
        settings = {**opened.settings, **_saved_settings(ws)}  # saved after the datasets
        newer = _saved_json(folder() / f"{ws}.report.json", MAX_REPORT_BYTES)
        report = newer if isinstance(newer, dict) else opened.report
        for problem in apply(opened.datasets, settings, "saved", report=report):
            session.note(f"Link: {ui.safe(problem, 200)}")
    except Exception as err:  # DataError, or anything else: the page still opens
        if not isinstance(err, DataError):
            logging.getLogger("judgescope").exception("restoring workspace %s failed", ws)
        session.note(
            f"Link: the autosaved workspace {path.name} cannot be read: {ui.safe(err, 200)}"
        )
    return None


def _open_file(content: bytes, name: str) -> Workspace | None:
    """The workspace file read, or None with its message shown (nothing is changed): the
    sidebar runs before every page, so no error may escape it."""
    try:
        return read_workspace(content, name)
    except DataError as err:  # nothing loaded is lost: the session is unchanged
        ui.show_error(err, what=f"Could not open {name}")
    except Exception as err:  # a reader's bug must not take every page down
        logging.getLogger("judgescope").exception("opening workspace %s failed", name)
        ui.show_error(err, what=f"Could not open {name}")
    return None


def sidebar_section() -> None:
    """Save the workspace to a file, or open one (in the sidebar)."""
    with st.sidebar.expander("Workspace", icon=":material/save:"):
        entries = _entries()
        uploads = [n for n, v in entries.items() if isinstance(v, Dataset)]
        st.caption(
            f"{len(entries)} dataset(s), the active one and the settings of every page, in "
            "one file. Benchmarks are stored by name and loaded again from the data folder."
        )
        if uploads and workspace_id():
            st.caption(
                f"Uploads and judge runs ({ui.listed(uploads, 10)}) are also autosaved on this "
                "machine: a refresh of this page brings them back."
            )
        snapshot = (entries, session.active_name(), session.kept())
        registry, names, ws = st.session_state.get(ui.REPORT, {}), list(entries), workspace_id()
        st.download_button(
            "Save workspace",
            data=lambda: save_workspace(
                *snapshot, report=_report(registry, names), workspace_id=ws
            ),
            file_name="judgescope-workspace.zip",
            mime="application/zip",
            key="app.ws.save",
            icon=":material/download:",
            on_click="ignore",
        )
        file = st.file_uploader("Open a workspace file", type=["zip"], key="app.ws.file")
        if file is not None and st.button("Open", key="app.ws.open"):
            opened = _open_file(file.getvalue(), file.name)
            if opened is not None:
                problems = apply(
                    opened.datasets,
                    opened.settings,
                    Path(file.name).stem,
                    report=opened.report,
                    workspace_id=opened.workspace_id,
                )
                st.session_state[_OPENED] = (
                    f"Opened {ui.safe(file.name)}: {len(opened.datasets)} dataset(s)."
                    + "".join(f" {ui.safe(p, 200)}." for p in problems)
                )
                st.rerun()
        opened = st.session_state.get(_OPENED)
        if opened:
            st.caption(opened)
