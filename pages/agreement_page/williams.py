"""The Human agreement page's "Which judge differences are significant?" section: Williams'
test for two dependent correlations with the same humans, Benjamini–Hochberg adjusted."""

from __future__ import annotations

import streamlit as st

from pages import ui
from pages.agreement_page import PAGE, Choices
from pages.services import agreement as svc


def render(c: Choices) -> None:
    st.header("Which judge differences are significant?")
    ratings = c.ds.ratings
    n_combos = len(ratings[["judge", "prompt_id"]].drop_duplicates()) if len(ratings) else 0
    if not c.has_humans or n_combos < 2:
        st.info(
            "Williams' test compares two judges' correlations with the same humans; it needs "
            "ratings from two or more judges (or prompts) and human scores."
        )
        return
    with ui.guard("Williams tests"):
        w1, w2 = st.columns(2)
        shared = ratings.groupby("prompt_id", observed=True)["judge"].nunique().max() > 1
        across = (
            w1.radio(
                "Compare",
                ["judges under the same prompt", "every judge and prompt"],
                index=0 if shared else 1,
                key=f"{PAGE}.w_scope",
                horizontal=True,
                help="Benjamini–Hochberg adjusts the p-values within each attribute (and prompt).",
            )
            == "every judge and prompt"
        )
        w_level = w2.radio("Level", ["overall", "system"], horizontal=True, key=f"{PAGE}.w_level")
        wt = svc.williams(c.ds, c.method, c.variant, c.annotators, w_level, across)
        if not len(wt):
            st.info("No prompt has two or more judges here; choose **every judge and prompt**.")
            return
        w3, w4 = st.columns(2)
        with w3:
            w_attr = ui.select("Attribute", sorted(wt["attribute"].unique()), key=f"{PAGE}.w_attr")
        prompts = sorted(wt.loc[wt["attribute"] == w_attr, "prompt_id"].unique())
        with w4:
            w_prompt = ui.select("Prompt", prompts, key=f"{PAGE}.w_prompt")
        p, hover = svc.williams_heatmap_frames(wt, w_attr, w_prompt)
        fig = ui.heatmap(p, hover, zmin=0, zmax=1, scale=ui.SEQUENTIAL, fmt=".3f")
        st.caption(
            "Benjamini–Hochberg adjusted p of Williams' test for the difference of "
            "two dependent correlations with the humans; hover for the difference."
        )
        ui.figure(
            fig,
            f"Williams + BH adjusted p: {w_attr}, {w_prompt}",
            page=PAGE,
            data=wt[(wt["attribute"] == w_attr) & (wt["prompt_id"] == w_prompt)],
        )
