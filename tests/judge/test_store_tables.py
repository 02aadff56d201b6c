"""Stored rows to canonical tables: a run's comparisons and ratings exported from the store
and read again with another rule, without any model."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from judge.store import RunItem, RunStore, StoredResult
from tests._columns import COMPARISON_COLUMNS, RATING_COLUMNS


def _pairwise_settings(mode: str, judge: str, attribute: str, tie_labels: list[str]) -> dict:
    """The settings a pairwise run stores, with the labels A and B."""
    return {
        "kind": "pairwise",
        "mode": mode,
        "judge": judge,
        "attribute": attribute,
        "labels": ["A", "B"],
        "tie_labels": tie_labels,
    }


def _pairwise_run(store):
    items = [RunItem(f"s{k}", "c1", k, "x", "y") for k in range(4)] + [
        RunItem("gone", "c1", 0, "y", "x")
    ]
    answers = ["A", "Summary B is more coherent.", "C", "I cannot decide."]
    store.put_many(StoredResult(key=f"s{k}", kind="generate", raw=a) for k, a in enumerate(answers))
    settings = _pairwise_settings("samples", "m/t", "coherence", tie_labels=[])
    store.start_run("run1", settings, items)
    return items


def test_export_comparisons_and_reparse(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        _pairwise_run(store)
        df = store.export_comparisons("run1")
        assert list(df.columns) == [*COMPARISON_COLUMNS, "raw"]
        assert len(df) == 4  # "gone" has no stored answer
        assert df["verdict"].tolist() == ["A", "B", None, None]
        assert df["p_first"].tolist()[:2] == [1.0, 0.0]
        assert math.isnan(df["p_first"].iloc[2]) and math.isnan(df["p_first"].iloc[3])
        assert df["raw"].tolist()[2] == "C"
        assert df["sample"].dtype == "int64" and df["p_first"].dtype == "float64"
        # re-read the same raw answers with "C" as a tie label: no model involved
        again = store.export_comparisons("run1", tie_labels=["C"])
        assert again["verdict"].tolist()[2] == "tie" and again["p_first"].iloc[2] == 0.5
        runs = store.runs()
        assert runs.loc[0, "run_id"] == "run1" and runs.loc[0, "n_items"] == 5
        assert runs.loc[0, "n_done"] == 4
        with pytest.raises(ValueError, match="is pairwise; use export_comparisons"):
            store.export_ratings("run1")
        with pytest.raises(KeyError, match="no run 'nope'"):
            store.export_comparisons("nope")


def test_export_probs_with_tie_and_failures(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        items = [RunItem("p1", "c", 0, "a", "b"), RunItem("p2", "c", 0, "b", "a")]
        store.put_many(
            [
                StoredResult(key="p1", kind="label", probs={"A": 0.5, "B": 0.3, "C": 0.2}),
                StoredResult(key="p2", kind="label", status="failed", error="http-500: down"),
            ]
        )
        settings = _pairwise_settings("probs", "m/abc", "coh", tie_labels=["C"])
        store.start_run("r", settings, items)
        df = store.export_comparisons("r")
        assert df["p_first"].iloc[0] == pytest.approx(0.6)
        assert math.isnan(df["p_first"].iloc[1])
        assert df["raw"].iloc[1] == "[error] http-500: down"


def test_export_ratings_with_another_rule(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        items = [
            RunItem("r0", "c", 0, candidate_id="x"),
            RunItem("r1", "c", 1, candidate_id="x"),
            RunItem("r2", "c", 2, candidate_id="x"),
        ]
        store.put_many(
            [
                StoredResult(key="r0", kind="generate", raw="3 out of 5, maybe 4"),
                StoredResult(key="r1", kind="generate", raw="no idea"),
                StoredResult(key="r2", kind="generate", status="answer-error", error="refusal: no"),
            ]
        )
        settings = {
            "kind": "absolute",
            "mode": "samples",
            "judge": "m/t1-p0.9",
            "attribute": "coh",
            "prompt_id": "chiang-lee-story",
            "scale": [1, 5],
            "parse_rule": "chiang_lee",
        }
        store.start_run("abs", settings, items)
        df = store.export_ratings("abs")
        assert list(df.columns) == [*RATING_COLUMNS, "raw"]
        assert df["score"].iloc[0] == 3.0 and df["sample"].tolist() == [0, 1, 2]
        assert math.isnan(df["score"].iloc[1]) and df["raw"].iloc[1] == "no idea"
        assert df["raw"].iloc[2] == "[refusal] refusal: no"
        strict = store.export_ratings("abs", parse_rule="strict")
        assert strict["score"].iloc[0] == 4.0
        pd.testing.assert_series_equal(df["raw"], strict["raw"])
