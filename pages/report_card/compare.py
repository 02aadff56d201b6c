"""Is judge B really better than judge A? McNemar's exact test on the pairs both judged,
with the difference of their accuracies and its interval."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from data.report_card import UNITS
from pages.report_card import PAGE, Choice
from pages.services import report_card as svc
from pages.services.common import fmt
from pages.shell import state, ui

UNIT_LABELS = {
    "pair": "pairs (right in every order shown)",
    "order": "orders (each order of a pair)",
}


def show(choice: Choice) -> None:
    st.subheader("Is judge B really better than judge A?")
    judges = list(choice.judges)
    if len(judges) < 2:
        st.info("Two judges are needed; this dataset has one.")
        return
    cols = st.columns([2, 2, 2])
    with cols[0]:
        a = ui.select("Judge A", judges, key=state.keep("report_card.judge_a"), index=1)
    with cols[1]:
        b = ui.select("Judge B", judges, key=state.keep("report_card.judge_b"), index=0)
    with cols[2]:
        unit = st.radio(
            "Count",
            UNITS,
            format_func=UNIT_LABELS.get,
            key=state.keep("report_card.unit"),
            help="Pairs: a pair is right when every order the judge saw is right (both orders: "
            "LLMBar's 'correct in both'). Orders: each order of a pair is an item; the test "
            "then takes a pair's two orders as independent, which they are not quite.",
        )
    if a == b:
        st.info("Pick two different judges.")
        return
    r = svc.compare(choice.ds, choice.attribute, choice.unparsed, a, b, unit).result
    if r.n == 0:
        st.info(
            f"**{ui.safe(a)}** and **{ui.safe(b)}** have no pair with a known answer in common "
            "(with both orders when counting orders): nothing to compare."
        )
        return
    ui.metric_row(
        [
            (
                "Accuracy B − A",
                f"{r.difference:+.1%}",
                f"95% Newcombe interval [{r.lower:+.1%}, {r.upper:+.1%}] on the {r.n:,} shared "
                f"{unit}s",
                "Accuracy B − A (McNemar)",
            ),
            (
                "McNemar exact p",
                fmt(r.pvalue, 4),
                f"two-sided binomial test of the {r.n_discordant:,} {unit}s only one judge got "
                "right",
            ),
            ("A right", f"{r.accuracy_a:.1%}", ui.safe(a, 60), "Judge A right"),
            ("B right", f"{r.accuracy_b:.1%}", ui.safe(b, 60), "Judge B right"),
        ],
        page=PAGE,
    )
    table = pd.DataFrame(
        {"B right": [r.both_right, r.only_b], "B wrong": [r.only_a, r.both_wrong]},
        index=["A right", "A wrong"],
    )
    left, right = st.columns([1, 2])
    with left:
        st.dataframe(table)
        ui.remember(PAGE, "McNemar: two judges on the same pairs", data=table.reset_index())
    with right:
        if r.n_discordant == 0:
            verdict = "They are right on exactly the same items: no evidence either way."
        elif r.pvalue < 0.05:
            better = b if r.difference > 0 else a
            verdict = (
                f"**{ui.safe(better)}** is right more often, beyond what chance explains "
                f"(p = {fmt(r.pvalue, 4)} < 0.05)."
            )
        else:
            verdict = (
                f"The difference could be chance (p = {fmt(r.pvalue, 4)} ≥ 0.05): on these "
                f"{r.n:,} {unit}s the data do not tell the two judges apart."
            )
        st.markdown(verdict)
        st.caption(
            "Only the items one judge got right and the other wrong tell them apart (the "
            "off-diagonal cells); McNemar asks whether they split evenly. Items either judge "
            f"did not judge are left out ({r.n_dropped_nan:,})."
        )
