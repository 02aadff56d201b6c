"""The Human agreement page's "Which judge differences are significant?" section: Williams'
test for two dependent correlations with the same humans, Benjamini–Hochberg adjusted.

Two views: every pair of the chosen raters (a square matrix per attribute), and one rater
against every other (HANNA Figure 6: criteria x other raters). The sidedness (HANNA tests an
increase: one-sided) and the Benjamini–Hochberg family (HANNA: the six criteria of each
comparison) are settings; the defaults are the paper's.
"""

from __future__ import annotations

import streamlit as st

from data.schema import is_automatic
from pages.agreement import PAGE, Choices
from pages.services import agreement as svc
from pages.shell import state, ui

ACROSS = "every judge and prompt"
SAME = "judges under the same prompt"


def _parse(options):
    def parse(text: str) -> str:
        if text not in options:
            raise ValueError(f"not one of {', '.join(options)}")
        return text

    return parse


def _radio(col, label: str, options: dict, key: str, url: str | None = None, help=None):
    """A radio over ``options``' keys, shown as its values, kept in the URL (``url``, by
    default the key) and checked against them when read back from it."""
    return col.radio(
        label,
        list(options),
        format_func=options.get,
        key=state.keep(f"{PAGE}.{key}", url=url or key, parse=_parse(options)),
        help=help,
    )


def render(c: Choices) -> None:
    st.header("Which judge differences are significant?")
    pairs = c.raters.pairs
    if not c.has_humans or len(pairs) < 2:
        st.info(
            "Williams' test compares two raters' correlations with the same humans; it needs "
            "two or more judges, prompts or automatic measures (chosen above) and human scores."
        )
        return
    with ui.guard("Williams tests"):
        w1, w2, w3, w4 = st.columns(4)
        alternative = _radio(
            w1,
            "Test",
            svc.SIDES,
            "w_side",
            "sided",
            "HANNA tests an increase in correlation (one-sided); the two-sided test asks "
            "whether the correlations differ at all, and its p-values are about double.",
        )
        family = _radio(
            w2,
            "Benjamini–Hochberg",
            svc.FAMILIES,
            "w_family",
            "bh",
            "Which tests are adjusted together. HANNA adjusts over the six criteria of "
            "each comparison.",
        )
        w_level = _radio(w3, "Level", {"overall": "overall", "system": "system"}, "w_level")
        ratings = c.ds.ratings
        shared = ratings.groupby("prompt_id", observed=True)["judge"].nunique().max() > 1
        across = (
            w4.radio(
                "Compare",
                [SAME, ACROSS],
                index=0 if shared else 1,
                key=f"{PAGE}.w_scope",
                help="Judges under the same prompt, or every chosen rater with every other.",
            )
            == ACROSS
        )
        st.caption(
            f"Cells: Benjamini–Hochberg adjusted p ({svc.FAMILIES[family]}) of Williams' test, "
            f"{svc.SIDES[alternative]}"
            + (" (row against column)." if alternative != "two-sided" else ".")
        )
        test = svc.WilliamsTest(c.method, c.variant, c.annotators, w_level, alternative, family)
        _pairs(c, pairs, test, across)
        _versus(c, test)


def _pairs(c: Choices, pairs, test: svc.WilliamsTest, across: bool) -> None:
    wt = svc.williams(c.ds, test, across, pairs)
    if not len(wt):
        st.info(f"No prompt has two or more chosen judges here; choose **{ACROSS}**.")
        return
    w3, w4 = st.columns(2)
    with w3:
        w_attr = ui.select(
            "Attribute", sorted(wt["attribute"].unique()), key=state.keep("app.attribute")
        )
    prompts = sorted(  # prompted judges first, automatic measures last
        wt.loc[wt["attribute"] == w_attr, "prompt_id"].unique(), key=lambda p: (is_automatic(p), p)
    )
    with w4:
        w_prompt = ui.select("Prompt", prompts, key=f"{PAGE}.w_prompt")
    order = c.raters.labels if across else None
    p, hover = svc.williams_heatmap_frames(wt, w_attr, w_prompt, order)
    fig = ui.heatmap(p, hover, zmin=0, zmax=1, scale=ui.SEQUENTIAL, fmt=".3f")
    ui.figure(
        fig,
        f"Williams + BH adjusted p: {w_attr}, {w_prompt}",
        page=PAGE,
        data=wt[(wt["attribute"] == w_attr) & (wt["prompt_id"] == w_prompt)],
    )


def _versus(c: Choices, test: svc.WilliamsTest) -> None:
    """One rater against every other, criteria x raters (HANNA Figure 6)."""
    st.subheader("One judge against every other rater")
    table = c.raters.table
    labels = c.raters.labels
    v1, v2 = st.columns(2)
    with v1:
        me = ui.select(
            "Judge",
            labels,
            key=state.keep("app.judge"),
            help="The row judge of every test (HANNA Figure 6: Beluga-13B, Eval-Prompt 1).",
        )
    everyone = (
        v2.radio(
            "Against",
            ["the raters chosen above", "every loaded rater (LLMs and all measures)"],
            key=f"{PAGE}.versus_scope",
            help="HANNA's Figure 6 tests one judge against every other measure.",
        )
        != "the raters chosen above"
    )
    pick = table[table["label"] == me].iloc[0]
    others = (
        None
        if everyone
        else tuple(p for p in c.raters.pairs if p != (pick["judge"], pick["prompt_id"]))
    )
    if others is not None and not others:
        st.info("Choose at least one other judge or measure above, or test against every rater.")
        return
    vt = svc.williams_versus(c.ds, test, (pick["judge"], pick["prompt_id"]), others)
    p, hover = svc.williams_versus_frames(vt, table["label"].tolist())
    claim = "agrees more with the humans than" if test.alternative == "greater" else "differs from"
    st.caption(
        f"Rows: criteria; columns: the other raters (LLM judges first); each cell the adjusted "
        f"p of the test that **{ui.safe(me)}** {claim} the column ({svc.FAMILIES[test.family]})."
    )
    fig = ui.heatmap(p, hover, zmin=0, zmax=1, scale=ui.SEQUENTIAL, fmt=".2f")
    fig.update_layout(height=max(320, 40 * len(p) + 220), xaxis=dict(tickangle=-45))
    ui.figure(
        fig,
        f"{me} against every other rater: Williams + BH adjusted p, {test.unit} level",
        page=PAGE,
        data=vt,
    )
