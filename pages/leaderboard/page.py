"""Leaderboard: the systems ranked by every judge, Arena-style (issue 11 item 9): Bradley–Terry
scores with 95% intervals and the number of battles per judge, a systems x judges table of
ranks, and one judge's win-rate matrix; the model judges' outcomes under the debias setting
shared with Position bias and Rankings (``debias.shared``)."""

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from pages.rankings import baseline
from pages.rankings.views import colours
from pages.services import bias, common, comparisons
from pages.services import leaderboard as svc
from pages.shell import choices, debias, state, ui

PAGE = "Leaderboard"
#: Systems shown in the win-rate matrix (the best ones); the CSV has every system.
MAX_MATRIX = 30

st.title("Leaderboard")
st.caption(
    "Every judge's ranking of the systems, from all its comparisons pooled over the contexts: "
    "Bradley–Terry scores with 95% intervals, battles (comparisons with a parsed answer "
    "between two systems) and who beats whom."
)
state.scope_caption()

ds, attributes = choices.with_comparisons(
    " to build a leaderboard from. Upload pairwise verdicts or run a pairwise judge on the "
    "**Judge** page, or load the demo, SummEval, PandaLM or LLMFAO on the **Data** page.",
)
attribute, right = choices.attribute_beside(attributes)
with right:
    intervals = st.radio(
        "Intervals",
        ["fisher", "bootstrap"],
        format_func={"fisher": "Fisher information", "bootstrap": "Bootstrap (200 refits)"}.get,
        horizontal=True,
        key="board.intervals",
        help="95% intervals of the Bradley–Terry scores: from the Fisher information (fast), "
        "or percentiles of 200 refits on resampled battles (slow on large sets).",
    )


def debias_line(mode: str, tau: float, board) -> str:
    """The shared debias setting in one line: what the model judges are ranked under."""
    if mode == "off":
        return "off: every judge's probabilities as they are"
    if mode in ("tau", "alpha"):
        shown = next((s.label for s in board.settings.values() if s.mode == mode), None)
        what = shown or f"{bias.DEBIAS_MODES[mode].lower()}, tau = {common.fmt(tau, 2)}"
    else:
        what = f"{bias.DEBIAS_MODES[mode].lower()}, each judge its own"
    off = [j for j, s in board.settings.items() if s.unavailable]
    return f"{what} for the model judges (human verdicts as they are)" + (
        f"; unavailable, so ranked as off: {', '.join(off)}" if off else ""
    )


with ui.guard("Building the leaderboard"):
    mode, tau = debias.shared()
    board = svc.leaderboard(ds, attribute, intervals, mode, tau)
    line = debias_line(mode, tau, board)
    d_left, d_right = st.columns([4, 1], vertical_alignment="center")
    with d_left:
        st.markdown(f"Debiasing: **{ui.safe(line, 300)}**.")
    with d_right:
        st.page_link(
            "pages/position_bias/page.py",
            label="Set it on Position bias",
            icon=":material/swap_horiz:",
        )
    ui.settings(
        PAGE,
        {
            "dataset": state.active_name(),
            "attribute": attribute,
            "intervals": intervals,
            "debias": line,
            **state.scope_settings(),
        },
    )
    for note in board.notes:
        st.caption(f"ℹ️ {ui.safe(note, 400)}")
    if not board.judges:
        st.info(
            f"No judge of **{ui.safe(attribute)}** ranks systems here: "
            + (
                ui.safe(board.notes[0], 400)
                if board.notes
                else "there is nothing to rank across contexts."
            )
        )
        st.stop()

    st.subheader("Systems x judges")
    ranks = board.ranks
    shown = ranks.copy()
    shown.insert(0, "mean rank", ranks.mean(axis=1).round(2))
    ui.table(
        shown.reset_index(),
        f"Rank of each system by each judge, {attribute}",
        page=PAGE,
        hide_index=True,
    )
    n_sys = len(ranks)
    fig = go.Figure()
    palette = colours(len(board.judges))
    for k, judge in enumerate(board.judges):
        sub = board.long[board.long["judge"] == judge].set_index("system").loc[ranks.index]
        fig.add_trace(
            go.Scatter(
                x=list(ranks.index),
                y=sub["rank"],
                mode="lines+markers",
                name=judge,
                line=dict(color=palette[k % len(palette)]),
                customdata=np.stack([sub["bt_score"], sub["battles"]], axis=-1),
                hovertemplate="%{x}<br>rank %{y}<br>score %{customdata[0]:.2f}<br>"
                "battles %{customdata[1]}<extra>" + judge + "</extra>",
            )
        )
    fig.update_layout(
        xaxis_type="category",
        xaxis_title="system (best mean rank first)",
        yaxis=dict(autorange="reversed", dtick=1, tickformat="d", title="rank (1 = best)"),
        height=420,
        legend=dict(orientation="h", y=1.12),
    )
    ui.figure(fig, f"Ranks of the systems by judge, {attribute}", page=PAGE, data=board.long)

    st.subheader("One judge")
    judge = ui.select(
        "Judge",
        board.judges,
        key="board.judge",
        help="Model judges and the human annotators pooled.",
    )
    one = board.long[board.long["judge"] == judge].drop(columns="judge")
    one = one.sort_values("rank", kind="stable").reset_index(drop=True)
    j_left, j_right = st.columns([3, 2])
    with j_left:
        bt = go.Figure(
            go.Scatter(
                x=one["system"],
                y=one["bt_score"],
                mode="markers",
                marker=dict(size=10, color=ui.PALETTE[0]),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=one["upper"] - one["bt_score"],
                    arrayminus=one["bt_score"] - one["lower"],
                ),
                customdata=one["battles"],
                hovertemplate="%{x}<br>score %{y:.2f}<br>battles %{customdata}<extra></extra>",
            )
        )
        bt.update_layout(
            xaxis_type="category",
            yaxis_title="Bradley–Terry score (log-strength)",
            yaxis_tickformat=".1f",
            height=400,
        )
        ui.figure(bt, f"Scores with 95% intervals, {judge}", page=PAGE, data=one)
    with j_right:
        ui.table(one.round(3), f"Leaderboard of {judge}, {attribute}", page=PAGE, hide_index=True)
        ui.metric("Systems", n_sys, "systems compared across contexts")
        ui.metric("Battles", int(one["battles"].sum() // 2), "comparisons with a parsed answer")

    setting = board.settings[judge]
    st.markdown(f"**Win rates of {ui.safe(judge)} against a baseline**")
    baseline.render(
        ds, attribute, judge, intervals=intervals, rule=setting.rule, elo_band=False, page=PAGE
    )
    rate, battles = svc.win_rates(ds, attribute, judge, setting.rule)
    if len(rate) > MAX_MATRIX:
        st.caption(
            f"The win-rate matrix shows this judge's {MAX_MATRIX} best systems of {len(rate)}; "
            "its CSV holds them all."
        )
    if len(rate):
        full_rate, full_battles = rate, battles
        rate = rate.iloc[:MAX_MATRIX, :MAX_MATRIX]
        battles = battles.iloc[:MAX_MATRIX, :MAX_MATRIX]
        hover = pd.DataFrame(
            [
                [
                    f"won {rate.iloc[i, j]:.0%} of {battles.iloc[i, j]} battle(s)"
                    if battles.iloc[i, j]
                    else "never met"
                    for j in range(len(rate.columns))
                ]
                for i in range(len(rate))
            ],
            index=rate.index,
            columns=rate.columns,
        )
        heat = ui.heatmap(rate, hover, zmin=0.0, zmax=1.0, zmid=0.5, scale=ui.DIVERGING)
        heat.update_layout(xaxis_title="opponent", yaxis_title="system")
        long = full_rate.stack().rename("win_rate").reset_index()
        long.columns = ["system", "opponent", "win_rate"]
        long["battles"] = full_battles.stack().to_numpy()
        long = long[long["battles"] > 0]
        ui.figure(heat, f"Win rate, row beats column, {judge}", page=PAGE, data=long)
        st.caption(
            "Share of the battles between two systems that the row system won, in either "
            f"presentation order ({bias.decision_text(setting)}, a tie counting half); rows "
            "and columns in this judge's order, best first."
        )
    human = [j for j in board.judges if j == comparisons.HUMAN_POOL]
    if not human:
        st.caption(
            "No human verdicts in this dataset: the human annotators are not among the judges."
        )
