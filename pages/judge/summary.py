"""The Judge page's summary of the last run: calls cached, new, answered by another run on
the same store, failed (by reason) and still in progress, with the run's warnings and notes.
``last`` is ``JudgeJob.take_result()``'s summary (``judge.runs.runners.RunResult.summary()``)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pages.judge import PAGE
from pages.shell import ui


def render(last: dict) -> None:
    """The last run: calls cached, new, answered by another run, failed by reason."""
    if "error" in last:
        st.error(f"The run stopped: {ui.safe(last['error'], 1000)}")
        return
    msg = (
        f"**{ui.safe(last['judge'])}**: {last['n_calls']:,} model calls — "
        f"{last['n_cached']:,} cached "
        f"(reused from the run store, not sent again), {last['n_called']:,} new"
    )
    if last["n_by_others"]:
        msg += (
            f", {last['n_by_others']:,} answered by another run on the same store (waited "
            "for, not paid twice)"
        )
    msg += ". " + (
        f"{last['n_rows']:,} outputs added to **{ui.safe(last['dataset'])}** (now active)."
        if last["dataset"]
        else "No outputs to add."
    )
    if last["cancelled"]:
        msg = "Cancelled — " + msg
        if last["n_in_progress"]:
            msg += f" {last['n_in_progress']:,} calls were still being made by another run."
    (st.warning if last["cancelled"] else st.success)(msg)
    if last["n_failed"]:
        reasons = ", ".join(f"{code}: {n:,}" for code, n in last["failures"].items())
        st.warning(
            f"{last['n_failed']:,} model calls failed ({reasons}). Their outputs have no value "
            "and the reason in the raw answer; run again to ask them again."
        )
    for warning in last["warnings"]:
        st.warning(ui.safe(warning, 500))
    for note in last["notes"]:
        st.caption(ui.safe(note, 500))
    # the report gets one flat row (no store path: it names a folder of this machine)
    hidden = ("notes", "warnings", "failures", "store")
    row = {k: v for k, v in last.items() if k not in hidden}
    row["failures"] = ", ".join(f"{code}: {n}" for code, n in last["failures"].items())
    ui.remember(PAGE, "Last judge run", data=pd.DataFrame([row]))
