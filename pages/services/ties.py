"""Tie models on the Rankings page: half-win, Davidson and Rao–Kupper over one judge's systems.

The comparisons are the judge's own answers (``pages.services.comparisons.select_comparisons``),
pooled over contexts as the systems ranking pools them (``data.flat.flat_comparisons`` via
``data.comparative.ties.tie_models``); a tie is a "tie" verdict (p_first 0.5). The debias setting is not
applied here: a tie is an answer of the judge, not a threshold decision.
"""

from __future__ import annotations

from data.comparative.ties import TieModels, tie_models
from data.schema import DataError, Dataset
from pages.services.common import cache_data
from pages.services.comparisons import select_comparisons
from pages.services.leaderboard import system_items


@cache_data(show_spinner="Fitting the tie models (Davidson, Rao–Kupper)…", max_entries=32)
def tie_comparison(ds: Dataset, attribute: str, judge: str) -> tuple[TieModels | None, str]:
    """(the three models' fits, "") or (None, why there is nothing to fit); (None, "") when
    there are no systems to rank at all (the systems section says why)."""
    item, _ = system_items(ds, attribute, judge)
    if item is None:
        return None, ""
    rows = select_comparisons(ds, attribute, judge)
    try:
        res = tie_models(
            rows, attribute=attribute, judge=judge, item=item, candidates=ds.candidates
        )
    except DataError as err:
        return None, str(err)
    return res, ""
