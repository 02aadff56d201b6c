"""Judge report card: how good is each judge on pairs whose correct answer is known?

This script holds the pickers and the notes on bad input; each section lives in its own
module under ``pages/report_card/``."""

import streamlit as st

from data.report_card import LEVELS, UNPARSED
from pages.report_card import PAGE, Choice, compare, detail, orders, overview
from pages.services import report_card as svc
from pages.shell import state, ui

st.title("Judge report card")
st.caption(
    "How often is each judge right on pairs whose better answer is known (the human verdict, "
    "the gold)? How consistent is it when the two answers swap places, how calibrated, "
    "where does it fail, what does it cost, and is one judge really better than another? "
    "As LLMBar, JudgeBench and RewardBench report it, for every judge of the dataset at once."
)
state.scope_caption()

ds = state.analysed()
name = state.active_name()
attributes = svc.gold_attributes(ds)
ui.need(
    bool(attributes),
    f"**{ui.safe(name)}** has no pair with a human verdict, so no judge can be scored against "
    "a known answer. Load **LLMBar** on the **Data** page (885 pairs with a known answer and "
    "22 published judges), or upload a pairwise file with a human verdict (gold) column "
    "there; then run a judge on it from the **Judge** page.",
)
left, mid, right = st.columns([2, 2, 2])
with left:
    attribute = ui.select("Attribute", attributes, key=state.keep("app.attribute"))
# the two readings of the verdicts: (column, label, options, shown as, session key, help)
unparsed, level = [
    col.radio(label, options, format_func=shown, horizontal=True, key=key, help=help)
    for col, label, options, shown, key, help in (
        (
            mid,
            "An unparsed verdict",
            UNPARSED,
            {"wrong": "counts as wrong", "skip": "is left out"}.get,
            state.keep("report_card.unparsed"),
            "LLMBar counts an answer it cannot read as a wrong answer; leaving it out scores "
            "each judge on the verdicts it gave.",
        ),
        (
            right,
            "Categories",
            LEVELS,
            str,
            state.keep("report_card.level"),
            "Read from the context id '<category>/<id>': the subset is the id without its "
            "last part (LLMBar/Adversarial/GPTInst), the source its first part (LLMBar).",
        ),
    )
]

card = svc.card(ds, attribute, unparsed)
gold = card.gold
ui.need(
    bool(card.judges),
    f"**{ui.safe(name)}** has human verdicts on {len(gold.pairs):,} pair(s) "
    f"({len(gold.scored):,} with a winner) but no judge verdict on them. Run a judge on "
    "this dataset from the **Judge** page (any pairwise template; 'all' pairs per context "
    "judges both orders), or add a file of judge verdicts on the **Data** page.",
)
table = svc.with_cost(ds, attribute, unparsed)
everyone = table["judge"].tolist()
shown = st.multiselect(
    "Judges",
    everyone,
    default=everyone,
    key=f"report_card.judges|{name}|{attribute}",
    format_func=ui.short,
    help="The judges in the charts and tables (all by default), best first.",
)
shown = shown or everyone
choice = Choice(ds, name, attribute, unparsed, level, tuple(j for j in everyone if j in shown))
ui.settings(
    PAGE,
    {
        "dataset": name,
        "attribute": attribute,
        "unparsed verdicts": unparsed,
        "categories": level,
        "judges": len(choice.judges),
        **state.scope_settings(),
    },
)

said = svc.problems(ds, attribute, unparsed)
if said:
    with st.container(border=True):
        st.markdown(f"**What the card could not use** ({len(said)} note(s))")
        st.markdown("\n".join(f"- {ui.safe(text, 1200)}" for text in said[:40]))
        if len(said) > 40:
            st.caption(f"… and {len(said) - 40} more")

with ui.guard("Scoring the judges"):
    overview.show(choice, table)
with ui.guard("Comparing the two orders"):
    orders.show(choice, table)
with ui.guard("Looking at one judge"):
    detail.show(choice, table)
with ui.guard("Comparing two judges"):
    compare.show(choice)
