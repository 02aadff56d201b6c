"""What a page on pairwise comparisons looks at: the active dataset, an attribute, a judge.

The Rankings, Position bias and Comparison budgets pages all start the same way: stop with a
note when the active dataset has no comparisons, else pick the attribute and the judge. Judge
bias and Rationales read ratings judges too (:func:`any_judge`).
"""

from __future__ import annotations

import streamlit as st

from data.schema import Dataset
from pages.services import comparisons
from pages.services.judge_bias import judge_choices
from pages.shell import state, ui


def with_comparisons(missing: str) -> tuple[Dataset, list[str]]:
    """The active dataset as analysed (:func:`pages.shell.state.analysed`: the sidebar's systems
    left out) and its attributes with comparisons; stops the page without any.

    ``missing`` finishes the sentence "<dataset> has no pairwise comparisons..." with what
    the page needs them for and where to get them.
    """
    ds = state.analysed()
    attributes = comparisons.comparison_attributes(ds)
    n = len(ds.comparisons)
    name = ui.safe(state.active_name())
    ui.need(
        bool(attributes) or not n,
        f"**{name}** has {n:,} comparisons, all unparsed: no verdict of the file could be read "
        "as a win, a loss or a tie. See the verdict map on the **Data** page (every value of "
        "the verdict column with its reading; change a row and load the file again), or read "
        "the raw answers on **Examples**.",
    )
    ui.need(bool(attributes), f"**{name}** has no pairwise comparisons{missing}")
    return ds, attributes


def attribute_beside(attributes: list[str]):
    """The shared attribute picker (``app.attribute``, :func:`pages.shell.state.keep`) in the
    left of two columns: the attribute chosen, and the right column for the page's next one."""
    left, right = st.columns(2)
    with left:
        attribute = ui.select("Attribute", attributes, key=state.keep("app.attribute"))
    return attribute, right


def attribute_and_judge(
    key: str, missing: str, judge_help: str | None = None
) -> tuple[Dataset, str, str]:
    """The active dataset and the attribute and judge picked side by side.

    The pickers are the shared settings ``app.attribute`` and ``app.judge``
    (:func:`pages.shell.state.keep`): one choice for every page, kept across page visits and in
    the URL. ``key`` is the page's prefix, kept for callers (the widgets no longer use it).
    """
    ds, attributes = with_comparisons(missing)
    attribute, right = attribute_beside(attributes)
    with right:
        judge = ui.select(
            "Judge",
            comparisons.judge_options(ds, attribute),
            key=state.keep("app.judge"),
            help=judge_help,
        )
    return ds, attribute, judge


def any_judge(missing: str, judge_help: str):
    """The active dataset (as analysed), an attribute, and any judge of it: pairwise judges
    first, then ratings judges (one per prompt, marked "ratings"); stops the page with
    ``missing`` when the dataset has no judge output at all.

    Returns (ds, attribute, ``pages.services.judge_bias.JudgeChoice``); the pickers are the
    shared settings ``app.attribute`` and ``app.judge``.
    """
    ds = state.analysed()
    options = judge_choices(ds)
    ui.need(bool(options), missing)
    attribute, right = attribute_beside(list(options))
    by_label = {c.label: c for c in options[attribute]}
    with right:
        label = ui.select("Judge", list(by_label), key=state.keep("app.judge"), help=judge_help)
    return ds, attribute, by_label[label]
