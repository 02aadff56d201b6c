"""Graded verdicts and weights survive every reader and writer that round-trips tables:
write_table / read_table in each format, save_dataset / load_dataset, the workspace file."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data.io import load_dataset, read_table, save_dataset, write_table
from data.io.workspace import load_workspace, save_workspace
from data.schema import Dataset
from data.validate import validate_dataset
from tests.data._io_tables import FORMATS


def _arena() -> Dataset:
    comparisons = pd.DataFrame(
        {
            "context_id": ["q1", "q1", "q2", "q2", "q3"],
            "attribute": ["overall"] * 5,
            "judge": ["gpt-4.1"] * 5,
            "first_id": ["base", "m1", "base", "m1", "base"],
            "second_id": ["m1", "base", "m1", "base", "m1"],
            "p_first": [1.0, 0.0, 0.5, 0.75, np.nan],
            "verdict": ["A", "B", "tie", "A", None],
            "grade": [2, -2, 0, 1, None],
            "weight": [3, 3, 1, 0.5, None],
            "sample": [0] * 5,
            "raw": ["My final verdict is: [[A>>B]]", "[[B>>A]]", "[[A=B]]", "[[A>B]]", "?"],
        }
    )
    return validate_dataset(Dataset(name="arena", comparisons=comparisons))


def _check(table: pd.DataFrame) -> None:
    np.testing.assert_array_equal(table["grade"], [2, -2, 0, 1, np.nan])
    np.testing.assert_array_equal(table["weight"], [3, 3, 1, 0.5, 1])
    assert table["grade"].dtype == np.float64 and table["weight"].dtype == np.float64


@pytest.mark.parametrize("fmt", FORMATS)
def test_write_and_read_table_keep_grade_and_weight(tmp_path, fmt):
    table = _arena().comparisons
    _check(table)
    back = read_table(write_table(table, tmp_path / f"c.{fmt}"), "comparisons")
    pd.testing.assert_frame_equal(back, table)
    _check(back)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_save_and_load_dataset_keep_grade_and_weight(tmp_path, fmt):
    ds = _arena()
    back = load_dataset(save_dataset(ds, tmp_path / "arena", fmt=fmt))
    pd.testing.assert_frame_equal(back.comparisons, ds.comparisons)
    _check(back.comparisons)


def test_workspace_keeps_grade_and_weight():
    ds = _arena()
    datasets, _settings = load_workspace(save_workspace({"arena": ds}, "arena"), "w.zip")
    pd.testing.assert_frame_equal(datasets["arena"].comparisons, ds.comparisons)
    _check(datasets["arena"].comparisons)


def test_a_file_without_the_columns_reads_as_no_grade_and_weight_one(tmp_path):
    path = tmp_path / "old.csv"
    path.write_text(
        "context_id,attribute,judge,first_id,second_id,p_first,verdict,sample\n"
        "q1,overall,j,a,b,1,A,0\n"
    )
    back = read_table(path, "comparisons")
    assert np.isnan(back["grade"].item()) and back["weight"].item() == 1.0
