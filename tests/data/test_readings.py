"""``data.scope.readings``: published and cleaned readings of judge ratings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data import load_benchmark
from data.schema import AUTOMATIC, DataError, Dataset
from data.scope.readings import READINGS, has_readings, reading_note, with_reading
from data.synthetic.demo import demo_dataset
from data.validate import validate_dataset
from tests.data._benchmark_files import need


def _tiny(raws, scores, prompt_ids=None, judges=None) -> Dataset:
    n = len(raws)
    return validate_dataset(
        Dataset(
            name="tiny",
            ratings=pd.DataFrame(
                {
                    "context_id": ["c"] * n,
                    "candidate_id": [f"x{i}" for i in range(n)],
                    "attribute": ["a"] * n,
                    "judge": judges or ["j"] * n,
                    "prompt_id": prompt_ids or ["p"] * n,
                    "sample": [0] * n,
                    "score": scores,
                    "raw": raws,
                }
            ),
        )
    )


def test_readings_of_a_small_table():
    ds = _tiny(
        ["4.0", "-1.0", "Rating: 3", "", "2", "7"],
        [4.0, np.nan, 3.0, np.nan, 2.0, np.nan],
        judges=["j", "j", "k", "j", "j", "k"],
    )
    assert READINGS == ("published", "cleaned")
    assert has_readings(ds)
    pub = with_reading(ds, "published")
    # only the numeric raw text that differs from the score is read back, and only for
    # judge j, whose raw texts are all numbers; k's "7" is an unparsed answer, kept NaN
    assert pub.ratings["score"].tolist()[:3] == [4.0, -1.0, 3.0]
    assert np.isnan(pub.ratings["score"].iloc[3]) and pub.ratings["score"].iloc[4] == 2.0
    assert np.isnan(pub.ratings["score"].iloc[5])
    assert with_reading(ds, "cleaned") is ds
    assert np.isnan(ds.ratings["score"].iloc[1])  # the original untouched
    assert "1 of 6 ratings" in reading_note(ds, "published")
    assert reading_note(ds, "cleaned").startswith("Judge ratings cleaned")
    with pytest.raises(DataError, match="'raw'.*published.*cleaned"):
        with_reading(ds, "raw")


def test_no_readings_when_the_raw_text_agrees():
    ds = _tiny(["4", "Score: 3", ""], [4.0, np.nan, 0.25], [AUTOMATIC, "p", AUTOMATIC])
    assert not has_readings(ds)
    assert with_reading(ds, "published") is ds
    assert "agree on all 3 ratings" in reading_note(ds, "published")
    demo = demo_dataset()
    assert not has_readings(demo) and with_reading(demo, "published") is demo
    assert not has_readings(Dataset(name="empty"))


@need("topicalchat")
def test_answers_are_not_published_values():
    # one G-Eval answer "3" on the 0-1 groundedness scale is unparsed (NaN); the judge's
    # raw texts are answers (some are sentences), so "3" is no published rating
    ds = load_benchmark("topicalchat")
    r = ds.ratings
    assert ((r["raw"] == "3") & r["score"].isna()).sum() == 1
    assert not has_readings(ds) and with_reading(ds, "published") is ds


@need("hanna")
def test_hanna_readings_differ_on_the_off_scale_means():
    ds = load_benchmark("hanna")
    assert has_readings(ds)
    pub = with_reading(ds, "published")
    old, new = ds.ratings["score"].to_numpy(), pub.ratings["score"].to_numpy()
    differ = ~((old == new) | (np.isnan(old) & np.isnan(new)))
    # 1,051 published means fall outside 1-5 (failed tries coded 0 / -1): blank when cleaned
    assert int(differ.sum()) == 1051
    assert np.isnan(old[differ]).all()
    assert ((new[differ] < 1) | (new[differ] > 5)).all()
    assert not np.isnan(new[(pub.ratings["prompt_id"] != AUTOMATIC).to_numpy()]).any()
    assert "1,051 of" in reading_note(ds, "published")
    # the automatic measures are the same in both readings
    auto = (ds.ratings["prompt_id"] == AUTOMATIC).to_numpy()
    np.testing.assert_array_equal(old[auto], new[auto])
