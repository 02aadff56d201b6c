"""The reusable "Compare two groups of systems" section (Chiang & Lee 2023, Table 1; issue 12,
item 1): pick group A and group B among the analysed systems, see each group's mean ± sd and
Welch's t-test between them for every score column of a per-item frame, and the scores of
each group as box plots.

The Rankings page passes the judge's win-ratio and the human score of each candidate, the
Prompt sensitivity page the ratings under each template. The statistics are
``data.agreement.groups.compare_groups`` (Welch: ``ranking.significance.welch_t``).
"""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import streamlit as st

from data.agreement.groups import compare_groups
from data.natural import natural_sorted
from data.schema import DataError
from pages.services.common import fmt, welch_columns
from pages.shell import ui

HEADER = "Compare two groups of systems"
#: Above this many items a box shows its outliers only (every point would hide the boxes).
MAX_POINTS = 3000


def default_groups(systems: list[str]) -> tuple[list[str], list[str]]:
    """Human-written vs GPT-2 stories when both are there (Chiang & Lee's groups), else the
    first system against the rest."""
    if "Human" in systems and "GPT-2" in systems:
        return ["Human"], ["GPT-2"]
    return systems[:1], systems[1:]


def _pick(label: str, options: list[str], default: list[str], key: str, help: str) -> list[str]:
    """A multiselect of systems; a remembered choice keeps only the systems still offered
    (another dataset or scope, or a system moved to the other group)."""
    remembered = st.session_state.get(key)
    kept = [s for s in (remembered or []) if s in options]
    if remembered is None or (remembered and not kept):
        kept = [s for s in default if s in options]
    if remembered != kept:
        st.session_state[key] = kept
    return st.multiselect(label, options, key=key, help=help, format_func=ui.short)


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """The comparison as shown: per score, "mean ± sd (n)" of each group, Welch's t, df, p."""
    return pd.DataFrame(
        {
            "score": table["score"].astype(str),
            **welch_columns(table, 3),
            "df": [fmt(d, 1) for d in table["df"]],
            "p": [fmt(p, 4) for p in table["pvalue"]],
            "note": table["reason"],
        }
    )


def _figure(frame, values, a, b, facet: bool, y_title: str):
    groups = {**{s: "A" for s in a}, **{s: "B" for s in b}}
    sel = frame[frame["system"].astype(str).isin(groups)]
    long = sel.melt(
        id_vars=["system"], value_vars=values, var_name="score", value_name="value"
    ).dropna(subset=["value"])
    long["group"] = long["system"].astype(str).map(groups)
    points = "all" if len(long) <= MAX_POINTS else "outliers"
    fig = px.box(
        long,
        x="group" if facet else "score",
        y="value",
        color="group",
        facet_col="score" if facet else None,
        points=points,
        hover_data=["system"],
        category_orders={"group": ["A", "B"], "score": list(values)},
        color_discrete_sequence=[ui.PALETTE[0], ui.PALETTE[1]],
        labels={"value": y_title, "score": ""},
    )
    if facet:
        fig.update_yaxes(matches=None, showticklabels=True)
        fig.for_each_annotation(lambda t: t.update(text=t.text.split("=", 1)[-1]))
    return fig, long


def render(
    frame: pd.DataFrame,
    values: list[str],
    *,
    key: str,
    page: str,
    title: str,
    facet: bool = False,
    y_title: str = "score",
    caption: str | None = None,
) -> pd.DataFrame | None:
    """Draw the section for ``frame`` (one row per item: ``system`` and the ``values``
    columns); gives back the comparison table (:func:`compare_groups`), None when there is
    nothing to compare.

    ``key`` prefixes the widgets, ``page`` and ``title`` name the report views; ``facet``
    draws each score column on its own axis (scores on different scales).
    """
    st.subheader(HEADER)
    systems = natural_sorted(frame["system"].dropna().astype(str).unique()) if len(frame) else []
    if len(systems) < 2:
        st.info(
            "Comparing groups of systems needs candidates labelled with two or more systems "
            f"in the analysis; here there {'is' if len(systems) == 1 else 'are'} "
            f"{len(systems)}. Systems left out in the sidebar's Analysis scope cannot be in "
            "a group."
        )
        return None
    st.caption(
        caption
        or "As in Chiang & Lee (2023, Table 1): the mean ± sd of each group's items and "
        "Welch's t-test between the groups (two-sided; unequal variances). Systems left out "
        "in the sidebar are not offered."
    )
    default_a, default_b = default_groups(systems)
    left, right = st.columns(2)
    with left:
        group_a = _pick("Group A", systems, default_a, f"{key}.a", "Systems of the first group.")
    rest = [s for s in systems if s not in group_a]
    with right:
        group_b = _pick(
            "Group B",
            rest,
            default_b if default_b else rest,
            f"{key}.b",
            "Systems of the second group (a system can be in one group only).",
        )
    if not group_a or not group_b:
        st.info("Pick at least one system for each group.")
        return None
    try:
        table = compare_groups(frame, group_a, group_b, values, name=title)
    except DataError as err:
        ui.show_error(err, what="Could not compare the groups")
        return None
    shown = dict(st.session_state.get(ui.SETTINGS, {}).get(page, {}))  # the page's, this run
    ui.settings(page, {**shown, "group A": ", ".join(group_a), "group B": ", ".join(group_b)})
    first = table.iloc[0]
    m = st.columns(3)
    with m[0]:
        ui.metric(
            "Welch's t",
            fmt(first["statistic"], 3),
            f"{ui.safe(first['score'])}: group A against group B"
            + (f" ({ui.safe(first['reason'], 200)})" if first["reason"] else ""),
            page=page,
            report_label=f"Welch's t, {title}, {first['score']}",
        )
    with m[1]:
        ui.metric(
            "p (two-sided)",
            fmt(first["pvalue"], 4),
            f"Welch's test on {ui.safe(first['score'])}",
            page=page,
            report_label=f"Welch's p, {title}, {first['score']}",
        )
    with m[2]:
        ui.metric(
            "Mean difference",
            fmt(first["mean_a"] - first["mean_b"], 3),
            f"{ui.safe(first['score'])}: mean of group A minus mean of group B",
            page=page,
            report_label=f"Mean difference A - B, {title}, {first['score']}",
        )
    ui.table(
        display_table(table),
        f"{title}: group A ({', '.join(group_a)}) vs group B ({', '.join(group_b)})",
        page=page,
        hide_index=True,
    )
    fig, long = _figure(frame, values, group_a, group_b, facet, y_title)
    ui.figure(fig, f"{title}: scores per group", page=page, data=long)
    with st.expander("The numbers as a table"):
        ui.table(table, f"{title}: group comparison, every column", page=page, hide_index=True)
    return table
