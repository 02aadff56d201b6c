"""The Judge bias page's sections, one module each; the page itself is
``pages/judge_bias/page.py`` (the pickers, then the sections in this order):

- :mod:`~pages.judge_bias.truth`: the button that loads a simulated judge with known
  biases (``data.synthetic.bias_demo``) and, while it is active, the true values beside the found ones;
- :mod:`~pages.judge_bias.profile`: the position-bias profile (repetition stability,
  position consistency, preference fairness, first-position win rate) overall and against
  the quality gap of the two candidates (Shi et al. 2024);
- :mod:`~pages.judge_bias.style`: length and style bias (P(prefers the longer), the
  style coefficients, style-controlled rankings, the length-controlled win rate);
- :mod:`~pages.judge_bias.cycles`: transitivity (circular triads, the worst cycles);
- :mod:`~pages.judge_bias.calibration`: calibration methods side by side, the
  reliability diagram, and the shared debias setting;
- :mod:`~pages.judge_bias.ties`: how often the judge ties, by quality gap and across
  the two orders;
- :mod:`~pages.judge_bias.probes`: self-preference (the judge's preference against the
  texts' log-likelihood under a local causal model) and the Min-K% Prob contamination probe.

Widget keys start with ``judge_bias.``; the attribute and judge are the shared
``app.attribute`` and ``app.judge``.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from data.schema import Dataset
from pages.services import judge_bias as svc
from pages.services.common import fmt
from pages.shell import choices, state, ui

PAGE = "Judge bias"

#: What the sections for ratings judges say about the ones they cannot show.
NEEDS_VERDICTS = (
    "{what}: not shown, as it needs pairwise verdicts. **{label}** rates each candidate on "
    "its own (no candidate is ever shown first or second)."
)


@dataclass(frozen=True)
class Choice:
    """What the pickers chose, passed to every section.

    Attributes
    ----------
    ds : Dataset
        The analysed dataset (``state.analysed()``).
    dataset : str
        The active dataset's name (for links to the Examples page).
    attribute : str
    judge : svc.JudgeChoice
        The judge: its label, its name in the data and, for a ratings judge, its prompt.
    """

    ds: Dataset
    dataset: str
    attribute: str
    judge: svc.JudgeChoice

    @property
    def pairwise(self) -> bool:
        return self.judge.prompt_id is None


def pick() -> Choice:
    """The attribute and judge pickers (shared settings); stops the page without a judge."""
    ds, attribute, judge = choices.any_judge(
        f"**{ui.safe(state.active_name())}** has no judge verdicts or judge ratings, so there "
        "is no "
        "judge whose biases could be measured. Run a judge on the **Judge** page, or load "
        "the demo, SummEval (ChatGPT verdicts in both orders), PandaLM or Topical-Chat "
        "(GPT-3.5 ratings) on the **Data** page.",
        "Pairwise judges (verdicts on pairs) first, then ratings judges (one score per "
        "candidate, marked 'ratings'): the pairwise sections need verdicts.",
    )
    return Choice(ds, state.active_name(), attribute, judge)


def rating_metric(choice: Choice, label: str, key: str, help_line: str) -> None:
    """A ratings judge's number ``key`` of ``svc.rating_summary`` as a metric; ``help_line``
    is formatted with the summary (its pair counts ``n_stable``, ``n_tie``)."""
    j = choice.judge
    summary = svc.rating_summary(choice.ds, choice.attribute, j.judge, j.prompt_id)
    ui.metric(label, fmt(summary[key]), help_line.format(**summary), page=PAGE)


def needs_verdicts(choice: Choice, what: str) -> bool:
    """For a ratings judge, say plainly that ``what`` needs pairwise verdicts; True then."""
    if choice.pairwise:
        return False
    st.info(NEEDS_VERDICTS.format(what=what, label=ui.safe(choice.judge.label)))
    return True


def needs_texts(choice: Choice, what: str) -> bool:
    """When no candidate of the dataset has a text (a file of verdicts without text
    columns), say plainly that ``what`` needs the texts and how to add them; True then."""
    text = choice.ds.candidates["text"] if len(choice.ds.candidates) else None
    if text is not None and text.fillna("").astype(str).str.strip().ne("").any():
        return False
    st.info(
        f"{what} need the candidates' texts, and this dataset has none (a file of verdicts "
        "without text columns). Map its text columns on the **Data** page, or add a file of "
        "texts to this dataset there (Add to the active dataset)."
    )
    return True


def needs_systems(choice: Choice, what: str) -> bool:
    """When the candidates carry fewer than two systems, say that ``what`` ranks systems and
    this dataset has no system labels; True then."""
    cand = choice.ds.all_candidates()
    if "system" in cand and cand["system"].dropna().nunique() >= 2:
        return False
    st.info(
        f"{what} compare systems, and the candidates of this dataset carry no system labels. "
        "Map a system column (or the columns of the two systems) on the **Data** page."
    )
    return True
