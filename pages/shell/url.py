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
    """A new session: open what the query parameters name (dataset, workspace, settings)."""
    seed = {k: st.query_params.get(k) for k in st.query_params}
    st.session_state[session._SEED] = seed
    workspace.restore_from_url(seed)
    name = seed.pop("dataset", None)
    if name:
        _open_from_url(name)
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
    for key in session.SHARED_URL:
        session.seed_key(key, kept_values)


def seeded() -> bool:
    """Whether this session's first run has read the link (:func:`first_run`)."""
    return session._SEED in st.session_state


def _open_from_url(name: str) -> None:
    if name in session.datasets():
        st.session_state[session.ACTIVE] = name
        return
    if name in {b.name for b in data.list_benchmarks()}:
        try:
            session.register(name, session.load_benchmark(name))
        except Exception as err:  # missing files offline: say so, keep the demo
            session.note(
                f"Link: benchmark **{ui.safe(name)}** could not be loaded "
                f"({ui.safe(err, 200)}); showing the demo."
            )
        return
    session.note(
        f"Link: dataset **{ui.safe(name)}** was an upload of another session and cannot come "
        "back from the link alone; open its workspace file (sidebar, Workspace)."
    )


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
