"""The workspace: every dataset of the session and its settings, saved to one file and
opened again (sidebar), and autosaved on this machine so that a refresh brings uploads back.

Uploads and judged copies live in the browser session only. As soon as the session has one,
the whole workspace is written to ``<cache>/workspaces/<id>.zip`` (``data.paths
.user_cache_dir``; ``JUDGESCOPE_CACHE`` moves it) and the random id goes into the URL as
``ws=``: a refresh, or the link opened on this machine, loads it again. API keys are never
kept in settings, so they never reach the file (:func:`data.io.workspace.clean_settings`).
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from pathlib import Path

import streamlit as st

from data.io.workspace import BenchmarkRef, clean_settings, load_workspace, save_workspace
from data.paths import user_cache_dir
from data.schema import DataError, Dataset
from pages.shell import session, ui
from pages.shell.tokens import token

WS = "app.ws"  # this session's workspace id (only once it has something to autosave)
_SAVED = "app.ws.saved"  # what the last autosave held (names and revisions)
_OPENED = "app.ws.opened"  # note of the last file opened
_SETTINGS = "app.ws.settings"  # the settings last autosaved
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


def workspace_bytes() -> bytes:
    """The session as a workspace file (datasets, active one, kept settings)."""
    return save_workspace(_entries(), session.active_name(), session.kept())


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
        tmp.write_bytes(save_workspace(entries, session.active_name(), session.kept()))
        tmp.replace(path)
        ss[_SAVED] = marks
    except (OSError, ValueError) as err:  # a full or read-only disk: the session goes on
        logging.getLogger("judgescope").warning("workspace autosave failed: %s", err)
        session.note(
            f"Autosave failed ({ui.safe(err, 200)}); save the workspace file from the sidebar."
        )


def autosave_settings() -> None:
    """Write the kept settings beside the autosaved workspace when they changed (cheap:
    JSON only), so that a refresh finds the settings of every page, not only the URL's."""
    ws = workspace_id()
    if not ws:
        return
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


def _saved_settings(ws: str) -> dict:
    """The settings autosaved beside workspace ``ws`` (empty when none or unreadable)."""
    try:
        values = json.loads((folder() / f"{ws}.json").read_text())
    except (OSError, ValueError):
        return {}
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


def apply(loaded: dict, settings: dict, label: str) -> list[str]:
    """Add the workspace's datasets (renamed on a clash) and its settings; the problems."""
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
    st.session_state.pop(_SAVED, None)  # saved again with its settings and active dataset
    autosave()
    return problems


def restore_from_url(seed: dict) -> None:
    """A new session opened with ``ws=<id>``: load that autosaved workspace."""
    ws = seed.pop("ws", None)
    if not ws:
        return
    path = folder() / f"{ws}.zip" if valid_id(ws) else None
    if path is None or not path.is_file():
        session.note(
            f"Link: workspace '{ui.safe(ws, 40)}' is not saved on this machine; uploads of "
            "that session cannot come back. Open its workspace file (sidebar, Workspace)."
        )
        return
    try:
        loaded, settings = load_workspace(path.read_bytes(), path.name)
    except DataError as err:
        session.note(
            f"Link: the autosaved workspace {path.name} cannot be read: {ui.safe(err, 200)}"
        )
        return
    st.session_state[WS] = ws
    settings.update(_saved_settings(ws))  # the settings saved after the datasets
    for problem in apply(loaded, settings, "saved"):
        session.note(f"Link: {ui.safe(problem, 200)}")


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
        st.download_button(
            "Save workspace",
            data=lambda: save_workspace(*snapshot),
            file_name="judgescope-workspace.zip",
            mime="application/zip",
            key="app.ws.save",
            icon=":material/download:",
            on_click="ignore",
        )
        file = st.file_uploader("Open a workspace file", type=["zip"], key="app.ws.file")
        if file is not None and st.button("Open", key="app.ws.open"):
            try:
                loaded, settings = load_workspace(file.getvalue(), file.name)
            except DataError as err:  # nothing loaded is lost: the session is unchanged
                ui.show_error(err, what=f"Could not open {file.name}")
            else:
                problems = apply(loaded, settings, Path(file.name).stem)
                st.session_state[_OPENED] = (
                    f"Opened {ui.safe(file.name)}: {len(loaded)} dataset(s)."
                    + "".join(f" {ui.safe(p, 200)}." for p in problems)
                )
                st.rerun()
        opened = st.session_state.get(_OPENED)
        if opened:
            st.caption(opened)
