"""The Human agreement page's "Pairwise judges" section: pairwise accuracy of comparative
judges against the human scores, and agreement with the human verdicts (Cohen's kappa)."""

from __future__ import annotations

import numpy as np
import plotly.express as px
import streamlit as st

from data.schema import HUMAN_JUDGE_PREFIX
from pages import ui
from pages.agreement_page import PAGE, Choices
from pages.services import agreement as svc


def render(c: Choices) -> None:
    comps = c.ds.comparisons
    model_comps = (
        bool(len(comps)) and (~comps["judge"].astype(str).str.startswith(HUMAN_JUDGE_PREFIX)).any()
    )
    if model_comps or c.human_verdicts:
        st.header("Pairwise judges")
    if model_comps and c.has_humans:
        with ui.guard("Pairwise accuracy"):
            acc = svc.pairwise_accuracy(c.ds, c.annotators)
            st.caption(
                "Share of compared pairs (both orders) where the judge prefers the "
                "candidate the humans scored higher; pairs the humans tied are left out."
            )
            fig = px.bar(
                acc, x="judge", y="accuracy", color="attribute", barmode="group", range_y=[0, 1]
            )
            fig.add_hline(y=0.5, line_dash="dot", annotation_text="chance")
            ui.figure(fig, "Pairwise accuracy against human scores", page=PAGE, data=acc)
    if c.human_verdicts:
        with ui.guard("Agreement with human verdicts"):
            va = svc.verdicts(c.ds)
            st.caption(
                "Verdicts (A / B / tie) matched pair by pair: the share that agree and "
                "Cohen's kappa (agreement beyond chance). Rows of human annotators are "
                "the human baseline."
            )
            kappa = va.pivot_table(index="judge", columns="annotator", values="cohen_kappa")
            share = va.pivot_table(index="judge", columns="annotator", values="agreement")
            hover = share.map(lambda v: f"agreement {v:.3f}" if np.isfinite(v) else "–")
            fig = ui.heatmap(kappa, hover, zmin=-1, zmax=1, zmid=0, scale=ui.DIVERGING, fmt=".2f")
            ui.figure(fig, "Cohen's kappa with the human verdicts", page=PAGE, data=va)
