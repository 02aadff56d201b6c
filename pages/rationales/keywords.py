"""Keywords per criterion and per score (or verdict) of one judge's rationales."""

from __future__ import annotations

import streamlit as st

from data.rationales import wide
from pages.rationales import PAGE, Choice
from pages.services import rationales as svc
from pages.shell import state, ui


def show(choice: Choice) -> None:
    st.subheader("Keywords")
    st.caption(
        "The words and word pairs a group's rationales use more than the judge's other "
        "rationales (mean TF-IDF in the group minus in the rest; English stop words and "
        "numbers left out). *share*: of the group's rationales that use the word."
    )
    key = state.keep("rationales.n_keywords")
    n = st.slider("Keywords per group", 3, 20, state.initial(key, 8), key=key)
    left, right = st.columns(2)
    with left:
        st.markdown("**Per criterion** (every criterion of this judge)")
        table, why = svc.keywords(choice.ds, choice.judge, choice.prompt_id, None, "attribute", n)
        _show(table, why, "attribute", "Keywords per criterion")
    with right:
        by = choice.score
        st.markdown(f"**Per {by}** on *{ui.safe(choice.attribute)}*")
        table, why = svc.keywords(
            choice.ds, choice.judge, choice.prompt_id, choice.attribute, by, n
        )
        _show(table, why, by, f"Keywords per {by}")


def _show(table, why: str, by: str, title: str) -> None:
    if why:
        st.info(ui.safe(why, 400))
        return
    if table[by].nunique() < 2:
        st.caption(f"Only one {by} here: its keywords are its most used words.")
    ui.table(wide(table, by), title, page=PAGE, hide_index=True, width="stretch")
    with st.expander("Weights and shares"):
        ui.table(table, f"{title} (weights)", page=PAGE, hide_index=True)
