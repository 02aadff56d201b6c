"""The Human agreement page's sections, one module each; the page itself is
``pages/agreement/page.py`` (settings, then the sections in this order):

- :mod:`~pages.agreement.judges`: judges against humans (heatmaps per unit, the
  correlations with intervals, judge scores against the human mean);
- :mod:`~pages.agreement.humans`: humans among themselves (inter-annotator agreement,
  the human baseline) and the judges' self-consistency;
- :mod:`~pages.agreement.williams`: which judge differences are significant (Williams
  tests with Benjamini–Hochberg);
- :mod:`~pages.agreement.groups`: two groups of systems compared by the judge and by
  the humans (mean ± sd, Welch's t);
- :mod:`~pages.agreement.pairwise`: pairwise judges (pairwise accuracy, agreement with
  the human verdicts);
- :mod:`~pages.agreement.raters`: the choice of LLM judges and automatic measures;
- :mod:`~pages.agreement.paper`: the Eval-Prompt effect on correlations (HANNA Figures
  7/8) and a judge's ratings per system and criterion (HANNA Tables 6/7).

Each question is a tab of its own (:data:`SECTIONS`); only the open tab runs. Widget keys
start with ``agreement.``.
"""

from __future__ import annotations

from dataclasses import dataclass

from data.schema import Dataset

PAGE = "agreement"
#: The page's tabs (only the open one runs): name -> label. Its session-state key holds the
#: open tab's label (a test opens one with ``at.session_state[SECTION_KEY] = label``).
SECTIONS = {
    "judges": "Judges against humans",
    "humans": "Humans and self-consistency",
    "significance": "Significant differences",
    "paper": "Prompts and systems",
    "groups": "Two groups of systems",
    "pairwise": "Pairwise judges",
    "ppi": "Human labels needed",
}
SECTION_KEY = f"{PAGE}.section"


@dataclass(frozen=True)
class Choices:
    """What the page's settings chose, passed to every section.

    Attributes
    ----------
    ds : Dataset
        The analysed dataset (``state.analysed()``: the systems left out in the sidebar set
        aside, the chosen reading of the ratings).
    corr_label, method, variant : str
        The correlation as shown ("Kendall tau-b") and as ``data.agreement`` names it.
    groups : dict of str to list of str
        Annotator groups of the dataset (``data.agreement.annotator_groups``).
    group : str or None
        The group chosen as the human reference.
    annotators : tuple of str or None
        Its annotators (None: the only group).
    n_boot : int
        Bootstrap replicates of the correlation intervals.
    has_humans, human_verdicts : bool
        Whether the dataset has human scores, and human verdicts among its comparisons.
    raters : pages.agreement.raters.Chosen
        The LLM judges and automatic measures chosen.
    reference : str
        The human baseline's reference: "all" (each annotator vs the mean of all, the
        paper's upper bound) or "others" (leave-one-out).
    """

    ds: Dataset
    corr_label: str
    method: str
    variant: str
    groups: dict
    group: str | None
    annotators: tuple | None
    n_boot: int
    has_humans: bool
    human_verdicts: bool
    raters: object = None
    reference: str = "all"

    @property
    def baseline_group(self) -> bool:
        """Whether the reference group has two or more annotators (a human baseline)."""
        return bool(self.group) and len(self.groups[self.group]) > 1

    @property
    def baseline_row(self) -> str:
        """The name of the human baseline's row in the figures (says which reference)."""
        return (
            "human baseline (vs mean of all annotators)"
            if self.reference == "all"
            else "human baseline (vs mean of the others)"
        )


def kept_index(options: list, key: str) -> int:
    """Where the shared setting ``key`` (``app.judge``, ``app.attribute``: a link's choice,
    or another page's) sits among ``options``; 0 when it is not one of them."""
    from pages.shell import state

    value = state.kept().get(key)
    return options.index(value) if value in options else 0
