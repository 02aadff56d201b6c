"""The Human agreement page's sections on HANNA's other analyses (Chhun et al. 2024): the
Eval-Prompt effect on the correlations with humans (Figures 7 and 8), and a judge's ratings
per system and criterion (Tables 6 and 7)."""

from __future__ import annotations

import numpy as np
import plotly.express as px
import streamlit as st

from data.scope.systems import systems_of
from pages.agreement import PAGE, Choices, kept_index
from pages.services import agreement as svc
from pages.shell import ui

LEVELS = {"overall": "Figure 7", "system": "Figure 8"}


def render_prompt_effect(c: Choices) -> None:
    """For each LLM, the mean correlation with the humans per prompt (HANNA Figures 7/8)."""
    if not c.has_humans or not c.raters.judges:
        return
    judges = c.raters.table[c.raters.table["label"].isin(set(c.raters.judges))]
    if judges["prompt_id"].nunique() < 2:
        return  # one prompt: no prompt effect to show
    st.header("Does the prompt change the agreement?")
    with ui.guard("Prompt effect on correlations"):
        corr = svc.correlations(c.ds, c.method, c.variant, c.annotators, c.n_boot, c.raters.pairs)
        effect = svc.prompt_effect(corr)
        if not len(effect):
            st.info("No LLM judge has a correlation with the humans here.")
            return
        st.caption(
            f"As HANNA's Figures 7 (overall) and 8 (system level): for each model, its "
            f"{c.corr_label} with the human mean under each prompt, averaged over the "
            "attributes. Models are the judge names without the prompt; automatic measures "
            "have no prompt and are not shown."
        )
        cols = st.columns(2)
        for col, (level, ref) in zip(cols, LEVELS.items(), strict=True):
            sel = effect[effect["level"] == level]
            with col:
                if not len(sel) or not np.isfinite(sel["value"]).any():
                    st.info(f"No {level}-level correlation could be computed.")
                    continue
                fig = px.bar(
                    sel,
                    x="model",
                    y="value",
                    color="prompt_id",
                    barmode="group",
                    hover_data={"n_attributes": True, "value": ":.3f"},
                    labels={"value": f"mean {c.corr_label}", "prompt_id": "prompt", "model": ""},
                )
                ui.figure(
                    fig,
                    f"Prompt effect on the {level} {c.corr_label} ({ref})",
                    page=PAGE,
                    data=sel,
                )


def render_system_ratings(c: Choices) -> None:
    """A judge's mean rating per system and criterion, with 95% intervals (HANNA Tables
    6/7)."""
    systems = systems_of(c.ds)
    if not c.raters.labels or len(systems) < 1:
        return
    st.header("Ratings per system")
    with ui.guard("Ratings per system"):
        labels = c.raters.labels
        label = ui.select(
            "Judge",
            labels,
            key=f"{PAGE}.sys_judge",
            index=kept_index(labels, "app.judge"),
            help="HANNA's Tables 6 and 7 show Beluga-13B and Mistral-7B with Eval-Prompt 1.",
        )
        pick = c.raters.table[c.raters.table["label"] == label].iloc[0]
        table = svc.system_ratings(c.ds, pick["judge"], pick["prompt_id"])
        if not len(table):
            st.info(f"**{ui.safe(label)}** rated no candidate with a system label.")
            return
        st.caption(
            "As HANNA's Tables 6 and 7: the judge's mean rating of each system's stories per "
            "criterion ± the half-width of the 95% t interval of the mean; **Average** pools "
            "every criterion. Systems left out in the sidebar's analysis scope are not shown."
        )
        means, hover, text = svc.system_ratings_frames(table, systems)
        finite = means.to_numpy(dtype=float)
        finite = finite[np.isfinite(finite)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        fig = ui.heatmap(means, hover, zmin=low, zmax=high, scale=ui.SEQUENTIAL)
        fig.update_traces(text=text.to_numpy(dtype=object))
        ui.figure(fig, f"{label}: mean rating per system and criterion", page=PAGE, data=table)
        with st.expander("The numbers as a table"):
            ui.table(
                text.reset_index(names="system"),
                f"{label}: mean rating ± 95% interval per system and criterion",
                page=PAGE,
                hide_index=True,
            )
