"""Session state shared by the pages: the loaded datasets and which one is active.

Keys are namespaced ``app.*``; each page keeps its own widgets under its own prefix.
Benchmarks are loaded once per server (``st.cache_resource``) and treated as read-only.
Kept settings (:func:`keep`) survive page visits; their mirror in the URL's query
parameters (links, refreshes) lives in :mod:`pages.state_url`, re-exported here.
"""

from __future__ import annotations

import threading
import uuid
import weakref
from collections.abc import Callable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.state import get_session_state

import data
from data.schema import Dataset
from pages.state_url import (  # noqa: F401  (public names re-exported)
    _NOTES,
    _SEED,
    SHARED_URL,
    _first_run,
    _seed_key,
    _url_keys,
    debias_modes,
    note,
    url_params,
    write_url,
)

DATASETS = "app.datasets"
ACTIVE = "app.active"
DEMO = "demo"

# Server-wide [weak reference, token, revision] per live Dataset object, by id: cached results are
# keyed by token and revision (:func:`token`), so two sessions that load the same
# (cache_resource'd) benchmark share them, two uploads that happen to have the same file name
# never do, and :func:`changed` drops them. Weak references: a dead object's id may be reused.
# (A WeakKeyDictionary would need Dataset to be hashable, which a mutable dataclass is not.)
_tokens: dict[int, list] = {}
_tokens_lock = threading.Lock()


# Datasets shared by every session of this server (the cached benchmarks and the demo), by
# id: [weak reference, source name]. The workspace file names them instead of copying them.
_shared: dict[int, tuple[weakref.ref, str]] = {}


def _mark_shared(ds: Dataset, source: str) -> Dataset:
    with _tokens_lock:
        _shared[id(ds)] = (weakref.ref(ds), source)
    return ds


def shared_source(ds: Dataset) -> str | None:
    """ "demo" or the benchmark name when ``ds`` is the server's unchanged copy; else None."""
    with _tokens_lock:
        entry = _shared.get(id(ds))
    return entry[1] if entry is not None and entry[0]() is ds else None


@st.cache_resource(show_spinner="Loading benchmark…")
def load_benchmark(name: str) -> Dataset:
    return _mark_shared(data.load_benchmark(name), name)


@st.cache_resource(show_spinner=False)
def demo() -> Dataset:
    return _mark_shared(data.demo_dataset(), DEMO)


def datasets() -> dict[str, Dataset]:
    if get_script_run_ctx(suppress_warning=True) is not None:
        sync()  # every page asks for the datasets: the run's kept settings are saved first
    if DATASETS not in st.session_state:
        st.session_state[DATASETS] = {DEMO: demo()}
        st.session_state[ACTIVE] = DEMO
    return st.session_state[DATASETS]


def add(name: str, ds: Dataset, *, activate: bool = True) -> None:
    """Register ``ds`` under ``name`` (replacing an older one of that name)."""
    datasets()[name] = ds
    if activate:
        st.session_state[ACTIVE] = name
    changed(name)


def changed(name: str) -> None:
    """Say that the dataset ``name`` was modified in place, so cached results are dropped."""
    from pages import workspace

    ds = datasets()[name]
    with _tokens_lock:
        _entry(ds)[2] += 1
    workspace.autosave()  # an upload or a judge run survives a refresh


def _entry(ds: Dataset) -> list:
    """[weak reference, token, revision] of ``ds``, made on first use (hold the lock)."""
    entry = _tokens.get(id(ds))
    if entry is not None and entry[0]() is ds:
        return entry
    for k in [k for k, (ref, _, _) in _tokens.items() if ref() is None]:
        del _tokens[k]
    entry = [weakref.ref(ds), uuid.uuid4().hex[:12], 0]
    _tokens[id(ds)] = entry
    return entry


def token(ds: Dataset) -> str:
    """A short string that identifies the object ``ds`` and its revision.

    The service layer's caches hash a :class:`Dataset` argument by it
    (``hash_funcs={Dataset: token}``): the same object gives the same string in every
    session (no table is hashed), another object (a new upload, a reloaded file) another
    one, and :func:`changed` gives a new revision. Needs no Streamlit session, so tests and
    benchmarks call the cached services with a plain :class:`Dataset`.
    """
    with _tokens_lock:
        _, tok, revision = _entry(ds)
    return f"{tok}.{revision}"


def active_name() -> str:
    datasets()
    name = st.session_state.get(ACTIVE, DEMO)
    return name if name in st.session_state[DATASETS] else DEMO


def active() -> Dataset:
    return datasets()[active_name()]


# ------------------------------------------------------------------ kept settings
#: key -> last value of every kept setting (:func:`keep`), the truth between pages.
_KEPT = "app.kept"
_DRAWN, _DRAWN_LAST = "app.kept.drawn", "app.kept.drawn_last"
_RUN = "app.kept.run"  # the run sync() last ran in
_PAGE = "app.kept.page"  # the page of the last run


def _scope():
    from pages import scope  # the scope builds on this module

    return scope


def analysed() -> Dataset:
    """The active dataset as the analysis pages see it: the systems left out in the
    sidebar's Analysis scope set aside, the chosen reading of the judge ratings applied
    (``data.analysis_view``); the same object while the scope and dataset stay the same."""
    return _scope().analysed()


def scope_settings() -> dict:
    """The analysis scope for a page's report settings (``ui.settings``)."""
    return _scope().settings()


def scope_caption() -> None:
    """One caption line on an analysis page: what is left out, which reading is in use."""
    _scope().caption()


def _run_token() -> object:
    """An object that lives exactly as long as the current script run."""
    ctx = get_script_run_ctx(suppress_warning=True)
    return None if ctx is None else ctx.parallel_coordinator


def _page() -> str:
    ctx = get_script_run_ctx(suppress_warning=True)
    return "" if ctx is None else str(ctx.page_script_hash)


def _set_by_page(key: str) -> bool:
    """Whether code of this run (or a callback before it) wrote ``key`` to session state."""
    try:
        return get_session_state().is_new_state_value(key)
    except Exception:  # no runtime (plain python): nothing was written
        return False


def keep(key: str, url: str | None = None, parse: Callable[[str], object] = str) -> str:
    """Give back ``key`` after making sure its widget shows the setting's last value.

    Streamlit forgets a widget's value when a run does not draw it (another page is open).
    A page names the widget ``key=state.keep("app.attribute")`` and the value survives
    visits elsewhere; a key used by several pages (``app.attribute``, ``app.judge``,
    ``app.debias.*``) is one setting for all of them. ``url`` mirrors the setting to that
    query parameter (a refresh or a shared link brings it back; ``parse`` turns the text
    back into a value and raises ValueError on a bad one).

    When the widget was not drawn in the previous run (on this page), its kept value is
    written to session state before the widget is drawn: the browser then shows it.
    A widget given a default value as well makes Streamlit warn ("created with a default
    value but also had its value set via the Session State API"): pass the default as
    :func:`initial` gives it, after calling ``keep``::

        key = state.keep("judge.model")
        st.text_input("Model", state.initial(key, "gpt-4o-mini"), key=key)
    """
    if url is not None:
        _url_keys[key] = (url, parse)
    sync()
    ss = st.session_state
    kept_values = ss.setdefault(_KEPT, {})
    _seed_key(key, kept_values)
    drawn = ss.setdefault(_DRAWN, set())
    if _set_by_page(key) or (key in ss.get(_DRAWN_LAST, set()) and key in ss):
        # chosen by the page (or a link) this run, or the live widget of the last run on
        # this page: its value is this run's, the one to keep
        kept_values[key] = ss[key]
    elif key in kept_values and key not in drawn:
        ss[key] = kept_values[key]
    drawn.add(key)
    return key


def initial(key: str, default):
    """The default to give the widget ``key`` (after :func:`keep`): None when its value was
    set through session state this run (restored, or set by the page), else ``default``.

    Streamlit warns about a widget that has both; with None it has only the kept value.
    """
    return None if _set_by_page(key) else default


def put(key: str, value) -> None:
    """Set a kept setting from code (a button, a loaded workspace), drawn or not this run."""
    ss = st.session_state
    ss.setdefault(_KEPT, {})[key] = value
    for name in (_DRAWN, _DRAWN_LAST):
        ss.setdefault(name, set()).discard(key)  # the widget takes it when next drawn


def kept() -> dict:
    """A copy of every kept setting (for the workspace file), current values first."""
    ss = st.session_state
    out = dict(ss.get(_KEPT, {}))
    for key in ss.get(_DRAWN, set()):
        if key in ss:
            out[key] = ss[key]
    return out


def sync() -> None:
    """Save the values of the kept widgets drawn in the last run; once per run.

    app.py calls it first thing; :func:`keep` calls it too, for runs that start at a page
    (AppTest's page runs).
    """
    ss = st.session_state
    run = _run_token()
    if run is not None and ss.get(_RUN) is run:
        return
    ss[_RUN] = run
    if _SEED not in ss:
        _first_run()
    # Values are kept when their widget is drawn (keep), never read here: on a page change
    # the browser sends no widget states and Streamlit's fallback values are stale.
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is not None and getattr(ctx, "fragment_ids_this_run", None):
        # a fragment's rerun draws only its own widgets: the page's others still live
        ss[_DRAWN_LAST] = set(ss.get(_DRAWN, set()))
    else:
        ss[_DRAWN_LAST], ss[_DRAWN] = ss.get(_DRAWN, set()), set()
    page = _page()
    if ss.get(_PAGE) != page:  # another page: its widgets are new ones (ids hash the page)
        ss[_PAGE], ss[_DRAWN_LAST] = page, set()
    write_url()


def sidebar() -> None:
    """The dataset switcher shown on every page."""
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
        _scope().sidebar_section(ds, active_name())
        for text in st.session_state.pop(_NOTES, []):
            st.info(text, icon=":material/link:")
    from pages import workspace

    workspace.sidebar_section()
