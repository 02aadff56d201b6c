"""A file whose every verdict is unparsed (issue 22, item 10): the pages on pairwise
comparisons say how many comparisons there are and that none could be read, and point to the
verdict map; never "no pairwise comparisons"."""

from __future__ import annotations

import pandas as pd
import pytest

from data.io import read_upload
from tests.pages._analysis_apptest import open_page


@pytest.fixture(scope="module")
def unparsed():
    rows = [
        {"context": f"q{q}", "first": a, "second": b, "verdict": "A>>>B?"}
        for q in range(5)
        for a, b in (("m1", "m2"), ("m2", "m1"), ("m1", "m3"))
    ]
    ds = read_upload(
        "all_unparsed.csv", pd.DataFrame(rows).to_csv(index=False).encode(), kind="pairwise"
    )
    assert len(ds.comparisons) == 15 and ds.comparisons["p_first"].isna().all()
    return ds


@pytest.mark.parametrize("page", ["rankings", "leaderboard", "position_bias", "budgets"])
def test_all_unparsed_is_said_with_the_count(unparsed, page):
    at = open_page(f"pages/{page}/page.py", unparsed)
    assert not at.exception, [e.value for e in at.exception]
    said = " ".join(i.value for i in at.info)
    assert "15 comparisons, all unparsed" in said and "verdict map" in said, said
    assert "no pairwise comparisons" not in said
