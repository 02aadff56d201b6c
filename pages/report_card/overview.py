"""The judge table, the sorted dot plot of accuracy with intervals beside chance, and the
judges x categories heatmap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from pages.report_card import PAGE, Choice, height
from pages.services import report_card as svc
from pages.services.common import fmt
from pages.shell import ui

CHANCE = 0.5


def _pct(value) -> str:
    return "–" if value is None or not np.isfinite(float(value)) else f"{float(value):.1%}"


def headline(choice: Choice, table: pd.DataFrame) -> None:
    card = svc.card(choice.ds, choice.attribute, choice.unparsed)
    best = table.iloc[0]
    above = int((table["lower"] > CHANCE).sum())
    ui.metric_row(
        [
            (
                "Pairs with a known answer",
                f"{len(card.gold.scored):,}",
                f"pairs whose human verdict names a winner, of {len(card.gold.pairs):,} with a "
                "human verdict",
            ),
            ("Judges", f"{len(table)}", "model judges with a verdict on those pairs"),
            (
                "Best accuracy",
                _pct(best["accuracy"]),
                f"{ui.safe(best['judge'], 50)}, 95% interval {_pct(best['lower'])}–"
                f"{_pct(best['upper'])} over {int(best['n']):,} pairs",
            ),
            (
                "Above chance",
                f"{above} / {len(table)}",
                "judges whose whole 95% interval lies above 50% (a coin on two answers)",
            ),
        ],
        page=PAGE,
    )


def _table_view(choice: Choice, table: pd.DataFrame) -> pd.DataFrame:
    t = table[table["judge"].isin(choice.judges)]
    view = pd.DataFrame(
        {
            "judge": t["judge"],
            "n": t["n"],
            "accuracy": t["accuracy"],
            "95% low": t["lower"],
            "95% high": t["upper"],
            "positional agreement": t["positional_agreement"],
            "consistency": t["consistency"],
            "first-position rate": t["first_position_rate"],
            "ECE": t["ece"],
            "calls / 1k": t["calls_per_1k"],
            "tokens / 1k": t["tokens_per_1k"],
            "$ / 1k": t["usd_per_1k"],
            "unparsed": t["n_unparsed"],
            "one order only": t["n_one_order"],
            "no verdict": t["n_gold_not_judged"],
        }
    )
    return view.reset_index(drop=True)


def judge_table(choice: Choice, table: pd.DataFrame) -> None:
    view = _table_view(choice, table)
    pct = st.column_config.NumberColumn(format="percent")
    ui.table(
        view,
        "Judge report card",
        page=PAGE,
        hide_index=True,
        column_config={
            "judge": st.column_config.TextColumn("judge", width="medium"),
            "accuracy": pct,
            "95% low": pct,
            "95% high": pct,
            "positional agreement": pct,
            "consistency": pct,
            "first-position rate": pct,
            "ECE": st.column_config.NumberColumn(format="%.3f"),
            "$ / 1k": st.column_config.NumberColumn(format="$%.4f"),
            "calls / 1k": st.column_config.NumberColumn(format="%.0f"),
            "tokens / 1k": st.column_config.NumberColumn(format="%.0f"),
        },
    )
    st.caption(
        "**accuracy**: share of the pairs' judged orders that name the gold winner, counted "
        "per pair (a pair judged in both orders counts once: 0, ½ or 1), with its Wilson 95% "
        "interval over pairs; **positional agreement**: right in both orders (LLMBar's "
        "'correct in both'); **consistency**: the same winner in both orders; "
        "**first-position rate**: share of judged orders won by the answer shown first (½ = "
        "no position bias); **ECE**: expected calibration error of p(first wins) against the "
        "gold, for judges that give probabilities; **cost** per 1,000 judgments (one order of "
        "one pair) from the run store, for judges run here. Sorted best first."
    )


def dot_plot(choice: Choice, table: pd.DataFrame) -> None:
    t = table[table["judge"].isin(choice.judges)].sort_values("accuracy", kind="stable")
    if not len(t):
        return
    hover = [
        f"{j}<br>accuracy {fmt(a)} [{fmt(lo)}, {fmt(hi)}]<br>{int(n):,} pairs"
        for j, a, lo, hi, n in zip(
            t["judge"], t["accuracy"], t["lower"], t["upper"], t["n"], strict=True
        )
    ]
    above = (t["lower"] > CHANCE).to_numpy()
    fig = go.Figure(
        go.Scatter(
            x=t["accuracy"],
            y=t["judge"],
            mode="markers",
            marker=dict(
                size=9, color=np.where(above, ui.PALETTE[0], ui.PALETTE[5]), symbol="circle"
            ),
            error_x=dict(
                type="data",
                symmetric=False,
                array=(t["upper"] - t["accuracy"]).to_numpy(),
                arrayminus=(t["accuracy"] - t["lower"]).to_numpy(),
                thickness=1.5,
                width=4,
            ),
            customdata=hover,
            hovertemplate="%{customdata}<extra></extra>",
            showlegend=False,
        )
    )
    fig.add_vline(
        x=CHANCE,
        line=dict(color="#888", dash="dash"),
        annotation_text="chance",
        annotation_position="top",
    )
    fig.update_layout(
        height=height(len(t)),
        xaxis=dict(title="accuracy (95% Wilson interval)", range=[0, 1]),
        yaxis=dict(title=None, categoryorder="array", categoryarray=t["judge"].tolist()),
    )
    ui.figure(
        fig,
        "Accuracy of each judge against the known answers",
        page=PAGE,
        data=t[["judge", "n", "accuracy", "lower", "upper"]].reset_index(drop=True),
    )
    st.caption(
        "Blue: the whole interval lies above chance (50%); orange: it does not. Hover a dot "
        "for the judge's full name."
    )


def heatmap(choice: Choice) -> None:
    cats = svc.categories(choice.ds, choice.attribute, choice.unparsed, choice.level)
    cats = cats[cats["judge"].isin(choice.judges)]
    if not len(cats):
        st.info(
            "No categories: the context ids are not of the form '<category>/<id>' (LLMBar's "
            "are 'LLMBar/Natural/007'). Give a file's context ids that form to group its pairs."
        )
        return
    order = [j for j in choice.judges if j in set(cats["judge"])]
    values = cats.pivot(index="judge", columns="category", values="accuracy").reindex(order)
    n = cats.pivot(index="judge", columns="category", values="n").reindex(order)
    lo = cats.pivot(index="judge", columns="category", values="lower").reindex(order)
    hi = cats.pivot(index="judge", columns="category", values="upper").reindex(order)
    hover = pd.DataFrame(
        np.vectorize(
            lambda a, k, low, high: (
                "no pair" if not np.isfinite(a) else f"{a:.1%} [{low:.1%}, {high:.1%}] of {int(k)}"
            )
        )(
            values.to_numpy(float),
            n.fillna(0).to_numpy(float),
            lo.to_numpy(float),
            hi.to_numpy(float),
        ),
        index=values.index,
        columns=values.columns,
    )
    fig = ui.heatmap(values, hover, zmin=0.0, zmax=1.0, zmid=CHANCE, scale=ui.DIVERGING, fmt=".2f")
    fig.update_layout(
        height=height(len(values), 190),
        xaxis=dict(title=choice.level, side="bottom", tickangle=-30),
        yaxis=dict(title=None),
    )
    ui.figure(
        fig,
        f"Accuracy per judge and {choice.level}",
        page=PAGE,
        data=cats.reset_index(drop=True),
    )
    st.caption(
        "Red below chance, blue above; hover a cell for its interval and number of pairs. "
        "Each judge's weakest categories are listed in its detail below."
    )


def show(choice: Choice, table: pd.DataFrame) -> None:
    headline(choice, table)
    judge_table(choice, table)
    left, right = st.columns(2)
    with left:
        dot_plot(choice, table)
    with right:
        heatmap(choice)
