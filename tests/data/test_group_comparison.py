"""``data.agreement.groups``: two groups of systems, mean ± sd and Welch's t per rater,
against scipy on a small set worked by hand, and the refusals that name what to fix."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from data.agreement.groups import GROUP_COLUMNS, group_comparison_table
from data.schema import DataError, Dataset
from tests._columns import RATING_COLUMNS


def _dataset() -> Dataset:
    """Two contexts x four systems; the judge rated twice (one answer unparsed), two humans."""
    systems = ["s1", "s2", "s3", "s4"]
    cands = pd.DataFrame(
        [(c, f"{c}-{s}", s, "") for c in ("c1", "c2") for s in systems],
        columns=["context_id", "candidate_id", "system", "text"],
    )
    judge = {"s1": (5, 4), "s2": (4, 4), "s3": (2, np.nan), "s4": (1, 2)}
    ratings = pd.DataFrame(
        [
            (c, f"{c}-{s}", "quality", "j", "p", k, judge[s][k] + (c == "c2"))
            for c in ("c1", "c2")
            for s in systems
            for k in (0, 1)
        ],
        columns=RATING_COLUMNS,
    )
    human = {"s1": (5, 5), "s2": (4, 3), "s3": (3, 2), "s4": (1, 1)}
    hs = pd.DataFrame(
        [
            (c, f"{c}-{s}", "quality", f"h_{a + 1}", human[s][a] - (c == "c2"))
            for c in ("c1", "c2")
            for s in systems
            for a in (0, 1)
        ],
        columns=["context_id", "candidate_id", "attribute", "annotator", "score"],
    )
    return Dataset(name="tiny", candidates=cands, ratings=ratings, human_scores=hs)


def test_mean_sd_and_welch_per_rater_against_scipy():
    out = group_comparison_table(_dataset(), ["s1", "s2"], ["s3", "s4"])
    assert list(out.columns) == GROUP_COLUMNS and list(out["rater"]) == ["judge", "human"]
    # items: the judge's mean over its parsed samples; the humans' mean over annotators
    judge_a = [4.5, 4.0, 5.5, 5.0]  # s1 c1, s2 c1, s1 c2, s2 c2 (c2 one point higher)
    judge_b = [2.0, 1.5, 3.0, 2.5]  # s3's unparsed sample left out of its mean
    human_a = [5.0, 3.5, 4.0, 2.5]
    human_b = [2.5, 1.0, 1.5, 0.0]
    for row, (a, b) in zip(out.itertuples(), ((judge_a, judge_b), (human_a, human_b)), strict=True):
        ref = stats.ttest_ind(a, b, equal_var=False)
        assert row.mean_a == pytest.approx(np.mean(a)) and row.mean_b == pytest.approx(np.mean(b))
        assert row.std_a == pytest.approx(np.std(a, ddof=1))
        assert row.std_b == pytest.approx(np.std(b, ddof=1))
        assert (row.n_a, row.n_b) == (4, 4)
        assert row.statistic == pytest.approx(ref.statistic)
        assert row.pvalue == pytest.approx(ref.pvalue)
        assert row.df == pytest.approx(ref.df)
        assert row.reason == ""


def test_a_group_too_small_is_nan_with_the_reason():
    ds = _dataset()
    ds.candidates = ds.candidates[ds.candidates["context_id"] == "c1"]  # one item per system
    out = group_comparison_table(ds, ["s1"], ["s3", "s4"], annotators=["h_1", "h_2"])
    judge = out[out["rater"] == "judge"].iloc[0]
    assert math.isnan(judge["statistic"]) and math.isnan(judge["pvalue"])
    assert judge["n_a"] == 1 and "group a has 1 valid value(s)" in judge["reason"]
    assert judge["mean_a"] == pytest.approx(4.5)


@pytest.mark.parametrize(
    "a, b, message",
    [
        (["s1"], [], "group B is empty"),
        (["s1", "s9"], ["s2"], r"group A: system\(s\) 's9' not in the candidates table"),
        (["s1", "s2"], ["s2", "s3"], r"system\(s\) 's2' in both groups"),
    ],
)
def test_bad_groups_are_refused_by_name(a, b, message):
    with pytest.raises(DataError, match=message):
        group_comparison_table(_dataset(), a, b)


def test_candidates_without_systems_are_refused():
    ds = _dataset()
    ds.candidates = ds.candidates.drop(columns="system")
    with pytest.raises(DataError, match="candidates carry no system labels"):
        group_comparison_table(ds, ["s1"], ["s2"])
