"""The Human agreement page's "Pairwise judges" section: pairwise accuracy of comparative
judges against the human scores, and agreement with the human verdicts (Cohen's kappa): a
judge x annotator heatmap for a few annotators, a per-annotator summary for a crowd."""

from __future__ import annotations

import numpy as np
import plotly.express as px
import streamlit as st

from data.agreement.verdicts import MAJORITY
from data.schema import HUMAN_JUDGE_PREFIX
from pages.agreement import PAGE, Choices
from pages.services import agreement as svc
from pages.services.calibration import DEBIAS_MODES, debiased_dataset
from pages.services.common import fmt
from pages.shell import debias, ui


def render(c: Choices) -> None:
    comps = c.ds.comparisons
    model_comps = (
        bool(len(comps)) and (~comps["judge"].astype(str).str.startswith(HUMAN_JUDGE_PREFIX)).any()
    )
    if model_comps or c.human_verdicts:
        st.header("Pairwise judges")
    ds = _debiased(c) if model_comps else c.ds
    if model_comps and c.has_humans:
        with ui.guard("Pairwise accuracy"):
            acc = svc.pairwise_accuracy(ds, c.annotators)
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
            va = svc.verdicts(ds)
            humans = va.loc[va["is_human"], "judge"].nunique()
            if humans > svc.MAX_HEATMAP_ANNOTATORS:
                _crowd(c, va, humans)
            else:
                _matrix(va)


def _debiased(c: Choices):
    """The dataset with the model judges' comparisons under the shared debias setting (set on
    Position bias or Judge bias), said in one line; the human verdicts stay the reference."""
    mode, tau = debias.shared()
    with ui.guard("Debiasing the pairwise judges"):
        ds, notes = debiased_dataset(c.ds, mode, tau)
        label = DEBIAS_MODES.get(mode, mode)
        if mode == "tau" or mode == "alpha":
            label += f" (tau = {tau:.2f})"
        st.caption(
            f"Debiasing of the pairwise judges: **{label}** (one setting for every page; "
            "change it on Position bias or Judge bias)."
        )
        for note in notes:
            st.caption(f"ℹ️ Ranked as off: {ui.safe(note, 400)}")
        return ds
    return c.ds


def _matrix(va) -> None:
    """Every judge against every annotator: a heatmap of Cohen's kappa (few annotators)."""
    st.caption(
        "Verdicts (A / B / tie) matched pair by pair: the share that agree and "
        "Cohen's kappa (agreement beyond chance). Rows of human annotators are "
        "the human baseline."
    )
    kappa = svc.natural_frame(
        va.pivot_table(index="judge", columns="annotator", values="cohen_kappa")
    )
    share = va.pivot_table(index="judge", columns="annotator", values="agreement")
    share = share.reindex(index=kappa.index, columns=kappa.columns)
    hover = share.map(lambda v: f"agreement {v:.3f}" if np.isfinite(v) else "–")
    fig = ui.heatmap(kappa, hover, zmin=-1, zmax=1, zmid=0, scale=ui.DIVERGING, fmt=".2f")
    ui.figure(fig, "Cohen's kappa with the human verdicts", page=PAGE, data=va)


def _crowd(c: Choices, va, humans: int) -> None:
    """Many annotators (a crowd): each annotator against the majority of the others, as a
    distribution with the top and bottom annotators, and the model judges against the
    human majority."""
    summary = svc.annotator_summary(c.ds)
    scored = summary[summary["cohen_kappa"].notna()]
    st.caption(
        f"{humans} human annotators: too many for an annotator × annotator matrix (most pairs "
        "of crowd workers share no item). Each annotator is compared with the **majority "
        "verdict of the other annotators** on the pairs it judged (pairs where the others "
        "tie are left out): the share that agree and Cohen's kappa."
    )
    m1, m2, m3 = st.columns(3)
    with m1:
        ui.metric("Annotators", str(humans), "human annotators with at least one verdict")
    with m2:
        ui.metric(
            "Median kappa with the others",
            fmt(scored["cohen_kappa"].median()) if len(scored) else "–",
            f"over {len(scored)} annotators with a defined kappa",
        )
    with m3:
        ui.metric(
            "Median verdicts per annotator",
            fmt(summary["n_verdicts"].median(), 0),
            f"{int(summary['n_verdicts'].sum())} verdicts in all",
        )
    models = va[~va["is_human"] & (va["annotator"] == MAJORITY)]
    if len(models):
        table = models[["judge", "n_pairs", "agreement", "cohen_kappa", "reason"]]
        ui.table(table, "Model judges against the human majority", page=PAGE, hide_index=True)
    if not len(scored):
        st.info("No annotator has a kappa with the others: their verdicts barely overlap.")
        return
    left, right = st.columns(2)
    with left:
        fig = px.histogram(scored, x="cohen_kappa", nbins=20)
        fig.update_layout(
            xaxis_title="Cohen's kappa with the others' majority", yaxis_title="annotators"
        )
        ui.figure(fig, "Annotators by agreement with the others", page=PAGE, data=summary)
    with right:
        fig = px.scatter(
            scored,
            x="n_verdicts",
            y="cohen_kappa",
            hover_name="name",
            log_x=True,
            hover_data={"agreement": ":.3f", "n_pairs": True},
        )
        fig.update_layout(xaxis_title="verdicts given (log scale)", yaxis_title="Cohen's kappa")
        ui.figure(fig, "Agreement against number of verdicts", page=PAGE, data=summary)
    cols = ["name", "n_verdicts", "n_pairs", "agreement", "cohen_kappa"]
    high, low = svc.top_bottom(scored, "cohen_kappa")
    busy, _ = svc.top_bottom(summary, "n_verdicts")
    t1, t2, t3 = st.columns(3)
    with t1:
        ui.table(
            high[cols], "Most in line with the others (top 10 by kappa)", page=PAGE, hide_index=True
        )
    with t2:
        ui.table(
            low[cols],
            "Least in line with the others (bottom 10 by kappa)",
            page=PAGE,
            hide_index=True,
        )
    with t3:
        ui.table(busy[cols], "Most verdicts (top 10)", page=PAGE, hide_index=True)
    with st.expander(f"All {humans} annotators"):
        ui.table(
            summary[cols + ["reason"]],
            "Every annotator against the others",
            page=PAGE,
            hide_index=True,
        )
