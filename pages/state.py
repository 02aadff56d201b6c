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
VERSIONS = "app.versions"
DEMO = "demo"

# Server-wide token per live Dataset object: cached results are keyed by it, so two sessions
# that load the same (cache_resource'd) benchmark share them, and two uploads that happen to
# have the same file name never do. Weak references: a dead object's id may be reused.
_tokens: dict[int, tuple[weakref.ref, str]] = {}
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
    versions = st.session_state.setdefault(VERSIONS, {})
    versions[name] = versions.get(name, 0) + 1


def _token(ds: Dataset) -> str:
    with _tokens_lock:
        entry = _tokens.get(id(ds))
        if entry is not None and entry[0]() is ds:
            return entry[1]
        for k in [k for k, (ref, _) in _tokens.items() if ref() is None]:
            del _tokens[k]
        token = uuid.uuid4().hex[:12]
        _tokens[id(ds)] = (weakref.ref(ds), token)
        return token


def key(name: str | None = None) -> str:
    """A string that identifies the content of a dataset (default: the active one).

    It changes when another dataset becomes active, when a dataset is (re)added under a
    name and after :func:`changed`; the cached service layer keys its results by it.
    """
    name = active_name() if name is None else name
    version = st.session_state.get(VERSIONS, {}).get(name, 0)
    return f"{name}|{_token(datasets()[name])}|{version}"


def active_name() -> str:
    datasets()
    name = st.session_state.get(ACTIVE, DEMO)
    return name if name in st.session_state[DATASETS] else DEMO


def active() -> Dataset:
    return datasets()[active_name()]


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
