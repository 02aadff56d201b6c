"""Both orders (accuracy in each, positional agreement, consistency, first-position rate)
and the accuracy each debias mode of the shared setting would give."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from pages.report_card import PAGE, Choice, height
from pages.services import report_card as svc
from pages.services.calibration import DEBIAS_MODES
from pages.shell import debias, ui

#: (column, legend name, colour) of the both-order chart.
METRICS = [
    ("accuracy_gold_order", "accuracy, gold order shown", ui.PALETTE[0]),
    ("accuracy_swapped", "accuracy, swapped", ui.PALETTE[4]),
    ("positional_agreement", "right in both orders", ui.PALETTE[2]),
    ("consistency", "same winner in both orders", ui.PALETTE[1]),
    ("first_position_rate", "first-position rate", ui.PALETTE[5]),
]


def both_orders(choice: Choice, table: pd.DataFrame) -> None:
    st.subheader("Both orders")
    t = table[table["judge"].isin(choice.judges)].sort_values("accuracy", kind="stable")
    if not (t["n_both_orders"] > 0).any():
        st.info(
            "No judge has a pair judged in both orders, so positional agreement, consistency "
            "and the accuracy of each order cannot be told apart. Run a judge with 'all' or "
            "'symmetric' pairs per context (the Judge page) to judge both orders."
        )
    fig = go.Figure()
    for col, label, colour in METRICS:
        if not t[col].notna().any():
            continue
        ui.dot_series(
            fig,
            t,
            "judge",
            col,
            label,
            customdata=t["judge"],
            hovertemplate="%{customdata}<br>" + label + ": %{x:.1%}<extra></extra>",
            color=colour,
            size=9,
            symbol="diamond" if "rate" in col else "circle",
        )
    fig.add_vline(x=0.5, line=dict(color="#888", dash="dot"))
    fig.update_layout(
        height=height(len(t), 190),
        xaxis=dict(title="share", range=[0, 1], tickformat=".0%"),
        yaxis=dict(title=None, categoryorder="array", categoryarray=t["judge"].tolist()),
        legend=dict(orientation="h", y=-0.12, yanchor="top"),
    )
    cols = ["judge", "n_both_orders", *[c for c, _, _ in METRICS], "n_one_order"]
    ui.figure(
        fig,
        "The two orders: accuracy in each, agreement, consistency, first position",
        page=PAGE,
        data=t[cols].reset_index(drop=True),
    )
    st.caption(
        "Gold order: the pair shown as its human verdict lists it (LLMBar: output_1 first). "
        "A judge without position bias has the same accuracy in both orders and a "
        "first-position rate near ½ (dotted line); the gap between 'right in both orders' "
        "and accuracy is what the swap costs it."
    )


def modes(choice: Choice) -> None:
    box = st.expander(
        "Accuracy under each debias mode", key="report_card.open.modes", on_change="rerun"
    )
    with box:
        if not box.open:
            st.caption("Opens the accuracy every mode of the shared debias setting gives.")
            return
        mode, tau = debias.shared()
        table, notes = svc.modes(choice.ds, choice.attribute, choice.unparsed, tau)
        table = table[table["judge"].isin(choice.judges)]
        if not len(table):
            st.info("No debias mode could be applied to these judges.")
            return
        order = [j for j in choice.judges if j in set(table["judge"])]
        values = table.pivot(index="judge", columns="mode", values="accuracy").reindex(order)
        values = values[[m for m in DEBIAS_MODES if m in values.columns]]
        ties = table.pivot(index="judge", columns="mode", values="n_ties").reindex(order)
        ties = ties[list(values.columns)]
        hover = pd.DataFrame(
            [
                [
                    "–" if pd.isna(v) else f"{v:.1%}" + (f", {int(k):,} ties" if k else "")
                    for v, k in zip(vr, kr, strict=True)
                ]
                for vr, kr in zip(values.to_numpy(), ties.fillna(0).to_numpy(), strict=True)
            ],
            index=values.index,
            columns=values.columns,
        )
        values.columns = [DEBIAS_MODES[m] for m in values.columns]
        hover.columns = values.columns
        fig = ui.heatmap(values, hover, zmin=0.0, zmax=1.0, zmid=0.5, scale=ui.DIVERGING)
        fig.update_layout(height=height(len(values), 200), xaxis=dict(tickangle=-20))
        ui.figure(
            fig,
            "Accuracy under each debias mode",
            page=PAGE,
            data=table.reset_index(drop=True),
        )
        st.caption(
            f"The shared setting is **{DEBIAS_MODES.get(mode, mode)}** (tau = {tau:.2f}); the "
            "modes that take a tau use it. Each column decides every judge's comparisons by "
            "that mode's rule, as Rankings and Leaderboard would; judges of hard verdicts "
            "change only where a rule moves a 0/1 answer (per-context thresholds, fitted "
            "calibrations). A tie is never right: isotonic calibration cannot turn a judge "
            "below chance around (its map only rises), so it maps all its verdicts to ½ and "
            "the judge scores 0 (the ties are in the hover)."
        )
        for text in notes[:10]:
            st.caption(f"⚠ {ui.safe(text, 300)}")


def show(choice: Choice, table: pd.DataFrame) -> None:
    both_orders(choice, table)
    modes(choice)
