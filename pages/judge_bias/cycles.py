"""Transitivity: circular triads per context, the worst cycles (openable), zeta and the
disagreement of the judge with its own Bradley–Terry fit."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from pages.judge_bias import PAGE, Choice, needs_verdicts
from pages.services import judge_bias as svc
from pages.services.common import fmt, mean_finite
from pages.shell import example_link, ui


def metrics(per_context, pooled: dict) -> None:
    cols = st.columns(4)
    with cols[0]:
        ui.metric(
            "Circular triads",
            f"{pooled['total_circular']} / {pooled['total_triads']}",
            "triads whose majority preferences go round in a circle, of the triads checked "
            "(three pairs compared, no tie)",
            page=PAGE,
        )
    with cols[1]:
        ui.metric(
            "Contexts with a cycle",
            f"{int((per_context['n_circular'] > 0).sum())} / {len(per_context)}",
            "contexts whose majority preferences have at least one circular triad",
            page=PAGE,
        )
    with cols[2]:
        ui.metric(
            "Coefficient of consistence (zeta)",
            fmt(mean_finite(per_context["zeta"])),
            "Kendall–Babington Smith, mean over complete tournaments without ties: 1 = "
            "transitive, 0 = as many cycles as possible",
            page=PAGE,
        )
    with cols[3]:
        ui.metric(
            "Disagreement with its own BT fit",
            fmt(pooled["bt_disagreement"]),
            "share of the judge's comparisons whose verdict goes against the order of its "
            "own Bradley–Terry scores in that context (ties 1/2)",
            page=PAGE,
        )


def worst(choice: Choice, table) -> None:
    st.markdown("##### The worst cycles")
    st.caption(
        "Strength: the weakest of the three majority preferences of the cycle (|m − 0.5|); "
        "the strongest cycles first. **Open** shows the context on the Examples page."
    )
    widths = [3, 5, 2, 1]
    header = st.columns(widths)
    for col, name in zip(header, ["context", "cycle", "strength", ""], strict=True):
        col.markdown(f"**{name}**")
    for n, row in enumerate(table.head(10).itertuples(index=False)):
        cols = st.columns(widths)
        cols[0].markdown(ui.safe(row.context_id), help=ui.whole(row.context_id))
        i, j, k = (ui.safe(c, 30) for c in (row.i, row.j, row.k))
        cols[1].markdown(f"{i} ≻ {j} ≻ {k} ≻ {i}")
        cols[2].write(fmt(row.strength))
        if cols[3].button("Open", key=f"judge_bias.open.{n}"):
            example_link.open_example(
                dataset=choice.dataset,
                attribute=choice.attribute,
                judge=choice.judge.judge,
                context_id=str(row.context_id),
            )
    ui.table(table, "The worst cycles", page=PAGE, show=False)


def show(choice: Choice) -> None:
    st.subheader("Transitivity")
    if needs_verdicts(choice, "Circular triads"):
        return
    per_context, pooled = svc.cycles_summary(choice.ds, choice.attribute, choice.judge.judge)
    if pooled["total_triads"] == 0:
        st.info(
            "No triad was compared in all three of its pairs (without a tie), so circular "
            "triads cannot be counted: the judge never compared three candidates of one "
            "context with each other. SummEval's ChatGPT verdicts, for instance, compare "
            "adjacent systems only — no triangles."
        )
        metrics(per_context, pooled)
        return
    metrics(per_context, pooled)
    if pooled["total_circular"] > 0:
        counts = per_context["n_circular"].value_counts().sort_index()
        hist = px.bar(x=counts.index, y=counts.to_numpy(), color_discrete_sequence=[ui.PALETTE[3]])
        hist.update_layout(
            xaxis_title="circular triads in the context",
            yaxis_title="contexts",
            xaxis=dict(dtick=1),
            height=320,
        )
        ui.figure(hist, "Circular triads per context", page=PAGE, data=per_context)
    table = svc.worst_cycles(choice.ds, choice.attribute, choice.judge.judge)
    if len(table):
        worst(choice, table)
    else:
        st.caption("No circular triad: the judge's majority preferences are transitive.")
