"""``data.agreement.groups.compare_groups``: Welch's t between two groups of systems over any
per-item score frame (ranking scores, ratings per prompt), against scipy."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from data.agreement.groups import COMPARE_COLUMNS, compare_groups
from data.schema import DataError


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    systems = ["M1", "M2", "M10", "M3"]
    rows = []
    for attr in ("coherence", "fluency"):
        for c in range(6):
            for s in systems:
                rows.append(
                    {
                        "attribute": attr,
                        "context_id": f"c{c}",
                        "system": s,
                        "win": rng.random() + (s in ("M1", "M2")),
                        "human": rng.integers(1, 6),
                    }
                )
    out = pd.DataFrame(rows)
    out.loc[0, "win"] = np.nan  # an unparsed item: left out and counted
    return out


def test_per_column_and_split_against_scipy():
    df = _frame()
    out = compare_groups(df, ["M1", "M2"], ["M3", "M10"], ["win", "human"], by="attribute")
    assert list(out.columns) == ["attribute", *COMPARE_COLUMNS]
    assert list(zip(out["attribute"], out["score"], strict=True)) == [
        ("coherence", "win"),
        ("coherence", "human"),
        ("fluency", "win"),
        ("fluency", "human"),
    ]
    for row in out.itertuples():
        sub = df[df["attribute"] == row.attribute]
        a = sub.loc[sub["system"].isin(["M1", "M2"]), row.score].dropna().astype(float)
        b = sub.loc[sub["system"].isin(["M3", "M10"]), row.score].dropna().astype(float)
        ref = stats.ttest_ind(a, b, equal_var=False)
        assert row.statistic == pytest.approx(ref.statistic)
        assert row.pvalue == pytest.approx(ref.pvalue)
        assert row.df == pytest.approx(ref.df)
        assert row.mean_a == pytest.approx(a.mean()) and row.std_b == pytest.approx(b.std())
        assert (row.n_a, row.n_b) == (len(a), len(b))
    assert out["n_dropped_nan"].tolist() == [1, 0, 0, 0]


def test_without_split_one_row_per_column():
    df = _frame()
    out = compare_groups(df, ["M1"], ["M2"], "win")
    assert list(out.columns) == COMPARE_COLUMNS and len(out) == 1
    # the first system's scores are higher by one on average; M1 vs M2 are alike
    assert abs(out["mean_a"].iloc[0] - out["mean_b"].iloc[0]) < 0.5


def test_a_constant_pair_is_nan_with_its_reason():
    df = pd.DataFrame({"system": ["a", "a", "b", "b"], "x": [1.0, 1.0, 2.0, 2.0]})
    row = compare_groups(df, ["a"], ["b"], "x").iloc[0]
    assert math.isnan(row["statistic"]) and "constant" in row["reason"]


@pytest.mark.parametrize(
    "a, b, values, message",
    [
        (["M1"], [], "win", "group B is empty"),
        (
            ["M1", "M9"],
            ["M2"],
            "win",
            r"group A: system\(s\) 'M9' not in the scores; "
            r"available: 'M1', 'M2', 'M3', 'M10'",
        ),
        (["M1", "M2"], ["M2"], "win", r"system\(s\) 'M2' in both groups"),
        (["M1"], ["M2"], "nope", r"no column\(s\) 'nope'"),
    ],
)
def test_bad_groups_and_columns_are_refused_by_name(a, b, values, message):
    with pytest.raises(DataError, match=message):
        compare_groups(_frame(), a, b, values, name="ranking scores")


def test_a_known_system_without_scores_gives_an_empty_group_not_an_error():
    df = _frame()
    out = compare_groups(df, ["M1"], ["M99"], "win", systems=["M1", "M2", "M99"])
    row = out.iloc[0]
    assert row["n_b"] == 0 and math.isnan(row["statistic"]) and "group b has 0" in row["reason"]
    with pytest.raises(DataError, match=r"'M7' not in the systems"):
        compare_groups(df, ["M1"], ["M7"], "win", systems=["M1", "M2"])
