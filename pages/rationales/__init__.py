"""The Rationales page's sections, one module each; the page itself is
``pages/rationales/page.py`` (the pickers, the counts, then the sections in this order):

- :mod:`~pages.rationales.keywords`: keywords per criterion and per score / verdict;
- :mod:`~pages.rationales.mapping`: the 2-D map, coloured by criterion, score, system
  or agreement with the humans, clusters labelled by keywords, a click opens the example;
- :mod:`~pages.rationales.citations`: how often a rationale cites a span that is not in
  the judged text.

Widget keys start with ``rationales.``; the attribute and judge are the shared
``app.attribute`` and ``app.judge``.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from data.schema import Dataset
from pages.services import rationales as svc
from pages.shell import choices, state, ui

PAGE = "Rationales"


@dataclass(frozen=True)
class Choice:
    """What the pickers chose, passed to every section."""

    ds: Dataset
    dataset: str
    attribute: str
    judge: str
    prompt_id: str | None
    label: str

    @property
    def pairwise(self) -> bool:
        return self.prompt_id is None

    @property
    def score(self) -> str:
        """The column holding the judge's decision: score (ratings) or verdict (pairs)."""
        return "verdict" if self.pairwise else "score"


def pick() -> Choice:
    """The attribute and judge pickers (shared settings); stops the page without a judge."""
    ds, attribute, c = choices.any_judge(
        f"**{ui.safe(state.active_name())}** has no judge verdicts or ratings, so there are no "
        "rationales to read. Run a judge with a template that asks for an explanation on the "
        "**Judge** page, or load SummEval (ChatGPT's rts and stareval answers explain their "
        "scores) on the **Data** page.",
        "The judge whose free-text answers are read: pairwise judges first, then ratings "
        "judges (marked 'ratings').",
    )
    return Choice(ds, state.active_name(), attribute, c.judge, c.prompt_id, c.label)


def counts_line(choice: Choice) -> dict:
    """Say how many answers carry a rationale; stop the page (saying why) when none does."""
    counts = svc.counts(choice.ds, choice.judge, choice.prompt_id, choice.attribute)
    total = svc.counts(choice.ds, choice.judge, choice.prompt_id, None)
    kept, answers = counts.get("kept", 0), counts.get("answers", 0)
    if not kept:
        rows, _, why = svc.frame(choice.ds, choice.judge, choice.prompt_id)
        example = _bare_example(choice)
        ui.need(
            False,
            ui.safe(why, 400)
            if why
            else f"**{ui.safe(choice.label)}** gives no rationale on "
            f"*{ui.safe(choice.attribute)}*: its {answers} answers are bare labels or scores"
            + (f" (e.g. `{ui.short(example, 40)}`)" if example else "")
            + (f", {counts.get('errors', 0)} failed requests" if counts.get("errors") else "")
            + ". Only answers with an explanation beside the verdict or score can be read: "
            "run a template that asks for one (an *explain* variant, HANNA's Eval-Prompt 2, "
            "or your own) on the **Judge** page"
            + (
                f"; this judge explains {total['kept']} answers on other criteria"
                if total.get("kept")
                else ""
            )
            + ".",
        )
    st.caption(
        f"{kept} of {answers} answers on *{ui.safe(choice.attribute)}* carry a rationale "
        f"({counts.get('empty', 0)} bare labels or scores"
        + (f", {counts['errors']} failed requests" if counts.get("errors") else "")
        + f" skipped); {total.get('kept', 0)} over every criterion of this judge."
    )
    return counts


def _bare_example(choice: Choice) -> str:
    table = choice.ds.comparisons if choice.pairwise else choice.ds.ratings
    if "raw" not in table or not len(table):
        return ""
    rows = table[
        (table["judge"].astype(str) == choice.judge)
        & (table["attribute"].astype(str) == choice.attribute)
    ]["raw"].dropna()
    return str(rows.iloc[0])[:40].replace("`", "'") if len(rows) else ""
