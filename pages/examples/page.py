"""Examples: every comparison of one attribute and judge, filtered, searched and opened up close
(issue 11, item 8): the context, both candidates, every raw answer in both orders, the parsed
values and the human scores."""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from data.natural import natural_sorted
from pages.examples.detail import show_pair
from pages.services import bias, comparisons
from pages.services import examples as svc
from pages.shell import choices, debias, example_link, state, ui

PAGE = "Examples"
ALL = "(all contexts)"
SEP = "\t"
FILTERS = {
    "flips": ("Flips when the order is swapped", "examples.flips"),
    "disagrees": ("Disagrees with the humans", "examples.disagrees"),
    "unparsed": ("Unparsed", "examples.unparsed"),
}
SHOWN = {
    "context_id": "context",
    "a": "candidate i",
    "b": "candidate j",
    "p_a_first": "p(i wins | i first)",
    "p_a_second": "p(i wins | i second)",
    "decision_a_first": "decision, i first",
    "decision_a_second": "decision, i second",
    "flips": "flips",
    "judge_pick": "judge picks",
    "human_pick": "humans prefer",
    "disagrees": "disagrees",
    "n_unparsed": "unparsed",
    "n_samples": "answers",
}


def pair_key(context_id, a, b) -> str:
    return SEP.join(str(x) for x in (context_id, a, b))


def pair_label(key: str) -> str:
    ctx, a, b = key.split(SEP)
    return f"{ui.short(ctx, 40)} · {ui.short(a, 30)} vs {ui.short(b, 30)}"


def apply_focus(focus: dict, table: pd.DataFrame) -> str | None:
    """Point the widgets at the example that was opened; a message when it is not there."""
    ctx = focus.get("context_id")
    first, second = focus.get("first_id"), focus.get("second_id")
    for _label, key in FILTERS.values():
        st.session_state[key] = False
    st.session_state["examples.search"] = ""
    in_ctx = table[table["context_id"] == str(ctx)]
    if not len(in_ctx):
        st.session_state["examples.context"] = ALL
        return f"Context **{ui.safe(ctx)}** has no comparison for this attribute and judge."
    st.session_state["examples.context"] = str(ctx)
    if first is None or second is None:
        return None
    hit = in_ctx[
        ((in_ctx["a"] == str(first)) & (in_ctx["b"] == str(second)))
        | ((in_ctx["a"] == str(second)) & (in_ctx["b"] == str(first)))
    ]
    if not len(hit):
        return (
            f"**{ui.safe(first)}** and **{ui.safe(second)}** were not compared in context "
            f"**{ui.safe(ctx)}**."
        )
    st.session_state["examples.pair"] = pair_key(ctx, hit["a"].iloc[0], hit["b"].iloc[0])
    return None


def pick_unparsed_only():
    """The attribute and judge when no answer of the dataset was parsed at all (the shared
    pickers offer only attributes with a parsed answer): the raw answers are still there."""
    st.warning(
        f"No answer of **{ui.safe(state.active_name())}** could be parsed (p_first is missing "
        "in every "
        "comparison): every pair is listed as unparsed, with its raw answers."
    )
    left, right = st.columns(2)
    with left:
        attribute = ui.select(
            "Attribute",
            natural_sorted(ds.comparisons["attribute"]),
            key=state.keep("app.attribute"),
        )
    with right:
        judge = ui.select(
            "Judge", comparisons.judge_options(ds, attribute), key=state.keep("app.judge")
        )
    return ds, attribute, judge


st.title("Examples")
st.caption(
    "Every comparison of one attribute and judge, one row per pair of candidates: what the "
    "judge said with candidate i shown first and shown second, whether its decision flips "
    "when the order is swapped, and what the humans prefer. Pick a row to read the texts and "
    "every raw answer."
)
state.scope_caption()

example = example_link.arrive("app.attribute", "app.judge")
ds = state.analysed()
if len(ds.comparisons) and not comparisons.comparison_attributes(ds):
    ds, attribute, judge = pick_unparsed_only()
else:
    ds, attribute, judge = choices.attribute_and_judge(
        "app",
        ", so there is no comparison to look at. Run a pairwise judge on the **Judge** page, "
        "upload pairwise verdicts on the **Data** page, or load the demo, SummEval, PandaLM or "
        "LLMFAO there.",
    )
if example is not None and (example.get("attribute"), example.get("judge")) != (attribute, judge):
    st.warning(
        f"The example asked for attribute **{ui.safe(example.get('attribute'))}** and judge "
        f"**{ui.safe(example.get('judge'))}**, which this dataset does not have; showing "
        f"**{ui.safe(attribute)}** by **{ui.safe(judge)}** instead."
    )

picked = None  # the pair to show, once the table is there
with ui.guard("Listing the comparisons"):
    setting = debias.current(ds, attribute, judge)
    got = svc.pairs(ds, attribute, judge, setting.rule)
    table = got.table
    focus = st.session_state.pop(example_link.FOCUS, None)
    if focus:
        note = apply_focus(focus, table)
        if note:
            st.warning(note)

    left, right = st.columns([1, 2])
    with left:
        context = ui.select(
            "Context",
            [ALL, *natural_sorted(table["context_id"])],
            key=state.keep("examples.context"),
        )
    with right:
        query = st.text_input(
            "Search the texts and raw answers",
            key=state.keep("examples.search"),
            placeholder="a word from the context, a candidate or a raw answer; an id",
        )
    scope = pd.Series(True, index=table.index)
    if context != ALL:
        scope &= table["context_id"] == context
    if query.strip():
        scope &= svc.search(ds, attribute, judge, query.strip())

    masks = {
        "flips": table["flips"].fillna(False).astype(bool),
        "disagrees": table["disagrees"].fillna(False).astype(bool),
        "unparsed": table["unparsed"].astype(bool),
    }
    why_not = {
        "flips": None
        if got.both_orders
        else "Every pair was asked in one order only: flips cannot be told.",
        "disagrees": (
            "No human reference in this dataset."
            if got.human_source is None
            else "The judge is the pooled humans: it is its own reference."
            if got.same_as_judge
            else None
        ),
        "unparsed": None,
    }
    cols = st.columns(len(FILTERS) + 1)
    cols[0].metric("Pairs", f"{int(scope.sum()):,}")
    chosen = pd.Series(True, index=table.index)
    for col, (name, (label, key)) in zip(cols[1:], FILTERS.items(), strict=True):
        with col:
            count = int((scope & masks[name]).sum())
            st.metric(label, "n/a" if why_not[name] else f"{count:,}")
            on = st.checkbox(
                label,
                key=state.keep(key),
                disabled=why_not[name] is not None,
                help=why_not[name] or f"Show only the pairs that {label.lower()}.",
            )
            if on and why_not[name] is None:
                chosen &= masks[name]
    shown = table[scope & chosen]
    st.caption(
        f"{len(shown):,} of {len(table):,} pair(s) shown. Decisions under the debias setting "
        f"({setting.label}, set on Position bias): {bias.decision_text(setting)}. The judge's "
        "pick averages both orders; it disagrees with the humans when it picks one candidate "
        "and they prefer the other. "
        + (
            f"Human preference: {ui.safe(got.human_source, 300)}."
            if got.human_source
            else "No human reference: the dataset has no human scores or human verdicts."
        )
    )
    ui.settings(
        PAGE,
        {
            "attribute": attribute,
            "judge": judge,
            "context": context,
            "search": query,
            **{label: bool(st.session_state.get(key)) for label, key in FILTERS.values()},
            **state.scope_settings(),
        },
    )
    ui.need(len(shown) > 0, "No pair matches these filters; clear a filter or the search.")

    keys = [pair_key(*t) for t in zip(shown["context_id"], shown["a"], shown["b"], strict=True)]
    view = shown[list(SHOWN)].rename(columns=SHOWN)
    # A new table (another selection or filter) is a new widget: no stale row selection.
    digest = hashlib.sha1("\n".join([state.token(ds), attribute, judge, *keys]).encode())
    digest = digest.hexdigest()[:10]
    event = st.dataframe(
        view,
        key=f"examples.table.{digest}",
        on_select="rerun",
        selection_mode="single-row",
        hide_index=True,
        height=320,
        column_config={
            "p(i wins | i first)": st.column_config.NumberColumn(format="%.3f"),
            "p(i wins | i second)": st.column_config.NumberColumn(format="%.3f"),
        },
    )
    ui.table(view, f"Comparisons, {attribute}, {judge}", page=PAGE, show=False)
    rows = event.selection.rows if event is not None else []
    if rows and st.session_state.get("examples.table_seen") != (digest, rows[0]):
        st.session_state["examples.table_seen"] = (digest, rows[0])
        st.session_state["examples.pair"] = keys[rows[0]]
    picked = ui.select(
        "Comparison",
        keys,
        key=state.keep("examples.pair"),
        format_func=pair_label,
        help="Or click a row of the table.",
    )

if picked is not None:
    with ui.guard("Showing the comparison"):
        row = shown.iloc[keys.index(picked)]
        samples = svc.answers(ds, attribute, judge, row["context_id"], row["a"], row["b"])
        show_pair(ds, attribute, row, samples, human_source=got.human_source)
