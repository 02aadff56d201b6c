"""Judge bias: the position-bias profile against the quality gap, length and style bias,
transitivity, calibration beyond one threshold and ties, for one judge and attribute.

This script holds the pickers; each section lives in its own module under
``pages/judge_bias/``."""

import streamlit as st

from pages.judge_bias import (
    PAGE,
    calibration,
    cycles,
    pick,
    probes,
    profile,
    style,
    ties,
    truth,
)
from pages.shell import state, ui

st.title("Judge bias")
st.caption(
    "Does the judge's position bias grow when the two candidates are close in quality? Does "
    "it prefer the longer answer? Are its preferences transitive? Are its probabilities "
    "calibrated, and can a few human labels fix them? One judge and attribute at a time."
)
state.scope_caption()
truth.offer()

choice = pick()
ui.settings(
    PAGE,
    {
        "dataset": state.active_name(),
        "attribute": choice.attribute,
        "judge": choice.judge.label,
        "gap bins": st.session_state.get("judge_bias.n_bins", 5),
        **state.scope_settings(),
    },
)
if not choice.pairwise:
    st.info(
        f"**{ui.safe(choice.judge.label)}** gives ratings, not pairwise verdicts: the page "
        "shows what "
        "ratings can tell (repetition stability, ties, the length preference of its score "
        "differences); the position profile, style coefficients, transitivity and calibration "
        "need a judge that compares two candidates."
    )

for section, what in (
    (truth, "Checking the known biases"),
    (profile, "Measuring the position-bias profile"),
    (style, "Measuring length and style bias"),
    (cycles, "Counting circular triads"),
    (calibration, "Calibrating the judge"),
    (ties, "Measuring ties"),
    (probes, "Probing self-preference and contamination"),
):
    with ui.guard(what):
        section.show(choice)
