"""The human baseline's two references (ranking.human_baseline, ``reference=``)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ranking import correlation, human_baseline
from ranking.agreement import BASELINE_REFERENCES
from tests.ranking.agreement_twins import panel_data


def _ratings():
    _, h, ctx, sysl = panel_data()
    rng = np.random.default_rng(4)
    R = np.clip(h[:, None] + rng.integers(-2, 3, (h.size, 3)), 1, 5).astype(float)
    R[3, 0] = R[7, 2] = np.nan
    return R, ctx, sysl


@pytest.mark.parametrize("unit", ["overall", "system"])
def test_reference_all_is_each_annotator_against_the_mean_of_all(unit):
    R, ctx, sysl = _ratings()
    res = human_baseline(
        R, contexts=ctx, systems=sysl, unit=unit, method="kendall", reference="all"
    )
    loo = human_baseline(R, contexts=ctx, systems=sysl, unit=unit, method="kendall")
    assert (res.reference, loo.reference) == ("all", "others")
    mean_all = np.nanmean(R, axis=1)
    for a in range(3):
        want = correlation(R[:, a], mean_all, unit=unit, method="kendall", systems=sysl)
        assert res.values[a] == pytest.approx(want.value, abs=1e-12)
    # Self included, every annotator agrees more with the mean than leave-one-out.
    assert (res.values > loo.values).all()
    assert res.mean == pytest.approx(res.values.mean())


def test_reference_all_by_hand_and_bad_reference():
    R = np.array([[1.0, 2, 2], [3, 3, 4], [5, 4, 5], [2, 1, np.nan], [4, 5, 3]])
    res = human_baseline(R, unit="overall", method="pearson", reference="all")
    ok = np.isfinite(R[:, 2])
    assert res.values[2] == pytest.approx(
        stats.pearsonr(R[ok, 2], np.nanmean(R[ok], axis=1)).statistic
    )
    assert res.values[0] == pytest.approx(stats.pearsonr(R[:, 0], np.nanmean(R, axis=1))[0])
    assert res.results[2].n_dropped_nan == 1
    assert BASELINE_REFERENCES == ("others", "all")
    with pytest.raises(ValueError, match="reference"):
        human_baseline(R, unit="overall", reference="mean")
