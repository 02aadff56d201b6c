"""The weight column on the way to the arrays: data.arrays.comparisons_to_P (PMatrix.weights,
the weighted mean of samples) and data.flat.flat_comparisons (FlatComparisons.weight)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data.arrays import comparisons_to_P, row_weights
from data.flat import flat_comparisons
from data.schema import DataError


def _table(weight):
    return pd.DataFrame(
        {
            "context_id": ["q1", "q1", "q1", "q2"],
            "attribute": "overall",
            "judge": "j",
            "first_id": ["a", "a", "b", "a"],
            "second_id": ["b", "b", "a", "b"],
            "p_first": [1.0, 0.0, 0.5, np.nan],
            "sample": [0, 1, 0, 0],
            "weight": weight,
        }
    )


def test_P_is_the_weighted_mean_and_keeps_the_mean_weight():
    pm = comparisons_to_P(_table([3.0, 1.0, 2.0, 5.0]))
    assert pm.context_ids == ["q1", "q2"]  # q2: its only row unparsed, no cell
    a, b = pm.candidate_ids[0].index("a"), pm.candidate_ids[0].index("b")
    assert pm.P[0, a, b] == pytest.approx(0.75)  # (3 * 1 + 1 * 0) / 4
    assert pm.weights[0, a, b] == pytest.approx(2.0)  # two samples of mean weight 2
    assert pm.counts[0, a, b] == 2  # samples, not weight
    assert pm.weights[0, b, a] == pytest.approx(2.0)
    assert np.isnan(pm.weights[0, a, a]) and np.isnan(pm.weights[1]).all()


def test_without_weights_P_is_unchanged_and_weights_none():
    plain = comparisons_to_P(_table([np.nan] * 4).drop(columns="weight"))
    ones = comparisons_to_P(_table([1.0, np.nan, 1.0, 1.0]))  # empty = 1
    assert plain.weights is None and ones.weights is None
    np.testing.assert_array_equal(plain.P, ones.P)
    assert plain.P[0, 0, 1] == 0.5


def test_flat_comparisons_carry_the_weight():
    fc = flat_comparisons(_table([3.0, 1.0, 2.0, 5.0]))
    np.testing.assert_array_equal(fc.weight, [3.0, 1.0, 2.0])  # the unparsed row left out
    assert fc.weighted
    assert not flat_comparisons(_table([1.0] * 4)).weighted


@pytest.mark.parametrize("bad", [0, -2, np.inf, "heavy"])
def test_a_bad_weight_is_refused_with_its_row(bad):
    table = _table([1.0, bad, 1.0, 1.0])
    with pytest.raises(DataError, match=r"row 2: context_id 'q1', first_id 'a', second_id 'b'"):
        row_weights(table)
    with pytest.raises(DataError, match="number > 0"):
        comparisons_to_P(table)
    with pytest.raises(DataError, match="number > 0"):
        flat_comparisons(table)
