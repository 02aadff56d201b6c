"""The Judge report card page's sections, one module each; the page itself is
``pages/report_card/page.py`` (the pickers, the bad-input notes, then the sections):

- :mod:`~pages.report_card.overview`: the judge table, the sorted dot plot of accuracy with
  Wilson intervals beside chance, the judges x categories heatmap;
- :mod:`~pages.report_card.orders`: both orders (accuracy in each, positional agreement,
  consistency, first-position rate) and the accuracy under each debias mode;
- :mod:`~pages.report_card.detail`: one judge up close: calibration (reliability diagram,
  accuracy against confidence), where it fails (worst categories, the length check, the
  failed pairs, each one click away on Examples), its cost;
- :mod:`~pages.report_card.compare`: two judges on the same pairs (McNemar's exact test,
  the difference with its interval).

Widget keys start with ``report_card.``; the attribute is the shared ``app.attribute`` and
the judge looked at up close the shared ``app.judge``. Sections that compute much (the
debias modes, the detail of one judge) run only while their expander is open
(``st.expander(..., on_change="rerun")``).
"""

from __future__ import annotations

from dataclasses import dataclass

from data.schema import Dataset

PAGE = "Judge report card"
#: Rows of a judge chart: its height grows with the judges (30 judges stay readable).
ROW_PX = 26


@dataclass(frozen=True)
class Choice:
    """What the pickers chose, passed to every section.

    Attributes
    ----------
    ds : Dataset
        The analysed dataset.
    dataset : str
        The active dataset's name (for links to Examples).
    attribute : str
    unparsed : str
        "wrong" or "skip" (``data.report_card.UNPARSED``).
    level : str
        Category level, "subset" or "source".
    judges : tuple of str
        The judges shown, in the table's order.
    """

    ds: Dataset
    dataset: str
    attribute: str
    unparsed: str
    level: str
    judges: tuple


def height(n_rows: int, extra: int = 150) -> int:
    """A chart's height for ``n_rows`` judges."""
    return max(300, ROW_PX * int(n_rows) + extra)
