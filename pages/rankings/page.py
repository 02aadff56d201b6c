"""Rankings: the judge's probability matrix per context, rankings by win-ratio, maximum
likelihood and Bradley–Terry beside the human ranking, and the systems ranked by Bradley–Terry
and by Elo — all under the debias setting shared with Position bias, raw and debiased side by
side."""

import streamlit as st

from data.natural import natural_key
from pages.rankings import systems
from pages.rankings.views import clickable_matrix, rank_slope
from pages.services import arena, bias, common, comparisons
from pages.services import rankings as svc
from pages.shell import choices, debias, state, system_groups, ui
from pages.shell.example_link import open_example

PAGE = "Rankings"
OPEN_CONTEXT = "Open this context in Examples"
OPEN_PAIR = "Open this pair in Examples"

st.title("Rankings")
st.caption(
    "How the judge's pairwise answers become rankings, and how close those come to the humans'."
)
state.scope_caption()

ds, attribute, judge = choices.attribute_and_judge(
    "rank",
    " to rank. Run a pairwise judge on the **Judge** page, or load the demo, SummEval (ChatGPT "
    "verdicts), PandaLM or LLMFAO on the **Data** page.",
    judge_help="The model (and template) whose comparisons are ranked; human annotators' "
    "verdicts can be ranked too.",
)
setting = debias.compact(ds, attribute, judge, key="rank")
if not setting.active:
    st.info(
        "Debiasing is off: the rankings use the judge's probabilities as they are. Choose a "
        "threshold above, or tune one on the Position bias page."
    )
    st.page_link("pages/position_bias/page.py", label="Position bias", icon=":material/swap_horiz:")
else:
    st.caption(
        f"Ranked with debiasing: **{setting.label}**; the raw rankings ({setting.raw_label}) "
        "are beside them."
    )


def delta(after, before):
    """The change from raw shown under a metric; none when off or undefined."""
    if not setting.active or "n/a" in (common.fmt(after), common.fmt(before)):
        return None
    return f"{after - before:+.3f}"


pm = rk = ref = None  # set by the first section; the group comparison needs them
per_context = True
with ui.guard("Reading the design"):
    design = arena.design(ds, attribute, judge)
    if design.arena:
        # hundreds of contexts of a star or a pair each: rank the systems across them
        st.caption(f"ℹ️ {ui.safe(design.line, 600)}")
        per_context = st.toggle(
            "Rank each context apart as well",
            key=state.keep("rank.per_context"),
            help="Win-ratio, maximum likelihood and Bradley–Terry in every context, with "
            "agreement with the humans per context: slow on hundreds of contexts, and a "
            "context that compares a star or a single pair says little on its own.",
        )
        if not per_context:
            left_out = bias.unparsed_note(bias.unparsed(ds, attribute, judge))
            if left_out:
                st.caption(f"ℹ️ {ui.safe(left_out, 400)}")
if per_context:
    with ui.guard("Ranking the candidates"):
        pm = comparisons.pmatrix(ds, attribute, judge)
        ref = comparisons.human_reference(ds, attribute, judge)
        rk = svc.rankings(ds, attribute, judge, setting.rule)
        raw_rk = svc.rankings(ds, attribute, judge, setting.raw_rule) if setting.active else rk

        st.subheader("Agreement with humans")
        if ref is None:
            st.info(
                f"No human reference for **{ui.safe(attribute)}** in this dataset (no human scores "
                "and no "
                "human verdicts), so agreement cannot be measured. The rankings are shown below; "
                "load a dataset with human scores (e.g. SummEval or the demo) to compare."
            )
        else:
            st.caption(
                f"Reference: {ui.safe(ref.source, 300)}."
                + (" Deltas: change from the raw rankings." if setting.active else "")
            )
            if ref.same_as_judge:
                st.warning(
                    "The judge is the human annotators themselves: agreement measures how well each "
                    "method recovers the win-ratio of the same verdicts, not an independent check."
                )
            agree = rk.agreement.set_index("method")
            before = raw_rk.agreement.set_index("method")
            cols = st.columns(len(svc.METHODS) + 1)
            for col, method in zip(cols, svc.METHODS, strict=False):
                row, was = agree.loc[method], before.loc[method]
                with col:
                    st.markdown(f"**{method}**")
                    ui.metric(
                        "Spearman",
                        common.fmt(row["spearman"]),
                        f"rank correlation with the humans per context, mean over "
                        f"{int(row['n_contexts'])} contexts",
                        delta=delta(row["spearman"], was["spearman"]),
                        report_label=f"Spearman, {method}",
                    )
                    ui.metric(
                        "Pairwise accuracy",
                        common.fmt(row["pairwise_accuracy"]),
                        "share of candidate pairs with different human scores that this "
                        "ranking orders as the humans do",
                        delta=delta(row["pairwise_accuracy"], was["pairwise_accuracy"]),
                        report_label=f"Pairwise accuracy, {method}",
                    )
            with cols[-1]:
                st.markdown("**judge comparisons**")
                acc = agree.loc[svc.JUDGE_ROW, "pairwise_accuracy"]
                ui.metric(
                    "Pairwise accuracy",
                    common.fmt(acc),
                    f"share of the judge's single comparisons ({bias.decision_text(setting)}) "
                    "that agree with the human order",
                    delta=delta(acc, before.loc[svc.JUDGE_ROW, "pairwise_accuracy"]),
                    report_label="Pairwise accuracy, judge comparisons",
                )
        left_out = bias.unparsed_note(bias.unparsed(ds, attribute, judge))
        for note in ([left_out] if left_out else []) + rk.notes:
            st.caption(f"ℹ️ {ui.safe(note, 400)}")

        st.subheader("One context")
        c_left, c_right = st.columns(2)
        with c_left:
            contexts = sorted(
                range(len(pm.context_ids)), key=lambda k: natural_key(pm.context_ids[k])
            )
            shown = st.session_state.get("rank.context")
            shown = shown if shown in contexts else contexts[0]
            c = ui.select(
                "Context",
                contexts,
                key="rank.context",
                format_func=lambda k: (
                    f"{ui.short(pm.context_ids[k])} ({len(pm.candidate_ids[k])} candidates)"
                ),
                help=ui.whole(pm.context_ids[shown]),  # a long id, cut above: whole on hover
            )
        with c_right:
            method = ui.select(
                "Ranking method",
                list(svc.METHODS),
                key="rank.method",
                help="Win-ratio: share of comparisons won. Maximum likelihood: the order that best "
                "explains all comparisons. Bradley–Terry: fitted strengths.",
            )
        context_id = pm.context_ids[c]
        ui.settings(
            PAGE,
            {
                **debias.view_settings(attribute, judge, setting),
                "context": context_id,
                "ranking method": method,
                **state.scope_settings(),
            },
        )
        example = dict(
            dataset=state.active_name(), attribute=attribute, judge=judge, context_id=context_id
        )

        ids, block, counts, long = svc.matrix_view(pm, c)
        frame = svc.context_frame(ds, pm, rk, ref, c, method)
        bump = svc.bump_frame(frame)
        order = (["human"] if ref is not None else []) + list(svc.METHODS)
        slope = rank_slope(bump, "method", order, "ranking method")
        h_left, h_right = st.columns(2)
        with h_left:
            clickable_matrix(
                ids,
                block,
                counts,
                long,
                title=f"Probability matrix, context {ui.short(context_id, 40)}",
                page=PAGE,
                key=f"rank.heat.{context_id}",
                example=example,
            )
            st.caption("Click a cell to open that pair, both orders and every answer, in Examples.")
        with h_right:
            ui.figure(
                slope, f"Ranks by method, context {ui.short(context_id, 40)}", page=PAGE, data=bump
            )

        title = f"Ranking by {method}, context {ui.short(context_id, 40)}"
        picked = st.dataframe(
            frame,
            hide_index=True,
            on_select="rerun",
            selection_mode="single-row",
            key=f"rank.table.{context_id}",
        )
        ui.table(frame, title, page=PAGE, show=False)
        ui.remember(PAGE, title, data=frame)
        rows = list(getattr(getattr(picked, "selection", None), "rows", None) or [])
        o_left, o_mid, o_right = st.columns([2, 2, 1], vertical_alignment="bottom")
        with o_left:
            first = ui.select("First candidate", ids, key="rank.open.first")
        with o_mid:
            second = ui.select("Second candidate", ids, key="rank.open.second", index=1)
        with o_right:
            if st.button(OPEN_PAIR, key="rank.open.pair", disabled=first == second):
                open_example(**example, first_id=first, second_id=second)
        if st.button(OPEN_CONTEXT, key="rank.open.context", help="Select a row to open its pairs."):
            open_example(**example)
        if rows:
            # a ranking row: that candidate against the next one down (or up) in this ranking
            cand = list(frame["candidate"])
            k = rows[0]
            other = cand[k + 1] if k + 1 < len(cand) else (cand[k - 1] if k else None)
            open_example(**example, first_id=cand[k], second_id=other)


with ui.guard("Ranking the systems"):
    systems.render(ds, attribute, judge, setting, delta)


if rk is not None:
    with ui.guard("Comparing two groups of systems"):
        scores = svc.candidate_scores(ds, pm, rk, ref)
        system_groups.render(
            scores,
            [svc.WIN_RATIO] + ([svc.HUMAN] if ref is not None else []),
            key="rank.groups",
            page=PAGE,
            title=f"Candidates of {ui.short(judge, 40)}, {ui.short(attribute, 40)}",
            facet=True,
            caption="As in Chiang & Lee (2023, Table 1), on this page's rankings: each candidate's "
            "win-ratio in its context (the judge's comparisons"
            + (", debiased" if setting.active else "")
            + ") and its human score, as the mean ± sd of each group of systems, and Welch's "
            "t-test between the groups (two-sided, unequal variances): does the judge separate "
            "the groups as the humans do? Systems left out in the sidebar are not offered.",
        )
