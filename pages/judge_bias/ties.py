"""Ties: how often the judge ties by quality gap, and whether its ties hold in both orders."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from pages.judge_bias import PAGE, Choice, rating_metric
from pages.services import judge_bias as svc
from pages.services.common import fmt
from pages.shell import ui


def show(choice: Choice) -> None:
    st.subheader("Ties")
    if not choice.pairwise:
        ratings(choice)
        return
    summary = svc.profile_summary(choice.ds, choice.attribute, choice.judge.judge)
    left, right = st.columns(2)
    with left:
        ui.metric(
            "Tie rate",
            fmt(summary.get("tie_rate")),
            "share of the judge's verdicts that are ties (or p = 0.5); "
            + svc.interval(summary.get("tie_rate_low"), summary.get("tie_rate_high")),
            page=PAGE,
        )
    with right:
        ui.metric(
            "Tie symmetry",
            fmt(summary.get("tie_symmetry")),
            "P(tie in the other order | tie in one order), over pairs judged in both orders "
            "with a tie; 1 = a tie is a tie whichever candidate comes first",
            page=PAGE,
        )
    never = not svc.finite(summary.get("tie_rate")) or float(summary["tie_rate"]) == 0.0
    if not never and not svc.finite(summary.get("tie_symmetry")):
        st.info(
            "Tie symmetry is not available: "
            + ui.safe(
                svc.reason(
                    summary.get("reasons"),
                    "tie_symmetry",
                    "no pair judged in both orders has a tie",
                ),
                300,
            )
            + "."
        )
    if never:
        st.caption("This judge never ties, so there is no tie rate by gap to show.")
        return
    by_gap = svc.profile_by_gap(
        choice.ds,
        choice.attribute,
        choice.judge.judge,
        st.session_state.get("judge_bias.n_bins", 5),
    )
    if not len(by_gap):
        return
    fig = go.Figure(
        go.Bar(
            x=[
                f"{lo:.3g}–{hi:.3g}"
                for lo, hi in zip(by_gap["gap_low"], by_gap["gap_high"], strict=True)
            ],
            y=by_gap["tie_rate"],
            marker_color=ui.PALETTE[2],
            error_y=dict(
                type="data",
                symmetric=False,
                array=by_gap["tie_rate_high"] - by_gap["tie_rate"],
                arrayminus=by_gap["tie_rate"] - by_gap["tie_rate_low"],
            ),
            customdata=by_gap[["n"]],
            hovertemplate="gap %{x}<br>tie rate %{y:.3f}<br>pairs %{customdata[0]}<extra></extra>",
        )
    )
    fig.update_layout(
        xaxis_title=f"quality gap ({summary.get('gap_source') or 'gap'})",
        yaxis_title="tie rate",
        yaxis_range=[0, 1],
        height=360,
    )
    ui.figure(fig, "Tie rate by quality gap", page=PAGE, data=by_gap)


def ratings(choice: Choice) -> None:
    """A ratings judge: a tie is the same score for both candidates."""
    rating_metric(
        choice,
        "Tie rate",
        "tie_rate",
        "share of the judge's sample pairs that give both candidates the same score, mean "
        "over {n_tie} pairs of candidates",
    )
    st.caption(
        "Tie symmetry needs pairwise verdicts in both orders: a ratings judge scores each "
        "candidate on its own, so its ties have no order."
    )
