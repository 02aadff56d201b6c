"""Reproduce: the papers' published numbers beside the numbers JudgeScope computes (issue 12).

For the active benchmark's papers, the table of ``data.reproduce`` (published, computed, the
difference, why they differ), each row linking to the page and settings that show the
number, and a published-vs-computed plot. Both are registered for the report.
"""

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from data.reproduce import PAPERS, papers_for
from pages.services import reproduce as svc
from pages.shell import state, ui

PAGE = "Reproduce"

st.title("Reproduce the papers")
st.caption(
    "The numbers the papers publish beside the ones this app computes from the same data, "
    "with the paper's settings (for HANNA: the 10 generators, the human-written story left "
    "out; the LLM ratings as published; Kendall's tau-b). Each row links to the page that "
    "shows the number. Rows without a published number run the paper's analysis on the "
    "data we have; their note says which."
)

active = state.active_name()
mine = papers_for(active)
if not mine:
    st.info(
        f"No paper is reproduced on **{ui.safe(active)}**: the papers use HANNA (Chhun et al. "
        "2024, "
        "Chiang & Lee 2023), SummEval (Liusie et al. 2024), TopicalChat (Chiang & Lee) and "
        "LLMBar (Zeng et al. 2024: the authors' statistics of every released judge). "
        "Load one of those on the **Data** page, or pick a paper below: its numbers come "
        "from the benchmark files in the data folder."
    )
if mine:
    paper = ui.select(
        "Paper",
        mine,
        key="reproduce.paper",
        format_func=lambda k: PAPERS[k].title,
    )
else:
    # nothing chosen yet: a paper's numbers come from its benchmark files (seconds, with
    # compiled kernels on a fresh install), so the page computes one only when asked
    paper = st.selectbox(
        "Paper",
        list(PAPERS),
        index=None,
        key="reproduce.paper",
        format_func=lambda k: PAPERS[k].title,
        placeholder="Pick a paper to reproduce from the data folder's files",
    )
    if paper is None:
        st.stop()

with ui.guard("Reproducing the paper"):
    table = svc.reproduction(paper)
    ui.settings(PAGE, {"dataset": active, "paper": paper})
    counts = table["status"].value_counts()
    cols = st.columns(4)
    for col, status in zip(cols, ["ok", "noted", "off", "unpublished"], strict=True):
        col.metric(svc.STATUS_LABELS[status].capitalize(), int(counts.get(status, 0)))

    refs = list(dict.fromkeys(table["ref"]))
    chosen = st.multiselect("Figures and tables", refs, default=refs, key="reproduce.refs")
    shown = table[table["ref"].isin(chosen)]
    if st.toggle("Only rows with a published number", key="reproduce.published_only"):
        shown = shown[shown["published"].notna()]

    plain = shown[
        ["ref", "quantity", "published", "computed", "abs_diff", "status", "note", "link"]
    ].reset_index(drop=True)

    def _colour(rec: pd.Series) -> list[str]:
        return [f"background-color: {svc.STATUS_COLOURS.get(rec['status'], '')}"] * len(rec)

    title = f"{paper}: published vs computed"
    st.dataframe(
        plain.style.apply(_colour, axis=1).format(
            {c: "{:.3f}" for c in ("published", "computed", "abs_diff")}, na_rep=""
        ),
        hide_index=True,
        column_config={
            "link": st.column_config.LinkColumn("Open", display_text="open ↗"),
            "quantity": st.column_config.TextColumn("Quantity", width="large"),
            "note": st.column_config.TextColumn("Note", width="large"),
        },
    )
    st.caption(
        " · ".join(f"**{s}**: {svc.STATUS_LABELS[s]}" for s in svc.STATUS_COLOURS)
        + ". Tolerance: .006 for two-decimal numbers; a bound (≤, ≥) passes on its side."
    )
    ui.remember(PAGE, title, data=plain)
    ui.table(plain, title, page=PAGE, show=False)

    both = shown[shown["published"].notna() & shown["computed"].notna()]
    if len(both):
        fig = go.Figure()
        for status, part in both.groupby("status", sort=False):
            fig.add_trace(
                go.Scatter(
                    x=part["published"],
                    y=part["computed"],
                    mode="markers",
                    name=svc.STATUS_LABELS.get(status, status),
                    marker=dict(
                        color=svc.STATUS_COLOURS.get(status),
                        size=9,
                        line=dict(color="#555", width=1),
                    ),
                    text=part["ref"] + ": " + part["quantity"],
                    hovertemplate="%{text}<br>published %{x:.3f}<br>computed %{y:.3f}"
                    "<extra></extra>",
                )
            )
        lo = float(min(both["published"].min(), both["computed"].min()))
        hi = float(max(both["published"].max(), both["computed"].max()))
        fig.add_trace(
            go.Scatter(
                x=[lo, hi],
                y=[lo, hi],
                mode="lines",
                name="y = x",
                line=dict(color="#888", dash="dash"),
            )
        )
        fig.update_layout(xaxis_title="published", yaxis_title="computed")
        ui.figure(
            fig,
            f"{paper}: computed against published",
            page=PAGE,
            data=both[["ref", "quantity", "published", "computed", "status"]],
        )
    else:
        st.info("None of the rows shown has both a published and a computed number to plot.")
