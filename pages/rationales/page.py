"""Rationales: what a judge writes beside its verdicts and scores — keywords per criterion
and score, a map of the rationales with labelled clusters, unsupported citations.

This script holds the pickers; each section lives in its own module under
``pages/rationales/``."""

import streamlit as st

from pages.rationales import PAGE, citations, counts_line, keywords, mapping, pick
from pages.shell import state, ui

st.title("Rationales")
st.caption(
    "Templates that ask for an explanation (the *explain* variants, HANNA's Eval-Prompt 2, "
    "ChatGPT's rts and stareval answers on SummEval) leave free text beside the score. "
    "Which words does the judge use when it rates coherence 5 rather than 2? Do its "
    "explanations cluster? How often do they cite something the text does not contain?"
)
state.scope_caption()

choice = pick()
ui.settings(
    PAGE,
    {
        "dataset": state.active_name(),
        "attribute": choice.attribute,
        "judge": choice.label,
        **state.scope_settings(),
    },
)
counts_line(choice)

for section, what in (
    (keywords, "Finding the keywords"),
    (mapping, "Mapping the rationales"),
    (citations, "Checking the citations"),
):
    with ui.guard(what):
        section.show(choice)
