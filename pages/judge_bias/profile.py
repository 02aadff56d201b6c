"""The position-bias profile: overall cards, then the bias against the quality gap."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from pages.judge_bias import PAGE, Choice, needs_verdicts, rating_metric
from pages.services import judge_bias as svc
from pages.services.common import fmt
from pages.shell import ui

#: (column, name, colour) of the lines against the gap.
LINES = [
    ("consistency", "position consistency", ui.PALETTE[0]),
    ("first_win_rate", "first-position win rate", ui.PALETTE[1]),
    ("tie_rate", "tie rate", ui.PALETTE[2]),
]

CARDS = [
    (
        "repetition_stability",
        "Repetition stability",
        "share of a judge's repeated samples of one ordered pair that give its usual "
        "verdict (1 = always the same)",
    ),
    (
        "consistency",
        "Position consistency",
        "share of pairs judged in both orders with the same winner either way",
    ),
    (
        "fairness",
        "Preference fairness",
        "Shi et al.'s normalised primacy/recency preference: < 0 favours the first slot, "
        "> 0 the second, 0 fair",
    ),
    (
        "first_win_rate",
        "First-position win rate",
        "share of judgements the first slot wins (ties count 1/2); 0.5 = balanced",
    ),
]


def cards(summary: dict) -> None:
    """The overall numbers; an undefined one says why instead of showing n/a alone."""
    cols = st.columns(len(CARDS))
    missing = []
    for col, (field, label, help_line) in zip(cols, CARDS, strict=True):
        value = summary.get(field)
        with col:
            bounds = svc.interval(summary.get(f"{field}_low"), summary.get(f"{field}_high"))
            ui.metric(label, fmt(value), f"{help_line}; {bounds}", page=PAGE)
        if not svc.finite(value):
            why = svc.reason(summary.get("reasons"), field, "nothing to measure")
            missing.append(f"**{label}** is not available: {ui.safe(why, 300)}.")
    if missing:
        st.info("\n\n".join(missing))
    st.caption(
        f"{int(summary.get('n_pairs') or 0)} pairs judged, "
        f"{int(summary.get('n_both') or 0)} of them in both orders."
    )


def gap_figure(by_gap, gap_source: str) -> go.Figure:
    fig = go.Figure()
    for column, name, colour in LINES:
        if not by_gap[column].map(svc.finite).any():
            continue
        fig.add_trace(
            go.Scatter(
                x=by_gap["gap"],
                y=by_gap[column],
                name=name,
                mode="lines+markers",
                line=dict(color=colour),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=by_gap[f"{column}_high"] - by_gap[column],
                    arrayminus=by_gap[column] - by_gap[f"{column}_low"],
                ),
                customdata=by_gap[["n", "n_both"]],
                hovertemplate="gap %{x:.3f}<br>%{y:.3f}<br>pairs %{customdata[0]}, both "
                "orders %{customdata[1]}<extra>" + name + "</extra>",
            )
        )
    ui.unbiased_line(fig, "unbiased first-position win rate (0.5)", "bottom right")
    fig.update_layout(
        xaxis_title=f"quality gap ({gap_source}; bin median)",
        yaxis_title="share",
        yaxis_range=[0, 1.05],
        height=420,
        legend=dict(orientation="h", y=1.12),
    )
    return fig


def show(choice: Choice) -> None:
    st.subheader("Position-bias profile")
    if needs_verdicts(
        choice,
        "Position consistency, preference fairness and the first-"
        "position win rate (the bias against the quality gap)",
    ):
        stability(choice)
        return
    summary = svc.profile_summary(choice.ds, choice.attribute, choice.judge.judge)
    cards(summary)
    st.markdown("##### Bias against the quality gap")
    n_bins = st.slider(
        "Gap bins",
        2,
        10,
        5,
        key="judge_bias.n_bins",
        help="Quantile bins of the gap between the two candidates (merged when edges repeat).",
    )
    by_gap = svc.profile_by_gap(choice.ds, choice.attribute, choice.judge.judge, n_bins)
    gap_source = str(summary.get("gap_source") or "quality gap")
    if not len(by_gap):
        st.info(
            "No pair has a quality gap (no human scores or verdicts, and no Bradley–Terry "
            "score of the judge), so the bias cannot be shown against it."
        )
        return
    ui.figure(
        gap_figure(by_gap, gap_source),
        "Position consistency, first-position win rate and ties against the quality gap",
        page=PAGE,
        data=by_gap,
    )
    column = "consistency" if by_gap["consistency"].map(svc.finite).any() else None
    verdict = (
        svc.gap_trend(by_gap, column)
        if column
        else "it cannot be checked here: no pair was judged in both orders"
    )
    st.caption(
        "Shi et al. (2024, *Judging the Judges*) find that position bias grows as the "
        f"quality gap between the two candidates shrinks; {verdict}. Gap: "
        f"{ui.safe(gap_source, 200)}."
    )


def stability(choice: Choice) -> None:
    """A ratings judge: repetition stability of its sample pairs (``rating_pairs``)."""
    rating_metric(
        choice,
        "Repetition stability",
        "repetition_stability",
        "per pair of candidates, the share of the judge's sample pairs that order them as "
        "its usual verdict does; mean over {n_stable} pairs",
    )
