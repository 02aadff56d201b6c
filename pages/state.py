"""Session state shared by the pages: the loaded datasets and which one is active.

Keys are namespaced ``app.*``; each page keeps its own widgets under its own prefix.
Benchmarks are loaded once per server (``st.cache_resource``) and treated as read-only.
"""

from __future__ import annotations

import threading
import uuid
import weakref

import streamlit as st

import data
from data.schema import Dataset

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


@st.cache_resource(show_spinner="Loading benchmark…")
def load_benchmark(name: str) -> Dataset:
    return data.load_benchmark(name)


@st.cache_resource(show_spinner=False)
def demo() -> Dataset:
    return data.demo_dataset()


def datasets() -> dict[str, Dataset]:
    if DATASETS not in st.session_state:
        st.session_state[DATASETS] = {DEMO: demo()}
        st.session_state[ACTIVE] = DEMO
    return st.session_state[DATASETS]


def add(name: str, ds: Dataset, *, activate: bool = True) -> None:
    """Register ``ds`` under ``name`` (replacing an older one of that name)."""
    datasets()[name] = ds
    changed(name)
    if activate:
        st.session_state[ACTIVE] = name


def changed(name: str) -> None:
    """Say that the dataset ``name`` was modified in place, so cached results are dropped."""
    ds = datasets()[name]
    with _tokens_lock:
        _entry(ds)[2] += 1


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


#: Widget keys whose value outlives the page that shows the widget (see :func:`keep`).
_KEPT = "app.kept"


def keep(key: str) -> str:
    """Give back ``key`` after restoring the widget's last value.

    Streamlit forgets a widget's value when a run does not draw it (another page is open).
    A page that wants a setting to survive a visit elsewhere names the widget with
    ``key=state.keep("app.attribute")``: the value is restored before the widget is drawn
    and saved again by :func:`sync` at the start of the next run. A key shared by several
    pages (``app.attribute``, ``app.judge``, ``app.debias.*``) is one setting for all of them.
    """
    kept = st.session_state.setdefault(_KEPT, {})
    if key not in st.session_state and key in kept:
        st.session_state[key] = kept[key]
    kept.setdefault(key, st.session_state.get(key))
    return key


def sync() -> None:
    """Save the values of the kept widgets (call once per run, before the page runs)."""
    kept = st.session_state.setdefault(_KEPT, {})
    for key in list(kept):
        if key in st.session_state:
            kept[key] = st.session_state[key]


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
