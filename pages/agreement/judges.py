"""The Human agreement page's "Judges against humans" section: correlation heatmaps per
unit with the human baseline, the correlations with their intervals, and one judge's scores
against the human mean."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from pages.agreement import PAGE, Choices, kept_index
from pages.services import agreement as svc
from pages.shell import ui


def render(c: Choices) -> None:
    st.header("Judges against humans")
    if not len(c.ds.ratings) or not c.has_humans:
        st.info(
            "Correlations need judge **ratings** (absolute scores) and human scores for the "
            "same candidates; this dataset has "
            + ("no judge ratings." if c.has_humans else "no human scores (only human verdicts).")
            + " Run an absolute judge on the Judge page, or see the **Pairwise judges** tab."
        )
        return
    if not c.raters.pairs:
        st.info("Pick at least one LLM judge or automatic measure above.")
        return
    with ui.guard("Judge-human correlations"):
        corr = svc.correlations(c.ds, c.method, c.variant, c.annotators, c.n_boot, c.raters.pairs)
        base = pd.DataFrame()
        if c.baseline_group:
            base = svc.baseline(c.ds, c.group, c.method, c.variant, c.reference)
        base_mean = base[base["annotator"] == "mean"] if len(base) else base
        _metrics(c, corr, base_mean)
        _heatmaps(c, corr, base_mean)
        _intervals(c, corr, base_mean)
        _scatter(c, corr)


def _metrics(c: Choices, corr: pd.DataFrame, base_mean: pd.DataFrame) -> None:
    overall = corr[corr["level"] == "overall"].dropna(subset=["value"])
    m1, m2, m3 = st.columns(3)
    with m1:
        if len(overall):
            best = overall.loc[overall["value"].idxmax()]
            ui.metric(
                "Best judge (overall)",
                f"{best['value']:.3f}",
                f"{ui.safe(best['label'])} on {ui.safe(best['attribute'])}: {c.corr_label} "
                "with the human "
                "mean over all items",
            )
        else:
            ui.metric("Best judge (overall)", "–", "no overall correlation could be computed")
    with m2:
        hb = base_mean[base_mean["level"] == "overall"]["value"] if len(base_mean) else []
        ui.metric(
            "Human baseline (overall)",
            f"{np.nanmean(hb):.3f}" if len(hb) and np.isfinite(hb).any() else "–",
            f"{svc.BASELINES[c.reference]}, averaged over attributes"
            if len(hb)
            else "needs two or more annotators in the reference group",
        )
    with m3:
        n_auto = corr.loc[corr["automatic"], "label"].nunique()
        ui.metric(
            "Judges × prompts",
            f"{corr.loc[~corr['automatic'], 'label'].nunique()}",
            f"judge and prompt combinations rated against {len(c.annotators or [])} "
            "annotator(s)" + (f", beside {n_auto} automatic measure(s)" if n_auto else ""),
        )


def _heatmaps(c: Choices, corr: pd.DataFrame, base_mean: pd.DataFrame) -> None:
    tabs = st.tabs([f"{lv} level" for lv in svc.UNITS])
    for tab, (level, help_line) in zip(tabs, svc.UNITS.items(), strict=True):
        with tab:
            st.caption(
                f"**{level}**: {help_line}. Hover a cell for its interval."
                + (
                    " Automatic measures are the rows after the LLM judges."
                    if c.raters.measures
                    else ""
                )
                + (f" Human baseline: {svc.BASELINES[c.reference]}." if len(base_mean) else "")
            )
            values, hover = svc.correlation_heatmap_frames(corr, level, c.raters.labels)
            if len(base_mean):
                bl = base_mean[base_mean["level"] == level].set_index("attribute")["value"]
                row = c.baseline_row
                values.loc[row] = bl.reindex(values.columns)
                hover.loc[row] = [
                    f"human baseline: {v:.3f}" if np.isfinite(v) else "undefined"
                    for v in values.loc[row]
                ]
            fig = ui.heatmap(values, hover, zmin=-1, zmax=1, zmid=0, scale=ui.DIVERGING)
            ui.figure(
                fig,
                f"{c.corr_label} with humans, {level} level",
                page=PAGE,
                data=corr[corr["level"] == level],
            )


def _intervals(c: Choices, corr: pd.DataFrame, base_mean: pd.DataFrame) -> None:
    st.subheader("Correlations with intervals")
    a1, a2 = st.columns(2)
    attrs = sorted(corr["attribute"].unique())
    with a1:
        attribute = ui.select(
            "Attribute", attrs, key=f"{PAGE}.dot_attr", index=kept_index(attrs, "app.attribute")
        )
    level = a2.selectbox("Level", list(svc.UNITS), index=2, key=f"{PAGE}.dot_level")
    sel = corr[(corr["attribute"] == attribute) & (corr["level"] == level)]
    rank = {label: i for i, label in enumerate(c.raters.labels)}  # LLM judges first
    sel = sel.iloc[np.argsort([rank.get(x, len(rank)) for x in sel["label"]], kind="stable")]
    fig = go.Figure(
        go.Scatter(
            x=sel["label"],
            y=sel["value"],
            mode="markers",
            marker=dict(size=11),
            error_y=dict(
                type="data",
                symmetric=False,
                array=sel["upper"] - sel["value"],
                arrayminus=sel["value"] - sel["lower"],
            ),
            hovertemplate="%{x}: %{y:.3f}<extra></extra>",
        )
    )
    if len(base_mean):
        bl = base_mean[(base_mean["level"] == level) & (base_mean["attribute"] == attribute)]
        if len(bl) and np.isfinite(bl["value"].iloc[0]):
            fig.add_hline(
                y=float(bl["value"].iloc[0]),
                line_dash="dash",
                line_color=ui.PALETTE[5],
                annotation_text=c.baseline_row,
            )
    fig.update_layout(yaxis_title=c.corr_label, xaxis_title="")
    ui.figure(fig, f"{c.corr_label} per judge: {attribute}, {level} level", page=PAGE, data=sel)


def _scatter(c: Choices, corr: pd.DataFrame) -> None:
    st.subheader("Judge scores against the human mean")
    pairs = corr[["label", "judge", "prompt_id"]].drop_duplicates()
    present = set(pairs["label"])
    labels = [x for x in c.raters.labels if x in present]  # LLM judges first
    label = ui.select(
        "Judge", labels, key=f"{PAGE}.scatter_judge", index=kept_index(labels, "app.judge")
    )
    pick = pairs[pairs["label"] == label].iloc[0]
    points = svc.scatter(c.ds, pick["judge"], pick["prompt_id"], c.annotators)
    fig = px.scatter(
        points,
        x="x_jitter",
        y="y_jitter",
        facet_col="attribute",
        facet_col_wrap=3,
        opacity=0.45,
        hover_data={
            "context_id": True,
            "candidate_id": True,
            "human": ":.2f",
            "score": ":.2f",
            "x_jitter": False,
            "y_jitter": False,
        },
        labels={"x_jitter": "human mean", "y_jitter": "judge score"},
    )
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
    fig.update_layout(height=300 * int(np.ceil(points["attribute"].nunique() / 3)) + 80)
    st.caption("Points are jittered by up to ±0.15 so that piled-up Likert scores show.")
    ui.figure(
        fig,
        f"{label} against the human mean",
        page=PAGE,
        data=points.drop(columns=["x_jitter", "y_jitter"]),
    )
