"""Data: pick a benchmark, upload a file, or use the demo; see what is loaded."""

import streamlit as st

import data
from pages.data import loaded
from pages.data import upload as upload_tab
from pages.shell import state, ui

PAGE = "data"

st.title("JudgeScope")
st.markdown(
    "Explore how LLM judges behave: pairwise probabilities, rankings, position bias, comparison "
    "budgets and agreement with human raters. Load data below, then pick a page on the left."
)

pick, upload = st.tabs(["Benchmark or demo", "Upload a file"])

with pick:
    infos = data.list_benchmarks()
    labels = {"demo": "Demo (simulated judge, offline)"} | {b.name: b.title for b in infos}
    choice = st.selectbox("Dataset", list(labels), format_func=labels.get, key=f"{PAGE}.benchmark")
    info = next((b for b in infos if b.name == choice), None)
    st.caption(info.description if info else "A small simulated set with a position-biased judge.")
    if st.button("Load", key=f"{PAGE}.load", type="primary"):
        with ui.guard(f"Loading {labels[choice]}"):
            ds = state.demo() if choice == "demo" else state.load_benchmark(choice)
            state.add(choice, ds)
            st.rerun()

with upload:
    upload_tab.render()

loaded.render(state.active(), state.active_name())
