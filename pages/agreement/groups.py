"""The Human agreement page's "Compare two groups of systems" section (Chiang & Lee 2023,
Table 1): the judge's and the humans' mean ± sd per group of systems, and Welch's t between
the groups; does the judge see the difference the humans see?"""

from __future__ import annotations

import streamlit as st

from pages.agreement import PAGE, Choices
from pages.services import agreement as svc
from pages.shell import ui

GROUP_A = f"{PAGE}.group_a"
GROUP_B = f"{PAGE}.group_b"


def _systems(label: str, options: list[str], default: list[str], key: str, **kwargs):
    """A multiselect of systems that keeps only the remembered ones still among ``options``
    (another dataset, or a system moved to the other group), starting from ``default``."""
    remembered = st.session_state.get(key)
    kept = [s for s in (remembered or []) if s in options]
    if remembered is None or (remembered and not kept):
        kept = default  # first visit, or another dataset's systems
    st.session_state[key] = kept
    return st.multiselect(label, options, key=key, format_func=ui.short, **kwargs)


def render(c: Choices) -> None:
    st.header("Compare two groups of systems")
    systems = svc.systems_of(c.ds)
    if not len(c.ds.ratings) or not c.has_humans or len(systems) < 2:
        st.info(
            "Comparing groups of systems needs judge ratings, human scores and candidates "
            "labelled with two or more systems; this dataset has "
            + ", ".join(
                what
                for what, missing in (
                    ("no judge ratings", not len(c.ds.ratings)),
                    ("no human scores", not c.has_humans),
                    (f"{len(systems)} system(s)", len(systems) < 2),
                )
                if missing
            )
            + "."
        )
        return
    with ui.guard("Comparing two groups of systems"):
        st.caption(
            "As in Chiang & Lee (2023, Table 1): the mean ± sd of each group's items (context "
            "and candidate; the judge's score is the mean of its samples, the human score the "
            "mean of the reference annotators), and Welch's t-test between the groups, for the "
            "judge and for the humans. Systems left out in the sidebar's analysis scope are "
            "not offered: include them there to compare them."
        )
        table = c.raters.table
        chosen = c.raters.labels or table["label"].tolist()
        labels = {
            lab: (j, p)
            for lab, j, p in zip(table["label"], table["judge"], table["prompt_id"], strict=True)
            if lab in set(chosen)
        }
        g1, g2, g3 = st.columns(3)
        with g1:
            label = ui.select("Judge", list(labels), key=f"{PAGE}.group_judge")
        with g2:
            group_a = _systems("Group A", systems, systems[:1], GROUP_A)
        rest = [s for s in systems if s not in group_a]
        with g3:
            group_b = _systems("Group B", rest, rest, GROUP_B)
        if not group_a or not group_b:
            st.info("Pick at least one system for each group.")
            return
        judge, prompt_id = labels[label]
        table = svc.group_comparison(
            c.ds, judge, prompt_id, tuple(group_a), tuple(group_b), c.annotators
        )
        ui.table(
            svc.group_display(table),
            f"{label}: group A against group B (Welch's t)",
            page=PAGE,
            hide_index=True,
        )
        with st.expander("The numbers as a table"):
            ui.table(table, "Group comparison, every column", page=PAGE, hide_index=True)
