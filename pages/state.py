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
    with st.sidebar:
        st.selectbox(
            "Dataset",
            names,
            index=names.index(active_name()),
            key="app.switch",
            on_change=lambda: st.session_state.__setitem__(ACTIVE, st.session_state["app.switch"]),
            help="Every page analyses this dataset. Load more on the Data page.",
        )
        ds = active()
        c = ds.counts()
        st.caption(
            f"{c['n_contexts']} contexts · {c['candidates']} candidates · "
            f"{c['human_scores']} human scores · {c['comparisons']} comparisons · "
            f"{c['ratings']} judge ratings"
        )
