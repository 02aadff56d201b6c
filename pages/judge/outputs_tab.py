"""The Judge page's "Raw outputs" tab: a judge's answers as they came, the unparsed ones
counted by reason and highlighted."""

from __future__ import annotations

import streamlit as st

from data.schema import Dataset
from pages.judge import JOB, PAGE, RAW_GEN
from pages.services import judge_outputs
from pages.shell import ui

#: rows shown in the table (the CSV download has them all)
LIMIT = 1000


def render(ds: Dataset, name: str, last: dict | None) -> None:
    """``last``: the summary of the last run on this dataset, whose judge is shown first."""
    tables = [t for t in ("comparisons", "ratings") if len(ds.table(t))]
    if not tables:
        st.info(f"**{ui.safe(name)}** has no judge outputs yet: run a judge or import outputs.")
        return
    last_judge = last.get("judge") if last and "judge" in last else None
    gen = st.session_state.get(RAW_GEN, 0)  # new widgets after each run: its judge shown
    first = last["table"] if last_judge and last.get("table") in tables else tables[0]
    table = st.radio(
        "Table", tables, index=tables.index(first), horizontal=True, key=f"{PAGE}.raw_table.{gen}"
    )
    rows = ds.table(table)
    judges = sorted(rows["judge"].astype(str).unique())
    pick = ui.select(
        "Judge",
        judges,
        key=f"{PAGE}.raw_judge.{gen}",
        index=judges.index(last_judge) if last_judge in judges else 0,
    )
    job = st.session_state.get(JOB)
    template = job.template if job is not None and last_judge == pick else None
    with ui.guard("Reading the raw outputs"):
        rows = judge_outputs.outputs_with_failures(
            rows[rows["judge"].astype(str) == pick], table, template
        )
        counts = judge_outputs.failure_counts(rows)
        n_failed = int(counts["n_outputs"].sum()) if len(counts) else 0
        r1, r2 = st.columns(2)
        with r1:
            ui.metric("Outputs", f"{len(rows):,}", "answers of this judge in the table")
        with r2:
            ui.metric(
                "Unparsed",
                f"{n_failed:,} ({n_failed / max(len(rows), 1):.1%})",
                "answers without a usable value (NaN, never a default score)",
            )
        if len(counts):
            ui.table(counts, f"Unparsed answers of {pick} by reason", page=PAGE, hide_index=True)
        only = st.checkbox("Only failures", key=f"{PAGE}.only_failures")
        shown = rows[rows["failure"] != ""] if only else rows
        if len(shown) > LIMIT:
            st.caption(f"First {LIMIT:,} of {len(shown):,} rows; the CSV has them all.")
        st.dataframe(
            shown.head(LIMIT).style.apply(
                lambda r: ["background-color: #f6d5c3" if r["failure"] else ""] * len(r), axis=1
            ),
            hide_index=True,
        )
        ui.table(shown, f"Raw outputs of {pick}", page=PAGE, show=False)
