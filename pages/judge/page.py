"""Judge: run an LLM judge over the active dataset, or import published judge outputs, and
read its raw answers with the unparsable ones highlighted.

This script takes in a finished run and shows its summary (``pages/judge/summary.py``);
each tab lives in its own module under ``pages/judge/``."""

import streamlit as st

from pages.judge import (
    JOB,
    LAST,
    RAW_GEN,
    import_tab,
    jury_tab,
    outputs_tab,
    run_tab,
    summary,
)
from pages.services import judge as svc
from pages.shell import state, ui

st.title("Judge")
st.markdown(
    "Run an LLM judge over the candidates of the active dataset — pairwise (both presentation "
    "orders kept) or absolute (Likert) — or import judge outputs. Answers are kept in a run "
    "store, so a run that stops can be started again and only the missing calls are made."
)
ds = state.active()
name = state.active_name()

# ------------------------------------------------------------------ a finished run comes in
job = st.session_state.get(JOB)
if job is not None and job.finished and job.merged_into is None:
    job.merged_into = ""  # handled, whatever happens below
    with ui.guard("Adding the judge outputs"):
        # runs of several judges on one dataset add up in its judged copy (a short name)
        judged = state.datasets().get(svc.judged_name(job.source_name))
        into = judged if judged is not None and judged is not job.source else None
        new_name, merged, outcome = job.take_result(into=into)
        if merged is not None:
            state.add(new_name, merged)
            job.merged_into = new_name
            # the raw outputs tab opens on this run's answers: new widgets (a browser keeps
            # the old ones' choice), see outputs_tab
            st.session_state[RAW_GEN] = st.session_state.get(RAW_GEN, 0) + 1
        st.session_state[LAST] = outcome
        st.rerun()


last = st.session_state.get(LAST)
if last and last.get("dataset") and last["dataset"] != name:
    last = None  # another dataset is active now: the note about the run would mislead
if last:
    summary.render(last)

run, raw, imports, jury = st.tabs(
    ["Run a judge", "Raw outputs", "Import judge outputs", "Build a jury"]
)
with run:
    run_tab.render(ds, name)
with raw:
    outputs_tab.render(ds, name, last)
with imports:
    import_tab.render(ds, name)
with jury:
    jury_tab.render(ds, name)
