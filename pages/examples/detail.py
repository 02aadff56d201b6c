"""One pair up close: the context, both candidates side by side, every answer of the judge in
both orders (unparsed ones marked), the parsed values and the human scores."""

from __future__ import annotations

import math
import re

import pandas as pd
import streamlit as st

from data.comparative.examples import human_scores_of
from data.schema import HUMAN_JUDGE_PREFIX, Dataset
from pages.services import examples as svc
from pages.shell import ui

#: Full texts of at most this many answers per order are printed under the table.
MAX_FULL_ANSWERS = 50
_MARKDOWN = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character (ui.safe)


def plain(text: str) -> str:
    """Text shown as written: markdown characters escaped (as ``ui.safe`` does, so no
    colour, emoji or math syntax either), line breaks kept."""
    return _MARKDOWN.sub(r"\\\1", text).replace("\n", "  \n")


def _text_box(text: str | None, height: int) -> None:
    if text is None:
        st.caption("no text in this dataset")
        return
    with st.container(height=height, border=True):
        st.markdown(plain(text))


def _p(value) -> str:
    return "n/a" if value is None or not math.isfinite(float(value)) else f"{float(value):.3f}"


def _flag(value) -> str:
    return "n/a" if value is None or pd.isna(value) else ("yes" if bool(value) else "no")


def _answers(samples: pd.DataFrame, order: str) -> None:
    """The answers of one presentation order: a table, then each raw answer in full."""
    part = samples[samples["order"] == order]
    st.markdown(f"**{ui.safe(order, 80)}**")
    if not len(part):
        st.caption("not asked in this order")
        return
    bad = int((part["parsed"] == "UNPARSED").sum())
    if bad:
        st.warning(f"{bad} of {len(part)} answer(s) could not be parsed (marked UNPARSED).")
    cols = ["sample", "p_first", "verdict", "parsed", "raw"]
    if part["judge"].nunique() > 1:
        cols.insert(0, "judge")
    st.dataframe(
        part[cols],
        hide_index=True,
        column_config={"p_first": st.column_config.NumberColumn(format="%.3f")},
    )
    with st.expander("Full text of each answer"):
        for _, ans in part.head(MAX_FULL_ANSWERS).iterrows():
            who = f"{ui.safe(ans['judge'])}, " if "judge" in cols else ""
            st.markdown(
                f"{who}sample {ans['sample']} · p_first {_p(ans['p_first'])}"
                + (" · **UNPARSED**" if ans["parsed"] == "UNPARSED" else "")
            )
            if ans["raw"]:
                st.code(ans["raw"], language=None, wrap_lines=True)
            else:
                st.caption("no raw text kept")
        if len(part) > MAX_FULL_ANSWERS:
            st.caption(f"… and {len(part) - MAX_FULL_ANSWERS} more (all are in the table).")


def show_pair(
    ds: Dataset, attribute: str, row: pd.Series, samples: pd.DataFrame, *, human_source
) -> None:
    """Everything about one row of the pair table (``data.comparative.examples.pair_table``)."""
    ctx, a, b = str(row["context_id"]), str(row["a"]), str(row["b"])
    st.subheader(
        f"Context {ui.safe(ctx, 40)}: {ui.safe(a, 40)} vs {ui.safe(b, 40)}",
        help=ui.whole(f"Context {ctx}: {a} vs {b}", 40 * 3),  # long ids: whole on hover
    )
    m = st.columns(5)
    m[0].metric("p(i wins | i first)", _p(row["p_a_first"]))
    m[1].metric("p(i wins | i second)", _p(row["p_a_second"]))
    m[2].metric("Flips when swapped", _flag(row["flips"]))
    m[3].metric("Judge picks", ui.safe(row["judge_pick"]) if pd.notna(row["judge_pick"]) else "n/a")
    m[4].metric(
        "Humans prefer", ui.safe(row["human_pick"]) if pd.notna(row["human_pick"]) else "n/a"
    )
    st.caption(
        f"i = **{ui.safe(a)}**, j = **{ui.safe(b)}**. p(i wins | i second) is 1 − p_first of the "
        "swapped order. Unparsed answers are left out of the means; "
        f"{int(row['n_unparsed'])} of {int(row['n_samples'])} answer(s) unparsed."
    )

    context_text, cand_texts = svc.texts(ds, ctx, [a, b])
    st.markdown("**Context**")
    _text_box(context_text, 180)
    systems = svc.systems(ds, ctx, [a, b])
    left, right = st.columns(2)
    for col, (name, cand) in zip((left, right), (("i", a), ("j", b)), strict=True):
        with col:
            system = systems.get(cand)
            extra = f" (system {ui.safe(system)})" if system and system != cand else ""
            st.markdown(f"**Candidate {name}: {ui.safe(cand)}**{extra}")
            _text_box(cand_texts[cand], 300)

    st.markdown("**The judge's answers, in both orders**")
    left, right = st.columns(2)
    with left:
        _answers(samples, f"{a} first")
    with right:
        _answers(samples, f"{b} first")

    verdicts = svc.human_verdicts(ds, attribute, ctx, a, b)
    if len(verdicts) and not str(samples["judge"].iloc[0] if len(samples) else "").startswith(
        HUMAN_JUDGE_PREFIX
    ):
        st.markdown("**Human verdicts on this pair**")
        st.dataframe(
            verdicts[["order", "judge", "p_first", "verdict", "raw"]],
            hide_index=True,
            column_config={"p_first": st.column_config.NumberColumn(format="%.2f")},
        )
    st.markdown("**Human scores**")
    scores = human_scores_of(ds.human_scores, ctx, [a, b])
    if len(scores):
        st.dataframe(scores, hide_index=True)
    else:
        st.caption("No human scores for these candidates.")
    if human_source:
        st.caption(f"The human preference above is from the {ui.safe(human_source, 300)}.")
