"""Open one example in the Examples page from anywhere (a matrix cell, a ranking row)."""

from __future__ import annotations

import streamlit as st

from pages.shell import state, ui

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
    st.switch_page("pages/examples/page.py")


#: Session key of the pair the Examples page should open: {"context_id", "first_id",
#: "second_id"} (the ids may be None), set by :func:`arrive`, read by the page.
FOCUS = "examples.focus"


def arrive(attribute_key: str = "app.attribute", judge_key: str = "app.judge") -> dict | None:
    """Take the example left by :func:`open_example` (once) and prepare the page for it.

    Called by the Examples page before it draws any widget. The example's dataset is made
    active when it is loaded (the app reruns), its attribute and judge are written to the
    shared pickers (``attribute_key``, ``judge_key``) and the pair to :data:`FOCUS`. Returns
    the example, or None when there is none or its dataset is not loaded (a warning says so).
    """
    example = st.session_state.pop(EXAMPLE, None)
    if not example:
        return None
    name = example.get("dataset")
    if name is not None and name != state.active_name():
        if name in state.datasets():
            st.session_state[state.ACTIVE] = name
            st.session_state[EXAMPLE] = example  # taken again after the rerun
            st.rerun()
        st.warning(
            f"The example to open is from dataset **{ui.safe(name)}**, which is not loaded "
            "in this session. Load it on the **Data** page, then open the example again."
        )
        return None
    if example.get("attribute") is not None:
        st.session_state[attribute_key] = str(example["attribute"])
    if example.get("judge") is not None:
        st.session_state[judge_key] = str(example["judge"])
    st.session_state[FOCUS] = {
        "context_id": example.get("context_id"),
        "first_id": example.get("first_id"),
        "second_id": example.get("second_id"),
    }
    return example
