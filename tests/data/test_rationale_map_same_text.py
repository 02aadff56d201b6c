"""A judge whose every rationale is the same once its verdict is stripped (an Arena-Hard file
whose answers are "My final verdict is: [[A>B]]") gets a message, not a map: t-SNE's PCA start
divided by a zero spread and its Barnes-Hut tree recursed without end on the NaN points, a
segfault that took the whole server down."""

from __future__ import annotations

import pandas as pd
import pytest

from data.rationales import rationale_map
from data.schema import DataError


@pytest.mark.parametrize("text", ["The first is better.", "My final verdict is"])
def test_identical_rationales_are_said_not_mapped(text):
    frame = pd.DataFrame({"rationale": [text] * 40, "score": [1.0] * 40})
    with pytest.raises(DataError, match="All 40 rationales say the same thing"):
        rationale_map(frame, random_state=0)


def test_two_distinct_rationales_still_map():
    frame = pd.DataFrame(
        {"rationale": ["The first is better."] * 20 + ["Both miss the point."] * 20}
    )
    m = rationale_map(frame, random_state=0)
    assert len(m.points) == 40 and m.points[["x", "y"]].notna().all().all()
