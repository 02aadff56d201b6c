"""One judge up close: calibration, where it fails (worst categories, the length check, the
failed pairs with a link to Examples) and its cost."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from pages.report_card import PAGE, Choice
from pages.services import report_card as svc
from pages.services.common import fmt
from pages.shell import example_link, state, ui

#: Failed pairs listed with an Open button (the rest are in the table's CSV).
N_OPEN = 12


def calibration(choice: Choice, judge: str) -> None:
    box = st.expander("Calibration", key="report_card.open.calibration", on_change="rerun")
    with box:
        if not box.open:
            return
        cal = svc.calibration(choice.ds, choice.attribute, choice.unparsed, judge)
        if not cal.probabilities:
            st.info(
                f"**{ui.safe(judge)}** gives verdicts, not probabilities (every p is 0, ½ or "
                "1), so there is no calibration to measure. Judges run here in 'label "
                "probabilities' mode give them; see the accuracy against confidence of such "
                "a judge."
            )
            return
        ui.metric(
            "ECE of p(first wins)",
            fmt(cal.ece),
            f"expected calibration error over {cal.n:,} judged orders: the mean gap between "
            "the judge's probability and how often the gold agrees (0 = calibrated)",
            page=PAGE,
        )
        left, right = st.columns(2)
        d = cal.diagram[cal.diagram["count"] > 0]
        fig = ui.reliability_figure("calibrated", "#888")
        fig.add_trace(
            go.Scatter(
                x=d["mean_p"],
                y=d["mean_y"],
                mode="lines+markers",
                name=judge,
                marker=dict(
                    size=6 + 14 * np.sqrt(d["count"] / d["count"].max()), color=ui.PALETTE[0]
                ),
                customdata=d["count"],
                hovertemplate="p %{x:.2f}<br>gold says first wins: %{y:.2f}<br>%{customdata} "
                "orders<extra></extra>",
            )
        )
        fig.update_layout(
            xaxis=dict(title="judge's p(first wins)", range=[0, 1]),
            yaxis=dict(title="share the gold says the first wins", range=[0, 1]),
            legend=dict(orientation="h", y=-0.2, yanchor="top"),
        )
        with left:
            ui.figure(
                fig, f"Reliability diagram: {ui.short(judge, 60)}", page=PAGE, data=cal.diagram
            )
        c = cal.confidence[cal.confidence["count"] > 0]
        fig = go.Figure(
            go.Scatter(
                x=c["mean_confidence"],
                y=c["accuracy"],
                mode="markers+lines",
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=(c["upper"] - c["accuracy"]).to_numpy(),
                    arrayminus=(c["accuracy"] - c["lower"]).to_numpy(),
                ),
                customdata=c["count"],
                hovertemplate="confidence %{x:.2f}<br>accuracy %{y:.1%}<br>%{customdata} orders"
                "<extra></extra>",
                showlegend=False,
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[0.5, 1], y=[0.5, 1], mode="lines", line=dict(color="#888", dash="dash"),
                showlegend=False, hoverinfo="skip",
            )
        )  # fmt: skip
        fig.update_layout(
            xaxis=dict(title="confidence max(p, 1 − p)", range=[0.5, 1]),
            yaxis=dict(title="accuracy", range=[0, 1], tickformat=".0%"),
        )
        with right:
            ui.figure(fig, f"Accuracy against confidence: {ui.short(judge, 60)}", page=PAGE, data=c)
        st.caption(
            "Left: among the orders where the judge said p, how often the gold winner was "
            "shown first (on the diagonal: calibrated). Right: does a confident judge err "
            "less? Accuracy per band of confidence, with Wilson intervals."
        )


def _open(choice: Choice, judge: str, row) -> None:
    example_link.open_example(
        dataset=choice.dataset,
        attribute=str(row["attribute"]),
        judge=judge,
        context_id=str(row["context_id"]),
        first_id=str(row["a"]),
        second_id=str(row["b"]),
    )


def failures(choice: Choice, judge: str) -> None:
    box = st.expander("Where it fails", key="report_card.open.failures", on_change="rerun")
    with box:
        if not box.open:
            return
        cats = svc.categories(choice.ds, choice.attribute, choice.unparsed, choice.level)
        mine = cats[cats["judge"] == judge].sort_values("accuracy", kind="stable")
        left, right = st.columns(2)
        with left:
            st.markdown(f"**Worst {choice.level}s**")
            if len(mine):
                ui.table(
                    mine[["category", "n", "accuracy", "lower", "upper"]].head(5),
                    f"Worst categories: {ui.short(judge, 60)}",
                    page=PAGE,
                    hide_index=True,
                )
            else:
                st.caption("No categories in the context ids.")
        with right:
            st.markdown("**Length check**")
            lengths = svc.lengths(choice.ds, choice.attribute, choice.unparsed)
            lengths = lengths[lengths["judge"] == judge]
            if len(lengths):
                ui.table(
                    lengths.drop(columns="judge"),
                    f"Accuracy by the gold's length: {ui.short(judge, 60)}",
                    page=PAGE,
                    hide_index=True,
                )
                st.caption(
                    "Accuracy when the gold winner is the shorter answer (in words) against "
                    "when it is the longer: a judge that prefers length does worse on the "
                    "first."
                )
            else:
                st.caption("The candidates have no texts to count.")
        failed = svc.failures(choice.ds, choice.attribute, choice.unparsed, judge)
        st.markdown(f"**Failed pairs**: {len(failed):,} (wrong in at least one order)")
        if not len(failed):
            return
        ui.table(
            failed.drop(columns=["attribute"]),
            f"Failed pairs: {ui.short(judge, 60)}",
            page=PAGE,
            show=False,
        )
        widths = [3, 4, 2, 2, 1]
        header = st.columns(widths)
        for col, title in zip(header, ["pair", "instruction", "gold", "chose", ""], strict=True):
            col.markdown(f"**{title}**")
        for n, row in enumerate(failed.head(N_OPEN).to_dict("records")):
            cols = st.columns(widths)
            cols[0].markdown(ui.safe(row["context_id"], 60))
            cols[1].markdown(ui.safe(row.get("context", ""), 90))
            cols[2].markdown(ui.safe(row["gold"], 30))
            chose = f"{row['chose_gold_order']} · {row['chose_swapped']}".strip(" ·")
            cols[3].markdown(ui.safe(chose, 40))
            if cols[4].button("Open", key=f"report_card.open_pair.{n}"):
                _open(choice, judge, row)
        if len(failed) > N_OPEN:
            st.caption(
                f"The first {N_OPEN} of {len(failed):,}; all of them are in the CSV above. "
                "'chose' is the winner the judge named with the gold order shown, then swapped."
            )


def cost(choice: Choice, judge: str, table: pd.DataFrame) -> None:
    rec = table[table["judge"] == judge]
    if not len(rec) or not np.isfinite(float(rec["calls_per_1k"].iloc[0])):
        st.caption(
            f"Cost: **{ui.safe(judge)}** was not run here (no call in the run store), so its "
            "calls, tokens and price are unknown; judges run from the Judge page show them."
        )
        return
    r = rec.iloc[0]
    usd = r["usd_per_1k"]
    ui.metric_row(
        [
            ("Calls per 1,000 judgments", f"{r['calls_per_1k']:,.0f}", "model calls"),
            (
                "Tokens per 1,000 judgments",
                f"{r['tokens_per_1k']:,.0f}",
                "prompt and completion tokens as the provider reported them",
            ),
            (
                "Price per 1,000 judgments",
                "–" if not np.isfinite(float(usd)) else f"${usd:,.4f}",
                "at the estimate's prices (judge/runs/prices.csv); – for local or unpriced models",
            ),
        ],
        page=PAGE,
    )


def show(choice: Choice, table: pd.DataFrame) -> None:
    st.subheader("One judge up close")
    judge = ui.select("Judge", list(choice.judges), key=state.keep("app.judge"))
    cost(choice, judge, table)
    calibration(choice, judge)
    failures(choice, judge)
