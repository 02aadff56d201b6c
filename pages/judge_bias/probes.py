"""Self-preference and contamination: the candidates' log-probabilities under a causal model.

Self-preference (Wataoka et al. 2024): does the judge prefer the candidate its own model finds
more likely (lower perplexity), overall and at equal human score, and do the systems of its
own family win more often? Contamination (Shi et al. 2024, HANNA §6): Min-K% Prob per text and
the AUC between two groups of texts.
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from pages.judge_bias import PAGE, Choice
from pages.services import probes as svc
from pages.services.common import fmt
from pages.shell import state, ui

MODEL_HELP = (
    "A transformers causal (Llama-style) model. With network access, a Hub id such as "
    "`meta-llama/Llama-3.1-8B-Instruct` or `Qwen/Qwen2.5-7B-Instruct`, ideally the judge's own "
    "model. Offline (and for the demo) it must be a local folder holding `config.json`, the "
    "weights and the tokenizer, as written by `save_pretrained`, e.g. `/models/llama-3-8b`."
)


def show(choice: Choice) -> None:
    st.subheader("Self-preference and contamination")
    st.caption(
        "The log-probability of every candidate text under a causal model (ideally the "
        "judge's). **Self-preference**: does the judge prefer the text that model finds more "
        "likely, even when the humans score both alike (Wataoka et al. 2024)? "
        "**Contamination**: Min-K% Prob (Shi et al. 2024), the mean of a text's least likely "
        "tokens, is higher for text seen in training; compare two groups of texts by AUC."
    )
    left, mid, right = st.columns([3, 1, 1])
    with left:
        key = state.keep("judge_bias.probe_model")
        model = st.text_input(
            "Causal model (Hub id or local folder)",
            state.initial(key, ""),
            key=key,
            help=MODEL_HELP,
        )
    with mid:
        key = state.keep("judge_bias.probe_cap")
        cap = st.number_input(
            "Texts (at most)",
            min_value=1,
            value=state.initial(key, svc.DEFAULT_CAP),
            step=50,
            key=key,
            help="Candidates scored, whole contexts in order; each costs one forward pass.",
        )
    with right:
        key = state.keep("judge_bias.probe_context")
        with_context = st.checkbox(
            "After its context",
            value=state.initial(key, True),
            key=key,
            help="Score each candidate after its context (source, dialogue) as the judge "
            "reads it; off: the text alone. The context's own tokens are never scored.",
        )
    model = model or ""
    if not model.strip():
        st.info(
            "Name a causal model to score the candidates. " + MODEL_HELP + " The demo data "
            "can be scored by any such model; nothing is downloaded without network access."
        )
        return
    # the whole active dataset is scored (a change of the analysis scope needs no new run);
    # the tables keep the analysed candidates
    full = state.active()
    result = svc.stored(full, model, cap, with_context)
    label = "Score the candidates" if result is None else "Score again"
    if st.button(label, key="judge_bias.probe_run"):
        bar = st.progress(0.0, text="Loading the model…")
        n_texts = min(int(cap), len(full.candidates))
        done = [0]

        def progress(n: int) -> None:
            done[0] += n
            bar.progress(min(1.0, done[0] / max(1, n_texts)), text=f"{done[0]} texts scored")

        result = svc.run(full, model, cap, with_context, progress)
        bar.empty()
    if result is None:
        st.caption(
            "Press the button to score the candidates (results are kept per dataset, model "
            "and choice of texts)."
        )
        return
    if result.note:
        st.caption(f"Note: {ui.safe(result.note, 400)}.")
    key = state.keep("judge_bias.probe_k")
    k = st.slider(
        "Min-K% share k",
        0.05,
        1.0,
        state.initial(key, 0.2),
        0.05,
        key=key,
        help="Share of a text's least likely tokens averaged (Shi et al. use 0.2).",
    )
    table = svc.scores(choice.ds, result, k)
    page_settings = st.session_state.get(ui.SETTINGS, {}).get(PAGE, {})
    ui.settings(
        PAGE,
        {**page_settings, "probe model": result.model, "probe texts": len(table), "Min-K% k": k},
    )
    _scores(table)
    _self_preference(choice, table)
    _contamination(table)


def _scores(table) -> None:
    systems = svc.by_system(table)
    ui.table(systems, "Log-likelihood, perplexity and Min-K% by system", page=PAGE, hide_index=True)
    with st.expander("Per candidate"):
        ui.table(
            table, "Log-likelihood, perplexity and Min-K% per candidate", page=PAGE, hide_index=True
        )


def _self_preference(choice: Choice, table) -> None:
    st.markdown("**Self-preference**")
    pairs, summary = svc.self_preference(choice.ds, choice.attribute, choice.judge.judge, table)
    if not len(pairs):
        st.info(f"No pair judged by **{ui.safe(choice.judge.label)}** has both texts scored.")
        return
    st.caption(
        "One point per pair of candidates the judge compared (both orders averaged; a ratings "
        "judge's preference is which it rated higher), the first being the one the humans "
        "score higher. A positive correlation: the judge prefers the text the model finds "
        "more likely; within a stratum (equal rounded human-score difference) quality is "
        "held fixed."
    )
    ui.table(
        summary,
        "Self-preference: judge preference vs log-likelihood difference",
        page=PAGE,
        hide_index=True,
    )
    fig = go.Figure()
    for i, (stratum, part) in enumerate(pairs.groupby("stratum", dropna=False)):
        fig.add_trace(
            go.Scatter(
                x=part["ll_diff"],
                y=part["preference"],
                mode="markers",
                name=f"human diff {stratum:g}",
                marker=dict(color=ui.PALETTE[i % len(ui.PALETTE)], size=6, opacity=0.7),
                customdata=part[["first_id", "second_id", "context_id"]],
                hovertemplate="%{customdata[2]}: %{customdata[0]} vs %{customdata[1]}"
                "<br>Δ log-lik %{x:.3f}<br>preference %{y:.2f}<extra></extra>",
            )
        )
    fig.update_layout(
        xaxis_title="mean log-prob, first − second", yaxis_title="P(judge prefers first)"
    )
    ui.figure(fig, "Judge preference against log-likelihood difference", page=PAGE, data=pairs)
    systems = svc.values_of(table, "system")
    own = st.multiselect(
        "Systems of the judge's own model family",
        systems,
        format_func=ui.short,
        key=state.keep("judge_bias.probe_own"),
        help="Their win rate against the other systems at equal human score; 0.5 = no favour.",
    )
    if own:
        wins = svc.family(pairs, tuple(own))
        ui.table(wins, "Own-family win rate at equal human score", page=PAGE, hide_index=True)
        row = wins.iloc[-1]
        if row["n_pairs"] == 0:
            st.caption("No pair of an own-family and another system has equal human scores.")


def _contamination(table) -> None:
    st.markdown("**Contamination (Min-K% Prob)**")
    cols = svc.group_columns(table)
    if not cols:
        st.info("Every text has the same labels: there are no two groups to compare.")
        return
    c1, c2, c3 = st.columns(3)
    with c1:
        column = st.selectbox("Group texts by", cols, key=state.keep("judge_bias.probe_column"))
    values = svc.values_of(table, column)
    with c2:
        group_a = st.multiselect(
            "Group A",
            values,
            default=values[:1],
            key=f"judge_bias.probe_a.{column}",
            format_func=ui.short,
        )
    rest = [v for v in values if v not in group_a]
    with c3:
        group_b = st.multiselect(
            "Group B", rest, default=rest, key=f"judge_bias.probe_b.{column}", format_func=ui.short
        )
    if not group_a or not group_b:
        st.info("Choose at least one value for each group.")
        return
    summary, hist = svc.contamination(table, column, tuple(group_a), tuple(group_b), "min_k_prob")
    ui.metric(
        "AUC (A above B)",
        fmt(summary["auc"]),
        f"P(Min-K% of a group A text > that of a group B text); 0.5 = no difference. "
        f"Interval [{fmt(summary['low'])}, {fmt(summary['high'])}], Mann–Whitney "
        f"p = {fmt(summary['pvalue'])}, {summary['n_a']} vs {summary['n_b']} texts"
        + (f"; {ui.safe(summary['reason'], 300)}" if summary["reason"] else ""),
        page=PAGE,
    )
    fig = go.Figure()
    for i, (name, part) in enumerate(hist.groupby("group")):
        fig.add_trace(
            go.Bar(
                x=(part["bin_low"] + part["bin_high"]) / 2,
                y=part["count"],
                width=(part["bin_high"] - part["bin_low"]),
                name=f"{name}: {_short(group_a if name == 'A' else group_b)}",
                marker_color=ui.PALETTE[i],
                opacity=0.6,
            )
        )
    fig.update_layout(barmode="overlay", xaxis_title="Min-K% Prob", yaxis_title="texts")
    ui.figure(fig, "Min-K% Prob of the two groups", page=PAGE, data=hist)


def _short(values: list[str], n: int = 3) -> str:
    """The first ``n`` values of a group, and how many more."""
    more = f" +{len(values) - n}" if len(values) > n else ""
    return ", ".join(ui.short(v, 30) for v in values[:n]) + more
