"""The Judge page's "Build a jury" tab: several judges of one attribute combined into one
(majority, mean or Dawid–Skene), each member's reliability, their agreement, the jury
against the humans, and a button that adds the jury to the active dataset as a judge."""

from __future__ import annotations

import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from data.jury import JURY_METHODS, jury_kind, jury_methods
from data.schema import DataError, Dataset
from pages.judge import PAGE
from pages.services import jury as svc
from pages.services.judge import judged_name
from pages.shell import state, ui

ADDED = f"{PAGE}.jury_added"
_METHODS = {
    "majority": "majority vote",
    "mean": "mean (of probabilities, scores or z-scores)",
    "dawid-skene": "Dawid–Skene (reliability-weighted)",
}


def render(ds: Dataset, name: str) -> None:
    st.markdown(
        "Combine several judges of one attribute into a **jury** — a judge of its own that "
        "every page can select. Pairwise judges are matched on (context, first, second), each "
        "order on its own; absolute judges on (context, candidate). A judge's samples are "
        "averaged (mean) or majority-voted first."
    )
    added = st.session_state.get(ADDED)
    if added and added[0] == name:
        st.success(added[1])
    attributes = svc.jury_attributes(ds)
    if not attributes:
        st.info(
            f"**{ui.safe(name)}** has no attribute with two or more judges. Run or import "
            "another "
            "judge first (the other tabs of this page)."
        )
        return
    left, right = st.columns([1, 2])
    with left:
        attribute = ui.select("Attribute", attributes, key=f"{PAGE}.jury_attribute")
    kinds = svc.kinds(ds, attribute)
    with right:
        judges = st.multiselect(
            "Judges",
            list(kinds),
            key=f"{PAGE}.jury_judges.{attribute}",
            format_func=lambda j: f"{ui.short(j)}  ({kinds[j]})",
            help="Two or more judges of one kind: all pairwise, or all absolute / automatic.",
        )
    if len(judges) < 2:
        st.info("Pick at least 2 judges for a jury.")
        return
    try:
        kind = jury_kind(ds, attribute, judges)
    except DataError as err:
        ui.show_error(err, what="Cannot build this jury")
        return
    offered, why = jury_methods(kind)
    method = st.radio(
        "Method",
        [m for m in JURY_METHODS if m in offered],
        format_func=_METHODS.get,
        horizontal=True,
        key=f"{PAGE}.jury_method",
    )
    if why:
        st.caption(ui.safe(why, 300))
    try:
        view = svc.jury_view(ds, attribute, tuple(judges), method)
    except DataError as err:
        ui.show_error(err, what="Cannot build this jury")
        return
    jury = view.jury
    ui.settings(PAGE, {"jury attribute": attribute, "jury judges": judges, "jury method": method})
    st.markdown(
        f"**{ui.safe(jury.name, 100)}** — {len(jury.rows):,} items, members in {kind} mode."
    )
    for note in jury.notes:
        st.caption(ui.safe(note, 400))
    _reliability(view)
    _agreement(view)
    _humans(view)
    target = judged_name(name)
    if st.button(
        f"Add the jury as a judge (into {ui.safe(target)})", key=f"{PAGE}.jury_add", type="primary"
    ):
        with ui.guard("Adding the jury"):
            state.add(target, svc.add_to(ds, view))
            st.session_state[ADDED] = (
                target,
                f"**{ui.safe(jury.name, 100)}** is now a judge of **{ui.safe(target)}** "
                "(active). Select it on "
                "Rankings, Position bias or Human agreement (the Judge picker), or compare it "
                "with its members on the Leaderboard.",
            )
            st.rerun()


def _reliability(view: svc.JuryView) -> None:
    rel = view.jury.reliability
    measure = str(rel["measure"].iloc[0]) if len(rel) else ""
    fig = go.Figure(
        go.Bar(
            x=rel["judge"],
            y=rel["reliability"],
            text=rel["n_items"],
            hovertemplate="%{x}<br>%{y:.3f}<br>%{text} items<extra></extra>",
        )
    )
    fig.update_layout(yaxis_title=measure, xaxis_title="member")
    ui.figure(fig, "Each member's reliability", page=PAGE, data=rel)


def _agreement(view: svc.JuryView) -> None:
    hover = view.shared.map(lambda n: f"{n:,} shared items")
    fig = ui.heatmap(view.agreement, hover, zmin=-1, zmax=1, zmid=0, scale=ui.DIVERGING)
    ui.figure(
        fig,
        f"Agreement between members ({view.statistic})",
        page=PAGE,
        data=view.agreement.reset_index(names="judge"),
    )
    fl = view.fleiss
    if fl.value == fl.value:  # not NaN
        ui.metric(
            "Fleiss' kappa (all members)",
            f"{fl.value:.3f}",
            f"on the {fl.n_items:,} items every member labelled ({fl.n_dropped_nan:,} left out)",
            page=PAGE,
        )
    else:
        st.caption(f"Fleiss' kappa: {ui.safe(fl.reason, 300)}")


_MEASURES = {"agreement": "share of verdicts agreeing", "cohen_kappa": "Cohen's kappa",
             "spearman": "Spearman"}  # fmt: skip


def _humans(view: svc.JuryView) -> None:
    if not len(view.humans):
        st.caption("No human verdicts or scores for this attribute: no comparison with humans.")
        return
    st.subheader("Against the humans")
    humans = view.humans
    measure = humans["measure"].iloc[0]
    shown = humans[humans["measure"] == measure]
    fig = px.bar(
        shown, x="versus", y="value", color="rater", barmode="group",
        color_discrete_sequence=ui.PALETTE,
        labels={"versus": "human reference", "value": _MEASURES.get(measure, measure)},
        hover_data=["n"],
    )  # fmt: skip
    fig.update_layout(legend_title_text="")
    ui.figure(fig, f"Each member and the jury against the humans ({_MEASURES.get(measure, measure)})",
              page=PAGE, data=humans)  # fmt: skip
    best = view.versus_best.rename(columns={
        "versus": "human reference", "measure": "measure", "jury": "jury",
        "best_member": "best member", "best_member_value": "best member's value",
        "jury_minus_best": "jury − best member",
    })  # fmt: skip
    best["measure"] = best["measure"].map(lambda m: _MEASURES.get(m, m))
    ui.table(best, "The jury against its best member", page=PAGE, hide_index=True)
