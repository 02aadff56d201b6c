"""Length and style bias: P(prefers the longer) against humans, the style coefficients,
rankings with and without the style effect, and the length-controlled win rate."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from pages.judge_bias import PAGE, Choice, needs_systems, needs_texts, needs_verdicts
from pages.services import judge_bias as svc
from pages.shell import ui


def _errors(df, value: str, low: str = "low", high: str = "high") -> dict:
    return dict(
        type="data", symmetric=False, array=df[high] - df[value], arrayminus=df[value] - df[low]
    )


def longer(choice: Choice) -> None:
    table = svc.length_preference(
        choice.ds, choice.attribute, choice.judge.judge, choice.judge.prompt_id
    )
    shown = table[table["p_longer"].map(svc.finite)]
    if not len(shown):
        st.info(
            "No pair of candidates of different lengths was judged, so there is no length preference to show."
        )
        return
    fig = go.Figure(
        go.Bar(
            x=shown["source"],
            y=shown["p_longer"],
            marker_color=[
                ui.PALETTE[0] if s == "judge" else ui.PALETTE[2] for s in shown["source"]
            ],
            error_y=_errors(shown, "p_longer"),
            customdata=shown[["n_pairs"]],
            hovertemplate="%{x}: %{y:.3f}<br>pairs %{customdata[0]}<extra></extra>",
        )
    )
    fig.add_hline(y=0.5, line_dash="dash", line_color="black", annotation_text="no preference")
    fig.update_layout(yaxis_title="P(prefers the longer)", yaxis_range=[0, 1], height=340)
    ui.figure(fig, "P(prefers the longer candidate): judge and humans", page=PAGE, data=table)
    if not choice.pairwise:
        st.caption(
            "A ratings judge scores each candidate alone: its bar is P(it rates the longer "
            "of two candidates higher) over pairs of its samples, a tie counting one half."
        )
    if "humans" not in set(shown["source"]):
        st.caption("No human preference for these pairs: the judge is shown alone.")


def coefficients(choice: Choice) -> None:
    table, notes = svc.style_coefficients(choice.ds, choice.attribute, choice.judge.judge)
    fig = go.Figure(
        go.Scatter(
            x=table["coef"],
            y=table["term"],
            mode="markers",
            marker=dict(size=10, color=ui.PALETTE[0]),
            error_x=_errors(table, "coef"),
            hovertemplate="%{y}: %{x:.3f}<extra></extra>",
        )
    )
    fig.add_vline(x=0.0, line_dash="dash", line_color="black")
    fig.update_layout(
        xaxis_title="effect on the log-odds of winning (95% interval)",
        yaxis=dict(autorange="reversed"),
        height=320,
    )
    ui.figure(fig, "Style coefficients: what moves the judge beyond quality", page=PAGE, data=table)
    st.caption(
        "The Chatbot Arena style control: a Bradley–Terry fit over the systems with "
        "covariates, a constant for the first slot and the normalised differences "
        "(a − b) / (a + b) of words, headers, list items and bold spans. A coefficient whose "
        "interval misses 0 is a bias the systems' quality does not explain."
    )
    missing = table.loc[~table["coef"].map(svc.finite), "term"].tolist()
    if missing:
        st.caption(
            f"Not estimated: {', '.join(missing)} — "
            + ("; ".join(ui.safe(n, 300) for n in notes) or "nothing to identify them")
            + " (texts without any markdown give no such effect)."
        )


def ranking(choice: Choice) -> None:
    table = svc.style_ranking(choice.ds, choice.attribute, choice.judge.judge)
    if not len(table):
        st.info("The candidates have no systems, so there is no system ranking to control.")
        return
    table = table.sort_values("score_controlled")
    fig = go.Figure()
    for _, row in table.iterrows():
        fig.add_trace(
            go.Scatter(
                x=[row["score_plain"], row["score_controlled"]],
                y=[row["system"]] * 2,
                mode="lines",
                line=dict(color="#bbbbbb", width=3),
                showlegend=False,
                hoverinfo="skip",
            )
        )
    for column, name, colour in (
        ("score_plain", "plain Bradley–Terry", ui.PALETTE[1]),
        ("score_controlled", "style-controlled", ui.PALETTE[0]),
    ):
        rank = "rank_plain" if column == "score_plain" else "rank_controlled"
        ui.dot_series(
            fig,
            table,
            "system",
            column,
            name,
            customdata=table[[rank]],
            hovertemplate="%{y}: %{x:.3f} (rank %{customdata[0]})<extra>" + name + "</extra>",
            size=11,
            color=colour,
        )
    fig.update_layout(
        xaxis_title="system score (Bradley–Terry log-strength)",
        height=max(320, 26 * len(table) + 140),
        legend=dict(orientation="h", y=1.08),
    )
    ui.figure(fig, "System ranking, plain and style-controlled", page=PAGE, data=table)
    moved = int((table["rank_plain"] != table["rank_controlled"]).sum())
    st.caption(f"{moved} of {len(table)} systems change rank once length and style are controlled.")


def length_controlled(choice: Choice) -> None:
    systems = svc.systems(choice.ds, choice.attribute, choice.judge.judge)
    if len(systems) < 2:
        return
    median = svc.median_system(choice.ds, choice.attribute, choice.judge.judge)
    baseline = ui.select(
        "Baseline system",
        systems,
        key="judge_bias.baseline",
        index=systems.index(median) if median in systems else 0,
        help="Win rates are against this system (default: the median of the plain ranking).",
    )
    table = svc.length_controlled_win_rate(
        choice.ds, choice.attribute, choice.judge.judge, baseline
    )
    table = table[table["system"] != baseline]
    fig = go.Figure(
        [
            go.Bar(
                x=table["system"], y=table["win_rate_raw"], name="raw", marker_color=ui.PALETTE[1]
            ),
            go.Bar(
                x=table["system"],
                y=table["win_rate_lc"],
                name="length-controlled",
                marker_color=ui.PALETTE[0],
                error_y=_errors(table, "win_rate_lc"),
            ),
        ]
    )
    fig.add_hline(y=0.5, line_dash="dash", line_color="black")
    fig.update_layout(
        barmode="group",
        yaxis_title=f"win rate against {baseline}",
        yaxis_range=[0, 1],
        height=380,
        legend=dict(orientation="h", y=1.1),
    )
    ui.figure(fig, "Length-controlled win rate against a baseline", page=PAGE, data=table)
    st.caption(
        "AlpacaEval's length-controlled win rate: the win rate the style-controlled fit "
        "predicts when both answers have the same length (raw: the observed win rate, or "
        "the plain fit's prediction for systems never compared with the baseline)."
    )


def show(choice: Choice) -> None:
    st.subheader("Length and style")
    if needs_texts(choice, "Length and style bias"):
        return
    with ui.guard("Measuring the length preference"):
        longer(choice)
    what = "The style coefficients, the style-controlled ranking and the length-controlled win rate"
    if needs_verdicts(choice, what) or needs_systems(choice, what):
        return
    with ui.guard("Fitting the style coefficients"):
        coefficients(choice)
    with ui.guard("Ranking with and without the style effect"):
        ranking(choice)
    with ui.guard("Computing the length-controlled win rate"):
        length_controlled(choice)
