"""The URL side of the session: a link opens what its query parameters name, and the
query parameters follow the settings.

A link (or a refresh) opens the dataset, the workspace and the kept settings it names
(:func:`first_run`, once per session); :func:`write_url` mirrors the state back on every
run. :data:`pages.shell.session.SHARED_URL` names the parameter of each setting shared by
every page; a page's own keys join through ``keep(key, url=...)``. What a link asked for and
could not get becomes a note (:func:`pages.shell.session.note`), shown once in the sidebar.
"""

from __future__ import annotations

import logging

import streamlit as st

import data
from pages.shell import scope, session, ui, workspace


def first_run() -> None:
    """A new session: open what the query parameters name (dataset, workspace, settings).

    A link to data uploaded in another session (its dataset is neither here, nor in the
    autosaved workspace it names, nor a benchmark) gets one note: it needs the workspace
    file it came from. Its other parameters wait for that file (``workspace.PENDING_LINK``,
    :func:`resume_link`) instead of being checked against the demo shown meanwhile. A link
    whose dataset is here opens without a word about a workspace it does not need.
    """
    seed = {k: st.query_params.get(k) for k in st.query_params}
    st.session_state[session._SEED] = seed
    missing_ws = workspace.restore_from_url(seed)
    name = seed.pop("dataset", None)
    if name and not _open_from_url(name):
        scratch: dict = {}
        for key in ("app.debias.mode", "app.debias.tau", "app.reading"):
            param, text = session.SHARED_URL[key], seed.get(session.SHARED_URL[key])
            session.seed_key(key, scratch)  # a malformed value is noted now (and dropped)
            if key in scratch:
                seed[param] = text  # a good one waits with the others
        st.session_state[workspace.PENDING_LINK] = {
            "dataset": name,
            "ws": missing_ws,
            "params": dict(seed),
        }
        seed.clear()
        where = f" (its workspace {missing_ws} is not saved on this machine)" if missing_ws else ""
        session.note(
            f"Link: **{ui.safe(name)}** was uploaded in another session{where}; open the "
            "workspace file it came from (sidebar, Workspace) and the link opens it, with "
            "its settings."
        )
    _apply_seed(seed)


def resume_link() -> None:
    """A link waiting for its workspace file (:func:`first_run`): once a file brought the
    dataset it names, open that dataset and apply the link's parameters (they win over the
    file's settings), as a link opened on the saving machine would."""
    pending = st.session_state.get(workspace.PENDING_LINK)
    if not pending or pending.get("dataset") not in session.datasets():
        return
    del st.session_state[workspace.PENDING_LINK]
    st.session_state[session.ACTIVE] = pending["dataset"]
    seed = st.session_state.setdefault(session._SEED, {})
    seed.update(pending.get("params") or {})
    _apply_seed(seed, later=True)


def _apply_seed(seed: dict, *, later: bool = False) -> None:
    """Check the link's attribute, judge and systems against the active dataset (a note for
    each it lacks) and keep the shared settings it names; ``later``: after the first run,
    so the widgets already drawn take them too."""
    ds = session.active()
    attrs, judges = set(ds.attributes), set(ds.judges)
    for key, valid in (("app.attribute", attrs), ("app.judge", judges)):
        param = session.SHARED_URL[key]
        text = seed.get(param)
        if text is not None and text not in valid:
            seed.pop(param)
            session.note(
                f"Link: {param} '{ui.safe(text)}' is not in "
                f"**{ui.safe(session.active_name())}**; ignored."
            )
    scope.check_link(ds, session.active_name(), seed)
    kept_values = st.session_state.setdefault(session._KEPT, {})
    for key, param in session.SHARED_URL.items():
        named = param in seed
        session.seed_key(key, kept_values)
        if later and named and key in kept_values:
            session.put(key, kept_values[key])


def seeded() -> bool:
    """Whether this session's first run has read the link (:func:`first_run`)."""
    return session._SEED in st.session_state


def _open_from_url(name: str) -> bool:
    """Open the dataset a link names; False when it is an upload of another session."""
    if name in session.datasets():
        st.session_state[session.ACTIVE] = name
        return True
    if name in {b.name for b in data.list_benchmarks()}:
        try:
            session.register(name, session.load_benchmark(name))
        except Exception as err:  # missing files offline: say so, keep the demo
            session.note(
                f"Link: benchmark **{ui.safe(name)}** could not be loaded "
                f"({ui.safe(err, 200)}); showing the demo."
            )
        return True
    return False


def url_params() -> dict[str, str]:
    """The query parameters of the current state: dataset, ws and the kept settings."""
    params = {"dataset": session.active_name()}
    ws = workspace.workspace_id()
    if ws:
        params["ws"] = ws
    values = session.kept()
    for key in session.url_keys():
        named = session.url_name(key)
        if key in values and values[key] is not None and named is not None:
            value = values[key]
            if isinstance(value, float):
                params[named[0]] = f"{value:g}"
            elif isinstance(value, (list, tuple)):  # exclude=Human,GPT-2
                params[named[0]] = ",".join(map(str, value))
            else:
                params[named[0]] = str(value)
    seed = st.session_state.get(session._SEED) or {}
    for name, text in seed.items():  # a page not visited yet keeps its parameters
        params.setdefault(name, text)
    return params


def write_url() -> None:
    """Mirror the state to the query parameters (only the ones that changed)."""
    workspace.autosave_settings()
    try:
        wanted = url_params()
        for name, text in wanted.items():
            if st.query_params.get(name) != text:
                st.query_params[name] = text
    except Exception as err:  # the URL is a convenience: never break a page for it
        logging.getLogger("judgescope").warning("query parameters not written: %s", err)
