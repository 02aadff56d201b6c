"""Calibration beyond one threshold: the methods side by side, the reliability diagram of a
human-label method, and a button that makes a calibration the debiasing of every page."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from pages.judge_bias import PAGE, Choice, needs_verdicts
from pages.services import bias as bias_svc
from pages.services import judge_bias as svc
from pages.shell import debias, state, ui

#: Columns of the side-by-side table, as shown.
SHOWN = {
    "label": "method",
    "first_win_rate": "first-position win rate",
    "swap_consistency": "swap consistency",
    "pairwise_accuracy": "pairwise accuracy",
    "spearman": "Spearman",
    "ece": "ECE",
    "contexts_reordered": "contexts reordered",
}
#: Methods whose map is fitted to human labels (a reliability diagram to show).
HUMAN_METHODS = {"isotonic": "isotonic", "platt": "Platt"}
#: Calibrations the shared debias setting offers.
SHARED = ("swap", "isotonic")


def bars(table) -> None:
    ok = table[table["available"].astype(bool)]
    fig = go.Figure(
        [
            go.Bar(x=ok["label"], y=ok[column], name=name, marker_color=colour)
            for column, name, colour in (
                ("pairwise_accuracy", "pairwise accuracy", ui.PALETTE[0]),
                ("spearman", "Spearman", ui.PALETTE[2]),
            )
            if ok[column].map(svc.finite).any()
        ]
    )
    fig.update_layout(
        barmode="group",
        yaxis_title="against the humans",
        yaxis_range=[0, 1],
        height=360,
        legend=dict(orientation="h", y=1.1),
    )
    ui.figure(fig, "Accuracy and Spearman per calibration method", page=PAGE, data=ok)


def diagram(choice: Choice, table) -> None:
    human = table[table["method"].isin(list(HUMAN_METHODS)) & table["available"].astype(bool)]
    if not len(human):
        why = table.loc[table["method"] == "isotonic", "reason"]
        st.info(
            "No reliability diagram: calibration against humans is not available ("
            + (ui.safe(why.iloc[0], 300) if len(why) and why.iloc[0] else "no human labels")
            + ")."
        )
        return
    method = st.radio(
        "Reliability diagram of",
        list(human["method"]),
        format_func=HUMAN_METHODS.get,
        horizontal=True,
        key="judge_bias.reliability",
    )
    frame = svc.reliability_frame(choice.ds, choice.attribute, choice.judge.judge, method)
    fig = ui.reliability_figure("perfectly calibrated", "black")
    for stage, colour in (("before", ui.PALETTE[1]), ("after", ui.PALETTE[0])):
        rows = frame[frame["stage"] == stage]
        fig.add_trace(
            go.Scatter(
                x=rows["mean_p"],
                y=rows["mean_y"],
                name=stage,
                # markers only: a bin of a few cells is noisy, and a line through the
                # bins would draw that noise as a zig-zag; the marker's area says how many
                mode="markers",
                marker=dict(
                    color=colour,
                    size=6 + 18 * np.sqrt(rows["count"] / max(frame["count"].max(), 1)),
                ),
                customdata=rows[["count"]],
                hovertemplate="p %{x:.2f} → humans %{y:.2f}<br>%{customdata[0]} cells<extra>"
                + stage
                + "</extra>",
            )
        )
    fig.update_layout(
        xaxis_title="judge's P(first wins)",
        yaxis_title="share the humans prefer",
        xaxis_range=[0, 1],
        yaxis_range=[0, 1],
        height=420,
    )
    ui.figure(fig, "Reliability diagram before and after calibration", page=PAGE, data=frame)


def use_everywhere(table) -> None:
    offered = [m for m in SHARED if m in bias_svc.DEBIAS_MODES]
    available = set(table.loc[table["available"].astype(bool), "method"])
    if not offered:
        st.caption("The shared debias setting does not offer calibrations yet.")
        return
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    with left:
        usable = [m for m in offered if m in available]
        method = st.radio(
            "Calibration for every page",
            offered,
            index=offered.index(usable[0]) if usable else 0,
            format_func=bias_svc.DEBIAS_MODES.get,
            horizontal=True,
            key="judge_bias.shared",
        )
    with right:
        st.button(
            "Use on every page",
            key="judge_bias.use",
            on_click=state.put,
            args=(debias.MODE, method),
            disabled=method not in available,
            help="Rankings, Leaderboard, budgets and agreement then rank with this calibration "
            "(the shared debias setting, also on the Position bias page).",
        )
    current = st.session_state.get(debias.MODE, state.kept().get(debias.MODE, "off"))
    st.caption(
        f"Debiasing in use on every page: **{bias_svc.DEBIAS_MODES.get(current, current)}**."
    )
    if method not in available:
        why = table.loc[table["method"] == method, "reason"]
        st.info(
            f"{bias_svc.DEBIAS_MODES[method]} is not available for this judge: "
            + (ui.safe(why.iloc[0], 300) if len(why) else "nothing to fit")
            + "."
        )


def show(choice: Choice) -> None:
    st.subheader("Calibration")
    if needs_verdicts(choice, "Calibrating P(first wins)"):
        return
    table = svc.calibration_table(choice.ds, choice.attribute, choice.judge.judge)
    shown = table[list(SHOWN)].rename(columns=SHOWN)
    ui.table(shown.round(4), "Calibration methods side by side", page=PAGE, hide_index=True)
    gone = table[~table["available"].astype(bool)]
    if len(gone):
        st.caption(" ".join(f"**{r.label}**: {ui.safe(r.reason, 300)}." for r in gone.itertuples()))
    with ui.guard("Drawing the accuracy per method"):
        bars(table)
    with ui.guard("Drawing the reliability diagram"):
        diagram(choice, table)
    use_everywhere(table)
