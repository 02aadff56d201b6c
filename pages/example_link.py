"""Open one example in the Examples page from anywhere (a matrix cell, a ranking row)."""

from __future__ import annotations

import streamlit as st

#: Session key of the example to show: a dict with dataset, attribute, judge, context_id and
#: optionally first_id and second_id (None: the whole context).
EXAMPLE = "app.example"


def open_example(
    *,
    dataset: str,
    attribute: str,
    judge: str,
    context_id: str,
    first_id: str | None = None,
    second_id: str | None = None,
) -> None:
    """Remember the example and switch to the Examples page."""
    st.session_state[EXAMPLE] = {
        "dataset": dataset,
        "attribute": attribute,
        "judge": judge,
        "context_id": str(context_id),
        "first_id": None if first_id is None else str(first_id),
        "second_id": None if second_id is None else str(second_id),
    }
    st.switch_page("pages/examples.py")
