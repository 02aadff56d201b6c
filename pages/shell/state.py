"""What the pages call for the session: the datasets, the active one, kept settings, the
analysed view, and the frame every run draws (:func:`sync` first, :func:`sidebar`).

The top of the shell: it builds on :mod:`~pages.shell.session` (datasets and kept settings,
re-exported here), :mod:`~pages.shell.scope` (the analysis scope),
:mod:`~pages.shell.workspace` (autosave) and :mod:`~pages.shell.url` (links); none of those
imports this module. Pages write ``state.keep(...)``, ``state.active()``, ``state.add(...)``.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from data.schema import Dataset
from pages.shell import scope, session, tokens, ui, url, workspace
from pages.shell.session import (  # noqa: F401  (public names re-exported)
    ACTIVE,
    DEMO,
    SHARED_URL,
    active,
    active_name,
    debias_modes,
    demo,
    initial,
    kept,
    load_benchmark,
    note,
    put,
    shared_source,
)
from pages.shell.tokens import token  # noqa: F401  (re-exported)
from pages.shell.url import url_params, write_url  # noqa: F401  (re-exported)


def sync() -> None:
    """Once per run, first thing (app.py calls it; :func:`keep` and :func:`datasets` too, for
    runs of a fragment): on a new session open what the link names, turn over the drawn
    widgets, mirror the settings to the URL."""
    if not session.new_run():
        return
    if not url.seeded():
        url.first_run()
    url.resume_link()  # a link whose workspace file was just opened
    write_url()


def datasets() -> dict[str, Dataset]:
    if get_script_run_ctx(suppress_warning=True) is not None:
        sync()  # every page asks for the datasets: the run's kept settings are saved first
    return session.datasets()


def keep(key: str, url: str | None = None, parse: Callable[[str], object] = str) -> str:
    """:func:`pages.shell.session.keep` (a widget that shows its setting's last value, kept
    across pages and mirrored to the URL parameter ``url``), after this run's :func:`sync`."""
    sync()
    return session.keep(key, url, parse)


def add(name: str, ds: Dataset, *, activate: bool = True) -> None:
    """Register ``ds`` under ``name`` (replacing an older one of that name) and autosave."""
    session.register(name, ds, activate=activate)
    workspace.autosave()  # an upload or a judge run survives a refresh


def changed(name: str) -> None:
    """Say that the dataset ``name`` was modified in place, so cached results are dropped."""
    tokens.bump(session.datasets()[name])
    workspace.autosave()


def analysed() -> Dataset:
    """The active dataset as the analysis pages see it: the systems left out in the
    sidebar's Analysis scope set aside, the chosen reading of the judge ratings applied
    (``data.scope.analysis_view``); the same object while the scope and dataset stay the same."""
    return scope.analysed()


def scope_settings() -> dict:
    """The analysis scope for a page's report settings (``ui.settings``)."""
    return scope.settings()


def scope_caption() -> None:
    """One caption line on an analysis page: what is left out, which reading is in use."""
    scope.caption()


def sidebar() -> None:
    """The dataset switcher shown on every page, the analysis scope, link notes, the
    workspace."""
    names = list(datasets())
    current = active_name()
    with st.sidebar:
        # The key carries the active name so that a dataset activated elsewhere (Data page)
        # shows here at once; the widget's own choice is copied back to the state.
        choice = st.selectbox(
            "Dataset",
            names,
            index=names.index(current),
            key=f"app.switch.{current}",
            format_func=ui.short,  # a name from a file or a link: one line, cut
            help="Every page analyses this dataset. Load more on the Data page.",
        )
        if choice != current:
            st.session_state[ACTIVE] = choice
            st.rerun()
        ds = active()
        c = ds.counts()
        st.caption(
            f"{c['n_contexts']} contexts · {c['candidates']} candidates · "
            f"{c['human_scores']} human scores · {c['comparisons']} comparisons · "
            f"{c['ratings']} judge ratings"
        )
        scope.sidebar_section(ds, active_name())
        for text in session.take_notes():
            st.info(text, icon=":material/link:")
    workspace.sidebar_section()
