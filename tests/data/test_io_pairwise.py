"""data.io.pairwise: verdict spellings, probabilities, mappings, errors by row and column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data.io import PairwiseMapping, pairwise_to_comparisons, read_upload
from data.schema import DataError


def test_pairwise_verdict_spellings():
    data = (
        b"context,first,second,verdict\n"
        b"d1,a,b,A\nd1,b,a,2\nd1,a,c,tie\nd1,c,a,first\nd1,a,b,0\nd1,b,c,\n"
    )
    ds = read_upload("pairs.csv", data)
    c = ds.comparisons
    assert c["verdict"].tolist()[:5] == ["A", "B", "tie", "A", "tie"]
    assert pd.isna(c["verdict"].iloc[5])
    np.testing.assert_array_equal(c["p_first"], [1.0, 0.0, 0.5, 1.0, 0.5, np.nan])
    # a repeated pair becomes the next sample
    assert c["sample"].tolist() == [0, 0, 0, 0, 1, 0]
    assert c["attribute"].unique().tolist() == ["overall"]
    assert c["judge"].unique().tolist() == ["uploaded"]


def test_pairwise_probability_and_mapping():
    df = pd.DataFrame(
        {
            "q": ["x", "x"],
            "model_a": ["m1", "m2"],
            "model_b": ["m2", "m1"],
            "prob": [0.8, 0.35],
            "judge": ["gpt", "gpt"],
        }
    )
    out = pairwise_to_comparisons(
        df, PairwiseMapping(first="model_a", second="model_b", probability="prob", context_id="q")
    )
    assert out["p_first"].tolist() == [0.8, 0.35]
    assert out["judge"].tolist() == ["uploaded", "uploaded"]  # not mapped -> default
    assert out["context_id"].tolist() == ["x", "x"]


def test_pairwise_without_context_column_uses_default():
    ds = read_upload("arena.jsonl", b'{"model_a":"m1","model_b":"m2","winner":"1"}\n')
    assert ds.comparisons["context_id"].tolist() == ["all"]
    assert ds.comparisons["verdict"].tolist() == ["A"]


def test_pairwise_errors_name_rows_and_columns():
    data = b"context,first,second,verdict,p\nd1,a,b,maybe,0.5\nd1,a,a,A,0.5\nd1,a,b,B,1.5\n"
    with pytest.raises(DataError) as err:
        read_upload("pairs.csv", data)
    msg = str(err.value)
    assert "pairs.csv, row 1, column 'verdict': verdict 'maybe' is not understood" in msg
    assert "pairs.csv, row 2, column 'second': candidate 'a' is compared with itself" in msg
    assert "pairs.csv, row 3, column 'p': 1.5 is outside [0, 1]" in msg
