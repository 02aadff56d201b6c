"""Prompt sensitivity: how the template (and temperature) a judge runs with changes its
ratings, the rankings they induce, how often its answers can be read, and — for pairwise
judges — its position bias and accuracy."""

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from data.schema import HUMAN_JUDGE_PREFIX
from pages.services import prompts as svc
from pages.shell import state, system_groups, ui

PAGE = "prompts"


def _per_template(pb: pd.DataFrame, column: str, label: str, line: str, title: str) -> None:
    """A share per pairwise judge (its template in its name) and attribute, against 0.5."""
    fig = ui.judge_bars(pb, column, labels={column: label})
    fig.add_hline(y=0.5, line_dash="dot", annotation_text=line)
    ui.figure(fig, title, page=PAGE, data=pb)


st.title("Prompt sensitivity")
st.markdown(
    "The same judge under different templates (prompts) and temperatures: do the scores move, "
    "do the **rankings** they induce stay the same, and how often can the answers not be read?"
)
state.scope_caption()

ds = state.analysed()
comps = ds.comparisons
has_pairwise = bool(len(comps)) and bool(
    (~comps["judge"].astype(str).str.startswith(HUMAN_JUDGE_PREFIX)).any()
)
ui.need(
    len(ds.ratings) > 0 or has_pairwise,
    f"**{ui.safe(state.active_name())}** has no judge outputs. Run a judge with two or more "
    "templates "
    "on the Judge page, or load HANNA (4 Eval-Prompts), SummEval (5 ChatGPT prompting "
    "methods), Topical-Chat or the demo on the Data page.",
)

# ------------------------------------------------------------------------------ ratings
if len(ds.ratings):
    st.header("Absolute ratings")
    with ui.guard("Prompt sensitivity of the ratings"):
        variants = svc.rating_variants(ds)
        models = svc.model_options(variants)
        measures = svc.automatic_models(variants)
        n_templates = variants.groupby("model")["variant"].nunique()

        def model_label(m: str) -> str:
            if m in measures:
                return f"{ui.short(m)} (automatic measure, no prompt)"
            n = n_templates[m]
            return f"{ui.short(m)} ({n} template{'s' if n > 1 else ''})"

        c1, c2, c3 = st.columns(3)
        with c1:
            model = ui.select(
                "Judge model",
                models,
                key=f"{PAGE}.model",
                format_func=model_label,
                help="Judge names without their template and decoding tag; the model with "
                "the most templates comes first. Automatic measures (BLEU, BERTScore, ...) "
                "have no prompt: they are listed after the LLM judges.",
            )
        mine = variants[variants["model"] == model]
        names = sorted(mine["variant"].unique())
        with c2:
            attribute = ui.select(
                "Attribute", sorted(mine["attribute"].astype(str).unique()), key=f"{PAGE}.attribute"
            )
        with c3:
            baseline = ui.select(
                "Baseline template",
                names,
                key=f"{PAGE}.baseline",
                help="Mean shifts are measured against this template.",
            )
        ui.settings(
            PAGE,
            {
                "model": model,
                "attribute": attribute,
                "baseline": baseline,
                **state.scope_settings(),
            },
        )

        several = len(names) > 1
        shifts = svc.mean_shift(ds, model, baseline) if several else pd.DataFrame()
        fails = svc.rating_failure_frame(variants, model)
        has_systems = "system" in ds.candidates.columns and ds.candidates["system"].notna().any()

        m1, m2, m3 = st.columns(3)
        with m1:
            ui.metric(
                "Templates",
                f"{len(names)}",
                f"templates (and temperatures) {ui.safe(model)} was run with here",
            )
        with m2:
            if several and shifts["shift"].notna().any():
                big = shifts.loc[shifts["shift"].abs().idxmax()]
                ui.metric(
                    "Largest mean shift",
                    f"{big['shift']:+.2f}",
                    f"{ui.safe(big['variant'])} vs {ui.safe(baseline)} on "
                    f"{ui.safe(big['attribute'])} (score points)",
                )
            elif several:
                ui.metric(
                    "Largest mean shift",
                    "n/a",
                    f"no other template has two items whose answers parsed under it and "
                    f"under {ui.safe(baseline)}",
                )
            else:
                ui.metric("Largest mean shift", "–", "needs two or more templates")
        with m3:
            rate = float(fails["n_failed"].sum() / max(fails["n_outputs"].sum(), 1))
            ui.metric(
                "Unparsed answers",
                f"{rate:.1%}",
                "share of all ratings of this model whose score could not be read",
            )
        if model in measures:
            st.info(
                f"**{ui.safe(model)}** is an automatic measure: it has no prompt, so there is no "
                "prompt effect to measure; its score distribution is below. Compare it with "
                "the LLM judges on the Human agreement page."
            )
        elif not several:
            st.info(
                f"**{ui.safe(model)}** was run with one template here ({ui.safe(names[0])}), so "
                "there is no "
                "prompt effect to measure; its distributions and parse failures are below. "
                "Pick another model, or run this judge with another template on the Judge page."
            )

        scores = mine.loc[mine["attribute"].astype(str) == attribute, ["variant", "score"]]
        parsed = scores["score"].notna().groupby(scores["variant"]).any()
        never = sorted(parsed.index[~parsed.to_numpy()].astype(str))
        if never:
            st.warning(
                f"No answer of {ui.safe(model)} under {ui.listed(never, 10)} could be parsed on "
                f"{ui.safe(attribute)}: there is no score to compare, so its shifts and rank "
                "correlations are n/a. The parse failures per template are at the bottom."
            )

        st.subheader("Rating distributions")
        shape = st.radio("Show as", ["box", "violin"], horizontal=True, key=f"{PAGE}.shape")
        sel = mine[mine["attribute"].astype(str) == attribute].dropna(subset=["score"])
        temps = sel["temperature"].dropna().unique()
        if len(temps) > 1:
            sel = sel.assign(temperature=sel["temperature"].map(lambda t: f"t = {t:g}"))
            colour = "temperature"
        else:
            colour = "variant"
        plot = px.box if shape == "box" else px.violin
        fig = plot(
            sel,
            x="variant",
            y="score",
            color=colour,
            category_orders={"variant": names},
            labels={"variant": "template", "score": f"{attribute} score"},
        )
        ui.figure(
            fig,
            f"{model}: {attribute} scores per template",
            page=PAGE,
            data=sel.drop(columns=["raw"], errors="ignore"),
        )

        if several:
            st.subheader("Mean shift against the baseline")
            st.caption(
                f"Per item (context and candidate), the mean score under each template "
                f"minus the score under **{ui.safe(baseline)}**; 95% t intervals over items."
            )
            fig = go.Figure()
            for n, (attr, g) in enumerate(shifts.groupby("attribute", sort=True)):
                fig.add_trace(
                    go.Scatter(
                        x=g["variant"],
                        y=g["shift"],
                        mode="markers",
                        name=str(attr),
                        marker=dict(size=10, color=ui.PALETTE_LONG[n % len(ui.PALETTE_LONG)]),
                        error_y=dict(
                            type="data",
                            symmetric=False,
                            array=g["upper"] - g["shift"],
                            arrayminus=g["shift"] - g["lower"],
                        ),
                    )
                )
            fig.add_hline(y=0, line_dash="dot")
            fig.update_layout(
                scattermode="group", yaxis_title=f"shift vs {baseline}", xaxis_title="template"
            )
            ui.figure(fig, f"{model}: mean shift vs {baseline}", page=PAGE, data=shifts)

            st.subheader("Rank stability between templates")
            levels = ["system", "item"] if has_systems else ["item"]
            level = st.radio(
                "Rankings of",
                levels,
                horizontal=True,
                key=f"{PAGE}.rank_level",
                format_func={
                    "system": "systems (by mean score)",
                    "item": "candidates within each context",
                }.get,
            )
            tau = svc.rank_stability(ds, model, attribute, level)
            z = tau.to_numpy(dtype=float)
            fig = go.Figure(
                go.Heatmap(
                    z=z,
                    x=list(tau.columns),
                    y=list(tau.index),
                    zmin=-1,
                    zmax=1,
                    zmid=0,
                    colorscale=ui.DIVERGING,
                    text=np.round(z, 3),
                    texttemplate="%{text}",
                    hovertemplate="%{y} vs %{x}: Kendall tau-b %{z:.3f}<extra></extra>",
                )
            )
            fig.update_layout(yaxis=dict(autorange="reversed"), height=140 + 45 * len(tau))
            off = z[~np.eye(len(z), dtype=bool)]
            st.caption(
                "Kendall tau-b between the rankings two templates induce"
                + (" (mean over contexts)" if level == "item" else "")
                + (f"; lowest pair: {np.nanmin(off):.3f}." if np.isfinite(off).any() else ".")
            )
            ui.figure(
                fig,
                f"{model}: rank stability ({level} level), {attribute}",
                page=PAGE,
                data=tau.reset_index(names="template"),
            )

        st.subheader("Parse failures per template")
        if not fails["n_failed"].any():
            # an empty bar chart says nothing: one line does
            st.caption(
                f"No unparsed answers: every one of the {int(fails['n_outputs'].sum()):,} "
                f"answers of {ui.safe(model)} could be read."
            )
        else:
            fig = px.bar(
                fails,
                x="variant",
                y="failure_rate",
                color="attribute",
                barmode="group",
                labels={"variant": "template", "failure_rate": "share unparsed"},
                hover_data=["n_failed", "n_outputs"],
            )
            fig.update_yaxes(tickformat=".0%", rangemode="tozero")
            ui.figure(fig, f"{model}: unparsed answers per template", page=PAGE, data=fails)

        with ui.guard("Comparing two groups of systems"):
            system_groups.render(
                svc.variant_item_scores(ds, model, attribute),
                names,
                key=f"{PAGE}.groups",
                page=PAGE,
                title=f"{model}, {attribute}",
                y_title=f"{attribute} score (mean over samples)",
                caption="As in Chiang & Lee (2023, Table 1), under each template: the mean "
                "± sd of each group's items (the score averaged over the judge's samples) "
                "and Welch's t-test between the groups (two-sided, unequal variances). "
                "Does the template change how far apart the judge puts the groups? Systems "
                "left out in the sidebar are not offered.",
            )

# ------------------------------------------------------------------------------ pairwise
if has_pairwise:
    st.header("Pairwise judges")
    st.caption(
        "Each pairwise judge's name carries its template (and decoding settings), so "
        "templates compare side by side."
    )
    with ui.guard("Position bias and accuracy per template"):
        pb = svc.pairwise_by_template(ds)
        if not len(pb):
            st.info("No pairwise judge has a parsed comparison here.")
        else:
            _per_template(
                pb,
                "first_position_win_rate",
                "first-position win rate",
                "no bias",
                "First-position win rate per judge and template",
            )
            if pb["pairwise_accuracy"].notna().any():
                _per_template(
                    pb,
                    "pairwise_accuracy",
                    "pairwise accuracy",
                    "chance",
                    "Pairwise accuracy per judge and template",
                )
            else:
                st.info(
                    "Pairwise accuracy needs human scores or human verdicts for the same "
                    "candidates; this dataset has none."
                )
            ui.table(pb, "Pairwise judges per template", page=PAGE, hide_index=True)
