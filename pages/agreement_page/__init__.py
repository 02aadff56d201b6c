"""The Human agreement page's sections, one module each; the page itself is
``pages/agreement.py`` (settings, then the sections in this order):

- :mod:`~pages.agreement_page.judges`: judges against humans (heatmaps per unit, the
  correlations with intervals, judge scores against the human mean);
- :mod:`~pages.agreement_page.humans`: humans among themselves (inter-annotator agreement,
  the human baseline) and the judges' self-consistency;
- :mod:`~pages.agreement_page.williams`: which judge differences are significant (Williams
  tests with Benjamini–Hochberg);
- :mod:`~pages.agreement_page.groups`: two groups of systems compared by the judge and by
  the humans (mean ± sd, Welch's t);
- :mod:`~pages.agreement_page.pairwise`: pairwise judges (pairwise accuracy, agreement with
  the human verdicts).

Widget keys start with ``agreement.``.
"""

from __future__ import annotations

from dataclasses import dataclass

from data.schema import Dataset

PAGE = "agreement"


@dataclass(frozen=True)
class Choices:
    """What the page's settings chose, passed to every section.

    Attributes
    ----------
    ds : Dataset
        The active dataset.
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

    @property
    def baseline_group(self) -> bool:
        """Whether the reference group has two or more annotators (a human baseline)."""
        return bool(self.group) and len(self.groups[self.group]) > 1
