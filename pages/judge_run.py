"""Judge: run an LLM judge over the active dataset, or import published judge outputs, and
read its raw answers with the unparsable ones highlighted.

This script takes in a finished run and shows its summary; each tab lives in its own module
under ``pages/judge_page/``."""

import pandas as pd
import streamlit as st

from pages import state, ui
from pages.judge_page import JOB, LAST, PAGE, import_tab, outputs_tab, run_tab

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
        new_name, merged, summary = job.take_result()
        if merged is not None:
            state.add(new_name, merged)
            job.merged_into = new_name
            # the raw outputs tab opens again on its defaults: this run's answers
            st.session_state.pop(f"{PAGE}.raw_table", None)
            st.session_state.pop(f"{PAGE}.raw_judge", None)
        st.session_state[LAST] = summary
        st.rerun()

last = st.session_state.get(LAST)
if last and last.get("dataset") and last["dataset"] != name:
    last = None  # another dataset is active now: the note about the run would mislead
if last and "error" in last:
    st.error(f"The run stopped: {last['error']}")
elif last:
    msg = (
        f"**{last['judge']}**: {last['n_calls']:,} model calls — {last['n_cached']:,} cached "
        f"(reused from the run store, not sent again), {last['n_called']:,} new. "
    )
    msg += (
        f"{last['n_rows']:,} outputs added to **{last['dataset']}** (now active)."
        if last["dataset"]
        else "No outputs to add."
    )
    (st.warning if last["cancelled"] else st.success)(
        ("Cancelled — " if last["cancelled"] else "") + msg
    )
    for note in last["notes"]:
        st.caption(note)
    ui.remember(
        PAGE, "Last judge run", data=pd.DataFrame([{k: v for k, v in last.items() if k != "notes"}])
    )

run, raw, imports = st.tabs(["Run a judge", "Raw outputs", "Import judge outputs"])
with run:
    run_tab.render(ds, name)
with raw:
    outputs_tab.render(ds, name, last)
with imports:
    import_tab.render(ds, name)
