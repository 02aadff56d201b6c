"""The Data page's view of the active dataset: counts, what each table holds, one context."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from data.natural import natural_sorted
from data.overview import both_orders_share, human_verdicts, table_summary
from data.schema import Dataset
from pages.shell import ui

PAGE = "data"


def _orders_line(share: float) -> str:
    if math.isnan(share):
        return "pairwise judge outputs"
    if share >= 1:
        return "pairwise judge outputs, both presentation orders kept"
    if share <= 0:
        return "pairwise judge outputs, one presentation order per pair"
    return f"pairwise judge outputs; {share:.0%} of the pairs judged in both orders"


def metrics(ds: Dataset) -> None:
    """The headline counts; human verdicts in place of human scores when that is what it has."""
    counts = ds.counts()
    n_verdicts, n_humans = human_verdicts(ds.comparisons)
    if counts["human_scores"] == 0 and n_verdicts:
        human = ("Human verdicts", n_verdicts, f"pairwise verdicts of {n_humans} human judge(s)")
    else:
        human = (
            "Human scores",
            counts["human_scores"],
            "one row per annotator, attribute and candidate",
        )
    cells = [
        ("Contexts", counts["n_contexts"], "documents, prompts or dialogues judged"),
        ("Candidates", counts["candidates"], "texts to compare within a context"),
        human,
        ("Comparisons", counts["comparisons"], _orders_line(both_orders_share(ds.comparisons))),
        ("Judge ratings", counts["ratings"], "absolute (Likert) judge outputs, one row per sample"),
    ]
    for col, (label, value, help_line) in zip(st.columns(5), cells, strict=True):
        with col:
            ui.metric(label, f"{value:,}", help_line)


def render(ds: Dataset, name: str) -> None:
    st.header(f"Loaded: {ui.safe(name)}")
    if ds.description:
        st.caption(ui.safe(ds.description, None))
    metrics(ds)
    summary = table_summary(ds)
    if len(summary):
        st.dataframe(summary, hide_index=True)
    if len(ds.candidates):
        left, right = st.columns(2)
        ctx_ids = natural_sorted(ds.candidates["context_id"].unique())
        cid = left.selectbox("Context", ctx_ids, key=f"{PAGE}.ctx", format_func=ui.short)
        text = ds.contexts.loc[ds.contexts["context_id"] == cid, "text"]
        left.text_area(
            "Context text",
            text.iloc[0] if len(text) else "(no text)",
            height=300,
            disabled=True,
            key=f"{PAGE}.ctx_text.{cid}",
        )
        cands = ds.candidates[ds.candidates["context_id"] == cid].drop(columns=["context_id"])
        order = natural_sorted(cands["candidate_id"])
        cands = cands.set_index("candidate_id").loc[order].reset_index()
        right.dataframe(cands, hide_index=True, height=300)
        if len(ds.human_scores):
            hs = ds.human_scores[ds.human_scores["context_id"] == cid]
            mean = hs.pivot_table(
                index="candidate_id", columns="attribute", values="score", aggfunc="mean"
            )
            mean = mean.reindex([c for c in order if c in mean.index])
            st.subheader("Human scores (mean over annotators) in this context")
            st.dataframe(mean.round(2))
    with st.expander("Tables"):
        for table in ("contexts", "candidates", "human_scores", "comparisons", "ratings"):
            t: pd.DataFrame = ds.table(table)
            st.markdown(f"**{table}** — {len(t):,} rows")
            st.dataframe(t.head(200), hide_index=True)
