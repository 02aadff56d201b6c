"""The Human agreement page's sections on consistency: the humans among themselves
(inter-annotator agreement, the human baseline) and each judge with itself across samples."""

from __future__ import annotations

import streamlit as st

from pages.agreement import PAGE, Choices
from pages.services import agreement as svc
from pages.shell import ui


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
                " The human verdicts' agreement with each other is in the **Pairwise judges** tab."
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
            base = svc.baseline(c.ds, c.group, c.method, c.variant, c.reference)
            ui.table(
                base,
                f"Human baseline ({c.corr_label}): {svc.BASELINES[c.reference]}",
                page=PAGE,
                hide_index=True,
            )
    if c.baseline_group:
        with ui.guard("Annotator pairs"):
            _annotator_pairs(c)


def _annotator_pairs(c: Choices) -> None:
    """Chiang & Lee (2023) Table 6: the correlation between every pair of annotators."""
    names = c.groups[c.group]
    n_pairs = len(names) * (len(names) - 1) // 2
    st.subheader("Annotator pairs")
    unit = st.radio(
        "Unit",
        ["overall", "system", "item"],
        horizontal=True,
        key=f"{PAGE}.pairs_unit",
        help="overall: every item pooled (Chiang & Lee's Table 6); system: per-system means; "
        "item: within each context, averaged.",
    )
    table = svc.annotator_pairs(c.ds, c.group, tuple(names), c.method, c.variant, unit)
    title = f"{c.corr_label} between annotator pairs ({c.group}), {unit} level"
    if n_pairs > MAX_PAIRS:
        st.caption(f"{n_pairs} pairs of annotators: too many for a matrix; the table lists them.")
        ui.table(table, title, page=PAGE, hide_index=True)
        return
    st.caption(
        "As in Chiang & Lee (2023, Table 6): the correlation of each pair of annotators' scores "
        "on the items both rated, per attribute; the last row averages the attributes."
    )
    values, hover = svc.pairs_matrix(table)
    fig = ui.heatmap(values, hover, zmin=-1, zmax=1, zmid=0, scale=ui.DIVERGING, fmt=".2f")
    ui.figure(fig, title, page=PAGE, data=table)


#: Above this many annotator pairs the pairs are listed in a table, not drawn as a matrix.
MAX_PAIRS = 45


def render_self_consistency(c: Choices) -> None:
    st.header("Judge self-consistency")
    if not len(c.ds.ratings) or not len(c.raters.judges):
        st.info("Self-consistency needs LLM judge ratings with several samples (tries) per item.")
        return
    with ui.guard("Self-consistency"):
        sc = svc.self_consistency(c.ds)
        if not len(sc) or not sc["icc2k"].notna().any():
            st.info(
                "Every judge here has one sample per item, so its agreement with itself "
                "cannot be measured. Run a judge with 2 or more samples on the Judge page."
            )
        st.caption(
            "ICC2k across samples (tries) of the same item, Krippendorff's alpha across the "
            "samples (interval and ordinal; Chiang & Lee 2023, Table 1), and the share of items "
            "whose samples are all identical. Automatic measures (one value per item) are not "
            "listed."
        )
        ui.table(sc, "Judge self-consistency", page=PAGE, hide_index=True)
