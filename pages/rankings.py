"""Rankings: the judge's probability matrix per context, rankings by win-ratio, maximum
likelihood and Bradley–Terry beside the human ranking, and the systems ranked by Bradley–Terry
and by Elo."""

import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from pages import choices, state, ui
from pages.services import bias, common, comparisons
from pages.services import rankings as svc

PAGE = "Rankings"

st.title("Rankings")
st.caption(
    "How the judge's pairwise answers become rankings, and how close those come to the humans'."
)

ds, attribute, judge = choices.attribute_and_judge(
    "rank",
    " to rank. Run a pairwise judge on the **Judge** page, or load the demo, SummEval (ChatGPT "
    "verdicts), PandaLM or LLMFAO on the **Data** page.",
    judge_help="The model (and template) whose comparisons are ranked; human annotators' "
    "verdicts can be ranked too.",
)

with ui.guard("Ranking the candidates"):
    pm = comparisons.pmatrix(ds, attribute, judge)
    ref = comparisons.human_reference(ds, attribute, judge)
    rk = svc.rankings(ds, attribute, judge)

    st.subheader("Agreement with humans")
    if ref is None:
        st.info(
            f"No human reference for **{attribute}** in this dataset (no human scores and no "
            "human verdicts), so agreement cannot be measured. The rankings are shown below; "
            "load a dataset with human scores (e.g. SummEval or the demo) to compare."
        )
    else:
        st.caption(f"Reference: {ref.source}.")
        if ref.same_as_judge:
            st.warning(
                "The judge is the human annotators themselves: agreement measures how well each "
                "method recovers the win-ratio of the same verdicts, not an independent check."
            )
        agree = rk.agreement.set_index("method")
        cols = st.columns(len(svc.METHODS) + 1)
        for col, method in zip(cols, svc.METHODS, strict=False):
            row = agree.loc[method]
            with col:
                st.markdown(f"**{method}**")
                ui.metric(
                    "Spearman",
                    common.fmt(row["spearman"]),
                    f"rank correlation with the humans per context, mean over "
                    f"{int(row['n_contexts'])} contexts",
                )
                ui.metric(
                    "Pairwise accuracy",
                    common.fmt(row["pairwise_accuracy"]),
                    "share of candidate pairs with different human scores that this "
                    "ranking orders as the humans do",
                )
        with cols[-1]:
            st.markdown("**judge comparisons**")
            raw = agree.loc["judge comparisons (tau = 0.5)", "pairwise_accuracy"]
            ui.metric(
                "Pairwise accuracy",
                common.fmt(raw),
                "share of the judge's single comparisons (p > 0.5 = first wins) that "
                "agree with the human order",
            )
    left_out = bias.unparsed_note(bias.unparsed(ds, attribute, judge))
    for note in ([left_out] if left_out else []) + rk.notes:
        st.caption(f"ℹ️ {note}")

    st.subheader("One context")
    c_left, c_right = st.columns(2)
    with c_left:
        contexts = list(range(len(pm.context_ids)))
        c = ui.select(
            "Context",
            contexts,
            key="rank.context",
            format_func=lambda k: f"{pm.context_ids[k]} ({len(pm.candidate_ids[k])} candidates)",
        )
    with c_right:
        method = ui.select(
            "Ranking method",
            list(svc.METHODS),
            key="rank.method",
            help="Win-ratio: share of comparisons won (p > 0.5). Maximum likelihood: the order "
            "that best explains all comparisons. Bradley–Terry: fitted strengths.",
        )
    ui.settings(
        PAGE,
        {
            "dataset": state.active_name(),
            "attribute": attribute,
            "judge": judge,
            "context": pm.context_ids[c],
            "ranking method": method,
        },
    )

    ids, block, counts, long = svc.matrix_view(pm, c)
    heat = go.Figure(
        go.Heatmap(
            z=block,
            x=ids,
            y=ids,
            customdata=counts,
            zmin=0.0,
            zmax=1.0,
            zmid=0.5,
            colorscale=ui.DIVERGING,
            colorbar=dict(title="p(first wins)"),
            hovertemplate="shown first: %{y}<br>shown second: %{x}<br>"
            "p(first wins) = %{z:.3f}<br>samples: %{customdata}<extra></extra>",
        )
    )
    heat.update_layout(
        xaxis_title="shown second",
        yaxis_title="shown first",
        yaxis_autorange="reversed",
        height=480,
    )
    frame = svc.context_frame(ds, pm, rk, ref, c, method)
    bump = svc.bump_frame(frame)
    order = (["human"] if ref is not None else []) + list(svc.METHODS)
    slope = px.line(
        bump,
        x="method",
        y="rank",
        color="candidate",
        markers=True,
        category_orders={"method": order},
    )
    slope.update_layout(
        yaxis_autorange="reversed", yaxis_dtick=1, height=480, yaxis_title="rank (1 = best)"
    )
    h_left, h_right = st.columns(2)
    with h_left:
        ui.figure(heat, f"Probability matrix, context {pm.context_ids[c]}", page=PAGE, data=long)
    with h_right:
        ui.figure(slope, f"Ranks by method, context {pm.context_ids[c]}", page=PAGE, data=bump)
    ui.table(frame, f"Ranking by {method}, context {pm.context_ids[c]}", page=PAGE, hide_index=True)


def interval_figure(table, column, lower, upper, name, colour, y_title):
    """Systems with their scores and intervals, with the human mean on a second axis."""
    fig = go.Figure(
        go.Scatter(
            x=table["system"],
            y=table[column],
            mode="markers",
            name=name,
            marker=dict(size=10, color=colour),
            error_y=dict(
                type="data",
                symmetric=False,
                array=table[upper] - table[column],
                arrayminus=table[column] - table[lower],
            ),
        )
    )
    if "human_mean" in table:
        fig.add_trace(
            go.Scatter(
                x=table["system"],
                y=table["human_mean"],
                mode="markers",
                name="human mean (right axis)",
                yaxis="y2",
                marker=dict(symbol="diamond", size=9, color=ui.PALETTE[1]),
            )
        )
        fig.update_layout(
            yaxis2=dict(title="human mean", overlaying="y", side="right", showgrid=False)
        )
    fig.update_layout(yaxis_title=y_title, height=420, legend=dict(orientation="h", y=1.1))
    return fig


with ui.guard("Ranking the systems"):
    st.subheader("Systems")
    boot = st.toggle(
        "Bootstrap intervals",
        key="rank.bootstrap",
        help="Bradley–Terry: percentile intervals from 200 refits on resampled comparisons "
        "(slow on large sets); off: intervals from the Fisher information. Elo always shows "
        "its band over 200 shuffled orders of the games.",
    )
    result = svc.system_ranking(ds, attribute, judge, "bootstrap" if boot else "fisher")
    if result is None:
        st.caption(
            "No system-level ranking: the candidates have no systems that recur across contexts."
        )
    else:
        table = result.table
        bt_fig = interval_figure(
            table,
            "bt_score",
            "lower",
            "upper",
            "Bradley–Terry",
            ui.PALETTE[0],
            "Bradley–Terry score (log-strength)",
        )
        elo_fig = interval_figure(
            table, "elo", "elo_lower", "elo_upper", "Elo", ui.PALETTE[2], "Elo rating"
        )
        interval = "bootstrap" if boot else "Fisher"
        s_left, s_right = st.columns([3, 1])
        with s_left:
            ui.figure(
                bt_fig,
                f"Systems by Bradley–Terry with 95% {interval} intervals",
                page=PAGE,
                data=table,
            )
            ui.figure(
                elo_fig,
                "Systems by Elo with 95% bands over game orderings",
                page=PAGE,
                data=table,
            )
        with s_right:
            ui.metric(
                "System-level Spearman",
                common.fmt(result.spearman_bt),
                "rank correlation between the systems' Bradley–Terry scores and their "
                "mean human reference",
            )
            ui.metric(
                "System-level Spearman (Elo)",
                common.fmt(result.spearman_elo),
                "rank correlation between the systems' Elo ratings and their mean human reference",
            )
            ui.metric("Systems", len(table), "systems compared across all contexts")
        st.caption(
            "Elo (k = 4, start 1000) plays every comparison once as a game, in one seeded "
            "random order; its band spans 200 seeded shuffles of that order, since Elo depends "
            "on the order of games, which is arbitrary here."
        )
        for note in result.notes:
            st.caption(f"ℹ️ {note}")
