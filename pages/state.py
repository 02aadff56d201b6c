"""Session state shared by the pages: the loaded datasets and which one is active.

Keys are namespaced ``app.*``; each page keeps its own widgets under its own prefix.
Benchmarks are loaded once per server (``st.cache_resource``) and treated as read-only.
"""

from __future__ import annotations

import streamlit as st

import data
from data.schema import Dataset

DATASETS = "app.datasets"
ACTIVE = "app.active"
DEMO = "demo"


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
    if activate:
        st.session_state[ACTIVE] = name


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
