"""Unsupported citations: rationales that quote or name something the judged text lacks."""

from __future__ import annotations

import streamlit as st

from pages.rationales import PAGE, Choice
from pages.services import rationales as svc
from pages.services.common import fmt
from pages.shell import state, ui


def show(choice: Choice) -> None:
    st.subheader("Unsupported citations")
    st.caption(
        "A rationale *cites* a span when it quotes it (\"...\", “...”, '...') or names it "
        "(a run of capitalised words such as *Manchester City*, not a lone word starting a "
        "sentence nor the task's own words like *Summary*). A span is *supported* when it "
        "occurs in the judged candidate(s) — or the context, when ticked — ignoring case, "
        "punctuation and possessive 's. HANNA (Chhun et al. 2024, §5) found about 40 % of "
        "explanations unsupported; this check is stricter about what counts as a citation "
        "and looser about paraphrase."
    )
    key = state.keep("rationales.use_context")
    use_context = st.checkbox(
        "Accept spans found in the context (the article, the dialogue)",
        value=state.initial(key, True),
        key=key,
    )
    checked, summary = svc.citations(
        choice.ds, choice.judge, choice.prompt_id, choice.attribute, use_context
    )
    if not summary:
        st.info("No rationale to check.")
        return
    ui.settings(PAGE, {"citations: context accepted": use_context})
    cols = st.columns(3)
    with cols[0]:
        ui.metric(
            "Unsupported rate",
            fmt(summary["unsupported_rate"]),
            f"of the {summary['citing']} rationales that cite a span, the share with at least "
            "one span absent from the judged text",
            page=PAGE,
        )
    with cols[1]:
        ui.metric(
            "Cite anything",
            fmt(summary["citing"] / summary["rationales"]),
            f"share of the {summary['rationales']} rationales that quote or name a span",
            page=PAGE,
        )
    with cols[2]:
        ui.metric(
            "Unsupported spans",
            fmt(summary["unsupported_span_rate"]),
            f"of the {summary['spans']} cited spans, the share not found",
            page=PAGE,
        )
    bad = checked[checked["unsupported"] > 0]
    if not len(bad):
        st.caption("Every cited span was found in the judged text.")
        return
    ids = ["candidate_id"] if "candidate_id" in bad else ["first_id", "second_id"]
    shown = bad[
        ["context_id", *ids, choice.score, "unsupported_spans", "supported_spans", "rationale"]
    ]
    ui.table(
        shown.head(200),
        "Rationales with unsupported citations",
        page=PAGE,
        hide_index=True,
        width="stretch",
    )
    if len(bad) > 200:
        st.caption(f"The first 200 of {len(bad)} shown; the CSV has them all.")
