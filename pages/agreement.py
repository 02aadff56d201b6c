"""Human agreement: judges against human raters, humans against each other, judges against
themselves, and which judge differences are significant."""

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from data.schema import HUMAN_JUDGE_PREFIX
from pages import state, ui
from pages.services import agreement as svc
from pages.services import common

PAGE = "agreement"

st.title("Human agreement")
st.markdown(
    "How closely each judge follows the human raters — within each context (**item**), over "
    "per-system means (**system**) and over all items pooled (**overall**) — next to how "
    "closely the humans follow each other (the **human baseline**)."
)

ds = state.active()
key = common.dataset_key()
comps = ds.comparisons
human_verdicts = (
    bool(len(comps)) and comps["judge"].astype(str).str.startswith(HUMAN_JUDGE_PREFIX).any()
)
has_humans = len(ds.human_scores) > 0
ui.need(
    has_humans or human_verdicts,
    f"**{state.active_name()}** has no human scores or human verdicts, so there is nothing to "
    "agree with. Load a set with human annotations on the Data page (HANNA, SummEval, "
    "Topical-Chat, PandaLM or the demo), or upload human scores.",
)

# ------------------------------------------------------------------------------ settings
groups = svc.reference_groups(ds)
c1, c2, c3 = st.columns(3)
corr_label = c1.selectbox(
    "Correlation",
    list(svc.CORRELATIONS),
    key=f"{PAGE}.method",
    help="Kendall tau-b adjusts for ties (Likert scores have many); tau-c suits scales with "
    "few values; Spearman and Pearson are the other usual choices.",
)
method, variant = svc.CORRELATIONS[corr_label]
group = None
if groups:
    names = list(groups)
    default = svc.default_group(groups)
    with c2:
        group = ui.select(
            "Human reference",
            names,
            key=f"{PAGE}.group",
            index=names.index(default),
            format_func=lambda g: f"{g} ({len(groups[g])} annotator(s))",
            help="Judges are compared with the mean score of these annotators.",
        )
annotators = tuple(groups[group]) if group else None
n_boot = c3.select_slider(
    "Bootstrap replicates",
    [0, 100, 200, 500, 1000, 2000],
    value=200,
    key=f"{PAGE}.n_boot",
    help="Intervals resample contexts; more replicates are steadier and slower (cached).",
)
ui.settings(
    PAGE,
    {
        "correlation": corr_label,
        "human reference": group,
        "annotators": list(annotators or []),
        "bootstrap replicates": n_boot,
    },
)


# ------------------------------------------------------------------------------ judges vs humans
st.header("Judges against humans")
if not len(ds.ratings) or not has_humans:
    st.info(
        "Correlations need judge **ratings** (absolute scores) and human scores for the same "
        "candidates; this dataset has "
        + ("no judge ratings." if has_humans else "no human scores (only human verdicts).")
        + " Run an absolute judge on the Judge page, or see the pairwise sections below."
    )
else:
    with ui.guard("Judge-human correlations"):
        corr = svc.agreement_correlations(key, method, variant, annotators, n_boot)
        base = pd.DataFrame()
        if group and len(groups[group]) > 1:
            base = svc.agreement_baseline(key, group, method, variant)
        base_mean = base[base["annotator"] == "mean"] if len(base) else base
        overall = corr[corr["level"] == "overall"].dropna(subset=["value"])
        m1, m2, m3 = st.columns(3)
        with m1:
            if len(overall):
                best = overall.loc[overall["value"].idxmax()]
                ui.metric(
                    "Best judge (overall)",
                    f"{best['value']:.3f}",
                    f"{best['label']} on {best['attribute']}: {corr_label} with the human "
                    "mean over all items",
                )
            else:
                ui.metric("Best judge (overall)", "–", "no overall correlation could be computed")
        with m2:
            hb = base_mean[base_mean["level"] == "overall"]["value"] if len(base_mean) else []
            ui.metric(
                "Human baseline (overall)",
                f"{np.nanmean(hb):.3f}" if len(hb) and np.isfinite(hb).any() else "–",
                "each annotator against the mean of the others, averaged over attributes"
                if len(hb)
                else "needs two or more annotators in the reference group",
            )
        with m3:
            ui.metric(
                "Judges × prompts",
                f"{corr['label'].nunique()}",
                f"judge and prompt combinations rated against {len(annotators or [])} annotator(s)",
            )

        tabs = st.tabs([f"{lv} level" for lv in svc.UNITS])
        for tab, (level, help_line) in zip(tabs, svc.UNITS.items(), strict=True):
            with tab:
                st.caption(f"**{level}**: {help_line}. Hover a cell for its interval.")
                values, hover = svc.correlation_heatmap_frames(corr, level)
                if len(base_mean):
                    bl = base_mean[base_mean["level"] == level].set_index("attribute")["value"]
                    row = "human baseline (annotator vs others)"
                    values.loc[row] = bl.reindex(values.columns)
                    hover.loc[row] = [
                        f"human baseline: {v:.3f}" if np.isfinite(v) else "undefined"
                        for v in values.loc[row]
                    ]
                fig = ui.heatmap(values, hover, zmin=-1, zmax=1, zmid=0, scale=ui.DIVERGING)
                ui.figure(
                    fig,
                    f"{corr_label} with humans, {level} level",
                    page=PAGE,
                    data=corr[corr["level"] == level],
                )

        st.subheader("Correlations with intervals")
        a1, a2 = st.columns(2)
        attrs = sorted(corr["attribute"].unique())
        with a1:
            attribute = ui.select("Attribute", attrs, key=f"{PAGE}.dot_attr")
        level = a2.selectbox("Level", list(svc.UNITS), index=2, key=f"{PAGE}.dot_level")
        sel = corr[(corr["attribute"] == attribute) & (corr["level"] == level)]
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
                    annotation_text="human baseline",
                )
        fig.update_layout(yaxis_title=corr_label, xaxis_title="")
        ui.figure(fig, f"{corr_label} per judge: {attribute}, {level} level", page=PAGE, data=sel)

        st.subheader("Judge scores against the human mean")
        pairs = corr[["label", "judge", "prompt_id"]].drop_duplicates()
        label = ui.select("Judge", pairs["label"].tolist(), key=f"{PAGE}.scatter_judge")
        pick = pairs[pairs["label"] == label].iloc[0]
        points = svc.agreement_scatter(key, pick["judge"], pick["prompt_id"], annotators)
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

# ------------------------------------------------------------------------------ humans
st.header("Humans among themselves")
if not has_humans or not any(len(m) > 1 for m in groups.values()):
    st.info(
        "Inter-annotator agreement needs two or more annotators per item; "
        + (
            "this dataset stores one (already averaged) score per item."
            if has_humans
            else "this dataset has no human scores."
        )
        + (
            " The human verdicts' agreement with each other is under **Pairwise judges** below."
            if human_verdicts
            else ""
        )
    )
else:
    with ui.guard("Inter-annotator agreement"):
        iaa = svc.agreement_iaa(key)
        st.caption(
            "ICC2k: reliability of the annotators' mean (two-way random effects); "
            "Krippendorff's alpha at three measurement levels; share of items where every "
            "annotator gave the same score."
        )
        ui.table(iaa, "Human inter-annotator agreement", page=PAGE, hide_index=True)
        if group and len(groups[group]) > 1:
            base = svc.agreement_baseline(key, group, method, variant)
            ui.table(
                base,
                f"Human baseline ({corr_label}): each annotator vs the others",
                page=PAGE,
                hide_index=True,
            )

# ------------------------------------------------------------------------------ self-consistency
st.header("Judge self-consistency")
if not len(ds.ratings):
    st.info("Self-consistency needs judge ratings with several samples (tries) per item.")
else:
    with ui.guard("Self-consistency"):
        sc = svc.agreement_self_consistency(key)
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

# ------------------------------------------------------------------------------ Williams
st.header("Which judge differences are significant?")
n_combos = len(ds.ratings[["judge", "prompt_id"]].drop_duplicates()) if len(ds.ratings) else 0
if not has_humans or n_combos < 2:
    st.info(
        "Williams' test compares two judges' correlations with the same humans; it needs "
        "ratings from two or more judges (or prompts) and human scores."
    )
else:
    with ui.guard("Williams tests"):
        w1, w2 = st.columns(2)
        shared = ds.ratings.groupby("prompt_id", observed=True)["judge"].nunique().max() > 1
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
        wt = svc.agreement_williams(key, method, variant, annotators, w_level, across)
        if not len(wt):
            st.info("No prompt has two or more judges here; choose **every judge and prompt**.")
        else:
            w3, w4 = st.columns(2)
            with w3:
                w_attr = ui.select(
                    "Attribute", sorted(wt["attribute"].unique()), key=f"{PAGE}.w_attr"
                )
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

# ------------------------------------------------------------------------------ pairwise judges
model_comps = len(comps) and (~comps["judge"].astype(str).str.startswith(HUMAN_JUDGE_PREFIX)).any()
if model_comps or human_verdicts:
    st.header("Pairwise judges")
if model_comps and has_humans:
    with ui.guard("Pairwise accuracy"):
        acc = svc.agreement_pairwise_accuracy(key, annotators)
        st.caption(
            "Share of compared pairs (both orders) where the judge prefers the "
            "candidate the humans scored higher; pairs the humans tied are left out."
        )
        fig = px.bar(
            acc, x="judge", y="accuracy", color="attribute", barmode="group", range_y=[0, 1]
        )
        fig.add_hline(y=0.5, line_dash="dot", annotation_text="chance")
        ui.figure(fig, "Pairwise accuracy against human scores", page=PAGE, data=acc)
if human_verdicts:
    with ui.guard("Agreement with human verdicts"):
        va = svc.agreement_verdicts(key)
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
