"""The Human agreement page's sections on consistency: the humans among themselves
(inter-annotator agreement, the human baseline) and each judge with itself across samples."""

from __future__ import annotations

import streamlit as st

from pages import ui
from pages.agreement_page import PAGE, Choices
from pages.services import agreement as svc


def render_humans(c: Choices) -> None:
    st.header("Humans among themselves")
    if not c.has_humans or not any(len(m) > 1 for m in c.groups.values()):
        st.info(
            "Inter-annotator agreement needs two or more annotators per item; "
            + (
                "this dataset stores one (already averaged) score per item."
                if c.has_humans
                else "this dataset has no human scores."
            )
            + (
                " The human verdicts' agreement with each other is under **Pairwise judges** below."
                if c.human_verdicts
                else ""
            )
        )
        return
    with ui.guard("Inter-annotator agreement"):
        iaa = svc.iaa(c.ds)
        st.caption(
            "ICC2k: reliability of the annotators' mean (two-way random effects); "
            "Krippendorff's alpha at three measurement levels; share of items where every "
            "annotator gave the same score."
        )
        ui.table(iaa, "Human inter-annotator agreement", page=PAGE, hide_index=True)
        if c.baseline_group:
            base = svc.baseline(c.ds, c.group, c.method, c.variant)
            ui.table(
                base,
                f"Human baseline ({c.corr_label}): each annotator vs the others",
                page=PAGE,
                hide_index=True,
            )


def render_self_consistency(c: Choices) -> None:
    st.header("Judge self-consistency")
    if not len(c.ds.ratings):
        st.info("Self-consistency needs judge ratings with several samples (tries) per item.")
        return
    with ui.guard("Self-consistency"):
        sc = svc.self_consistency(c.ds)
        if not sc["icc2k"].notna().any():
            st.info(
                "Every judge here has one sample per item, so its agreement with itself "
                "cannot be measured. Run a judge with 2 or more samples on the Judge page."
            )
        st.caption(
            "ICC2k across samples (tries) of the same item, and the share of items "
            "whose samples are all identical."
        )
        ui.table(sc, "Judge self-consistency", page=PAGE, hide_index=True)
