"""CSV for spreadsheets: text that would start a formula is neutralised, numbers are not."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from data.io.spreadsheet import neutralise, neutralise_formulas, spreadsheet_csv

DANGEROUS = ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\t=1", "\r=1", '=HYPERLINK("http://x")']


@pytest.mark.parametrize("text", DANGEROUS)
def test_formula_starts_get_a_quote(text):
    assert neutralise(text) == "'" + text


@pytest.mark.parametrize("value", ["plain", "a=b", "", "-0.5", "+3", "1e-3", -0.5, 3, None])
def test_everything_else_is_unchanged(value):
    assert neutralise(value) == value


def test_only_text_cells_and_headers_change_and_the_input_is_kept():
    df = pd.DataFrame(
        {
            "id": ["=cmd", "ok", "-1+2"],
            "delta": [-0.5, 0.25, -3.0],
            "n": [-1, 2, 3],
            "=total": ["@x", None, "-0.5"],
        }
    )
    before = df.copy()
    safe = neutralise_formulas(df)
    pd.testing.assert_frame_equal(df, before)  # the table itself is untouched
    assert list(safe.columns) == ["id", "delta", "n", "'=total"]
    assert safe["id"].tolist() == ["'=cmd", "ok", "'-1+2"]
    assert safe["'=total"].tolist()[0] == "'@x" and safe["'=total"].tolist()[2] == "-0.5"
    back = pd.read_csv(io.StringIO(spreadsheet_csv(df)))
    np.testing.assert_array_equal(back["delta"], [-0.5, 0.25, -3.0])  # numbers stay numbers
    np.testing.assert_array_equal(back["n"], [-1, 2, 3])


def test_multiindex_columns_are_neutralised_per_level():
    df = pd.DataFrame([[1.0, 2.0]], columns=pd.MultiIndex.from_tuples([("=a", "x"), ("b", "@y")]))
    assert neutralise_formulas(df).columns.tolist() == [("'=a", "x"), ("b", "'@y")]
